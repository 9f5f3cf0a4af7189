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

  // Peak rates, for lower bounds on time only (core/roofline.hpp); none is a measurement.
  // NPU clock 1 GHz and 1024 int8 MACs per cycle per core: "6 TOPS ÷ 3 cores ÷ 1 GHz ÷ 2"
  // (reference, "whether the int4 MAC array is 2x wide"). int4: 2048, the same reference's
  // reading of the 1 KB B atom (64N x 32K), which it calls plausible, not measured. fp16:
  // 512, the same atom argument (16N x 32K); no public per-cycle figure exists, and the
  // 0.5 TFLOPS fp16 a public benchmark quotes (clehaxze.tw, 2023) is lower, so 512 keeps a
  // bound a lower bound. The best measured rate is 10x under these (reference: "best int4
  // ~ 105 GMAC/s/core").
  static constexpr std::uint64_t npu_hz = 1'000'000'000;
  static constexpr std::uint32_t macs_per_cycle_fp16 = 512;
  static constexpr std::uint32_t macs_per_cycle_int8 = 1024;
  static constexpr std::uint32_t macs_per_cycle_int4 = 2048;
  // DRAM: four 16-bit LPDDR4X/LPDDR5 channels (RK3588 datasheet, as quoted in
  // forum.radxa.com/t/rock-5a-lpddr4x-memory-bandwidth/19293) at LPDDR4X's 4266 MT/s:
  // 4 x 2 bytes x 4.266e9 = 34.1 GB/s, the whole SoC's peak. What share the NPU's DMAs can
  // draw is not public: a parameter of the bound (roofline_params).
  static constexpr std::uint64_t dram_bytes_per_second = 34'128'000'000;
  // Per submit: 38 us, the smallest whole-submit time the reference measured (the SDP path
  // of attention-normalise at N = 64, "38 vs 547 us", a matmul and a host repack included;
  // its "submit floor" is quoted at ~40-110 us). An estimate, not a bound: 0 gives one.
  static constexpr std::uint64_t submit_overhead_ns = 38'000;
};

}  // namespace regcmd::soc
