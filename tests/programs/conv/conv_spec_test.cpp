// Convolution requests: output sizes, SAME and VALID padding, the requantization, and each
// rule's refusal at run time. Expected values are evaluated by hand from the formulas in
// docs/conv-values.md and the worked examples of ops-reference §2.1–§2.2.
#include <regcmd/testing/doctest.hpp>

#include <cstdint>
#include <limits>
#include <string_view>

#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

namespace {

conv_geometry resolved(const conv_spec& s) {
  const auto g = resolve_conv(s);
  REQUIRE_MESSAGE(g.ok(), g.err().id());
  return g.value();
}


}  // namespace

TEST_CASE("VALID: out = (in - kernel) / stride + 1, no padding") {
  const auto g = resolved({.H = 20, .W = 30, .C = 16, .out_channels = 8, .kernel_h = 3, .kernel_w = 5, .stride_y = 2});
  CHECK(g.out_h == 9);   // (20 - 3) / 2 + 1
  CHECK(g.out_w == 26);  // (30 - 5) / 1 + 1
  CHECK(g.pad == padding_sides{});
}

TEST_CASE("SAME as TFLite: out = ceil(in / stride), the odd row or column at the bottom or right") {
  // Mesa's worked example B (ops-reference §2.2): 88x88, 3x3, stride 2: out 44, pads 0 and 1
  const auto b = resolved({.H = 88, .W = 88, .C = 80, .out_channels = 40, .kernel_h = 3, .kernel_w = 3, .stride_y = 2,
                           .stride_x = 2, .padding = conv_padding::same});
  CHECK(b.out_h == 44);
  CHECK(b.out_w == 44);
  CHECK(b.pad == padding_sides{.top = 0, .bottom = 1, .left = 0, .right = 1});
  // example A: 20x20, 3x3, stride 1: out 20, one row and column a side
  const auto a = resolved({.H = 20, .W = 20, .C = 80, .out_channels = 40, .kernel_h = 3, .kernel_w = 3,
                           .padding = conv_padding::same});
  CHECK(a.out_h == 20);
  CHECK(a.pad == padding_sides{1, 1, 1, 1});
  // 7x7 at stride 2 over 224: out 112, total (112 - 1)·2 + 7 - 224 = 5 → 2 before, 3 after
  const auto c = resolved({.H = 224, .W = 224, .C = 16, .out_channels = 32, .kernel_h = 7, .kernel_w = 7, .stride_y = 2,
                           .stride_x = 2, .padding = conv_padding::same});
  CHECK(c.out_h == 112);
  CHECK(c.pad == padding_sides{2, 3, 2, 3});
  // dilation 2 makes a 3x3 kernel span 5: total 4 at stride 1 → 2 a side, as PyTorch's "same"
  const auto d = resolved({.H = 16, .W = 16, .C = 16, .out_channels = 16, .kernel_h = 3, .kernel_w = 3,
                           .dilation_y = 2, .dilation_x = 2, .padding = conv_padding::same});
  CHECK(d.out_h == 16);
  CHECK(d.pad == padding_sides{2, 2, 2, 2});
  // a 1x1 pointwise conv needs none
  const auto p = resolved({.H = 10, .W = 10, .C = 32, .out_channels = 64, .padding = conv_padding::same});
  CHECK(p.pointwise());
  CHECK(p.pad == padding_sides{});
  CHECK(p.out_h == 10);
}

TEST_CASE("explicit sides, as PyTorch's padding=(1, 2): out = (in + both sides - span) / stride + 1") {
  const auto g = resolved({.H = 10, .W = 10, .C = 16, .out_channels = 16, .kernel_h = 3, .kernel_w = 5,
                           .padding = conv_padding::explicit_sides, .pad = {1, 1, 2, 2}});
  CHECK(g.out_h == 10);  // 10 + 2 - 3 + 1
  CHECK(g.out_w == 10);  // 10 + 4 - 5 + 1
}

// DPU_OUT_CVT: multiplier = scale / 2^shift with the scale in [2^14, 2^15), rounded to nearest.
TEST_CASE("the requantization: the multiplier as a 15-bit scale over a shift, the offset in int8 units") {
  // Mesa's example A (ops-reference §2.1): 0.02 · 0.005 / 0.04 = 0.0025 → 0x51ec, shift 23
  // (0.0025 · 2^23 = 20971.52), offset 120 − 0x80
  const auto a = resolved({.dtype = conv_data::uint8, .H = 20, .W = 20, .C = 80, .out_channels = 40, .kernel_h = 3,
                           .kernel_w = 3, .padding = conv_padding::same, .input = {0.02f, 100},
                           .weights = {0.005f, 128}, .output = {0.04f, 120}});
  CHECK(a.requant == requantization{0x51ec, 23, 120 - 0x80});
  // int8 tensors are not shifted: the offset is the zero point
  const auto i = resolved({.dtype = conv_data::int8, .H = 4, .W = 4, .C = 16, .out_channels = 16, .input = {0.02f, -3},
                           .weights = {0.005f, 0}, .output = {0.04f, -7}});
  CHECK(i.requant == requantization{0x51ec, 23, -7});
  // (2 − 2^-20) · 2^-9: 2^23 · m = 32768 − 2^-6 rounds to 2^15, so 2^14 at shift 22 (Mesa's
  // truncate-and-add-one gives 0x4000 at 23, half the multiplier)
  const auto carry = resolved({.H = 4, .W = 4, .C = 16, .out_channels = 16,
                               .input = {(2.0f - 1.0f / 1048576.0f) / 512.0f, 0}, .weights = {1.0f, 0},
                               .output = {1.0f, 0}});
  CHECK(carry.requant == requantization{16384, 22, 0});
  // 2^-30: 2^14 at shift 44; 20000 needs no shift; 32767 is the largest scale
  CHECK(resolved({.H = 4, .W = 4, .C = 16, .out_channels = 16, .input = {1.0f / 1073741824.0f, 0}}).requant.shift == 44);
  CHECK(resolved({.H = 4, .W = 4, .C = 16, .out_channels = 16, .input = {20000.0f, 0}}).requant ==
        requantization{20000, 0, 0});
  CHECK(resolved({.H = 4, .W = 4, .C = 16, .out_channels = 16, .input = {32767.0f, 0}}).requant.scale == 32767);
}

