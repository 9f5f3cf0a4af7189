#pragma once
// Per-SoC numbers. The ISA is shared across the RK35xx family; these limits are not
// (regcmd-isa-reference "Limits & tiling (RK3588)"). Programs and rules take the SoC as a
// parameter so a second SoC is a new traits type, not an edit of the emitters.

#include <cstdint>

namespace regcmd::soc {

struct rk3588 {
  static constexpr const char* name = "RK3588";
  // CBUF: 12 banks of 32 KiB (fact sheet §4, Mesa rkt_ml.h; reference "M-tiling scheduler").
  static constexpr unsigned cbuf_banks = 12;
  static constexpr std::uint32_t cbuf_bank_bytes = 32768;
  // Raw single-op contraction cap: K = 10752 runs, K = 10784 wedges (reference "Limits").
  static constexpr std::uint32_t max_k_single_op = 10752;
  // Contraction slice of the production K-split path (reference "Limits").
  static constexpr std::uint32_t max_k_slice = 2048;
  // Output width: N > 8192 is silently wrong (reference "Limits").
  static constexpr std::uint32_t max_n = 8192;
  // Rows per internal M-tile R = elements / K: 32768 fp16 elements, 65536 int8 (int8 packs
  // twice the rows; int4 reuses the int8 entry) (reference "The M-tiling scheduler").
  static constexpr std::uint32_t tile_elements_fp16 = 32768;
  static constexpr std::uint32_t tile_elements_int8 = 65536;
  // int4's activation budget: rows x K <= 16384 (reference "0x107c").
  static constexpr std::uint32_t int4_rows_times_k = 16384;
  static constexpr unsigned cores = 3;
  // Every address register and PC_BASE_ADDRESS are 32 bits wide (fact sheet §1.5).
  static constexpr std::uint64_t max_iova = 0xffff'ffffu;
};

}  // namespace regcmd::soc
