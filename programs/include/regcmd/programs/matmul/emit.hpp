#pragma once
// Matmul programs: one task that computes C = A . B for a matmul_spec.
//
//   constexpr auto mm = regcmd::fixed<regcmd::matmul_spec{
//       .dtype = regcmd::precision::fp16, .out_dtype = regcmd::precision::fp32, .M = 64, .K = 512, .N = 256}>();
//
// A shape that breaks a rule does not compile, and the error is the rule's message; with a
// shape known only at run time, build(spec) returns the same rule as an error.
//
// The task is a CNA + CORE + DPU task of the skeleton (regcmd/task/task.hpp) with every stage's
// complete write list: the same 104 registers in the same order for every shape, precision
// and layout (implementation A's list, matmul-recipe §1.1), so nothing is left to reset
// state; then the 4-entry tail. Below are the values that differ from the skeleton's
// defaults; docs/matmul-values.md gives the source of each, layout by layout.

#include <cstdint>

#include <regcmd/core/math.hpp>
#include <regcmd/task/emit_task.hpp>
#include <regcmd/task/task.hpp>
#include <regcmd/task/writer.hpp>
#include <regcmd/programs/door.hpp>
#include <regcmd/programs/matmul/spec.hpp>
#include <regcmd/programs/matmul/schedule.hpp>

