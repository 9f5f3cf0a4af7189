#pragma once
// The CBUF rules of a CNA op, one predicate each, called by the requests
// (regcmd/programs/matmul/spec.hpp), the plans (regcmd/programs/matmul/plan.hpp) and the program rules
// (rules/program_rules.hpp) alike. Reference: regcmd-isa-reference "The M-tiling scheduler
// (0x1010, 0x1040)" and "Small-K validity of the 0x1040 schedule".

#include <cstdint>

#include <regcmd/core/error.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

// bank-split: CNA_CBUF_CON0 gives DATA_BANK banks to features and WEIGHT_BANK to weights,
// DATA_BANK + WEIGHT_BANK = 12, DATA_BANK <= 11, WEIGHT_BANK >= 1 (a split below 0x1b hangs).
template <class Soc>
constexpr bool is_bank_split(std::uint64_t data_banks, std::uint64_t weight_banks) {
  return data_banks + weight_banks == Soc::cbuf_banks && data_banks <= Soc::cbuf_banks - 1 && weight_banks >= 1;
}

// small-k-bank-split: more than one data bank (the bank split, sched=1) needs K >= 96
// (fp16) or K >= 256 (int8); below, the MAC array emits zeros or garbage.
constexpr std::uint32_t bank_split_min_k(precision in) { return in == precision::int8 ? 256 : 96; }
constexpr bool bank_split_valid_k(precision in, std::uint32_t K) { return K >= bank_split_min_k(in); }

// int8's bank split moves one bank per 64-row group of w = K/512 banks (the reference's
// "same formula at effective K = K/2"; the ork synth's ceil(M/64)·K/512).
inline constexpr std::uint32_t int8_row_group = 64;
inline constexpr std::uint32_t int8_k_per_bank_step = 512;

// m-ceiling-fp16 / -int8 / -int4: the largest M one op takes (0 when none fits), with one
// data bank (the template split, sched=0) or the bank split (sched=1).
//   fp16: rows of K·2 bytes in the data banks: 16384/K (one bank) or 180224/K (11 banks),
//     the measured 704@K256, 352@K512, 176@K1024.
//   int8: 32768/K with one bank; with the bank split 64-row groups of w = K/512 banks in
//     the 11 data banks, 64·floor(11/w): the measured 704/320/128/64 at K = 512/1024/2048/
//     4096 (the reference's closed form 64·floor(12/w − 1) gives 0 at K = 4096, against its
//     own measurement), and none above K = 5632. int8 keeps its weight CBUF-resident, so it
//     stops before fp16 does.
//   int4: rows × K <= 16384, whatever the split (reference "0x107c").
template <class Soc>
constexpr std::uint32_t m_ceiling(precision in, std::uint32_t K, bool bank_split) {
  const std::uint32_t data_banks = bank_split ? Soc::cbuf_banks - 1 : 1;
  switch (in) {
    case precision::fp16: return data_banks * Soc::cbuf_bank_bytes / (2 * K);
    case precision::int8:
      return bank_split ? int8_row_group * (data_banks * int8_k_per_bank_step / K) : Soc::cbuf_bank_bytes / K;
    case precision::int4: return Soc::int4_rows_times_k / K;
    default: return 0;
  }
}

constexpr const rule& m_ceiling_rule(precision in) {
  return in == precision::fp16 ? rules::m_ceiling_fp16 : in == precision::int8 ? rules::m_ceiling_int8 : rules::m_ceiling_int4;
}

// fp16-k128-cap: fp16 at K = 128 is correct up to M = 256 only (its split needs half-bank
// steps and the envelope is not monotonic above).
constexpr std::uint32_t k128_row_cap(precision in, std::uint32_t K) {
  return in == precision::fp16 && K == 128 ? 256 : 0xffff'ffffu;
}
constexpr bool within_fp16_k128_cap(precision in, std::uint32_t K, std::uint32_t M) { return M <= k128_row_cap(in, K); }

// conv-cbuf-row: a conv task's input rows must fit its data banks. A row takes Mesa's count
// of 128-byte CBUF entries: each pixel's 16-byte channel atoms packed 8 to an entry, a
// remainder of 3 atoms taking an entry per pixel (ops-reference §2.2, "entries_per_slice").
constexpr std::uint64_t cbuf_row_entries(std::uint64_t width, std::uint32_t atoms) {
  const std::uint32_t last = atoms % 8;
  return std::uint64_t{atoms / 8} * width + (last == 3 ? width : (std::uint64_t{last} * width + 7) / 8);
}
template <class Soc>
constexpr bool conv_rows_fit(std::uint64_t data_banks, std::uint64_t rows, std::uint64_t row_entries) {
  return rows * row_entries <= data_banks * (Soc::cbuf_bank_bytes / 128);
}

}  // namespace regcmd
