// The CBUF scheduler against the reference's numbers ("The M-tiling scheduler").
#include <regcmd/testing/doctest.hpp>

#include <cstdint>

#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

namespace {
// CNA_CBUF_CON0 and CNA_CONV_CON2 values of a built row-major program.
struct cbuf_values {
  std::uint32_t con0, con2;
};
cbuf_values cbuf_of(precision in, std::uint32_t M, std::uint32_t K, std::uint32_t N = 64,
                    schedule s = schedule::automatic) {
  const precision out = in == precision::int8 ? precision::int32 : precision::fp32;
  const auto mm = build(matmul_spec{.dtype = in, .out_dtype = out, .M = M, .K = K, .N = N, .sched = s});
  REQUIRE(mm.ok());
  const auto& e = mm.value().code.entries;
  // Register positions are fixed (matmul-recipe §1.1): #2 CONV_CON2, #11 CBUF_CON0.
  REQUIRE(e[2].offset() == 0x1010);
  REQUIRE(e[11].offset() == 0x1040);
  return {e[11].value(), e[2].value()};
}
}  // namespace

TEST_CASE("the production rule picks the bank split only where the reference validated it") {
  CHECK(matmul::production_schedule(precision::fp16, 128) == schedule::bank_split);
  CHECK(matmul::production_schedule(precision::fp16, 1024) == schedule::bank_split);
  CHECK(matmul::production_schedule(precision::fp16, 2048) == schedule::template_split);
  CHECK(matmul::production_schedule(precision::fp16, 96) == schedule::template_split);
  CHECK(matmul::production_schedule(precision::fp16, 384) == schedule::template_split);  // not a power of two
  CHECK(matmul::production_schedule(precision::int8, 512) == schedule::bank_split);
  CHECK(matmul::production_schedule(precision::int8, 1024) == schedule::bank_split);
  CHECK(matmul::production_schedule(precision::int8, 2048) == schedule::template_split);
  CHECK(matmul::production_schedule(precision::int8, 256) == schedule::template_split);
  CHECK(matmul::production_schedule(precision::int4, 512) == schedule::template_split);
}

TEST_CASE("fp16 CBUF_CON0: 0xb1 base, one bank per 0x0f step") {
  // base 0xb1 - 15*(2^lg - 1), slope 15*2^lg, lg = log2(K/256) (reference), at whole 64-row groups
  CHECK(cbuf_of(precision::fp16, 1, 256).con0 == 0xb1);
  CHECK(cbuf_of(precision::fp16, 64, 256).con0 == 0xb1);
  CHECK(cbuf_of(precision::fp16, 128, 256).con0 == 0xa2);
  CHECK(cbuf_of(precision::fp16, 192, 256).con0 == 0x93);
  CHECK(cbuf_of(precision::fp16, 704, 256).con0 == 0x1b);
  CHECK(cbuf_of(precision::fp16, 64, 512).con0 == 0xa2);
  CHECK(cbuf_of(precision::fp16, 128, 512).con0 == 0x84);
  CHECK(cbuf_of(precision::fp16, 320, 512).con0 == 0x2a);
  CHECK(cbuf_of(precision::fp16, 352, 512).con0 == 0x1b);
  CHECK(cbuf_of(precision::fp16, 64, 1024).con0 == 0x84);
  CHECK(cbuf_of(precision::fp16, 128, 1024).con0 == 0x48);
  CHECK(cbuf_of(precision::fp16, 176, 1024).con0 == 0x1b);
  // K = 2048 keeps the template split (sched=0)
  CHECK(cbuf_of(precision::fp16, 8, 2048).con0 == 0xb1);
}

TEST_CASE("int8 CBUF_CON0: the same steps at effective K = K/2") {
  CHECK(cbuf_of(precision::int8, 64, 512).con0 == 0xb1);
  CHECK(cbuf_of(precision::int8, 128, 512).con0 == 0xa2);
  CHECK(cbuf_of(precision::int8, 704, 512).con0 == 0x1b);
  CHECK(cbuf_of(precision::int8, 64, 1024).con0 == 0xa2);
  CHECK(cbuf_of(precision::int8, 128, 1024).con0 == 0x84);
  CHECK(cbuf_of(precision::int8, 320, 1024).con0 == 0x2a);
  CHECK(cbuf_of(precision::int8, 16, 2048).con0 == 0xb1);  // template split
}

