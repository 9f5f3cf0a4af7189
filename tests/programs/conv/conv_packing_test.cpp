// Convolution features and outputs in NC1HWC2: byte positions evaluated by hand from
// ((c / C2) · H · W + h · W + w) · 16 + (c % C2) · bytes (ops-reference §2.3, §4.1).
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <span>
#include <vector>

#include <regcmd/programs/conv/packing.hpp>

using namespace regcmd;

namespace {
conv_geometry geometry(const conv_spec& s) {
  const auto g = resolve_conv(s);
  REQUIRE_MESSAGE(g.ok(), g.err().id());
  return g.value();
}
}  // namespace

TEST_CASE("uint8 features: shifted by -0x80, 16-channel surfaces, the padding channels at the zero point") {
  // H = 2, W = 3, C = 20: two surfaces of 2·3 atoms (96 bytes each), channels 20..31 padding
  const auto g = geometry({.dtype = conv_data::uint8, .H = 2, .W = 3, .C = 20, .out_channels = 16,
                           .input = {0.5f, 100}, .weights = {0.5f, 0}, .output = {0.5f, 0}});
  REQUIRE(conv::feature_bytes(g) == 192);
  for (tensor_order order : {tensor_order::nhwc, tensor_order::nchw}) {
    CAPTURE(static_cast<int>(order));
    std::vector<std::uint8_t> host(2 * 3 * 20, 128);  // 128 is stored as 0
    // (h 1, w 2, c 17) = 200: stored 72 at ((1·2 + 1)·3 + 2)·16 + 1 = 177
    host[order == tensor_order::nhwc ? (1 * 3 + 2) * 20 + 17 : (17 * 2 + 1) * 3 + 2] = 200;
    std::vector<std::uint8_t> out(192, 0xaa);
    REQUIRE(conv::pack_features<std::uint8_t>(g, host, order, out).ok());
    for (std::size_t i = 0; i < out.size(); ++i) {
      CAPTURE(i);
      const bool padding = i >= 96 && i % 16 >= 4;  // channels 20..31: 100 - 128 = -28
      CHECK(out[i] == (i == 177 ? 72 : padding ? 0xe4 : 0));
    }
  }
}

TEST_CASE("fp16 features: 8-channel atoms, C padded to 16 channels with zeros") {
  // H = 1, W = 2, C = 9: 16 channels, two surfaces of 2 atoms (32 bytes each)
  const auto g = geometry({.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 1, .W = 2, .C = 9, .out_channels = 8});
  REQUIRE(conv::feature_bytes(g) == 64);
  std::vector<float> host(2 * 9, 0.0f);
  host[1 * 9 + 8] = 1.0f;  // (h 0, w 1, c 8): ((1·1 + 0)·2 + 1)·16 + 0 = 48
  host[0 * 9 + 3] = -2.0f;  // (h 0, w 0, c 3): 0·16 + 3·2 = 6
  std::vector<std::uint8_t> out(64, 0xaa);
  REQUIRE(conv::pack_features<float>(g, host, tensor_order::nhwc, out).ok());
  for (std::size_t i = 0; i < out.size(); ++i) {
    CAPTURE(i);
    CHECK(out[i] == (i == 49 ? 0x3c : i == 7 ? 0xc0 : 0));  // 1.0 = 0x3c00, -2.0 = 0xc000
  }
}

TEST_CASE("outputs: int8 read back +0x80 for a uint8 conv, fp32 in 4-channel atoms") {
  // out 2x2, 20 channels: two surfaces of 4 atoms; (h 1, w 0, c 18) at ((1·2 + 1)·2 + 0)·16 + 2 = 98
  const auto q = geometry({.dtype = conv_data::uint8, .H = 2, .W = 2, .C = 16, .out_channels = 20,
                           .input = {0.5f, 0}, .weights = {0.5f, 0}, .output = {0.5f, 0}});
  REQUIRE(conv::output_extent(q) == 128);
  std::vector<std::uint8_t> cube(128, 0x80);  // -128, read back as 0
  cube[98] = 0x10;
  std::vector<std::uint8_t> host(2 * 2 * 20);
  REQUIRE(conv::unpack_output<std::uint8_t>(q, cube, tensor_order::nhwc, host).ok());
  for (std::size_t i = 0; i < host.size(); ++i) CHECK(host[i] == (i == (1 * 2 + 0) * 20 + 18 ? 0x90 : 0));

  // fp16 in, fp32 out 1x2, 6 channels: (h 0, w 1, c 5) at ((1·1 + 0)·2 + 1)·16 + 1·4 = 52
  const auto f = geometry({.dtype = conv_data::fp16, .out_dtype = precision::fp32, .H = 1, .W = 2, .C = 8, .out_channels = 6});
  REQUIRE(conv::output_extent(f) == 64);
  std::vector<std::uint8_t> fcube(64, 0);
  fcube[52 + 2] = 0x20, fcube[52 + 3] = 0x40;  // 2.5f = 0x40200000
  std::vector<float> fhost(2 * 6);
  REQUIRE(conv::unpack_output<float>(f, fcube, tensor_order::nchw, fhost).ok());
  for (std::size_t i = 0; i < fhost.size(); ++i) CHECK(fhost[i] == (i == 5 * 2 + 1 ? 2.5f : 0.0f));
}