TEST_CASE("each rule refuses at run time what its compile-fail snippet refuses at compile time") {
  const conv_spec ok{.H = 8, .W = 8, .C = 16, .out_channels = 16, .kernel_h = 3, .kernel_w = 3};
  REQUIRE(resolve_conv(ok).ok());
  auto with = [&](auto edit) {
    conv_spec s = ok;
    edit(s);
    return s;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.C = 0; })), rules::conv_shape_nonzero);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.stride_x = 0; })), rules::conv_shape_nonzero);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.dilation_y = 0; })), rules::conv_shape_nonzero);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.out_dtype = precision::int32; })), rules::conv_precision);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.dtype = conv_data::fp16; })), rules::conv_precision);  // fp16 writes fp16/fp32
  CHECK(resolve_conv(with([](conv_spec& s) { s.dtype = conv_data::fp16, s.out_dtype = precision::fp32; })).ok());
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.depthwise = true, s.out_channels = 32; })), rules::conv_depthwise);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.W = 2048; })), rules::conv_input_size);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.H = 0xffff'ffffu; })), rules::conv_input_size);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.C = 16385; })), rules::conv_channels);
  CHECK(resolve_conv(with([](conv_spec& s) { s.C = 16384; })).ok());
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.out_channels = 16384; })), rules::conv_channels);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.H = s.W = 64, s.kernel_w = 32; })), rules::conv_kernel_size);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.stride_y = 8; })), rules::conv_stride);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.H = s.W = 80, s.dilation_x = 33; })), rules::conv_dilation);
  CHECK(resolve_conv(with([](conv_spec& s) { s.H = s.W = 80, s.dilation_x = 32; })).ok());
  // padding: 4-bit top and left, no side as wide as the kernel's span
  auto padded = [&](padding_sides p) {
    return with([&](conv_spec& s) { s.padding = conv_padding::explicit_sides, s.pad = p; });
  };
  CHECK_BREAKS(resolve_conv(padded({.top = 3})), rules::conv_padding);     // 3 rows of padding, a span of 3
  CHECK_BREAKS(resolve_conv(padded({.right = 3})), rules::conv_padding);
  CHECK(resolve_conv(padded({2, 2, 2, 2})).ok());
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) {
          s.H = s.W = 64, s.kernel_h = s.kernel_w = 31, s.padding = conv_padding::explicit_sides, s.pad.left = 16;
        })), rules::conv_padding);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.H = s.W = 2; })), rules::conv_kernel_larger);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.H = 20, s.dilation_y = 10; })), rules::conv_kernel_larger);  // span 21
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.H = 3, s.W = 2047, s.padding = conv_padding::explicit_sides,
                                        s.pad = {0, 0, 2, 2}; })), rules::conv_output_size);  // 2049 wide
  for (float bad : {0.0f, -1.0f, nan, inf}) {
    CAPTURE(bad);
    CHECK_BREAKS(resolve_conv(with([&](conv_spec& s) { s.input.scale = bad; })), rules::conv_scale);
    CHECK_BREAKS(resolve_conv(with([&](conv_spec& s) { s.weights.scale = bad; })), rules::conv_scale);
    CHECK_BREAKS(resolve_conv(with([&](conv_spec& s) { s.output.scale = bad; })), rules::conv_scale);
  }
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.dtype = conv_data::uint8, s.input.zero_point = 256; })), rules::conv_zero_point);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.dtype = conv_data::uint8, s.output.zero_point = -1; })), rules::conv_zero_point);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.weights.zero_point = 128; })), rules::conv_zero_point);  // int8
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.input.scale = 1000, s.weights.scale = 100; })), rules::conv_requant_range);
  CHECK_BREAKS(resolve_conv(with([](conv_spec& s) { s.input.scale = 32768; })), rules::conv_requant_range);
  // an fp16 conv has no quantization to check
  CHECK(resolve_conv(with([&](conv_spec& s) { s.dtype = conv_data::fp16, s.out_dtype = precision::fp16, s.input.scale = nan; })).ok());
}

TEST_CASE("a conv request resolves at compile time to the geometry it resolves to at run time") {
  constexpr conv_geometry g = conv_geometry_of<conv_spec{.dtype = conv_data::uint8, .H = 112, .W = 112, .C = 32,
                                                         .out_channels = 32, .kernel_h = 3, .kernel_w = 3,
                                                         .stride_y = 2, .stride_x = 2, .padding = conv_padding::same,
                                                         .input = {0.02f, 128}, .weights = {0.005f, 128},
                                                         .output = {0.04f, 0}, .activation = output_activation::relu6}>();
  static_assert(g.out_h == 56 && g.out_w == 56);
  static_assert(g.pad == padding_sides{0, 1, 0, 1});
  static_assert(g.requant.offset == -0x80);
  CHECK(g == resolved(g.spec));
}
