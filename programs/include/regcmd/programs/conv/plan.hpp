#pragma once
// The CBUF plan of a convolution: how its input rows and its kernels share the 12 banks,
// and the tasks that follow from it (one program, chained, one submit).
//
//   banks      DATA_BANK + WEIGHT_BANK = 12 in every task. Weights take the banks their
//              bytes need plus one (Mesa's margin, "why do we need an extra bank?"); one
//              task when the whole input fits beside them, its DATA_BANK the banks the input
//              needs (Mesa, ops-reference §2.2).
//   rows       otherwise the output rows are split into tasks of at most R input rows (R =
//              the rows the data banks hold): each task reads exactly the rows its outputs
//              need, so consecutive tasks share (dilated kernel height − stride) rows. Task 0
//              carries the top padding, the last one the bottom padding (implicit).
//   kernels    when the weights do not fit beside the rows of one output row, the kernels
//              are split into groups (multiples of the kernel group: 32 int8, 16 fp16), each
//              group its own row tasks; the group size is the one giving the fewest tasks.
//   reuse      row tasks after a group's first keep its weights in the CBUF (WEIGHT_REUSE,
//              Mesa's 0x2000 on every task after the first).
//
// A CBUF row is Mesa's count of 128-byte entries (rules/cbuf.hpp, cbuf_row_entries).
// docs/conv-values.md compares this split with Mesa's.

#include <algorithm>
#include <cstdint>

#include <regcmd/core/error.hpp>
#include <regcmd/core/math.hpp>
#include <regcmd/core/soc.hpp>
#include <regcmd/programs/conv/packing.hpp>
#include <regcmd/programs/conv/spec.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/rules/cbuf.hpp>
#include <regcmd/rules/limits.hpp>

namespace regcmd {

// The input rows, padding and output rows of one row task.
struct conv_rows {
  std::uint32_t top = 0, rows = 0;        // input rows [top, top + rows)
  std::uint32_t pad_top = 0;              // task 0 only
  std::uint32_t out_first = 0, out_rows = 0;
  friend constexpr bool operator==(const conv_rows&, const conv_rows&) = default;
};

struct conv_plan {
  conv_geometry conv{};
  std::uint32_t data_banks = 0, weight_banks = 0;
  std::uint32_t row_entries = 0;                   // CBUF entries of one input row
  std::uint32_t group_kernels = 0, groups = 1;     // kernels per group (the last may have fewer)
  std::uint32_t first_out_rows = 0, out_rows = 0;  // output rows of task 0, of every later task
  std::uint32_t row_tasks = 1;
  friend constexpr bool operator==(const conv_plan&, const conv_plan&) = default;

  constexpr std::uint32_t tasks() const { return groups * row_tasks; }
  constexpr std::uint32_t element_bytes() const { return conv.spec.dtype == conv_data::fp16 ? 2 : 1; }
  constexpr std::uint32_t input_channels() const { return align_up(conv.spec.C, 16); }  // C16
  // WEIGHT_KERNELS: the even count Mesa packs (int8), the kernels (fp16), 1 (depthwise).
  constexpr std::uint32_t kernels() const {
    const conv_spec& s = conv.spec;
    return s.depthwise ? 1 : conv.quantized() ? align_up(s.out_channels, 2) : s.out_channels;
  }
  constexpr std::uint32_t kernel_group() const { return conv.quantized() ? 32 : 16; }
  constexpr std::uint32_t span_y() const { return (conv.spec.kernel_h - 1) * conv.spec.dilation_y + 1; }

  // Output channels of group j: its first, the real ones, and the ones the DPU computes.
  // Groups are whole kernel groups, so the computed channels of one never reach the next's.
  constexpr std::uint32_t first_channel(std::uint32_t j) const { return conv.spec.depthwise ? 0 : j * group_kernels; }
  constexpr std::uint32_t real_channels(std::uint32_t j) const {
    return conv.spec.depthwise ? conv.spec.C : std::min(group_kernels, conv.spec.out_channels - first_channel(j));
  }
  constexpr std::uint32_t computed_channels(std::uint32_t j) const { return conv.dpu_channels(real_channels(j)); }
  // Kernels in group j's weights, and their bytes.
  constexpr std::uint32_t group_kernel_count(std::uint32_t j) const {
    return conv.spec.depthwise ? 1 : std::min(group_kernels, kernels() - first_channel(j));
  }
  constexpr std::uint64_t kernel_bytes() const {
    return std::uint64_t{conv.spec.kernel_h} * conv.spec.kernel_w * input_channels() * element_bytes();
  }
  constexpr std::uint64_t weight_bytes(std::uint32_t j) const { return group_kernel_count(j) * kernel_bytes(); }

