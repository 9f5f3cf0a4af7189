// Operand packers: index formulas and byte positions typed from the recipes.
#include <regcmd/testing/doctest.hpp>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include <regcmd/core/half.hpp>
#include <regcmd/programs/matmul/packing.hpp>

using namespace regcmd;

namespace {
matmul_geometry geometry(const matmul_spec& s) {
  const auto g = resolve(s);
  REQUIRE(g.ok());
  return g.value();
}
}  // namespace

TEST_CASE("binary16 conversion: round to nearest even, inf above 65504, subnormals, every finite half round-trips") {
  CHECK(float_to_half(1.0f) == 0x3c00);
  CHECK(float_to_half(-2.0f) == 0xc000);
  CHECK(float_to_half(65504.0f) == 0x7bff);
  CHECK(float_to_half(65520.0f) == 0x7c00);  // rounds to inf
  CHECK(float_to_half(5.960464477539063e-8f) == 0x0001);  // smallest subnormal
  CHECK(float_to_half(1.0009765625f) == 0x3c01);
  CHECK(float_to_half(1.00048828125f) == 0x3c00);  // halfway: to even
  CHECK(float_to_half(1.00146484375f) == 0x3c02);  // halfway: to even (up)
  CHECK(half_to_float(0x3555) == doctest::Approx(0.33325195f));
  CHECK(half_to_float(0x0001) == 5.960464477539063e-8f);
  for (std::uint32_t h = 0; h < 0x7c00; ++h) CHECK(float_to_half(half_to_float(static_cast<std::uint16_t>(h))) == h);
}

TEST_CASE("fp16 weight index: (n/16)*16*K + (k/32)*512 + (n%16)*32 + k%32") {
  const auto g = geometry({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 64, .N = 32});
  std::vector<float> b(64 * 32, 0.0f);
  b[37 * 32 + 17] = 1.0f;  // k = 37, n = 17 in B[K][N]
  std::vector<std::uint8_t> out(g.weight_bytes());
  REQUIRE(matmul::pack_weights<float>(g, b, out).ok());
  const std::size_t index = (17 / 16) * 16 * 64 + (37 / 32) * 512 + (17 % 16) * 32 + 37 % 32;  // 1024+512+32+5
  CHECK(index == 1573);
  CHECK(out[index * 2] == 0x00);
  CHECK(out[index * 2 + 1] == 0x3c);
  std::size_t nonzero = 0;
  for (std::uint8_t v : out) nonzero += v != 0;
  CHECK(nonzero == 1);
}

TEST_CASE("int8 weight index: (n/32)*32*K + (k/32)*1024 + (n%32)*32 + k%32, and B^T input") {
  const auto g = geometry({.dtype = precision::int8, .out_dtype = precision::int32, .M = 1, .K = 64, .N = 64});
  std::vector<std::int8_t> bt(64 * 64, 0);  // B^T[N][K]
  bt[40 * 64 + 33] = -5;                     // n = 40, k = 33
  std::vector<std::uint8_t> out(g.weight_bytes());
  REQUIRE(matmul::pack_weights<std::int8_t>(g, bt, out, matmul_weight_order::n_by_k).ok());
  const std::size_t index = 1 * 32 * 64 + 1 * 1024 + 8 * 32 + 1;
  CHECK(static_cast<std::int8_t>(out[index]) == -5);
}

TEST_CASE("surface features: (k / C2) * M * C2 + m * C2 + k % C2, C2 = 8 for fp16") {
  const auto g = geometry({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 16,
                           .layout = operand_layout::surface});
  std::vector<float> a(4 * 64, 0.0f);
  a[2 * 64 + 11] = 2.0f;  // m = 2, k = 11
  std::vector<std::uint8_t> out(4 * 64 * 2);
  REQUIRE(matmul::pack_features<float>(g, a, out).ok());
  const std::size_t index = (11 / 8) * 4 * 8 + 2 * 8 + 11 % 8;  // 32 + 16 + 3
  CHECK(out[index * 2 + 1] == 0x40);
}