TEST_CASE("conv packers refuse a host tensor of the wrong size or type and a buffer too small") {
  const auto g = geometry({.dtype = conv_data::uint8, .H = 2, .W = 2, .C = 16, .out_channels = 16,
                           .input = {0.5f, 0}, .weights = {0.5f, 0}, .output = {0.5f, 0}});
  std::vector<std::uint8_t> out(conv::feature_bytes(g));
  std::vector<std::uint8_t> host(2 * 2 * 16);
  std::vector<std::int8_t> signed_host(2 * 2 * 16);
  CHECK_BREAKS(conv::pack_features<std::uint8_t>(g, std::span<const std::uint8_t>(host).first(63), tensor_order::nhwc, out)
            , rules::host_size);
  CHECK_BREAKS(conv::pack_features<std::int8_t>(g, signed_host, tensor_order::nhwc, out), rules::host_size);
  CHECK_BREAKS(conv::pack_features<std::uint8_t>(g, host, tensor_order::nhwc, std::span(out).first(out.size() - 1)), rules::buffer_size);
  std::vector<std::int8_t> wrong_out(2 * 2 * 16);
  CHECK_BREAKS(conv::unpack_output<std::int8_t>(g, out, tensor_order::nhwc, wrong_out), rules::host_size);
  std::vector<std::uint8_t> right_out(2 * 2 * 16);
  CHECK_BREAKS(conv::unpack_output<std::uint8_t>(g, std::span<const std::uint8_t>(out).first(10), tensor_order::nhwc, right_out)
            , rules::buffer_size);
}

// Weights in Mesa's order (ops-reference §2.3), positions evaluated by hand.
TEST_CASE("quantized weights: 32-kernel groups of 32-channel groups of taps, padded channels at the zero point") {
  // C = 40 (C16 = 48: channel groups of 32 and 16), 35 kernels (36: groups of 32 and 4), 2x1
  const auto g = geometry({.dtype = conv_data::uint8, .H = 4, .W = 4, .C = 40, .out_channels = 35, .kernel_h = 2,
                           .kernel_w = 1, .input = {0.5f, 100}, .weights = {0.5f, 120}, .output = {0.5f, 0}});
  REQUIRE(conv::weight_bytes(g) == 36 * 2 * 48);
  for (conv_weight_order order : {conv_weight_order::ohwi, conv_weight_order::oihw}) {
    CAPTURE(static_cast<int>(order));
    std::vector<std::uint8_t> host(35 * 2 * 40, 128);  // stored as 0
    const bool ohwi = order == conv_weight_order::ohwi;
    host[ohwi ? (33 * 2 + 1) * 40 + 39 : (33 * 40 + 39) * 2 + 1] = 200;  // o 33, i 39, kh 1 → 72
    host[ohwi ? (5 * 2 + 0) * 40 + 3 : (5 * 40 + 3) * 2 + 0] = 130;      // o 5, i 3, kh 0 → 2
    std::vector<std::uint8_t> out(conv::weight_bytes(g), 0xaa);
    REQUIRE(conv::pack_weights<std::uint8_t>(g, host, order, out).ok());
    // o 33, i 39, kh 1: 32·1·2·48 + 4·2·32·1 + ((1·4 + 1)·16 + 7) = 3072 + 256 + 87
    CHECK(out[3415] == 72);
    // o 5, i 3, kh 0: (0·32 + 5)·32 + 3
    CHECK(out[163] == 2);
    // o 0, i 45 (padding), kh 0: 32·2·32·1 + (0·32 + 0)·16 + 13 = 2061: 120 − 128
    CHECK(out[2061] == 0xf8);
    // o 35 (the padding kernel), i 0, kh 0: 3072 + (0·4 + 3)·32 = 3168
    CHECK(out[3168] == 0);
    // 35 kernels · 2 taps · 8 padding channels hold the zero point, the padding kernel zeros
    std::size_t zero_points = 0, others = 0;
    for (std::uint8_t b : out) {
      if (b == 0xf8) ++zero_points;
      else if (b != 0) ++others;
    }
    CHECK(zero_points == 35 * 2 * 8);
    CHECK(others == 2);
  }
}

