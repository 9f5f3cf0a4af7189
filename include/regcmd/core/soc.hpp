#pragma once
// Per-SoC numbers. The ISA is shared across the RK35xx family; these limits are not
// (regcmd-isa-reference "Limits & tiling (RK3588)"). Every per-SoC number lives in one traits
// type and is read from it: programs, packers and rules take the SoC as a template parameter,
// the runtime and the tools the `soc_info` of the device or of --soc.
//
// A value no source gives is not guessed: that SoC's traits leave it out, and the program
// kinds that need it are refused there with the rule soc-value-unknown (programs_known
// below says which values those are). Only RK3588's programs have been run on hardware.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include <regcmd/core/precision.hpp>

namespace regcmd::soc {

enum class soc_id : std::uint8_t { rk3588, rk3576, rk3568, rk3562 };

// One tile of packed weights, the vendor's native B layout: `n` output channels of `k`
// consecutive contraction values; a matmul's N and K are aligned to it (rknn-matmul-api §1.6,
// §1.8: the alignment table gives the tile's N and K for every SoC and precision).
// {0, 0}: the SoC has no such matmul.
struct weight_tile {
  std::uint32_t n = 0, k = 0;
  constexpr bool known() const { return n != 0; }
  friend constexpr bool operator==(const weight_tile&, const weight_tile&) = default;
};

struct rk3588 {
  static constexpr soc_id id = soc_id::rk3588;
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
  // Three cores: the vendor driver's rk3588 config has num_irqs 3 and core_mask 0x7; its
  // PC fetch count is (entries + 1) / 2 - 1 with pc_data_amount_scale 2
  // (rknpu-uapi-and-register-map §1.1, §1.6).
  static constexpr unsigned cores = 3;
  static constexpr unsigned pc_data_amount_scale = 2;
  // Every address register and PC_BASE_ADDRESS are 32 bits wide (fact sheet §1.5).
  static constexpr std::uint64_t max_iova = 0xffff'ffffu;
  // Native B tiles: fp16 16 x 32, int8 32 x 32, int4 64 x 32 (rknn-matmul-api §1.6 "Native B
  // (RK3588 and RK3576)"; the 1 KB atom, regcmd-isa-reference "The precision enum").
  static constexpr weight_tile weight_tile_fp16{16, 32}, weight_tile_int8{32, 32}, weight_tile_int4{64, 32};
  // The vendor's native B is cut into row blocks of this many K (rknn-matmul-api §1.6 "K
  // segmentation of native B").
  static constexpr std::uint32_t k_segment = 8192;
  // The matmul precision pairs the MAC array computes: fp16 -> fp32, fp16 -> fp16,
  // int8 -> int32, int4 -> int16 (regcmd-isa-reference "Platform support matrix (RK3588)").
  static constexpr bool matmul_pair(precision in, precision out) {
    return (in == precision::fp16 && (out == precision::fp32 || out == precision::fp16)) ||
           (in == precision::int8 && out == precision::int32) || (in == precision::int4 && out == precision::int16);
  }

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

// The matmul pairs of the SoCs other than RK3588: those of the vendor's first matmul types
// (rknn-matmul-api §1.3: 1 fp16 -> fp32, 2 int8 -> int32, 10 int4 -> int16, since 1.6.0) for
// the input precisions the SoC's alignment table lists (§1.8: int4 on RK3576 only);
// fp16 -> fp16 is measured on RK3588 only.
constexpr bool first_types_pair(precision in, precision out, bool int4) {
  return (in == precision::fp16 && out == precision::fp32) || (in == precision::int8 && out == precision::int32) ||
         (int4 && in == precision::int4 && out == precision::int16);
}

// The other SoCs' cores and PC fetch scale are the vendor kernel driver's per-SoC configs
// (rknpu_drv.c, rk3576_rknpu_config / rk356x_rknpu_config / rk3562_rknpu_config, as in the
// public vendor kernel trees): core_mask 0x3 (two npuN_irq) on RK3576, 0x1 on RK3566/RK3568
// and RK3562; pc_data_amount_scale 2, but 1 on RK3566/RK3568 (rknpu-uapi-and-register-map
// §1.1 gives RK3588's: 2, which regcmd/task/program.hpp's pc_fetch_amount encodes).

// RK3576: the vendor header gives it RK3588's native B tiles and K/N alignment, and cuts
// native B at K 4096 (rknn-matmul-api §1.6, §1.8). No source gives its CBUF, its
// contraction and output limits or its M-tile sizes: every program kind is refused on it
// (soc-value-unknown).
struct rk3576 {
  static constexpr soc_id id = soc_id::rk3576;
  static constexpr const char* name = "RK3576";
  static constexpr unsigned cores = 2;
  static constexpr unsigned pc_data_amount_scale = 2;
  static constexpr std::uint64_t max_iova = 0xffff'ffffu;  // the ISA's 32-bit address registers
  static constexpr weight_tile weight_tile_fp16{16, 32}, weight_tile_int8{32, 32}, weight_tile_int4{64, 32};
  static constexpr std::uint32_t k_segment = 4096;
  static constexpr bool matmul_pair(precision in, precision out) { return first_types_pair(in, out, true); }
};

// RK3566 and RK3568 (one NPU): native B int8 16 x 32 and fp16 8 x 16, no int4 (rknn-matmul-
// api §1.6, §1.8: K alignment 32 / 16, N 16 / 8, int4 "-"); one core (and set_core_mask is
// RK3576/RK3588 only, §1.2). No K segmentation is documented for it, and no source gives
// its CBUF or limits: every program kind is refused.
struct rk3568 {
  static constexpr soc_id id = soc_id::rk3568;
  static constexpr const char* name = "RK3566/RK3568";
  static constexpr unsigned cores = 1;
  static constexpr unsigned pc_data_amount_scale = 1;
  static constexpr std::uint64_t max_iova = 0xffff'ffffu;
  static constexpr weight_tile weight_tile_fp16{8, 16}, weight_tile_int8{16, 32}, weight_tile_int4{};
  static constexpr bool matmul_pair(precision in, precision out) { return first_types_pair(in, out, false); }
};
using rk3566 = rk3568;

// RK3562: native B int8 16 x 32 and fp16 8 x 32, no int4 (rknn-matmul-api §1.6, §1.8: K
// alignment 32 / 32, N 16 / 8); one core, as RK3566/RK3568. No CBUF or limits: every
// program kind is refused.
struct rk3562 {
  static constexpr soc_id id = soc_id::rk3562;
  static constexpr const char* name = "RK3562";
  static constexpr unsigned cores = 1;
  static constexpr unsigned pc_data_amount_scale = 2;
  static constexpr std::uint64_t max_iova = 0xffff'ffffu;
  static constexpr weight_tile weight_tile_fp16{8, 32}, weight_tile_int8{16, 32}, weight_tile_int4{};
  static constexpr bool matmul_pair(precision in, precision out) { return first_types_pair(in, out, false); }
};

// The weight tile of an input precision on a SoC ({0, 0}: no such matmul there).
template <class Soc>
constexpr weight_tile weight_tile_of(precision in) {
  switch (in) {
    case precision::fp16:
      return Soc::weight_tile_fp16;
    case precision::int8:
      return Soc::weight_tile_int8;
    case precision::int4:
      return Soc::weight_tile_int4;
    default:
      return {};
  }
}

// The values every program kind reads (CBUF, contraction and output limits, M-tile sizes):
// a SoC without all of them builds no program. The first one missing, for the error.
template <class Soc>
constexpr std::string_view first_unknown_value() {
  if constexpr (!requires {
                  Soc::cbuf_banks;
                  Soc::cbuf_bank_bytes;
                })
    return "CBUF banks and bank size";
  else if constexpr (!requires {
                       Soc::max_k_single_op;
                       Soc::max_k_slice;
                     })
    return "single-op K ceiling and K slice";
  else if constexpr (!requires { Soc::max_n; })
    return "widest output (N)";
  else if constexpr (!requires {
                       Soc::tile_elements_fp16;
                       Soc::tile_elements_int8;
                       Soc::int4_rows_times_k;
                     })
    return "M-tile sizes";
  else
    return {};
}
template <class Soc>
inline constexpr bool programs_known = first_unknown_value<Soc>().empty();

// A SoC as the runtime and the tools see it, chosen at run time (--soc, the device).
struct soc_info {
  soc_id id{};
  std::string_view name;    // as the traits spell it
  std::string_view option;  // as --soc takes it
  unsigned cores = 0;
  std::uint64_t max_iova = 0;
  std::string_view unknown;  // first_unknown_value: empty when programs can be built
};
template <class Soc>
constexpr soc_info info_of(std::string_view option) {
  return {Soc::id, Soc::name, option, Soc::cores, Soc::max_iova, first_unknown_value<Soc>()};
}
inline constexpr std::array family{info_of<rk3588>("rk3588"), info_of<rk3576>("rk3576"), info_of<rk3568>("rk3568"),
                                   info_of<rk3568>("rk3566"), info_of<rk3562>("rk3562")};

// By its --soc name (rk3588, rk3576, rk3568, rk3566, rk3562).
constexpr std::optional<soc_info> soc_by_option(std::string_view option) {
  for (const soc_info& s : family)
    if (s.option == option) return s;
  return std::nullopt;
}

// The SoC a device tree compatible string names ("rockchip,rk3588-rknpu", the vendor
// driver's; "rockchip,rk3588-rknn-core", rocket's): the first family member it mentions.
// The vendor driver matches rk3588, rk3568, rk3562 and rk3576 NPUs by such strings
// (rknpu-uapi-and-register-map §1.1, "DT compatible").
constexpr std::optional<soc_info> soc_from_compatible(std::string_view compatible) {
  for (std::size_t at = compatible.find("rockchip,"); at != std::string_view::npos;
       at = compatible.find("rockchip,", at + 1))
    for (const soc_info& s : family)
      if (compatible.substr(at + 9, s.option.size()) == s.option) return s;
  return std::nullopt;
}

// Calls f with the traits type of `id` (soc::rk3588{}, ...): run-time choice, typed build.
template <class F>
constexpr decltype(auto) with_soc(soc_id id, F&& f) {
  switch (id) {
    case soc_id::rk3576:
      return f(rk3576{});
    case soc_id::rk3568:
      return f(rk3568{});
    case soc_id::rk3562:
      return f(rk3562{});
    default:
      return f(rk3588{});
  }
}

}  // namespace regcmd::soc