TEST_CASE("row-major features: padded rows at the pitch, int4 rows are nibbles and a zero half") {
  const auto g = geometry({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 2, .K = 40, .N = 16});
  CHECK(g.feature_pitch == 128);  // K padded to 64
  std::vector<float> a(2 * 40, 1.0f);
  std::vector<std::uint8_t> out(256, 0xaa);
  REQUIRE(matmul::pack_features<float>(g, a, out).ok());
  CHECK(out[128 + 39 * 2 + 1] == 0x3c);  // row 1, k = 39
  CHECK(out[128 + 40 * 2] == 0);         // the padding is zero
  CHECK(out[127] == 0);

  const auto q = geometry({.dtype = precision::int4, .out_dtype = precision::int16, .M = 2, .K = 64, .N = 32});
  CHECK(q.feature_pitch == 64);
  std::vector<std::int8_t> qa(2 * 64, 0);
  qa[64 + 2] = -1;
  qa[64 + 3] = 7;
  std::vector<std::uint8_t> qout(128, 0xaa);
  REQUIRE(matmul::pack_features<std::int8_t>(q, qa, qout).ok());
  CHECK(qout[64 + 1] == 0x7f);  // k = 2 low nibble 0xf, k = 3 high nibble 0x7
  CHECK(qout[64 + 40] == 0);    // the zero half-line
  std::vector<std::int8_t> too_big(2 * 64, 8);
  CHECK_BREAKS(matmul::pack_features<std::int8_t>(q, too_big, qout), rules::int4_range);
}

// Byte positions typed from the layouts (regcmd-isa-reference "Operand tile layouts",
// matmul-recipe §1.3), evaluated by hand: one element each, every other byte zero.
TEST_CASE("surface outputs: element (m, n) at ((n / C2) * M + m) * 16 + (n % C2) * bytes") {
  const auto f = geometry({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 32, .N = 8,
                           .layout = operand_layout::surface});
  std::vector<std::uint8_t> fp32(f.output_bytes(), 0);
  REQUIRE(fp32.size() == 4 * 16 * 4);  // N padded to the fp16 weight tile (16)
  // m = 2, n = 5, C2 = 4 fp32: (1 * 4 + 2) * 16 + 1 * 4 = 100; 3.0f = 0x40400000
  fp32[102] = 0x40;
  fp32[103] = 0x40;
  std::vector<float> c(4 * 8);
  REQUIRE(matmul::unpack_output<float>(f, fp32, c).ok());
  for (std::size_t i = 0; i < c.size(); ++i) CHECK(c[i] == (i == 2 * 8 + 5 ? 3.0f : 0.0f));

  const auto h = geometry({.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 32, .N = 16,
                           .layout = operand_layout::surface});
  std::vector<std::uint8_t> fp16(h.output_bytes(), 0);
  // m = 3, n = 9, C2 = 8 fp16: (1 * 4 + 3) * 16 + 1 * 2 = 114; -2.0 = 0xc000
  fp16[115] = 0xc0;
  std::vector<float> d(4 * 16);
  REQUIRE(matmul::unpack_output<float>(h, fp16, d).ok());
  for (std::size_t i = 0; i < d.size(); ++i) CHECK(d[i] == (i == 3 * 16 + 9 ? -2.0f : 0.0f));

  const auto i = geometry({.dtype = precision::int8, .out_dtype = precision::int32, .M = 4, .K = 32, .N = 8,
                           .layout = operand_layout::surface});
  std::vector<std::uint8_t> int32(i.output_bytes(), 0);
  // m = 1, n = 6, C2 = 4 int32: (1 * 4 + 1) * 16 + 2 * 4 = 88; -7 = 0xfffffff9
  int32[88] = 0xf9;
  int32[89] = int32[90] = int32[91] = 0xff;
  std::vector<std::int32_t> e(4 * 8);
  REQUIRE(matmul::unpack_output<std::int32_t>(i, int32, e).ok());
  for (std::size_t k = 0; k < e.size(); ++k) CHECK(e[k] == (k == 1 * 8 + 6 ? -7 : 0));
}

TEST_CASE("int8 surface features: element (m, k) at ((k / 16) * M + m) * 16 + k % 16") {
  const auto g = geometry({.dtype = precision::int8, .out_dtype = precision::int32, .M = 4, .K = 64, .N = 32,
                           .layout = operand_layout::surface});
  std::vector<std::int8_t> a(4 * 64, 0);
  a[1 * 64 + 17] = -3;  // m = 1, k = 17: (1 * 4 + 1) * 16 + 1 = 81
  a[3 * 64 + 63] = 5;   // m = 3, k = 63: (3 * 4 + 3) * 16 + 15 = 255
  std::vector<std::uint8_t> out(g.feature_bytes(), 0xaa);
  REQUIRE(out.size() == 256);
  REQUIRE(matmul::pack_features<std::int8_t>(g, a, out).ok());
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == (i == 81 ? 0xfd : i == 255 ? 0x05 : 0x00));
}

