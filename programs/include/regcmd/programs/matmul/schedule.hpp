#pragma once
// The CBUF scheduler of a matmul: how many of the 12 CBUF banks hold features
// (CNA_CBUF_CON0 DATA_BANK, the rest hold weights) and how many rows are buffered before
// the MACs start (CNA_CONV_CON2 FEATURE_GRAINS). The limits these choices must respect
// (valid splits, M ceilings, small-K validity) are rules: rules/cbuf.hpp.
//
// Reference "The M-tiling scheduler (0x1010, 0x1040)": the 0x1040 value the reference once
// fitted as `base - slope * (mg - 1)` is a bank split, WEIGHT_BANK << 4 | DATA_BANK with
// DATA_BANK + WEIGHT_BANK = 12, one bank per 0x0f step. Two schedules exist:
//   template_split (sched=0): the captured template's 0xb1, one data bank;
//   bank_split     (sched=1): as many data banks as the rows need.
// The production rule picks bank_split only for power-of-two K in [128, 2048) fp16 and for
// K in {512, 1024} int8; everything else keeps the template split.

#include <algorithm>
#include <cstdint>

#include <regcmd/core/math.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/core/soc.hpp>
#include <regcmd/rules/cbuf.hpp>

namespace regcmd {

enum class schedule : std::uint8_t { automatic, template_split, bank_split };

namespace matmul {
// The production rule (reference: "sched=1 only for pow2 K in [128,2048) fp16 / K in
// {512,1024} int8, sched=0 (template) otherwise").
constexpr schedule production_schedule(precision in, std::uint32_t K) {
  if (in == precision::fp16 && is_pow2(K) && K >= 128 && K < 2048) return schedule::bank_split;
  if (in == precision::int8 && (K == 512 || K == 1024)) return schedule::bank_split;
  return schedule::template_split;
}

constexpr schedule resolve_schedule(schedule requested, precision in, std::uint32_t K) {
  return requested == schedule::automatic ? matmul::production_schedule(in, K) : requested;
}

// The M ceiling of a schedule (rules/cbuf.hpp).
template <class Soc = soc::rk3588>
constexpr std::uint32_t m_ceiling(precision in, std::uint32_t K, schedule s) {
  return regcmd::m_ceiling<Soc>(in, K, s == schedule::bank_split);
}

// R: rows per internal M-tile.
template <class Soc = soc::rk3588>
constexpr std::uint32_t rows_per_tile(precision in, std::uint32_t K) {
  return (in == precision::fp16 ? Soc::tile_elements_fp16 : Soc::tile_elements_int8) / K;
}

// CNA_CONV_CON2.FEATURE_GRAINS = min(M + 1, R); the reference writes 0x1010 = 16 * that.
template <class Soc = soc::rk3588>
constexpr std::uint32_t feature_grains(precision in, std::uint32_t M, std::uint32_t K) {
  return std::min(M + 1, matmul::rows_per_tile<Soc>(in, K));
}

// DATA_BANK for a row-major matmul.
//   template_split: 1 (0xb1).
//   bank_split fp16: the banks M rows of K fp16 occupy, ceil(M*K*2 / 32 KiB). This is the
//     reference's base/slope fit at whole 64-row groups, and it reproduces the measured
//     ceilings exactly (704@K256, 352@K512, 176@K1024 are 11 banks).
//   bank_split int8: one step of K/512 banks per 64-row group, ceil(M/64) * K/512 (the ork
//     synth's formula, the reference's "same formula at effective K = K/2").
template <class Soc = soc::rk3588>
constexpr std::uint32_t data_banks(precision in, std::uint32_t M, std::uint32_t K, schedule s) {
  if (s != schedule::bank_split) return 1;
  if (in == precision::int8)
    return std::max(1u, ceil_div(std::uint64_t{ceil_div(M, int8_row_group)} * K, int8_k_per_bank_step));
  return std::max(1u, ceil_div(bytes_of(in, std::uint64_t{M} * K), Soc::cbuf_bank_bytes));
}
}  // namespace matmul

}  // namespace regcmd
