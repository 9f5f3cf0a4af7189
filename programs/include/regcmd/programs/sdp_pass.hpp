#pragma once
// The tensor an SDP program (DPU + DPU_RDMA, enable mask 0x18) walks, shared by the
// element-wise ops and the activations, and the task every SDP program starts from.
//
// Layouts (reference "SDP element-wise + DPU output-stage registers"; the vendor's
// standalone add/mul captures and B's element-wise programs):
//   surface  NC1HWC2 with H = 1, W = M pixels, C = N channels and C2 = 16 bytes of
//            channels: [ceil(N / C2)][M][C2]. The vendor's layout; per channel needs it.
//   flat     the tensor as a vector of M*N elements in one surface of C2 channels (B's
//            layout): plain row-major [M][N] in memory, e.g. a matmul's row-major output.
//            Long vectors take several chained tasks of at most 8000 pixels (B's tiling).

#include <algorithm>
#include <cstdint>
#include <string_view>

#include <regcmd/core/error.hpp>
#include <regcmd/core/math.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/core/soc.hpp>
#include <regcmd/task/task.hpp>
#include <regcmd/programs/vocabulary.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/rules/limits.hpp>
#include <regcmd/rules/precision_rules.hpp>

namespace regcmd {

// What one SDP task computes: W pixels of C channels (C padded to whole 16-byte atoms).
struct ew_task_shape {
  std::uint32_t pixels = 0;
  std::uint32_t channels = 0;
  friend constexpr bool operator==(const ew_task_shape&, const ew_task_shape&) = default;
};

// Pixels per task in the flat layout: B's tiling, 64-byte aligned tile addresses.
inline constexpr std::uint32_t ew_flat_task_pixels = 8000;
// DATA_CUBE_WIDTH / CHANNEL hold value - 1 in 13 bits.
inline constexpr std::uint32_t ew_max_pixels = 8192, ew_max_channels = 8192;

constexpr std::uint32_t ew_atom(precision p) { return 16 / static_cast<std::uint32_t>(bytes_of(p, 1)); }

struct sdp_shape {
  precision dtype{};
  operand_layout layout = operand_layout::surface;
  std::uint32_t M = 0, N = 0;  // the logical tensor
  std::uint32_t atom = 0;      // C2: channels per 16-byte atom (8, or 16 for int8)
  std::uint32_t padded_N = 0;  // surface: N rounded up to whole atoms
  std::uint32_t elements = 0;  // flat: M*N rounded up to whole atoms