// The vendor's native int4 B (rknn-matmul-api §1.6): element (k, n) at nibble
// ((n/64)·(K/32) + k/32)·2048 + (n%64)·32 + k%32, the even nibble low (§1.6 "Normal layouts").
TEST_CASE("int4 weights: N64 x K32 tiles of nibbles, the even element in the low nibble") {
  const auto g = geometry({.dtype = precision::int4, .out_dtype = precision::int16, .M = 1, .K = 64, .N = 128});
  std::vector<std::int8_t> b(64 * 128, 0);
  b[5 * 128 + 33] = -3;  // k = 5, n = 33: (0·2 + 0)·2048 + 33·32 + 5 = 1061, byte 530 high
  b[36 * 128 + 2] = 6;   // k = 36, n = 2: (0·2 + 1)·2048 + 2·32 + 4 = 2116, byte 1058 low
  b[40 * 128 + 70] = 5;  // k = 40, n = 70: (1·2 + 1)·2048 + 6·32 + 8 = 6344, byte 3172 low
  b[31 * 128 + 127] = -8;  // k = 31, n = 127: (1·2 + 0)·2048 + 63·32 + 31 = 6143, byte 3071 high
  std::vector<std::uint8_t> out(g.weight_bytes(), 0xaa);
  REQUIRE(out.size() == 4096);
  REQUIRE(matmul::pack_weights<std::int8_t>(g, b, out).ok());
  for (std::size_t i = 0; i < out.size(); ++i)
    CHECK(out[i] == (i == 530 ? 0xd0 : i == 1058 ? 0x06 : i == 3172 ? 0x05 : i == 3071 ? 0x80 : 0x00));
}

TEST_CASE("int4 N pads to whole 64-column tiles, unpadded N must be a multiple of 64") {
  CHECK(geometry({.dtype = precision::int4, .out_dtype = precision::int16, .M = 1, .K = 64, .N = 32}).N == 64);
  CHECK(geometry({.dtype = precision::int4, .out_dtype = precision::int16, .M = 1, .K = 64, .N = 65}).N == 128);
  CHECK(geometry({.dtype = precision::int4, .out_dtype = precision::int16, .M = 1, .K = 64, .N = 32}).weight_bytes() == 64 * 64 / 2);
  const auto r = resolve({.dtype = precision::int4, .out_dtype = precision::int16, .M = 1, .K = 64, .N = 96, .tile_pad = tile_padding::none});
  REQUIRE_FALSE(r.ok());
  CHECK_BREAKS(r, rules::n_alignment);
  CHECK(resolve({.dtype = precision::int4, .out_dtype = precision::int16, .M = 1, .K = 64, .N = 128, .tile_pad = tile_padding::none}).ok());
}

TEST_CASE("plan weights: one packed block per (N tile, K slice)") {
  const auto p = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 4096, .N = 64},
                      plan_options{.k_slice = 2048});
  REQUIRE(p.ok());
  const plan_shape& s = p.value();
  CHECK(s.weight_block_offset(0, 1) == 2048 * 64 * 2);
  std::vector<float> b(4096 * 64, 0.0f);
  b[2048 * 64 + 3] = 1.0f;  // k = 2048 (first row of slice 1), n = 3
  std::vector<std::uint8_t> out(s.weight_bytes());
  REQUIRE(matmul::pack_weights<float>(s, b, out).ok());
  const std::size_t index = 3 * 32;  // k = 0, n = 3 of block (0, 1)
  CHECK(out[s.weight_block_offset(0, 1) + index * 2 + 1] == 0x3c);
}

TEST_CASE("matmul::finish_plan sums the slices' partials and converts") {
  const auto p = plan(matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 2, .K = 4096, .N = 32},
                      plan_options{.k_slice = 2048});
  REQUIRE(p.ok());
  const plan_shape& s = p.value();
  REQUIRE(s.slices == 2);
  std::vector<std::uint8_t> partials(matmul::plan_output_bytes(s), 0);
  auto put = [&](std::uint32_t slice, std::uint32_t m, std::uint32_t n, std::int32_t v) {
    const std::size_t at = slice * (matmul::plan_output_bytes(s) / 2) + m * s.output_pitch + n * 4;
    for (int i = 0; i < 4; ++i) partials[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(static_cast<std::uint32_t>(v) >> (8 * i));
  };
  put(0, 1, 5, 1000);
  put(1, 1, 5, -3000);
  std::vector<std::int32_t> c(2 * 32);
  REQUIRE(matmul::finish_plan<std::int32_t>(s, partials, c).ok());
  CHECK(c[1 * 32 + 5] == -2000);
  CHECK(c[0] == 0);
}

TEST_CASE("packers refuse wrong sizes instead of writing past a buffer") {
  const auto g = geometry({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 16});
  std::vector<float> a(4 * 64);
  std::vector<std::uint8_t> small(100);
  CHECK_BREAKS(matmul::pack_features<float>(g, a, small), rules::buffer_size);
  std::vector<float> wrong(7);
  std::vector<std::uint8_t> big(4096);
  CHECK_BREAKS(matmul::pack_features<float>(g, wrong, big), rules::host_size);
  CHECK_BREAKS(matmul::pack_weights<float>(g, wrong, big), rules::host_size);
}
