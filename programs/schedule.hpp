#pragma once
// The CBUF scheduler of a matmul: how many of the 12 CBUF banks hold features
// (CNA_CBUF_CON0 DATA_BANK, the rest hold weights), how many rows are buffered before the
// MACs start (CNA_CONV_CON2 FEATURE_GRAINS), and the largest M one op can take.
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

#include <regcmd/core/precision.hpp>
#include <regcmd/core/soc.hpp>

namespace regcmd {

enum class schedule : std::uint8_t { automatic, template_split, bank_split };

constexpr bool is_pow2(std::uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

constexpr std::uint32_t ceil_div(std::uint64_t a, std::uint64_t b) { return static_cast<std::uint32_t>((a + b - 1) / b); }

constexpr std::uint32_t align_up(std::uint32_t v, std::uint32_t a) { return ceil_div(v, a) * a; }

// The production rule (reference: "sched=1 only for pow2 K in [128,2048) fp16 / K in
// {512,1024} int8, sched=0 (template) otherwise").
constexpr schedule production_schedule(precision in, std::uint32_t K) {
  if (in == precision::fp16 && is_pow2(K) && K >= 128 && K < 2048) return schedule::bank_split;
  if (in == precision::int8 && (K == 512 || K == 1024)) return schedule::bank_split;
  return schedule::template_split;
}

constexpr schedule resolve_schedule(schedule requested, precision in, std::uint32_t K) {
  return requested == schedule::automatic ? production_schedule(in, K) : requested;
}

// Smallest K at which the bank split is valid (reference "Small-K validity": fp16 K >= 96,
// int8 K >= 256; below, the MAC array emits zeros or garbage).
constexpr std::uint32_t bank_split_min_k(precision in) { return in == precision::int8 ? 256 : 96; }

// R: rows per internal M-tile.
template <class Soc = soc::rk3588>
constexpr std::uint32_t rows_per_tile(precision in, std::uint32_t K) {
  return (in == precision::fp16 ? Soc::tile_elements_fp16 : Soc::tile_elements_int8) / K;
}

// CNA_CONV_CON2.FEATURE_GRAINS = min(M + 1, R); the reference writes 0x1010 = 16 * that.
template <class Soc = soc::rk3588>
constexpr std::uint32_t feature_grains(precision in, std::uint32_t M, std::uint32_t K) {
  return std::min(M + 1, rows_per_tile<Soc>(in, K));
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
  if (in == precision::int8) return std::max(1u, ceil_div(std::uint64_t{ceil_div(M, 64)} * K, 512));
  return std::max(1u, ceil_div(bytes_of(in, std::uint64_t{M} * K), Soc::cbuf_bank_bytes));
}

// The largest M one op takes (0 when nothing fits).
//   fp16: 16384/K (template, one bank) or 180224/K (bank split, 11 banks of K*2-byte rows).
//   int8: 32768/K (template, one bank) or, bank split, 64-row groups of w = K/512 banks
//     within the 11 data banks, 64*floor(11/w): 704/320/128/64 at K = 512/1024/2048/4096,
//     the reference's measured 64*floor(12/w - 1) (at N = 64), and none above K = 5632.
//     The split walks data-ward as M grows and int8 keeps its weight CBUF-resident, so it
//     stops earlier than fp16.
//   int4: rows x K <= 16384 (reference "0x107c").
template <class Soc = soc::rk3588>
constexpr std::uint32_t m_ceiling(precision in, std::uint32_t K, schedule s) {
  const std::uint32_t banks = Soc::cbuf_banks;
  const std::uint32_t bank = Soc::cbuf_bank_bytes;
  switch (in) {
    case precision::fp16:
      return s == schedule::bank_split ? (banks - 1) * bank / (2 * K) : bank / (2 * K);
    case precision::int8: {
      if (s != schedule::bank_split) return bank / K;
      return 64 * ((banks - 1) * 512 / K);  // the same bound as data_banks <= 11
    }
    case precision::int4: return 16384 / K;
    default: return 0;
  }
}

}  // namespace regcmd
