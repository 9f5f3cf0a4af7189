// Operand packers: index formulas typed from the recipes, and round trips.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include <regcmd/core/half.hpp>
#include <regcmd/programs/packing.hpp>

using namespace regcmd;

namespace {
matmul_geometry geometry(const matmul_spec& s) {
  const auto g = resolve(s);
  REQUIRE(g.ok());
  return g.value();
}
}  // namespace

TEST_CASE("binary16 conversion") {
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
  const auto g = geometry({.in = precision::fp16, .out = precision::fp32, .M = 1, .K = 64, .N = 32});
  std::vector<float> b(64 * 32, 0.0f);
  b[37 * 32 + 17] = 1.0f;  // k = 37, n = 17 in B[K][N]
  std::vector<std::uint8_t> out(g.weight_bytes());
  REQUIRE(pack_weights<float>(g, b, out).ok());
  const std::size_t index = (17 / 16) * 16 * 64 + (37 / 32) * 512 + (17 % 16) * 32 + 37 % 32;  // 1024+512+32+5
  CHECK(index == 1573);
  CHECK(out[index * 2] == 0x00);
  CHECK(out[index * 2 + 1] == 0x3c);
  std::size_t nonzero = 0;
  for (std::uint8_t v : out) nonzero += v != 0;
  CHECK(nonzero == 1);
}

TEST_CASE("int8 weight index: (n/32)*32*K + (k/32)*1024 + (n%32)*32 + k%32, and B^T input") {
  const auto g = geometry({.in = precision::int8, .out = precision::int32, .M = 1, .K = 64, .N = 64});
  std::vector<std::int8_t> bt(64 * 64, 0);  // B^T[N][K]
  bt[40 * 64 + 33] = -5;                     // n = 40, k = 33
  std::vector<std::uint8_t> out(g.weight_bytes());
  REQUIRE(pack_weights<std::int8_t>(g, bt, out, weights_order::n_by_k).ok());
  const std::size_t index = 1 * 32 * 64 + 1 * 1024 + 8 * 32 + 1;
  CHECK(static_cast<std::int8_t>(out[index]) == -5);
}

TEST_CASE("surface features: (k / C2) * M * C2 + m * C2 + k % C2, C2 = 8 for fp16") {
  const auto g = geometry({.in = precision::fp16, .out = precision::fp32, .M = 4, .K = 64, .N = 16,
                           .layout = operand_layout::surface});
  std::vector<float> a(4 * 64, 0.0f);
  a[2 * 64 + 11] = 2.0f;  // m = 2, k = 11
  std::vector<std::uint8_t> out(4 * 64 * 2);
  REQUIRE(pack_features<float>(g, a, out).ok());
  const std::size_t index = (11 / 8) * 4 * 8 + 2 * 8 + 11 % 8;  // 32 + 16 + 3
  CHECK(out[index * 2 + 1] == 0x40);
}

TEST_CASE("row-major features: padded rows at the pitch; int4 rows are nibbles and a zero half") {
  const auto g = geometry({.in = precision::fp16, .out = precision::fp32, .M = 2, .K = 40, .N = 16});
  CHECK(g.feature_pitch == 128);  // K padded to 64
  std::vector<float> a(2 * 40, 1.0f);
  std::vector<std::uint8_t> out(256, 0xaa);
  REQUIRE(pack_features<float>(g, a, out).ok());
  CHECK(out[128 + 39 * 2 + 1] == 0x3c);  // row 1, k = 39
  CHECK(out[128 + 40 * 2] == 0);         // the padding is zero
  CHECK(out[127] == 0);

  const auto q = geometry({.in = precision::int4, .out = precision::int16, .M = 2, .K = 64, .N = 32});
  CHECK(q.feature_pitch == 64);
  std::vector<std::int8_t> qa(2 * 64, 0);
  qa[64 + 2] = -1;
  qa[64 + 3] = 7;
  std::vector<std::uint8_t> qout(128, 0xaa);
  REQUIRE(pack_features<std::int8_t>(q, qa, qout).ok());
  CHECK(qout[64 + 1] == 0x7f);  // k = 2 low nibble 0xf, k = 3 high nibble 0x7
  CHECK(qout[64 + 40] == 0);    // the zero half-line
  std::vector<std::int8_t> too_big(2 * 64, 8);
  CHECK(pack_features<std::int8_t>(q, too_big, qout).err().id() == "int4-range");
}

