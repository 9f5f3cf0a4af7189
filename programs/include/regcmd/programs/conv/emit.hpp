#pragma once
// Convolution programs: conv2d, depthwise and pointwise, int8 (uint8/int8 quantized) and
// fp16, with bias, ReLU/ReLU6 and a residual add, split by the CBUF plan into tasks chained
// in one program.
//
//   constexpr auto c = regcmd::fixed<regcmd::conv_spec{
//       .dtype = regcmd::conv_data::uint8, .H = 20, .W = 20, .C = 80, .out_channels = 40,
//       .kernel_h = 3, .kernel_w = 3, .padding = regcmd::conv_padding::same,
//       .input = {0.02f, 100}, .weights = {0.005f, 140}, .output = {0.04f, 90}, .bias = true}>();
//
// A shape that breaks a rule does not compile (the rule's message); build(spec) returns
// the same rule as an error for a shape known at run time.
//
// Each task is a CNA + CORE + DPU (+ DPU_RDMA) task of the skeleton with every stage's
// complete write list (Mesa's conv list, ops-reference §2.1, each register once). Below are
// the values that differ from the skeleton's defaults; docs/conv-values.md gives the source
// of each and the choices where sources disagree.
//
// Operands (regcmd/programs/conv/packing.hpp packs them):
//   feature   NC1HWC2 input, C padded to 16            (CNA_FEATURE_DATA_ADDR)
//   weight    the packed kernels                         (CNA_DCOMP_ADDR0)
//   output    NC1HWC2 output of the computed channels    (DPU_DST_BASE_ADDR)
//   bias      int32 per computed channel (quantized)     (DPU_RDMA_RDMA_BS_BASE_ADDR)
//             fp16 per computed channel (fp16)           (DPU_RDMA_RDMA_EW_BASE_ADDR)
//   residual  the output's layout                        (DPU_RDMA_RDMA_EW_BASE_ADDR)

#include <cstdint>

#include <regcmd/core/math.hpp>
#include <regcmd/task/emit_task.hpp>
#include <regcmd/task/task.hpp>
#include <regcmd/task/writer.hpp>
#include <regcmd/programs/conv/plan.hpp>
#include <regcmd/programs/conv/spec.hpp>
#include <regcmd/programs/door.hpp>