  constexpr std::uint32_t element_bytes() const { return static_cast<std::uint32_t>(bytes_of(dtype, 1)); }
  constexpr std::uint32_t surfaces() const { return padded_N / atom; }
  // Bytes of the input and of the output.
  constexpr std::uint32_t tensor_bytes() const {
    return layout == operand_layout::row_major ? elements * element_bytes() : surfaces() * M * 16;
  }
  constexpr std::uint32_t tasks() const {
    return layout == operand_layout::row_major ? ceil_div(elements / atom, ew_flat_task_pixels) : 1;
  }
  // Task t: its shape and the byte offset of its slice of the tensors.
  constexpr ew_task_shape task_shape(std::uint32_t t) const {
    if (layout == operand_layout::surface) return {M, padded_N};
    const std::uint32_t pixels = elements / atom;
    return {std::min(ew_flat_task_pixels, pixels - t * ew_flat_task_pixels), atom};
  }
  constexpr std::uint32_t task_offset(std::uint32_t t) const { return t * ew_flat_task_pixels * 16; }
  friend constexpr bool operator==(const sdp_shape&, const sdp_shape&) = default;
};

// The shape rules of an SDP request: `what` names the request in the error.
template <class Soc = soc::rk3588>
constexpr result<sdp_shape> resolve_sdp_shape(precision dtype, std::uint32_t M, std::uint32_t N, operand_layout layout,
                                              tile_padding pad, std::string_view what) {
  if (M == 0 || N == 0) return make_error(rules::shape_nonzero, what);
  if (!sdp_reads(dtype)) return make_error(rules::ew_precision, what, "dtype", static_cast<std::uint32_t>(dtype));
  sdp_shape g;
  g.dtype = dtype;
  g.layout = layout;
  g.M = M;
  g.N = N;
  g.atom = ew_atom(dtype);
  if (layout == operand_layout::surface) {
    if (pad == tile_padding::none && N % g.atom != 0) return make_error(rules::ew_n_alignment, what, "N", N);
    if (M > ew_max_pixels) return make_error(rules::ew_width, what, "M", M);
    if (round_up(N, g.atom) > ew_max_channels) return make_error(rules::ew_width, what, "N", N);
    g.padded_N = align_up(N, g.atom);
  } else {
    const std::uint64_t count = std::uint64_t{M} * N;
    if (pad == tile_padding::none && count % g.atom != 0) return make_error(rules::ew_n_alignment, what, "M*N", count);
    // the count is 32 bits as every register's (2^32 int8 elements fill the address space but
    // do not fit a count)
    const std::uint64_t padded = round_up(count, g.atom);
    if (padded > UINT32_MAX || !fits_address_space<Soc>(padded * g.element_bytes()))
      return make_error(rules::operand_size, what, "M*N", count);
    g.elements = static_cast<std::uint32_t>(padded);
    g.padded_N = g.atom;
  }
  return g;
}

// Byte offsets of a task's slices inside their buffers: the input, the second operand, the
// output.
struct ew_offsets {
  std::uint32_t input = 0;
  std::uint32_t operand = 0;
  std::uint32_t output = 0;
};

// One SDP task over `shape` with every DPU stage bypassed (the op fills its stages in): the
// vendor's element-wise write list (the DPU without OFFSET_PEND, 0x40C4 and the LUT), the
// main input read in flying mode, the output written to memory.
constexpr task_desc sdp_task(const sdp_shape& g, const ew_task_shape& shape, const ew_offsets& at) {
  const precision p = g.dtype;
  const std::uint32_t W = shape.pixels, C = shape.channels;
  const std::uint32_t tensor_bytes = C / g.atom * W * 16;
  const bool fp16 = p == precision::fp16;
  task_desc t;
  // DPU (the vendor's standalone add/mul captures): flying mode, output to memory. Surfaces
  // of W pixels x 16 bytes: DST_SURF_STRIDE and SURFACE_ADD count 16-byte units.
  t.dpu = dpu_stage{
      .feature_mode = {.FLYING_MODE = 1, .OUTPUT_MODE = 2, .BURST_LEN = 15},
      .data_format = {.PROC_PRECISION = p, .IN_PRECISION = p, .OUT_PRECISION = p},
      .output = {operand_role::output, at.output, tensor_bytes},
      .dst_surf_stride = {.DST_SURF_STRIDE = W},
      .cube_width = {.WIDTH = W - 1},
      .cube_channel = {.CHANNEL = C - 1, .ORIG_CHANNEL = C - 1},
      .bs_ow_cfg = {.OD_BYPASS = 1},
      .wdma_size_0 = {.CHANNEL_WDMA = C - 1},
      .wdma_size_1 = {.WIDTH_WDMA = W - 1},
      .out_convert = {.scale = {.OUT_CVT_SCALE = 1, .FP32TOFP16_EN = fp16}},
      .surface_add = {.SURF_ADD = W},
      .complete = false,
  };
  t.dpu_rdma = dpu_rdma_stage{
      .cube_width = {.WIDTH = W - 1},
      .cube_channel = {.CHANNEL = C - 1},
      .source = address{operand_role::feature, at.input, tensor_bytes},
      .feature_mode = {.FLYING_MODE = 1, .MRDMA_FP16TOFP32_EN = fp16, .PROC_PRECISION = p, .BURST_LEN = 15,
                       .IN_PRECISION = p},
  };
  return t;
}

// prelu: a < 0 ? a·b : a, the EW multiplier on the negatives only (EW_MUL_PRELU): PReLU with
// a slope per channel (per_channel) or per element; fp16 only (a slope is a fraction).
enum class ew_op : std::uint8_t { add, mul, max, min, prelu };
enum class ew_operand : std::uint8_t { per_element, per_channel, immediate };

namespace detail {
// EW_CFG and ERDMA_CFG of an op, from the hardware-run programs:
//   fp16 add/max/min per element  0x108202C0 / 0x40000008 (vendor add capture; B; the max/min
//                                 algo per the reference: "EW-max/min = ADD-routing + ALGO")
//   fp16 mul per element          0x20800384 / 0x8000000A (the reference's vendor mul capture)
//   per channel                   the same with both DATA_MODE fields 0 (reference; B)
//   immediate                     0x10820280 / 0x40000009: EW_OP_SRC register, ERDMA off (B)
//   int8/int16                    B's integer programs: EW_EQUAL_EN with max/min, ERDMA size
struct ew_config {
  reg::DPU_EW_CFG ew;
  reg::DPU_RDMA_RDMA_ERDMA_CFG erdma;
};

constexpr reg::alu_algo algo_of(ew_op op) {
  return op == ew_op::max ? reg::alu_algo::MAX : op == ew_op::min ? reg::alu_algo::MIN : reg::alu_algo::SUM;
}

constexpr ew_config ew_config_of(precision dtype, ew_op op, ew_operand operand) {
  using namespace reg;
  const data_size size = dtype == precision::int8 ? data_size::one_byte : data_size::two_byte;
  const bool channel = operand == ew_operand::per_channel, immediate = operand == ew_operand::immediate;
  ew_config s{};
  if (dtype == precision::fp16 && (op == ew_op::mul || op == ew_op::prelu)) {
    // PReLU: the same multiply with EW_MUL_PRELU (TRM "MUL PRELU", as BN's for leaky ReLU)
    s.ew = {.EW_OP_TYPE = ew_op_type::mul, .EW_MUL_PRELU = op == ew_op::prelu, .EW_LUT_BYPASS = 1,
            .EW_OP_CVT_BYPASS = 1, .EW_RELU_BYPASS = 1,
            .EDATA_SIZE = size, .EW_DATA_MODE = channel ? ew_data_mode::per_channel : ew_data_mode::per_channel_by_pixel};
    s.erdma = {.OV4K_BYPASS = 1, .ERDMA_DATA_SIZE = size,
               .ERDMA_DATA_MODE = channel ? ew_data_mode::per_channel : ew_data_mode::per_channel_by_pixel};
    return s;
  }
  const bool mul = op == ew_op::mul;
  s.ew = {.EW_OP_TYPE = mul ? ew_op_type::mul : ew_op_type::alu,
          .EW_OP_SRC = immediate ? operand_source::immediate : operand_source::memory,
          .EW_LUT_BYPASS = 1,
          .EW_RELU_BYPASS = 1,
          .EW_ALU_ALGO = mul ? alu_algo::MAX : algo_of(op),
          .EW_EQUAL_EN = dtype != precision::fp16 && (op == ew_op::max || op == ew_op::min),
          .EDATA_SIZE = size,
          .EW_DATA_MODE = channel ? ew_data_mode::per_channel : ew_data_mode::per_pixel};
  s.erdma = {.ERDMA_DISABLE = immediate, .ERDMA_DATA_SIZE = size,
             .ERDMA_DATA_MODE = channel ? ew_data_mode::per_channel : ew_data_mode::per_pixel};
  return s;
}
}  // namespace detail

}  // namespace regcmd
