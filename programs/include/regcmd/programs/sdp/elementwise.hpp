#pragma once
// SDP element-wise programs: out = a (op) b on the DPU, fed by the DPU_RDMA (enable mask
// 0x18: DPU + DPU_RDMA, no CNA).
//
//   a, out   [M][N] tensors; b per element ([M][N]), per channel ([N], broadcast along the
//            rows) or one register immediate (fp16 ALU ops).
//
// Layouts: regcmd/programs/sdp_pass.hpp (surface: NC1HWC2, per channel needs it; flat: row-major).
//
// Register values come from hardware-run sources, named at each write below and in
// docs/sdp-values.md.

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <optional>

#include <regcmd/core/error.hpp>
#include <regcmd/core/math.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/task/emit_task.hpp>
#include <regcmd/task/task.hpp>
#include <regcmd/task/writer.hpp>
#include <regcmd/programs/door.hpp>
#include <regcmd/programs/vocabulary.hpp>
#include <regcmd/programs/sdp_pass.hpp>
#include <regcmd/registers/dpu.hpp>
#include <regcmd/registers/dpu_rdma.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/rules/limits.hpp>
#include <regcmd/rules/precision_rules.hpp>

namespace regcmd {

struct ew_spec {
  ew_op op = ew_op::add;
  precision dtype = precision::fp16;  // of a, b and out: fp16, int8 or int16
  std::uint32_t M = 0;
  std::uint32_t N = 0;
  ew_operand operand = ew_operand::per_element;
  operand_layout layout = operand_layout::surface;
  tile_padding tile_pad = tile_padding::zero;
  float immediate = 0.0f;          // ew_operand::immediate
  std::uint32_t input_pitch = 0;   // a strided view of a: refused (the DPU_RDMA has no line stride)
  friend constexpr bool operator==(const ew_spec&, const ew_spec&) = default;
};

// An element-wise op over an SDP tensor: its shape, the op and the second operand.
struct ew_geometry : sdp_shape {
  ew_op op{};
  ew_operand operand{};
  std::uint32_t immediate_bits = 0;

  // Bytes of b: per element as a, per channel padded_N values, none for an immediate.
  constexpr std::uint32_t operand_bytes() const {
    return operand == ew_operand::per_element ? tensor_bytes()
           : operand == ew_operand::per_channel ? padded_N * element_bytes()
                                                : 0;
  }
  friend constexpr bool operator==(const ew_geometry&, const ew_geometry&) = default;
};

// The fp32 bits of an immediate (B: fp16 processing reads its register operand as fp32).
constexpr std::uint32_t fp32_bits(float v) { return std::bit_cast<std::uint32_t>(v); }

// Every rule of an element-wise request, in the order a user would fix them (the shape's
// last: regcmd/programs/sdp_pass.hpp).
template <class Soc = soc::rk3588>
constexpr result<ew_geometry> resolve_ew(const ew_spec& s) {
  if (s.input_pitch != 0) return make_error(rules::ew_line_stride, "ew", "input_pitch", s.input_pitch);
  if (s.op == ew_op::prelu && s.dtype != precision::fp16)
    return make_error(rules::ew_prelu_precision, "ew", "dtype", static_cast<std::uint32_t>(s.dtype));
  if (s.operand == ew_operand::immediate && (s.dtype != precision::fp16 || s.op == ew_op::mul || s.op == ew_op::prelu))
    return make_error(rules::ew_immediate, "ew");
  if (s.operand == ew_operand::per_channel && s.layout == operand_layout::row_major)
    return make_error(rules::ew_per_channel_layout, "ew");
  const result<sdp_shape> shape = resolve_sdp_shape<Soc>(s.dtype, s.M, s.N, s.layout, s.tile_pad, "ew");
  if (!shape) return shape.err();
  ew_geometry g;
  static_cast<sdp_shape&>(g) = shape.value();
  g.op = s.op;
  g.operand = s.operand;
  g.immediate_bits = s.operand == ew_operand::immediate ? fp32_bits(s.immediate) : 0;
  return g;
}


namespace sdp {
// Entries of one SDP task: 53 register writes, the 4-entry tail and the padding that
// starts the next task on 16 bytes.
inline constexpr std::uint32_t task_entries = 58;

// One SDP task over `shape`: a DPU + DPU_RDMA task of the skeleton (regcmd/task/task.hpp) in
// the vendor's element-wise write list (the DPU without OFFSET_PEND, 0x40C4 and the LUT).
constexpr task_desc make_task(const ew_geometry& g, const ew_task_shape& shape, const ew_offsets& at = {}) {
  const bool channel = g.operand == ew_operand::per_channel;
  const detail::ew_config config = detail::ew_config_of(g.dtype, g.op, g.operand);
  task_desc t = sdp_task(g, shape, at);
  // EW_CVT_SCALE stays 1: "integer EW conversion needs a scale of 1" (B). The immediate goes
  // in every operand group (B: which group a surface uses is not established).
  t.dpu->ew = {.cfg = config.ew, .operands = every_element(reg::DPU_EW_OP_VALUE{.EW_OPERAND = g.immediate_bits})};
  // The second operand (ERDMA); a per-channel vector is contiguous, one 16-byte atom per
  // surface (B).
  t.dpu_rdma->erdma_cfg = config.erdma;
  if (g.operand != ew_operand::immediate) {
    const std::uint32_t W = shape.pixels, C = shape.channels;
    t.dpu_rdma->ew_operand = address{operand_role::ew_operand, at.operand, channel ? C * g.element_bytes() : C / g.atom * W * 16};
    t.dpu_rdma->ew_surf_stride = {.EW_SURF_STRIDE = channel ? 1u : W};
  }
  return t;
}

// Every task of an element-wise op: one in the surface layout, one per 8000 pixels flat.
constexpr void emit(program_writer& w, const ew_geometry& g) {
  for (std::uint32_t t = 0; t < g.tasks() && w.ok(); ++t) {
    const std::uint32_t at = g.task_offset(t);
    emit_task(w, sdp::make_task(g, g.task_shape(t), {at, g.operand == ew_operand::per_element ? at : 0, at}));
  }
}

constexpr std::uint32_t entries_of(const ew_geometry& g) { return g.tasks() * task_entries; }
}  // namespace sdp

// An element-wise program: its tasks, with ping-pong off (the reference runs SDP so).
struct ew_kind {
  using spec = ew_spec;
  using geometry = ew_geometry;
  static constexpr std::string_view name = "ew";
  template <class Soc>
  static constexpr result<geometry> resolve(const spec& s) { return resolve_ew<Soc>(s); }
  static constexpr program_size size(const geometry& g) { return {sdp::entries_of(g), std::size_t{g.tasks()} * 4, g.tasks()}; }
  static constexpr submit_options options(const geometry&) { return {.pingpong = false}; }
  template <class Soc>
  static constexpr void emit(program_writer& w, const geometry& g) { sdp::emit(w, g); }
  static constexpr program_checks checks = program_checks::every_rule;
};

ew_kind program_kind_of(const ew_spec&);

// The names before regcmd::fixed and regcmd::build (docs/changelog.md).
template <ew_spec Spec, class Soc = soc::rk3588>
[[deprecated("use regcmd::fixed<spec>()")]] constexpr auto ew() { return fixed<Spec, Soc>(); }
template <class Soc = soc::rk3588>
[[deprecated("use regcmd::build(spec)")]] auto build_ew(const ew_spec& spec) { return build<Soc>(spec); }

}  // namespace regcmd