namespace regcmd {

namespace conv {
// Entries of one conv task at most: 48 CNA + 5 CORE + 51 DPU + 16 DPU_RDMA + the tail.
inline constexpr std::uint32_t task_entries = 124;

// Task (group j, row task t) of a conv plan.
template <class Soc = soc::rk3588>
constexpr task_desc make_task(const conv_plan& p, std::uint32_t j, std::uint32_t t) {
  using namespace reg;
  const conv_geometry& g = p.conv;
  const conv_spec& s = g.spec;
  const bool quantized = g.quantized(), dw = s.depthwise;
  const precision in = quantized ? precision::int8 : precision::fp16;
  const conv_rows r = p.rows_of(t);
  const std::uint32_t C16 = p.input_channels(), bytes = p.element_bytes();
  const std::uint32_t channels = p.computed_channels(j), first = p.first_channel(j);
  const std::uint32_t out_bytes = static_cast<std::uint32_t>(bytes_of(s.out_dtype, 1));
  const std::uint32_t out_surface = g.out_w * g.out_h;  // 16-byte atoms of one output surface
  // BS_OW_CFG.SIZE_E: int8 1 (depthwise 3, Mesa); fp16 1, fp32 3 (the vendor template, A)
  const std::uint32_t size_e = quantized ? (dw ? 3 : 1) : s.out_dtype == precision::fp32 ? 3 : 1;
  const std::uint32_t pad_bits = quantized ? static_cast<std::uint32_t>(s.input.zero_point - static_cast<std::int32_t>(s.dtype == conv_data::uint8 ? 0x80 : 0)) : 0;
  const std::uint32_t line = 4 * s.W;  // rows 4·W·4 = 16·W bytes apart
  // the task's rows of every input surface: (atoms − 1) whole surfaces, then its rows
  const auto feature_extent = static_cast<std::uint32_t>((std::uint64_t{C16} * bytes / 16 - 1) * s.W * s.H * 16 +
                                                         std::uint64_t{r.rows} * s.W * 16);
  const std::uint32_t weight_offset = static_cast<std::uint32_t>(first * p.kernel_bytes());
  const std::uint32_t output_offset = (first * out_bytes / 16) * out_surface * 16 + r.out_first * g.out_w * 16;

  task_desc task;
  task.cna = cna_stage{
      .conv_con1 = {.CONV_MODE = dw ? conv_mode::depthwise : conv_mode::direct, .IN_PRECISION = in, .PROC_PRECISION = in},
      // FEATURE_GRAINS: Mesa's 50 + stride + 1 (int8); the vendor fp16 template's rows + kernel height
      .conv_con2 = {.FEATURE_GRAINS = quantized ? 51 + s.stride_y : std::min(r.rows + s.kernel_h, 1023u)},
      .conv_con3 = {.CONV_X_STRIDE = s.stride_x, .CONV_Y_STRIDE = s.stride_y, .ATROUS_X_DILATION = s.dilation_x - 1,
                    .ATROUS_Y_DILATION = s.dilation_y - 1},
      .data_size0 = {.DATAIN_HEIGHT = r.rows, .DATAIN_WIDTH = s.W},
      .data_size1 = {.DATAIN_CHANNEL = C16, .DATAIN_CHANNEL_REAL = s.C - 1},
      .data_size2 = {.DATAOUT_WIDTH = g.out_w},
      .data_size3 = {.DATAOUT_ATOMICS = g.out_w * r.out_rows},
      .weight_size0 = {.WEIGHT_BYTES = static_cast<std::uint32_t>(p.weight_bytes(j))},
      .weight_size1 = {.WEIGHT_BYTES_PER_KERNEL = static_cast<std::uint32_t>(p.kernel_bytes())},
      .weight_size2 = {.WEIGHT_KERNELS = p.group_kernel_count(j), .WEIGHT_HEIGHT = s.kernel_h, .WEIGHT_WIDTH = s.kernel_w},
      .cbuf_con0 = {.DATA_BANK = p.data_banks, .WEIGHT_BANK = p.weight_banks, .WEIGHT_REUSE = t > 0},
      // one row in 64-byte units (Mesa's ceil(W·2·atoms/8), the vendor's ceil(W·C/32) for fp16)
      .cbuf_con1 = {.DATA_ENTRIES = ceil_div(std::uint64_t{s.W} * C16 * bytes, 64)},
      .pad_con0 = {.PAD_TOP = r.pad_top, .PAD_LEFT = g.pad.left},
      .feature = {operand_role::feature, r.top * s.W * 16, feature_extent},
      .dma_con1 = {.LINE_STRIDE = line},
      // the whole cube's surface, W·H atoms, as (SURF_STRIDE + LINE_STRIDE)·16 bytes:
      // Mesa's line·(H/4 − 1), kept for every task; modulo the field below H = 4
      .dma_con2 = {.SURF_STRIDE = static_cast<std::uint32_t>((std::uint64_t{s.W} * s.H - line) & 0x0fff'ffffu)},
      .fc_data_size0 = {.DMA_HEIGHT = r.rows, .DMA_WIDTH = s.W},
      .fc_data_size1 = {.DMA_CHANNEL = C16},
      .weight = {operand_role::weight, weight_offset, static_cast<std::uint32_t>(p.weight_bytes(j))},
      .pad_con1 = {.PAD_VALUE = pad_bits},
  };
  task.core = core_stage{
      // QD_EN as Mesa for int8; the vendor's fp16 template clears it
      .misc_cfg = {.QD_EN = quantized, .DW_EN = dw, .PROC_PRECISION = in},
      .dataout_size_0 = {.DATAOUT_WIDTH = g.out_w - 1, .DATAOUT_HEIGHT = r.out_rows - 1},
      .dataout_size_1 = {.DATAOUT_CHANNEL = channels - 1},
  };
  dpu_stage dpu{
      .feature_mode = {.OUTPUT_MODE = 2, .CONV_MODE = dw ? conv_mode::depthwise : conv_mode::direct, .BURST_LEN = 15},
      .data_format = {.PROC_PRECISION = in, .IN_PRECISION = in, .OUT_PRECISION = s.out_dtype},
      .output = {operand_role::output, output_offset, 0},
      .dst_surf_stride = {.DST_SURF_STRIDE = out_surface},
      .cube_width = {.WIDTH = g.out_w - 1},
      .cube_height = {.HEIGHT = r.out_rows - 1},
      .cube_channel = {.CHANNEL = channels - 1, .ORIG_CHANNEL = p.real_channels(j) - 1},
      .bs_ow_cfg = {.OD_BYPASS = !quantized, .SIZE_E_0 = size_e, .SIZE_E_1 = size_e, .SIZE_E_2 = size_e},
      // the weights' zero point as the OW stage adds it: (shift − zero point) · Σ input
      .bs_ow_op = {.OW_OP = quantized ? static_cast<std::uint32_t>(static_cast<std::int32_t>(s.dtype == conv_data::uint8 ? 0x80 : 0) - s.weights.zero_point) & 0xffffu : 0u},
      .wdma_size_0 = {.CHANNEL_WDMA = channels - 1},
      .wdma_size_1 = {.WIDTH_WDMA = g.out_w - 1, .HEIGHT_WDMA = r.out_rows - 1},
      .surface_add = {.SURF_ADD = out_surface * (size_e + 1)},
  };
  dpu.output.extent = static_cast<std::uint32_t>(((std::uint64_t{channels} * out_bytes + 15) / 16 - 1) * out_surface * 16 +
                                                 std::uint64_t{g.out_w} * r.out_rows * 16);
  if (quantized) {
    // the bias from memory, added by the BS ALU (Mesa's 0x20150)
    dpu.bs = {.cfg = {.BS_MUL_BYPASS = 1, .BS_RELU_BYPASS = 1, .BS_ALU_SRC = operand_source::memory, .BS_ALU_ALGO = alu_algo::SUM}};
    dpu.out_convert = {.offset = {.OUT_CVT_OFFSET = static_cast<std::uint32_t>(g.requant.offset)},
                       .scale = {.OUT_CVT_SCALE = g.requant.scale},
                       .shift = {.OUT_CVT_SHIFT = g.requant.shift}};
  } else {
    dpu.out_convert = {.scale = {.OUT_CVT_SCALE = 1, .FP32TOFP16_EN = s.out_dtype == precision::fp16}};
  }
  // The EW stage adds a residual per pixel, or an fp16 bias per channel (the SDP's
  // per-channel operand, regcmd-isa-reference's ERDMA_CFG: contiguous, DATA_MODE 0).
  const bool ew_bias = g.ew_bias();
  const ew_data_mode ew_mode = ew_bias ? ew_data_mode::per_channel : ew_data_mode::per_pixel;
  if (s.residual_add || ew_bias) {
    dpu.ew = {.cfg = {.EW_OP_SRC = operand_source::memory, .EW_LUT_BYPASS = 1, .EW_OP_CVT_BYPASS = !quantized,
                      // the clamp after the add (ReLU, ReLU6 as ReLUX at its bound)
                      .EW_RELU_BYPASS = s.activation == output_activation::none,
                      .EW_RELUX_EN = s.activation == output_activation::relu6, .EW_ALU_ALGO = alu_algo::SUM,
                      .EDATA_SIZE = quantized ? data_size::one_byte : data_size::two_byte,
                      .EW_DATA_MODE = ew_mode, .EW_CVT_TYPE = quantized},
              .cvt_offset = {.EW_OP_CVT_OFFSET = quantized ? static_cast<std::uint32_t>(g.residual_cvt.offset) : 0u},
              .cvt_scale = {.EW_OP_CVT_SCALE = quantized ? g.residual_cvt.scale : 1u,
                            .EW_OP_CVT_SHIFT = quantized ? g.residual_cvt.shift : 0u},
              .relux = {.EW_RELUX_CMP_DAT = g.activation.clamp_max}};
  } else {
    dpu.bn = bn_stage_of(g.activation);
  }
  task.dpu = dpu;

  if (quantized || s.residual_add || ew_bias) {
    dpu_rdma_stage rdma{
        .cube_width = {.WIDTH = g.out_w - 1},
        .cube_height = {.HEIGHT = r.out_rows - 1},
        .cube_channel = {.CHANNEL = channels - 1},
        .feature_mode = {.CONV_MODE = dw ? conv_mode::depthwise : conv_mode::direct, .MRDMA_DISABLE = 1,
                         .PROC_PRECISION = in, .BURST_LEN = 15, .IN_PRECISION = in},
    };
    if (quantized) {
      rdma.brdma_cfg = {.BRDMA_DATA_USE = 1};
      rdma.bs_operand = address{operand_role::bias, first * 4, channels * 4};
    }
    if (ew_bias) {
      rdma.erdma_cfg = {.ERDMA_DATA_SIZE = data_size::two_byte, .ERDMA_DATA_MODE = ew_mode};
      rdma.ew_operand = address{operand_role::bias, first * 2, channels * 2};
      rdma.ew_surf_stride = {.EW_SURF_STRIDE = 1};  // contiguous (register map: 1 per channel)
    }
    if (s.residual_add) {
      rdma.erdma_cfg = {.ERDMA_DATA_SIZE = quantized ? data_size::one_byte : data_size::two_byte,
                        .ERDMA_DATA_MODE = ew_mode};
      const std::uint32_t rb = quantized ? 1 : 2;  // the residual's element bytes
      rdma.ew_operand = address{operand_role::residual, (first * rb / 16) * out_surface * 16 + r.out_first * g.out_w * 16,
                                static_cast<std::uint32_t>(((std::uint64_t{channels} * rb + 15) / 16 - 1) * out_surface * 16 +
                                                           std::uint64_t{g.out_w} * r.out_rows * 16)};
      rdma.ew_surf_stride = {.EW_SURF_STRIDE = out_surface};
    }
    task.dpu_rdma = rdma;
  }
  return task;
}

// Every task of the plan: group by group, each group's row tasks top to bottom.
template <class Soc = soc::rk3588>
constexpr void emit(program_writer& w, const conv_plan& p) {
  for (std::uint32_t j = 0; j < p.groups && w.ok(); ++j)
    for (std::uint32_t t = 0; t < p.row_tasks && w.ok(); ++t) emit_task(w, conv::make_task<Soc>(p, j, t));
}
}  // namespace conv

// A convolution program.
struct conv_kind {
  using spec = conv_spec;
  using geometry = conv_plan;
  static constexpr std::string_view name = "conv";
  template <class Soc>
  static constexpr result<geometry> resolve(const spec& s) {
    const result<conv_geometry> g = resolve_conv(s);
    if (!g) return g.err();
    return conv::plan<Soc>(g.value());
  }
  static constexpr program_size size(const geometry& p) { return {p.tasks() * conv::task_entries, p.tasks() * 6, p.tasks()}; }
  static constexpr submit_options options(const geometry&) { return {}; }
  template <class Soc>
  static constexpr void emit(program_writer& w, const geometry& p) { conv::emit<Soc>(w, p); }
  static constexpr program_checks checks = program_checks::every_rule;
};

conv_kind program_kind_of(const conv_spec&);

// The names before regcmd::fixed and regcmd::build (docs/changelog.md); `conv<spec>()` went:
// its name is the family's namespace.
template <class Soc = soc::rk3588>
[[deprecated("use regcmd::build(spec)")]] auto build_conv(const conv_spec& spec) { return build<Soc>(spec); }

}  // namespace regcmd
