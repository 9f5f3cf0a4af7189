#pragma once
// Matmul programs: one task that computes C = A . B for a matmul_spec.
//
//   constexpr auto mm = regcmd::matmul<regcmd::matmul_spec{
//       .in = regcmd::precision::fp16, .out = regcmd::precision::fp32, .M = 64, .K = 512, .N = 256}>();
//
// A shape that breaks a rule does not compile, and the error is the rule's message; with a
// shape known only at run time, build_matmul(spec) returns the same rule as an error.
//
// The task writes the same 104 registers, in the same order, for every shape, precision
// and layout (implementation A's complete write list, matmul-recipe §1.1), so nothing is
// left to reset state; then the 4-entry tail. Values: docs/matmul-values.md gives the
// source of each one, layout by layout.

#include <cstdint>

#include <regcmd/program/writer.hpp>
#include <regcmd/programs/matmul_spec.hpp>
#include <regcmd/registers/cna.hpp>
#include <regcmd/registers/core.hpp>
#include <regcmd/registers/dpu.hpp>
#include <regcmd/registers/global.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/rules/program_rules.hpp>

namespace regcmd {

// Entries of one matmul task: 104 register writes + the 4-entry tail.
inline constexpr std::uint32_t matmul_task_entries = 108;

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

template <class Soc = soc::rk3588>
constexpr void emit_matmul_task(program_writer& w, const matmul_geometry& g, const matmul_offsets& at = {},
                                operand_role output_role = operand_role::output) {
  using namespace reg;
  const bool row = g.layout == operand_layout::row_major;
  const precision in = g.in;
  const std::uint32_t M = g.M, K = g.K, N = g.N;
  const std::uint32_t in_bytes = in == precision::fp16 ? 2 : 1;  // int4 sits in int8 CBUF entries
  const output_stage stage = output_stage_of(g.out, g.layout);
  const auto weight_bytes = static_cast<std::uint32_t>(bytes_of(in, std::uint64_t{K} * N));
  const auto kernel_bytes = static_cast<std::uint32_t>(bytes_of(in, K));

  w.begin_task();
  w.put(DPU_S_POINTER{.POINTER_PP_EN = 1, .EXECUTER_PP_EN = 1, .POINTER_PP_MODE = 1});
  // GROUP_LINE_OFF reads each row as its own line: set by B and the vendor's int8 capture
  // (0x20000000) for row-major features, clear in A's surface layout.
  w.put(CNA_CONV_CON1{.CONV_MODE = conv_mode::direct, .IN_PRECISION = in, .PROC_PRECISION = in, .GROUP_LINE_OFF = row});
  w.put(CNA_CONV_CON2{.FEATURE_GRAINS = row ? feature_grains<Soc>(in, M, K) : M + 1});
  w.put(CNA_CONV_CON3{.CONV_X_STRIDE = 1, .CONV_Y_STRIDE = 1});
  w.put(CNA_DATA_SIZE0{.DATAIN_HEIGHT = M, .DATAIN_WIDTH = 1});
  w.put(CNA_DATA_SIZE1{.DATAIN_CHANNEL = K, .DATAIN_CHANNEL_REAL = K - 1});
  w.put(CNA_DATA_SIZE2{.DATAOUT_WIDTH = 1});
  w.put(CNA_DATA_SIZE3{.DATAOUT_ATOMICS = M});
  w.put(CNA_WEIGHT_SIZE0{.WEIGHT_BYTES = weight_bytes});
  w.put(CNA_WEIGHT_SIZE1{.WEIGHT_BYTES_PER_KERNEL = kernel_bytes});
  w.put(CNA_WEIGHT_SIZE2{.WEIGHT_KERNELS = N, .WEIGHT_HEIGHT = 1, .WEIGHT_WIDTH = 1});
  w.put(CNA_CBUF_CON0{.DATA_BANK = g.data_banks, .WEIGHT_BANK = Soc::cbuf_banks - g.data_banks});
  w.put(CNA_CBUF_CON1{.DATA_ENTRIES = ceil_div(std::uint64_t{K} * in_bytes, 64)});
  w.put(CNA_CVT_CON0{.CVT_BYPASS = 1, .CVT_TYPE = 1, .DATA_SIGN = 1});
  for (unsigned n = 0; n < CNA_CVT_CON::count; ++n) w.put(CNA_CVT_CON{.CVT_SCALE = 1}, CNA_CVT_CON::first_number + n);
  w.put(CNA_FC_CON0{});
  w.put(CNA_FC_CON1{});
  w.put(CNA_PAD_CON0{});
  w.put_slot<CNA_FEATURE_DATA_ADDR>(operand_role::feature, at.feature, g.feature_bytes());
  w.put(CNA_FC_CON2{});
  w.put(CNA_DMA_CON0{.DATA_BURST_LEN = 15, .WEIGHT_BURST_LEN = 15});
  // Row-major: one line per row, in 16-byte units (K/8 fp16, K/16 int8 and int4).
  // Surface: implementation A's width * 4 and 4 * (M/4 - 1), including its M = 1 value.
  w.put(CNA_DMA_CON1{.LINE_STRIDE = row ? g.feature_pitch / 16 : 4u});
  w.put(CNA_DMA_CON2{.SURF_STRIDE = row ? 0u : M == 1 ? 0x0fff'fffdu : M - 4});
  w.put(CNA_FC_DATA_SIZE0{.DMA_HEIGHT = M, .DMA_WIDTH = 1});
  w.put(CNA_FC_DATA_SIZE1{.DMA_CHANNEL = K});
  w.put(CNA_DCOMP_CTRL{});
  w.put(CNA_DCOMP_REGNUM{});
  w.put_slot<CNA_DCOMP_ADDR0>(operand_role::weight, at.weight, weight_bytes);
  for (unsigned n = 0; n < CNA_DCOMP_AMOUNT::count; ++n) w.put(CNA_DCOMP_AMOUNT{}, n);
  w.put(CNA_CVT_CON5{});
  w.put(CNA_PAD_CON1{});

  // QD_EN: set in both recipes for fp16 and in B for int8; A clears it for int8.
  w.put(CORE_MISC_CFG{.QD_EN = row || in == precision::fp16, .PROC_PRECISION = in});
  w.put(CORE_DATAOUT_SIZE_0{.DATAOUT_WIDTH = 0, .DATAOUT_HEIGHT = M - 1});
  w.put(CORE_DATAOUT_SIZE_1{.DATAOUT_CHANNEL = N - 1});
  w.put(CORE_CLIP_TRUNCATE{});
  w.put(CORE_UNNAMED_3030{});

  w.put(DPU_FEATURE_MODE_CFG{.OUTPUT_MODE = 2, .BURST_LEN = 15});
  w.put(DPU_DATA_FORMAT{.PROC_PRECISION = in, .IN_PRECISION = in, .OUT_PRECISION = g.out});
  w.put(DPU_OFFSET_PEND{});
  w.put_slot<DPU_DST_BASE_ADDR>(output_role, at.output, g.output_bytes());
  w.put(DPU_DST_SURF_STRIDE{.DST_SURF_STRIDE = row ? 1u : M});
  w.put(DPU_DATA_CUBE_WIDTH{});
  w.put(DPU_DATA_CUBE_HEIGHT{.HEIGHT = M - 1});
  // Row-major notch: the row in 4-channel units, N/4 - 1 (reference "Key registers", B, the
  // vendor capture); the second half the output pitch in the same units (ork's stride).
  static_assert(decltype(DPU_DATA_CUBE_NOTCH_ADDR::NOTCH_ADDR_1)::shape.max_value() == max_output_pitch_outputs / 4 - 1);
  const std::uint32_t out_elems_per_row = row ? g.output_pitch / static_cast<std::uint32_t>(bytes_of(g.out, 1)) : 0;
  w.put(DPU_DATA_CUBE_NOTCH_ADDR{.NOTCH_ADDR_0 = row ? N / 4 - 1 : 0u, .NOTCH_ADDR_1 = row ? out_elems_per_row / 4 - 1 : 0u});
  w.put(DPU_DATA_CUBE_CHANNEL{.CHANNEL = N - 1, .ORIG_CHANNEL = N - 1});
  w.put(DPU_BS_CFG{.BS_BYPASS = 1, .BS_ALU_BYPASS = 1, .BS_MUL_BYPASS = 1, .BS_RELU_BYPASS = 1});
  w.put(DPU_BS_ALU_CFG{});
  w.put(DPU_BS_MUL_CFG{});
  w.put(DPU_BS_RELUX_CMP_VALUE{});
  w.put(DPU_BS_OW_CFG{.OD_BYPASS = stage.od_bypass, .SIZE_E_0 = stage.size_e, .SIZE_E_1 = stage.size_e, .SIZE_E_2 = stage.size_e});
  w.put(DPU_BS_OW_OP{});
  w.put(DPU_WDMA_SIZE_0{.CHANNEL_WDMA = N - 1});
  w.put(DPU_WDMA_SIZE_1{.WIDTH_WDMA = 0, .HEIGHT_WDMA = M - 1});
  w.put(DPU_BN_CFG{.BN_BYPASS = 1, .BN_ALU_BYPASS = 1, .BN_MUL_BYPASS = 1, .BN_RELU_BYPASS = 1});
  w.put(DPU_BN_ALU_CFG{});
  w.put(DPU_BN_MUL_CFG{});
  w.put(DPU_BN_RELUX_CMP_VALUE{});
  w.put(DPU_EW_CFG{.EW_BYPASS = 1, .EW_OP_BYPASS = 1, .EW_LUT_BYPASS = 1, .EW_OP_CVT_BYPASS = 1, .EW_RELU_BYPASS = 1});
  w.put(DPU_EW_CVT_OFFSET_VALUE{});
  w.put(DPU_EW_CVT_SCALE_VALUE{.EW_OP_CVT_SCALE = 1});
  w.put(DPU_EW_RELUX_CMP_VALUE{});
  w.put(DPU_OUT_CVT_OFFSET{});
  w.put(DPU_OUT_CVT_SCALE{.OUT_CVT_SCALE = stage.cvt_scale, .FP32TOFP16_EN = stage.fp32_to_fp16});
  w.put(DPU_OUT_CVT_SHIFT{});
  for (unsigned n = 0; n < DPU_EW_OP_VALUE::count; ++n) w.put(DPU_EW_OP_VALUE{}, n);
  // SURF_ADD: (SIZE_E + 1) per surface row, times M rows of a surface in A's layout:
  // A (M*4, M*2, M*8) << 4, B 0x40 / 0x80, the reference's fp16-out 0x20.
  w.put(DPU_SURFACE_ADD{.SURF_ADD = (row ? 1u : M) * (stage.size_e + 1)});
  w.put(DPU_UNNAMED_40C4{});
  w.put(DPU_LUT_ACCESS_CFG{});
  w.put(DPU_LUT_ACCESS_DATA{});
  w.put(DPU_LUT_CFG{});
  w.put(DPU_LUT_INFO{});
  w.put(DPU_LUT_LE_START{});
  w.put(DPU_LUT_LE_END{});
  w.put(DPU_LUT_LO_START{});
  w.put(DPU_LUT_LO_END{});
  w.put(DPU_LUT_LE_SLOPE_SCALE{});
  w.put(DPU_LUT_LE_SLOPE_SHIFT{});
  w.put(DPU_LUT_LO_SLOPE_SCALE{});
  w.put(DPU_LUT_LO_SLOPE_SHIFT{});
  w.end_task({.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1}, dpu_done_interrupts);
}

using matmul_task_program = program<matmul_task_entries, 1>;

struct matmul_program {
  matmul_geometry geometry;
  matmul_task_program code;
};

template <class Soc = soc::rk3588>
constexpr result<matmul_program> build_matmul(const matmul_spec& spec) {
  const result<matmul_geometry> g = resolve<Soc>(spec);
  if (!g) return g.err();
  matmul_program p{g.value(), {}};
  if (status s = fill(p.code, [&](program_writer& w) { emit_matmul_task<Soc>(w, g.value()); }); !s) return s.err();
  if (status s = validate<Soc>(p.code.view(), "matmul"); !s) return s.err();
  return p;
}

// The compile-time front door: a violated rule fails here with the rule's message.
template <matmul_spec Spec, class Soc = soc::rk3588>
constexpr matmul_program matmul() {
  constexpr result<matmul_program> built = build_matmul<Soc>(Spec);
  static_assert(report<violated_rule(built)>());
  if constexpr (built.ok()) return built.value();
  else return matmul_program{};  // not reached: the report above failed
}

}  // namespace regcmd