TEST_CASE("CNA_CONV_CON2 = 16 * min(M + 1, R), R = 32768/K fp16, 65536/K int8") {
  CHECK(cbuf_of(precision::fp16, 1, 4096).con2 == 0x20);  // decode: M = 1
  CHECK(cbuf_of(precision::fp16, 1, 512).con2 == 0x20);
  CHECK(cbuf_of(precision::fp16, 64, 512).con2 == 0x400);   // R = 64
  CHECK(cbuf_of(precision::fp16, 32, 512).con2 == 0x210);   // M + 1 = 33
  CHECK(cbuf_of(precision::fp16, 704, 256).con2 == 0x800);  // R = 128
  CHECK(cbuf_of(precision::int8, 704, 512).con2 == 0x800);  // R = 128
  CHECK(cbuf_of(precision::int8, 100, 1024).con2 == 0x400); // R = 64
}

TEST_CASE("decode shape M = 1: 0x1010 = 0x20 and 0x1040 = 0xb1 up to K = 10752") {
  for (std::uint32_t K : {512u, 2048u, 4096u, 8192u, 10752u}) {
    CAPTURE(K);
    const cbuf_values v = cbuf_of(precision::fp16, 1, K, 4096);
    CHECK(v.con0 == 0xb1);
    CHECK(v.con2 == 0x20);
  }
}

TEST_CASE("the M ceiling per precision, K and schedule: the measured 704/352/176 (fp16) and 704/320/128/64 (int8)") {
  // fp16: 16384/K (template), 180224/K (bank split): measured 704@K256, 352@K512, 176@K1024
  CHECK(matmul::m_ceiling(precision::fp16, 256, schedule::bank_split) == 704);
  CHECK(matmul::m_ceiling(precision::fp16, 512, schedule::bank_split) == 352);
  CHECK(matmul::m_ceiling(precision::fp16, 1024, schedule::bank_split) == 176);
  CHECK(matmul::m_ceiling(precision::fp16, 2048, schedule::template_split) == 8);
  CHECK(matmul::m_ceiling(precision::fp16, 4096, schedule::template_split) == 4);
  // int8 at N = 64, measured: 704/320/128/64
  CHECK(matmul::m_ceiling(precision::int8, 512, schedule::bank_split) == 704);
  CHECK(matmul::m_ceiling(precision::int8, 1024, schedule::bank_split) == 320);
  CHECK(matmul::m_ceiling(precision::int8, 2048, schedule::bank_split) == 128);
  CHECK(matmul::m_ceiling(precision::int8, 4096, schedule::bank_split) == 64);
  // beyond the measured K: 11 data banks hold no 64-row group of K = 6144 (w = 12)
  CHECK(matmul::m_ceiling(precision::int8, 5632, schedule::bank_split) == 64);
  CHECK(matmul::m_ceiling(precision::int8, 6144, schedule::bank_split) == 0);
  // int4: rows x K <= 16384
  CHECK(matmul::m_ceiling(precision::int4, 512, schedule::template_split) == 32);
  CHECK(matmul::m_ceiling(precision::int4, 2048, schedule::template_split) == 8);
}

TEST_CASE("the ceilings are where building starts to fail") {
  auto build = [](precision in, std::uint32_t M, std::uint32_t K, schedule s = schedule::automatic) {
    const precision out = in == precision::int8 ? precision::int32 : in == precision::int4 ? precision::int16 : precision::fp32;
    return regcmd::build(matmul_spec{.dtype = in, .out_dtype = out, .M = M, .K = K, .N = 64, .sched = s});
  };
  CHECK(build(precision::fp16, 704, 256).ok());
  CHECK_BREAKS(build(precision::fp16, 705, 256), rules::m_ceiling_fp16);
  CHECK(build(precision::fp16, 352, 512).ok());
  CHECK_BREAKS(build(precision::fp16, 353, 512), rules::m_ceiling_fp16);
  CHECK(build(precision::fp16, 8, 2048).ok());
  CHECK_BREAKS(build(precision::fp16, 9, 2048), rules::m_ceiling_fp16);
  CHECK(build(precision::fp16, 256, 128).ok());
  CHECK_BREAKS(build(precision::fp16, 257, 128), rules::fp16_k128_cap);
  CHECK(build(precision::int8, 320, 1024).ok());
  CHECK_BREAKS(build(precision::int8, 321, 1024), rules::m_ceiling_int8);
  CHECK(build(precision::int8, 128, 2048, schedule::bank_split).ok());
  CHECK_BREAKS(build(precision::int8, 129, 2048, schedule::bank_split), rules::m_ceiling_int8);
  CHECK(build(precision::int8, 64, 4096, schedule::bank_split).ok());
  CHECK_BREAKS(build(precision::int8, 1, 6144, schedule::bank_split), rules::m_ceiling_int8);
  CHECK(build(precision::int4, 32, 512).ok());
  CHECK_BREAKS(build(precision::int4, 33, 512), rules::m_ceiling_int4);
}