TEST_CASE("depthwise weights: one kernel in 64-channel groups") {
  // C = 80 (groups of 64 and 16), 3x3: 9 · 80 bytes; int8 stored as given
  const auto g = geometry({.dtype = conv_data::int8, .H = 8, .W = 8, .C = 80, .out_channels = 80, .kernel_h = 3,
                           .kernel_w = 3, .depthwise = true});
  REQUIRE(conv::weight_bytes(g) == 720);
  std::vector<std::int8_t> host(3 * 3 * 80, 0);
  host[(2 * 3 + 1) * 80 + 70] = -5;  // c 70, kh 2, kw 1: 9·64·1 + 7·16 + 6 = 694
  host[(0 * 3 + 2) * 80 + 10] = 7;   // c 10, kh 0, kw 2: 2·64 + 10 = 138
  std::vector<std::uint8_t> out(720, 0xaa);
  REQUIRE(conv::pack_weights<std::int8_t>(g, host, conv_weight_order::ohwi, out).ok());
  for (std::size_t i = 0; i < out.size(); ++i) {
    CAPTURE(i);
    CHECK(out[i] == (i == 694 ? 0xfb : i == 138 ? 7 : 0));
  }
}

TEST_CASE("bias: less the correction the input's zero point makes, little-endian int32 per kernel") {
  // uint8, zp_in 100, zp_w 120, 1x1, C = 2: kernel 0 [130, 110], kernel 1 [120, 200]
  // correction = Σ (w − 120) · (100 − 128): kernel 0 (10 − 10)·−28 = 0, kernel 1 80·−28 = −2240
  const auto g = geometry({.dtype = conv_data::uint8, .H = 2, .W = 2, .C = 2, .out_channels = 2,
                           .input = {0.5f, 100}, .weights = {0.5f, 120}, .output = {0.5f, 0}, .bias = true});
  const std::uint8_t w[] = {130, 110, 120, 200};
  const std::int32_t bias[] = {1000, -50};
  // an int32 per computed channel (32 for an int8 conv), the 30 past the real ones 0
  REQUIRE(conv::bias_bytes(g) == 128);
  std::uint8_t out[256];
  std::fill(std::begin(out), std::end(out), 0xff);
  REQUIRE(conv::pack_bias<std::uint8_t>(g, bias, w, conv_weight_order::ohwi, std::span(out, 128)).ok());
  const std::uint8_t expected[8] = {0xe8, 0x03, 0, 0, 0x8e, 0x08, 0, 0};  // 1000, 2190
  for (int i = 0; i < 8; ++i) CHECK(out[i] == expected[i]);
  for (int i = 8; i < 128; ++i) CHECK(out[i] == 0);
  CHECK_BREAKS(conv::pack_bias<std::uint8_t>(g, bias, w, conv_weight_order::ohwi, std::span(out, 127)), rules::buffer_size);

  // without a bias the operand still carries the correction: 0, then 0 − (−2240)
  auto no_bias = g;
  no_bias.spec.bias = false;
  REQUIRE(conv::pack_bias<std::uint8_t>(no_bias, {}, w, conv_weight_order::ohwi, std::span(out, 128)).ok());
  const std::uint8_t corrected[8] = {0, 0, 0, 0, 0xc0, 0x08, 0, 0};  // 0, 2240
  for (int i = 0; i < 8; ++i) CHECK(out[i] == corrected[i]);
  CHECK_BREAKS(conv::pack_bias<std::uint8_t>(no_bias, bias, w, conv_weight_order::ohwi, std::span(out, 128)), rules::host_size);

  // int8 depthwise 1x2, zp_in 3 (int8: no shift): c 0 taps [4, 2] → 18, c 1 [−1, 5] → 12
  const auto d = geometry({.dtype = conv_data::int8, .H = 2, .W = 2, .C = 2, .out_channels = 2, .kernel_h = 1,
                           .kernel_w = 2, .depthwise = true, .input = {0.5f, 3}, .bias = true});
  const std::int8_t dw[] = {4, -1, 2, 5};  // [1][1][2][2]: (kw 0: c 0, c 1), (kw 1: c 0, c 1)
  const std::int32_t dbias[] = {0, 100};
  REQUIRE(conv::bias_bytes(d) == 256);  // depthwise computes 64 channels
  REQUIRE(conv::pack_bias<std::int8_t>(d, dbias, dw, conv_weight_order::ohwi, out).ok());
  const std::uint8_t dexpected[8] = {0xee, 0xff, 0xff, 0xff, 88, 0, 0, 0};  // −18, 88
  for (int i = 0; i < 8; ++i) CHECK(out[i] == dexpected[i]);

  // a bias that the correction pushes past int32
  const std::int32_t big[] = {1000, 2147483647};
  CHECK_BREAKS(conv::pack_bias<std::uint8_t>(g, big, w, conv_weight_order::ohwi, out), rules::conv_bias_range);
}

