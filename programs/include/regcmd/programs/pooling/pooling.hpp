#pragma once
// Pooling programs: max, average, global max and global average of one H x W x C image in
// NC1HWC2 (16-byte atoms: 8 fp16 or 16 int8 channels), on the PPU reading its input through
// its own DMA (PPU_RDMA, "flying mode"; enable mask 0x60, interrupts PPU_0 | PPU_1).
//
//   out(oy, ox, c) = max / mean of in(oy·sy + ky - pad_top, ox·sx + kx - pad_left, c) over the
//                    kernel's taps; padded taps count as -inf (max) or 0 (average: the PPU
//                    divides by the whole window, PyTorch's count_include_pad=True)
//   global        the kernel is the whole image: out is 1 x 1 x C
//
// Tall images are split into row tasks chained in one program (AB-POOL: at most 8191 / W
// output rows per task), each reading the rows its outputs need; the surface strides stay the
// whole image's so every task writes its rows in place. The mainline rocket kernel ends a
// task only on DPU interrupts: pooling runs on the rknpu node (rule rocket-interrupt).
// Register values and their sources: docs/pooling-values.md.

#include <algorithm>
#include <cstdint>
#include <string_view>

#include <regcmd/core/error.hpp>
#include <regcmd/core/half.hpp>
#include <regcmd/core/math.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/task/emit_task.hpp>
#include <regcmd/task/task.hpp>
#include <regcmd/task/writer.hpp>
#include <regcmd/programs/vocabulary.hpp>
#include <regcmd/programs/door.hpp>
#include <regcmd/registers/ppu.hpp>
#include <regcmd/registers/ppu_rdma.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/rules/limits.hpp>

namespace regcmd {

enum class pool_op : std::uint8_t { max, average, global_max, global_average };

struct pool_spec {
  pool_op op = pool_op::max;
  precision dtype = precision::fp16;  // fp16 or int8
  std::uint32_t H = 0, W = 0, C = 0;
  std::uint32_t kernel_h = 2, kernel_w = 2;  // global: the image
  std::uint32_t stride_y = 0, stride_x = 0;  // 0: the kernel (TFLite's and PyTorch's default)
  conv_padding padding = conv_padding::valid;
  padding_sides pad{};  // conv_padding::explicit_sides only
  friend constexpr bool operator==(const pool_spec&, const pool_spec&) = default;
};

// AB-POOL's row tiling: a task writes at most 8191 / W output rows.
inline constexpr std::uint32_t pool_task_pixels = 8191;
// POOLING_KERNEL_CFG holds kernel - 1 and stride - 1 in 4 bits, PADDING_CFG each side in 3.
inline constexpr std::uint32_t pool_max_kernel = 16, pool_max_padding = 7;

// One row task: output rows [first, first + rows), reading input rows [in_first, in_first +
// in_rows) with the padding rows that fall on its edges.
struct pool_rows {
  std::uint32_t first = 0, rows = 0;
  std::uint32_t in_first = 0, in_rows = 0;
  std::uint32_t pad_top = 0, pad_bottom = 0;
};

struct pool_geometry {
  pool_op op{};
  precision dtype{};
  std::uint32_t H = 0, W = 0, C = 0;
  std::uint32_t atom = 0;           // channels per 16-byte atom
  std::uint32_t padded_C = 0;       // C rounded up to whole atoms
  std::uint32_t kernel_h = 0, kernel_w = 0, stride_y = 0, stride_x = 0;
  padding_sides pad{};
  std::uint32_t out_h = 0, out_w = 0;
  std::uint32_t rows_per_task = 0;  // output rows