TEST_CASE("pack then unpack gives the data back: features, weights, outputs, both layouts, random data") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> real(-4.0f, 4.0f);
  std::uniform_int_distribution<int> int8(-128, 127), int4(-8, 7);
  struct pair {
    precision in, out;
  };
  for (pair p : {pair{precision::fp16, precision::fp32}, pair{precision::fp16, precision::fp16},
                 pair{precision::int8, precision::int32}, pair{precision::int4, precision::int16}})
    for (operand_layout layout : {operand_layout::row_major, operand_layout::surface}) {
      if (p.in == precision::int4 && layout == operand_layout::surface) continue;
      // ragged K and N: the padding must come back stripped
      const auto g = geometry({.in = p.in, .out = p.out, .M = 8, .K = 100, .N = 40, .layout = layout});
      CAPTURE(static_cast<int>(p.in));
      CAPTURE(static_cast<int>(layout));
      std::vector<std::uint8_t> fbuf(g.feature_bytes()), wbuf(g.weight_bytes()), obuf(g.output_bytes());
      if (p.in == precision::fp16) {
        std::vector<float> a(8 * 100), b(100 * 40), back_a(a.size()), back_b(b.size());
        for (float& v : a) v = half_to_float(float_to_half(real(rng)));
        for (float& v : b) v = half_to_float(float_to_half(real(rng)));
        REQUIRE(pack_features<float>(g, a, fbuf).ok());
        REQUIRE(pack_weights<float>(g, b, wbuf).ok());
        REQUIRE(unpack_features<float>(g, fbuf, back_a).ok());
        REQUIRE(unpack_weights<float>(g, wbuf, back_b).ok());
        CHECK(back_a == a);
        CHECK(back_b == b);
        std::vector<float> c(8 * 40), back_c(c.size());
        for (float& v : c) v = half_to_float(float_to_half(real(rng)));
        REQUIRE(pack_output<float>(g, c, obuf).ok());
        REQUIRE(unpack_output<float>(g, obuf, back_c).ok());
        CHECK(back_c == c);
      } else {
        auto draw = [&] { return static_cast<std::int8_t>(p.in == precision::int4 ? int4(rng) : int8(rng)); };
        std::vector<std::int8_t> a(8 * 100), b(100 * 40), back_a(a.size()), back_b(b.size());
        for (auto& v : a) v = draw();
        for (auto& v : b) v = draw();
        REQUIRE(pack_features<std::int8_t>(g, a, fbuf).ok());
        REQUIRE(pack_weights<std::int8_t>(g, b, wbuf).ok());
        REQUIRE(unpack_features<std::int8_t>(g, fbuf, back_a).ok());
        REQUIRE(unpack_weights<std::int8_t>(g, wbuf, back_b).ok());
        CHECK(back_a == a);
        CHECK(back_b == b);
        std::vector<std::int32_t> c(8 * 40), back_c(c.size());
        for (auto& v : c) v = static_cast<std::int32_t>(rng() % 60000) - 30000;
        REQUIRE(pack_output<std::int32_t>(g, c, obuf).ok());
        REQUIRE(unpack_output<std::int32_t>(g, obuf, back_c).ok());
        CHECK(back_c == c);
      }
    }
}

TEST_CASE("plan weights: one packed block per (N tile, K slice)") {
  const auto p = plan(matmul_spec{.in = precision::fp16, .out = precision::fp32, .M = 1, .K = 4096, .N = 64},
                      plan_options{.k_slice = 2048});
  REQUIRE(p.ok());
  const plan_shape& s = p.value();
  CHECK(s.weight_block_offset(0, 1) == 2048 * 64 * 2);
  std::vector<float> b(4096 * 64, 0.0f);
  b[2048 * 64 + 3] = 1.0f;  // k = 2048 (first row of slice 1), n = 3
  std::vector<std::uint8_t> out(s.weight_bytes());
  REQUIRE(pack_weights<float>(s, b, out).ok());
  const std::size_t index = 3 * 32;  // k = 0, n = 3 of block (0, 1)
  CHECK(out[s.weight_block_offset(0, 1) + index * 2 + 1] == 0x3c);
}

TEST_CASE("finish_plan sums the slices' partials and converts") {
  const auto p = plan(matmul_spec{.in = precision::int8, .out = precision::int32, .M = 2, .K = 4096, .N = 32},
                      plan_options{.k_slice = 2048});
  REQUIRE(p.ok());
  const plan_shape& s = p.value();
  REQUIRE(s.slices == 2);
  std::vector<std::uint8_t> partials(plan_output_bytes(s), 0);
  auto put = [&](std::uint32_t slice, std::uint32_t m, std::uint32_t n, std::int32_t v) {
    const std::size_t at = slice * (plan_output_bytes(s) / 2) + m * s.output_pitch + n * 4;
    for (int i = 0; i < 4; ++i) partials[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(static_cast<std::uint32_t>(v) >> (8 * i));
  };
  put(0, 1, 5, 1000);
  put(1, 1, 5, -3000);
  std::vector<std::int32_t> c(2 * 32);
  REQUIRE(finish_plan<std::int32_t>(s, partials, c).ok());
  CHECK(c[1 * 32 + 5] == -2000);
  CHECK(c[0] == 0);
}

TEST_CASE("packers refuse wrong sizes instead of writing past a buffer") {
  const auto g = geometry({.in = precision::fp16, .out = precision::fp32, .M = 4, .K = 64, .N = 16});
  std::vector<float> a(4 * 64);
  std::vector<std::uint8_t> small(100);
  CHECK(pack_features<float>(g, a, small).err().id() == "buffer-size");
  std::vector<float> wrong(7);
  std::vector<std::uint8_t> big(4096);
  CHECK(pack_features<float>(g, wrong, big).err().id() == "host-size");
  CHECK(pack_weights<float>(g, wrong, big).err().id() == "host-size");
}