TEST_CASE("fp16 weights: 16-kernel groups of 32-channel groups of taps (ops-reference §4.1), binary16") {
  // 1x1, C 16, 17 kernels: group 0 holds kernels 0..15 (16 x 16 elements), group 1 kernel 16
  const auto g = geometry({.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 1, .W = 1, .C = 16, .out_channels = 17});
  REQUIRE(conv::weight_bytes(g) == 17 * 16 * 2);
  std::vector<float> w(17 * 16, 0.0f);
  w[1 * 16 + 3] = 1.5f;   // kernel 1, channel 3: element (0·16 + 1)·16 + 3 = 19
  w[16 * 16 + 5] = -2.0f;  // kernel 16, channel 5: element 16·16 + 5 = 261
  std::vector<std::uint8_t> out(conv::weight_bytes(g), 0xff);
  REQUIRE(conv::pack_weights<float>(g, w, conv_weight_order::ohwi, out).ok());
  CHECK(out[38] == 0x00);
  CHECK(out[39] == 0x3e);  // 1.5 = 0x3e00
  CHECK(out[522] == 0x00);
  CHECK(out[523] == 0xc0);  // -2 = 0xc000
  CHECK(out[0] == 0);
  // 3x3, C 16, 16 kernels: kernel 2, channel 4 at tap (1, 2) = 5: element (5·16 + 2)·16 + 4 = 1316
  const auto s = geometry({.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 3, .W = 3, .C = 16, .out_channels = 16,
                           .kernel_h = 3, .kernel_w = 3});
  std::vector<std::uint16_t> raw(16 * 9 * 16, 0);
  raw[((2 * 3 + 1) * 3 + 2) * 16 + 4] = 0x1234;  // OHWI
  std::vector<std::uint8_t> packed(conv::weight_bytes(s), 0xff);
  REQUIRE(conv::pack_weights<std::uint16_t>(s, raw, conv_weight_order::ohwi, packed).ok());
  CHECK(packed[2632] == 0x34);
  CHECK(packed[2633] == 0x12);
}

TEST_CASE("a residual: the output's cube at the input's element type, its tensor checked") {
  // uint8, 2x2 output, 2 channels: (h, w, c) at (h·2 + w)·16 + c, stored r − 0x80, 32
  // computed channels (2 surfaces), the padding channels 0
  const auto g = geometry({.dtype = conv_data::uint8, .H = 2, .W = 2, .C = 16, .out_channels = 2, .input = {0.5f, 0},
                           .weights = {0.5f, 0}, .output = {0.5f, 0}, .residual_add = true, .residual = {0.5f, 0}});
  REQUIRE(conv::residual_bytes(g) == 2 * 4 * 16);
  const std::uint8_t r[] = {10, 20, 30, 40, 50, 60, 70, 80};  // NHWC
  std::vector<std::uint8_t> out(conv::residual_bytes(g), 0xff);
  REQUIRE(conv::pack_residual<std::uint8_t>(g, r, tensor_order::nhwc, out).ok());
  CHECK(out[0] == 0x8a);   // 10 − 128
  CHECK(out[1] == 0x94);   // 20 − 128
  CHECK(out[16] == 0x9e);  // (0, 1, 0): 30 − 128
  CHECK(out[48] == 0xc6);  // (1, 1, 0): 70 − 128
  CHECK(out[2] == 0);
  CHECK(out[64] == 0);
  // a tensor of the wrong shape or type, a short buffer, a conv without a residual
  CHECK_BREAKS(conv::pack_residual<std::uint8_t>(g, std::span(r, 7), tensor_order::nhwc, out), rules::host_size);
  const std::int8_t signed_r[8] = {};
  CHECK_BREAKS(conv::pack_residual<std::int8_t>(g, signed_r, tensor_order::nhwc, out), rules::host_size);
  CHECK_BREAKS(conv::pack_residual<std::uint8_t>(g, r, tensor_order::nhwc, std::span(out.data(), 127)), rules::buffer_size);
  auto plain = g;
  plain.spec.residual_add = false;
  CHECK_BREAKS(conv::pack_residual<std::uint8_t>(plain, r, tensor_order::nhwc, out), rules::host_size);
}