  // Row task t: its input rows and output rows.
  constexpr conv_rows rows_of(std::uint32_t t) const {
    const conv_spec& s = conv.spec;
    conv_rows r;
    r.out_first = t == 0 ? 0 : first_out_rows + (t - 1) * out_rows;
    r.out_rows = std::min(t == 0 ? first_out_rows : out_rows, conv.out_h - r.out_first);
    r.pad_top = t == 0 ? conv.pad.top : 0;
    r.top = t == 0 ? 0 : r.out_first * s.stride_y - conv.pad.top;
    const std::uint64_t last = std::uint64_t{r.out_first + r.out_rows - 1} * s.stride_y + span_y() - 1 - conv.pad.top;
    r.rows = static_cast<std::uint32_t>(std::min<std::uint64_t>(last, s.H - 1) - r.top + 1);
    return r;
  }
  // Input rows read more than once across the row tasks (the overlap).
  constexpr std::uint64_t reread_rows() const {
    std::uint64_t read = 0;
    for (std::uint32_t t = 0; t < row_tasks; ++t) read += rows_of(t).rows;
    return read > conv.spec.H ? read - conv.spec.H : 0;
  }
};

namespace conv {
// The plan of a resolved convolution, or the rule it breaks: an operand beyond the 32-bit
// address space, or the CBUF's.
template <class Soc = soc::rk3588>
constexpr result<conv_plan> plan(const conv_geometry& g) {
  constexpr std::uint64_t banks = Soc::cbuf_banks, entries_per_bank = Soc::cbuf_bank_bytes / 128;
  if (!fits_address_space<Soc>(conv::feature_bytes(g))) return make_error(rules::operand_size, "conv", "features", conv::feature_bytes(g));
  if (!fits_address_space<Soc>(conv::weight_bytes(g))) return make_error(rules::operand_size, "conv", "weights", conv::weight_bytes(g));
  if (!fits_address_space<Soc>(conv::output_bytes(g))) return make_error(rules::operand_size, "conv", "output", conv::output_bytes(g));
  if (g.spec.residual_add && !fits_address_space<Soc>(conv::residual_bytes(g)))
    return make_error(rules::operand_size, "conv", "residual", conv::residual_bytes(g));
  conv_plan p;
  p.conv = g;
  const conv_spec& s = g.spec;
  const std::uint32_t atoms = p.input_channels() * p.element_bytes() / 16;
  const std::uint64_t row_entries = cbuf_row_entries(s.W, atoms);
  const auto banks_for = [&](std::uint64_t entries) { return (entries + entries_per_bank - 1) / entries_per_bank; };
  const auto weight_banks_for = [&](std::uint64_t bytes) { return (bytes + Soc::cbuf_bank_bytes - 1) / Soc::cbuf_bank_bytes + 1; };
  // The rows one output row needs must fit the data banks a task can have.
  const std::uint64_t min_data_banks = banks_for(row_entries * p.span_y());
  if (min_data_banks > banks - 1) return make_error(rules::conv_cbuf_row, "conv", "CBUF entries", row_entries * p.span_y());
  p.row_entries = static_cast<std::uint32_t>(row_entries);
  const std::uint64_t input_banks = banks_for(row_entries * s.H);

  // Each kernel group size (a multiple of the kernel group, or all kernels) that fits beside
  // one output row's input: the one with the fewest tasks, ties to the larger groups.
  const std::uint32_t kernels = p.kernels(), step = s.depthwise ? kernels : p.kernel_group();
  bool found = false;
  conv_plan best;
  for (std::uint32_t size = std::min(kernels, align_up(kernels, step)); size >= 1;) {
    conv_plan c = p;
    c.group_kernels = size;
    c.groups = s.depthwise ? 1 : ceil_div(kernels, size);
    const std::uint64_t weight_banks = weight_banks_for(c.weight_bytes(0));
    if (weight_banks + min_data_banks <= banks) {
      if (c.groups == 1 && input_banks <= banks - weight_banks) {
        c.data_banks = static_cast<std::uint32_t>(input_banks);
        c.first_out_rows = c.out_rows = g.out_h;
        c.row_tasks = 1;
      } else {
        c.data_banks = static_cast<std::uint32_t>(banks - weight_banks);
        const std::uint64_t rows = entries_per_bank * c.data_banks / row_entries;  // ≥ span_y
        const std::uint64_t span = c.span_y();
        c.first_out_rows = static_cast<std::uint32_t>(std::min<std::uint64_t>((rows + g.pad.top - span) / s.stride_y + 1, g.out_h));
        c.out_rows = static_cast<std::uint32_t>((rows - span) / s.stride_y + 1);
        c.row_tasks = 1 + ceil_div(g.out_h - c.first_out_rows, c.out_rows);
      }
      c.weight_banks = static_cast<std::uint32_t>(banks - c.data_banks);
      if (!found || c.tasks() < best.tasks()) best = c;
      found = true;
    }
    if (size <= step) break;
    size = (size - 1) / step * step;  // the next smaller multiple of the group
  }
  if (!found) return make_error(rules::conv_cbuf_weights, "conv", "weight bytes of one group", p.kernel_bytes() * step);
  return best;
}
}  // namespace conv

}  // namespace regcmd