namespace regcmd {

namespace matmul {
// Entries of one matmul task: 104 register writes + the 4-entry tail.
inline constexpr std::uint32_t task_entries = 108;
}  // namespace matmul

// Byte offsets of this task's operands inside their buffers (tiles of a plan).
struct matmul_offsets {
  std::uint32_t feature = 0;
  std::uint32_t weight = 0;
  std::uint32_t output = 0;
};

// The DPU output stage of each precision pair and layout.
struct output_stage {
  std::uint32_t size_e;        // DPU_BS_OW_CFG SIZE_E_0..2
  bool od_bypass;              // DPU_BS_OW_CFG OD_BYPASS
  std::uint32_t cvt_scale;     // DPU_OUT_CVT_SCALE.OUT_CVT_SCALE
  bool fp32_to_fp16;           // DPU_OUT_CVT_SCALE.FP32TOFP16_EN
};

namespace matmul {
constexpr output_stage output_stage_of(precision out, operand_layout layout) {
  const bool row = layout == operand_layout::row_major;
  switch (out) {
    // BS_OW_CFG 0x36e in A and B; OUT_CVT_SCALE 1 in A, 0 in B and the vendor capture.
    case precision::fp32: return {3, true, row ? 0u : 1u, false};
    // 0x126 and 0x10001 in A, B and the reference's fp16-out stage.
    case precision::fp16: return {1, true, 1, true};
    // int32: 0x7fc in B, the ork synth and the reference's "int32 pair"; A writes 0x7fe.
    case precision::int32: return {7, !row, 1, false};
    // int4 -> int16: the vendor capture's 0x7fe; the scale as for int8 [inferred].
    default: return {7, true, 1, false};
  }
}

// One matmul task: C = A . B for geometry g, its operands at offsets `at` of their buffers.
template <class Soc = soc::rk3588>
constexpr task_desc make_task(const matmul_geometry& g, const matmul_offsets& at = {}) {
  using namespace reg;
  const bool row = g.layout == operand_layout::row_major;
  const precision in = g.in;
  const std::uint32_t M = g.M, K = g.K, N = g.N;
  const std::uint32_t in_bytes = in == precision::fp16 ? 2 : 1;  // int4 sits in int8 CBUF entries
  const output_stage stage = matmul::output_stage_of(g.out, g.layout);
  const auto weight_bytes = static_cast<std::uint32_t>(bytes_of(in, std::uint64_t{K} * N));
  // Row-major notch: the row in 4-channel units, N/4 - 1 (reference "Key registers", B, the
  // vendor capture); the second half the output pitch in the same units (ork's stride).
  static_assert(decltype(DPU_DATA_CUBE_NOTCH_ADDR::NOTCH_ADDR_1)::shape.max_value() == max_output_pitch_outputs / 4 - 1);
  const std::uint32_t out_elems_per_row = row ? g.output_pitch / static_cast<std::uint32_t>(bytes_of(g.out, 1)) : 0;

  task_desc t;
  t.cna = cna_stage{
      // GROUP_LINE_OFF reads each row as its own line: set by B and the vendor's int8 capture
      // (0x20000000) for row-major features, clear in A's surface layout.
      .conv_con1 = {.CONV_MODE = conv_mode::direct, .IN_PRECISION = in, .PROC_PRECISION = in, .GROUP_LINE_OFF = row},
      .conv_con2 = {.FEATURE_GRAINS = row ? matmul::feature_grains<Soc>(in, M, K) : M + 1},
      .data_size0 = {.DATAIN_HEIGHT = M, .DATAIN_WIDTH = 1},
      .data_size1 = {.DATAIN_CHANNEL = K, .DATAIN_CHANNEL_REAL = K - 1},
      .data_size2 = {.DATAOUT_WIDTH = 1},
      .data_size3 = {.DATAOUT_ATOMICS = M},
      .weight_size0 = {.WEIGHT_BYTES = weight_bytes},
      .weight_size1 = {.WEIGHT_BYTES_PER_KERNEL = bytes_of(in, K)},
      .weight_size2 = {.WEIGHT_KERNELS = N, .WEIGHT_HEIGHT = 1, .WEIGHT_WIDTH = 1},
      .cbuf_con0 = {.DATA_BANK = g.data_banks, .WEIGHT_BANK = Soc::cbuf_banks - g.data_banks},
      .cbuf_con1 = {.DATA_ENTRIES = ceil_div(std::uint64_t{K} * in_bytes, 64)},
      .feature = {operand_role::feature, at.feature, g.feature_bytes()},
      // Row-major: one line per row, in 16-byte units (K/8 fp16, K/16 int8 and int4).
      // Surface: implementation A's width * 4 and 4 * (M/4 - 1), including its M = 1 value.
      .dma_con1 = {.LINE_STRIDE = row ? g.feature_pitch / 16 : 4u},
      .dma_con2 = {.SURF_STRIDE = row ? 0u : M == 1 ? 0x0fff'fffdu : M - 4},
      .fc_data_size0 = {.DMA_HEIGHT = M, .DMA_WIDTH = 1},
      .fc_data_size1 = {.DMA_CHANNEL = K},
      .weight = {operand_role::weight, at.weight, weight_bytes},
  };
  t.core = core_stage{
      // QD_EN: set in both recipes for fp16 and in B for int8; A clears it for int8.
      .misc_cfg = {.QD_EN = row || in == precision::fp16, .PROC_PRECISION = in},
      .dataout_size_0 = {.DATAOUT_WIDTH = 0, .DATAOUT_HEIGHT = M - 1},
      .dataout_size_1 = {.DATAOUT_CHANNEL = N - 1},
  };
  t.dpu = dpu_stage{
      .data_format = {.PROC_PRECISION = in, .IN_PRECISION = in, .OUT_PRECISION = g.out},
      .output = {operand_role::output, at.output, g.output_bytes()},
      .dst_surf_stride = {.DST_SURF_STRIDE = row ? 1u : M},
      .cube_height = {.HEIGHT = M - 1},
      .cube_notch = {.NOTCH_ADDR_0 = row ? N / 4 - 1 : 0u, .NOTCH_ADDR_1 = row ? out_elems_per_row / 4 - 1 : 0u},
      .cube_channel = {.CHANNEL = N - 1, .ORIG_CHANNEL = N - 1},
      .bs_ow_cfg = {.OD_BYPASS = stage.od_bypass, .SIZE_E_0 = stage.size_e, .SIZE_E_1 = stage.size_e,
                    .SIZE_E_2 = stage.size_e},
      .wdma_size_0 = {.CHANNEL_WDMA = N - 1},
      .wdma_size_1 = {.WIDTH_WDMA = 0, .HEIGHT_WDMA = M - 1},
      .out_convert = {.scale = {.OUT_CVT_SCALE = stage.cvt_scale, .FP32TOFP16_EN = stage.fp32_to_fp16}},
      // SURF_ADD: (SIZE_E + 1) per surface row, times M rows of a surface in A's layout:
      // A (M*4, M*2, M*8) << 4, B 0x40 / 0x80, the reference's fp16-out 0x20.
      .surface_add = {.SURF_ADD = (row ? 1u : M) * (stage.size_e + 1)},
  };
  t.dpu->bn = bn_stage_of(g.activation);  // bypassed without an activation
  return t;
}
}  // namespace matmul

// A matmul program: one task.
struct matmul_kind {
  using spec = matmul_spec;
  using geometry = matmul_geometry;
  static constexpr std::string_view name = "matmul";
  template <class Soc>
  static constexpr result<geometry> resolve(const spec& s) { return regcmd::resolve<Soc>(s); }
  static constexpr program_size size(const geometry&) { return {matmul::task_entries, 4, 1}; }
  static constexpr submit_options options(const geometry&) { return {}; }
  template <class Soc>
  static constexpr void emit(program_writer& w, const geometry& g) { emit_task(w, matmul::make_task<Soc>(g)); }
  static constexpr program_checks checks = program_checks::every_rule;
};

matmul_kind program_kind_of(const matmul_spec&);

// The names before regcmd::fixed and regcmd::build (docs/changelog.md); `matmul<spec>()` went:
// its name is the family's namespace.
template <class Soc = soc::rk3588>
[[deprecated("use regcmd::build(spec)")]] auto build_matmul(const matmul_spec& spec) { return build<Soc>(spec); }

}  // namespace regcmd