  constexpr std::uint32_t element_bytes() const { return static_cast<std::uint32_t>(bytes_of(dtype, 1)); }
  constexpr std::uint32_t surfaces() const { return padded_C / atom; }
  constexpr std::uint32_t input_bytes() const { return surfaces() * H * W * 16; }
  constexpr std::uint32_t output_bytes() const { return surfaces() * out_h * out_w * 16; }
  constexpr bool averages() const { return op == pool_op::average || op == pool_op::global_average; }
  constexpr std::uint32_t tasks() const { return ceil_div(out_h, rows_per_task); }
  constexpr pool_rows task_rows(std::uint32_t t) const {
    pool_rows r;
    r.first = t * rows_per_task;
    r.rows = std::min(rows_per_task, out_h - r.first);
    // In padded coordinates the task reads rows first·sy to (first + rows - 1)·sy + kh - 1.
    const std::int64_t top = std::int64_t{r.first} * stride_y - pad.top;
    const std::int64_t bottom = (std::int64_t{r.first} + r.rows - 1) * stride_y + kernel_h - 1 - pad.top;
    r.pad_top = top < 0 ? static_cast<std::uint32_t>(-top) : 0;
    r.pad_bottom = bottom >= H ? static_cast<std::uint32_t>(bottom - (H - 1)) : 0;
    r.in_first = static_cast<std::uint32_t>(std::max<std::int64_t>(top, 0));
    r.in_rows = static_cast<std::uint32_t>(std::min<std::int64_t>(bottom, H - 1) + 1 - r.in_first);
    return r;
  }
};

// Every rule of a pooling request, in the order a user would fix them.
template <class Soc = soc::rk3588>
constexpr result<pool_geometry> resolve_pool(const pool_spec& s) {
  using namespace reg;
  if (s.H == 0 || s.W == 0 || s.C == 0) return make_error(rules::shape_nonzero, "pool");
  if (s.dtype != precision::fp16 && s.dtype != precision::int8)
    return make_error(rules::pool_precision, "pool", "dtype", static_cast<std::uint32_t>(s.dtype));
  const bool global = s.op == pool_op::global_max || s.op == pool_op::global_average;
  pool_geometry g;
  g.op = s.op;
  g.dtype = s.dtype;
  g.H = s.H;
  g.W = s.W;
  g.C = s.C;
  g.atom = 16 / g.element_bytes();
  if (g.averages() && s.dtype != precision::fp16) return make_error(rules::pool_int8_average, "pool");
  if (!detail::fits_field<decltype(PPU_DATA_CUBE_IN_WIDTH::CUBE_IN_WIDTH)>(s.W - 1))
    return make_error(rules::pool_size, "pool", "W", s.W);
  // C padded to whole atoms, bounded before it is rounded (core/math.hpp)
  if (!detail::fits_field<decltype(PPU_DATA_CUBE_IN_CHANNEL::CUBE_IN_CHANNEL)>(round_up(s.C, g.atom) - 1))
    return make_error(rules::pool_size, "pool", "C", s.C);
  g.padded_C = align_up(s.C, g.atom);
  g.kernel_h = global ? s.H : s.kernel_h;
  g.kernel_w = global ? s.W : s.kernel_w;
  g.stride_y = global || s.stride_y == 0 ? g.kernel_h : s.stride_y;
  g.stride_x = global || s.stride_x == 0 ? g.kernel_w : s.stride_x;
  for (std::uint32_t v : {g.kernel_h, g.kernel_w, g.stride_y, g.stride_x})
    if (v == 0 || v > pool_max_kernel) return make_error(rules::pool_kernel, "pool", global ? "H x W" : "kernel or stride", v);
  if (g.averages() && (g.kernel_h < 2 || g.kernel_w < 2))
    return make_error(rules::pool_average_kernel, "pool", "kernel", g.kernel_h < 2 ? g.kernel_h : g.kernel_w);
  if (!global) {
    if (s.padding == conv_padding::same) {
      detail::same_sides(s.H, g.kernel_h, g.stride_y, 1, g.pad.top, g.pad.bottom);
      detail::same_sides(s.W, g.kernel_w, g.stride_x, 1, g.pad.left, g.pad.right);
    } else if (s.padding == conv_padding::explicit_sides) {
      g.pad = s.pad;
    }
  }
  // A side wider than the field, or than the kernel (outputs of padding alone).
  for (std::uint32_t side : {g.pad.top, g.pad.bottom})
    if (side > pool_max_padding || side >= g.kernel_h) return make_error(rules::pool_padding, "pool", "top/bottom", side);
  for (std::uint32_t side : {g.pad.left, g.pad.right})
    if (side > pool_max_padding || side >= g.kernel_w) return make_error(rules::pool_padding, "pool", "left/right", side);
  const std::uint64_t span_h = std::uint64_t{s.H} + g.pad.top + g.pad.bottom, span_w = std::uint64_t{s.W} + g.pad.left + g.pad.right;
  if (span_h < g.kernel_h || span_w < g.kernel_w) return make_error(rules::pool_kernel, "pool", "kernel larger than the input");
  g.out_h = static_cast<std::uint32_t>((span_h - g.kernel_h) / g.stride_y + 1);
  g.out_w = static_cast<std::uint32_t>((span_w - g.kernel_w) / g.stride_x + 1);
  if (!fits_address_space<Soc>(std::uint64_t{g.surfaces()} * s.H * s.W * 16))
    return make_error(rules::operand_size, "pool", "H*W*C", std::uint64_t{s.H} * s.W * s.C);
  // Rows per task: AB-POOL's row tiling, at most 8191 / W output rows, and as many as keep the
  // rows a task reads within CUBE_IN_HEIGHT's 13 bits: an image of any height is row tasks.
  if (s.W > pool_task_pixels) return make_error(rules::pool_size, "pool", "W", s.W);
  constexpr std::uint32_t max_in_rows = std::uint32_t{1} << 13;
  g.rows_per_task = std::min(pool_task_pixels / s.W, (max_in_rows - g.kernel_h) / g.stride_y + 1);
  return g;
}

namespace pooling {
// The bits of a fp16 reciprocal as the average registers take it: fp16(2^16 / k) (RU; AB-POOL's
// 0x7800 for every kernel is this value at k = 2, its only non-global kernel).
constexpr std::uint32_t reciprocal(std::uint32_t k) { return float_to_half(65536.0f / static_cast<float>(k)); }

// What pads a max window: -inf for fp16 (0xfc00, RU), -128 for int8 (the 35-bit value's low
// 32 bits here, its top 3 bits in PADDING_VALUE_2).
constexpr std::uint32_t max_padding_value(precision p) { return p == precision::fp16 ? 0xfc00u : 0xffffff80u; }

// One row task of a pooling program: the PPU and its read DMA (ops-reference §5.2, §5.3).
constexpr task_desc make_task(const pool_geometry& g, const pool_rows& r) {
  using namespace reg;
  const bool max = !g.averages();
  const bool padded = g.pad.top + g.pad.bottom + g.pad.left + g.pad.right > 0;
  const std::uint32_t in_row = g.W * 16, out_row = g.out_w * 16;
  const std::uint32_t surface_in = g.H * g.W, surface_out = g.out_h * g.out_w;  // 16-byte units
  const std::uint32_t in_extent = (g.surfaces() - 1) * surface_in * 16 + r.in_rows * in_row;
  const std::uint32_t out_extent = (g.surfaces() - 1) * surface_out * 16 + r.rows * out_row;
  task_desc t;
  t.ppu = ppu_stage{
      .cube_in_width = {.CUBE_IN_WIDTH = g.W - 1},
      .cube_in_height = {.CUBE_IN_HEIGHT = r.in_rows - 1},
      .cube_in_channel = {.CUBE_IN_CHANNEL = g.padded_C - 1},
      .cube_out_width = {.CUBE_OUT_WIDTH = g.out_w - 1},
      .cube_out_height = {.CUBE_OUT_HEIGHT = r.rows - 1},
      .cube_out_channel = {.CUBE_OUT_CHANNEL = g.padded_C - 1},
      // method 1 max, 0 average; FLYING_MODE 1: the PPU reads memory itself (AB-POOL 0x11 / 0x10)
      .operation_mode = {.POOLING_METHOD = max ? 1u : 0u, .FLYING_MODE = 1},
      .kernel = {.KERNEL_WIDTH = g.kernel_w - 1, .KERNEL_HEIGHT = g.kernel_h - 1,
                 .KERNEL_STRIDE_WIDTH = g.stride_x - 1, .KERNEL_STRIDE_HEIGHT = g.stride_y - 1},
      .recip_kernel_width = {.RECIP_KERNEL_WIDTH = max ? 0u : pooling::reciprocal(g.kernel_w)},
      .recip_kernel_height = {.RECIP_KERNEL_HEIGHT = max ? 0u : pooling::reciprocal(g.kernel_h)},
      .padding = {.PAD_LEFT = g.pad.left, .PAD_TOP = r.pad_top, .PAD_RIGHT = g.pad.right, .PAD_BOTTOM = r.pad_bottom},
      .padding_value_1 = {.PAD_VALUE_0 = max && padded ? pooling::max_padding_value(g.dtype) : 0u},
      .padding_value_2 = {.PAD_VALUE_1 = max && padded && g.dtype == precision::int8 ? 7u : 0u},
      .output = {operand_role::output, r.first * out_row, out_extent},
      // the output surface in 16-byte units (RU; the xml field 31:4), and INDEX_ADD the same
      .dst_surf_stride = {.DST_SURF_STRIDE = surface_out},
      .data_format = {.PROC_PRECISION = g.dtype, .INDEX_ADD = surface_out},
  };
  t.ppu_rdma = ppu_rdma_stage{
      .cube_in_width = {.CUBE_IN_WIDTH = g.W - 1},
      .cube_in_height = {.CUBE_IN_HEIGHT = r.in_rows - 1},
      .cube_in_channel = {.CUBE_IN_CHANNEL = g.padded_C - 1},
      .source = {operand_role::feature, r.in_first * in_row, in_extent},
      .src_line_stride = {.SRC_LINE_STRIDE = g.W},
      .src_surf_stride = {.SRC_SURF_STRIDE = surface_in},
      // the storage width: 1 8-bit, 2 16-bit (ops-reference §5.1)
      .data_format = {.IN_PRECISION = g.dtype == precision::fp16 ? 2u : 1u},
  };
  return t;
}

// Entries of a task: 18 PPU and 8 PPU_RDMA writes, the 4-entry tail (30, even).
inline constexpr std::uint32_t task_entries = 30;

constexpr void emit(program_writer& w, const pool_geometry& g) {
  for (std::uint32_t t = 0; t < g.tasks() && w.ok(); ++t) emit_task(w, pooling::make_task(g, g.task_rows(t)));
}
}  // namespace pooling

// A pooling program: its row tasks, ping-pong on (the vendor driver's PC|BLOCK|PINGPONG
// submit, AB-POOL).
struct pool_kind {
  using spec = pool_spec;
  using geometry = pool_geometry;
  static constexpr std::string_view name = "pool";
  template <class Soc>
  static constexpr result<geometry> resolve(const spec& s) { return resolve_pool<Soc>(s); }
  static constexpr program_size size(const geometry& g) {
    return {g.tasks() * pooling::task_entries, std::size_t{g.tasks()} * 3, g.tasks()};
  }
  static constexpr submit_options options(const geometry&) { return {.pingpong = true}; }
  template <class Soc>
  static constexpr void emit(program_writer& w, const geometry& g) { pooling::emit(w, g); }
  static constexpr program_checks checks = program_checks::every_rule;
};

pool_kind program_kind_of(const pool_spec&);

// The names before regcmd::fixed and regcmd::build (docs/changelog.md).
template <pool_spec Spec, class Soc = soc::rk3588>
[[deprecated("use regcmd::fixed<spec>()")]] constexpr auto pool() { return fixed<Spec, Soc>(); }
template <class Soc = soc::rk3588>
[[deprecated("use regcmd::build(spec)")]] auto build_pool(const pool_spec& spec) { return build<Soc>(spec); }

}  // namespace regcmd
