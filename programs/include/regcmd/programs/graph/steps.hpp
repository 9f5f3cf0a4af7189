#pragma once
// What the graph (graph.hpp) asks of each kind of op, one struct per kind with the same
// members: the graph's interface to its ops, reached through with_step_kind(kind, f).
//
//   kind             its graph_op_kind
//   resolve<Soc>     the op's spec resolved with its own rules into its step
//   uses             the tensors it reads (a, b, c in that order) and the one it writes, each
//                    with its format and the bytes its DMA reaches
//   bias_bytes       a tensor of its own it reads from the bias buffer (0: none)
//   on_sdp           whether it runs on the SDP (ping-pong off for the whole submit)
//   reads_flat_view  it is element-wise on one tensor: it may read what an earlier op wrote
//                    in any layout as the flat vector of its bytes, and what it writes then
//                    has that layout
//   size             the storage its tasks take
//   emit<Soc>        its tasks, as its own program writes them
//   checks_itself    its emitter checks its tasks against the program rules (a plan checks
//                    its tile templates); otherwise the graph checks them, once per distinct
//                    op (same_op: equal to an earlier one of the graph)

#include <array>
#include <cstdint>

#include <regcmd/core/error.hpp>
#include <regcmd/core/math.hpp>
#include <regcmd/task/writer.hpp>
#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/conv/emit.hpp>
#include <regcmd/programs/conv/packing.hpp>
#include <regcmd/programs/door.hpp>
#include <regcmd/programs/graph/spec.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/programs/pooling/pooling.hpp>
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/vocabulary.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

inline constexpr std::uint32_t no_op = 0xffff'ffffu;

// One op, resolved: the geometry of its kind, and the tensors it uses (indices into the
// graph's tensors; no_op where it has none). A matmul whose K is split writes its slices'
// fp16 partials into a tensor of its own and sums them with flat SDP adds (`ew`), through
// one or two running sums, into its output.
struct graph_step {
  graph_op_kind kind{};
  plan_shape matmul{};
  ew_geometry ew{};
  act_geometry act{};
  conv_plan conv{};
  pool_geometry pool{};
  sdp_shape concat{};                // the result's surface
  std::uint32_t concat_first = 0;   // channels of the first part
  std::uint32_t out = no_op, a = no_op, b = no_op;
  std::uint32_t c = no_op;     // a conv's residual
  std::uint32_t bias = no_op;  // a quantized conv's bias (its own tensor, in the bias buffer)
  std::uint32_t partials = no_op;
  std::array<std::uint32_t, 2> sums{no_op, no_op};

  constexpr bool sums_slices() const { return kind == graph_op_kind::matmul && matmul.slices > 1; }
};

namespace detail {

// One use of a tensor by an op: under which of the op's roles, in which format, how far.
struct tensor_use {
  const graph_name* name = nullptr;  // the spec's
  operand_role role{};
  tensor_format format{};
  std::uint32_t extent = 0;
};

// The uses of an op, its reads first, then the tensor it writes (last in `uses`).
struct op_uses {
  std::array<tensor_use, 4> uses{};
  std::uint32_t count = 0;
  constexpr op_uses& operator()(const graph_name& name, operand_role role, const tensor_format& format,
                                std::uint64_t extent) {
    uses[count++] = {&name, role, format, static_cast<std::uint32_t>(extent)};
    return *this;
  }
};

constexpr tensor_format sdp_format(const sdp_shape& g) {
  if (g.layout == operand_layout::row_major) return row_format(g.dtype, 1, g.elements, 0);
  return surface_format(g.dtype, g.M, g.padded_N, g.N);
}

constexpr tensor_format matmul_feature_format(const plan_shape& p) {
  const matmul_geometry& g = p.whole;
  if (g.layout == operand_layout::surface) return surface_format(g.in, g.M, g.K, g.K);
  return row_format(g.in, g.M, g.K, p.feature_pitch);
}
constexpr tensor_format matmul_output_format(const plan_shape& p) {
  const matmul_geometry& g = p.whole;
  if (g.layout == operand_layout::surface) return surface_format(g.out, g.M, g.N, g.N);
  return row_format(g.out, g.M, g.N, p.output_pitch);
}

// A conv's cubes: NC1HWC2 surfaces of 16 bytes; the input's channels padded to 16, the
// output's to what the DPU computes (conv_geometry::dpu_channels).
constexpr precision conv_precision(conv_data d) { return d == conv_data::fp16 ? precision::fp16 : precision::int8; }
constexpr tensor_format conv_input_format(const conv_geometry& g) {
  tensor_format f = surface_format(conv_precision(g.spec.dtype), g.spec.H * g.spec.W, align_up(g.spec.C, 16), g.spec.C);
  f.is_unsigned = g.spec.dtype == conv_data::uint8;
  return f;
}
constexpr tensor_format conv_output_format(const conv_geometry& g) {
  tensor_format f = surface_format(g.spec.out_dtype, g.out_h * g.out_w, g.computed_channels(), g.spec.out_channels);
  f.is_unsigned = g.spec.dtype == conv_data::uint8 && g.spec.out_dtype == precision::int8;
  return f;
}
constexpr tensor_format conv_residual_format(const conv_geometry& g) {
  tensor_format f = conv_output_format(g);
  f.is_unsigned = g.spec.dtype == conv_data::uint8;  // the residual's type is the input's
  return f;
}
constexpr tensor_format conv_weight_format(const conv_geometry& g) {
  const conv_spec& s = g.spec;
  tensor_format f{conv_precision(s.dtype), tensor_layout::conv_weights, s.depthwise ? 1 : s.out_channels,
                  s.kernel_h * s.kernel_w * s.C, 0};
  f.is_unsigned = s.dtype == conv_data::uint8;
  return f;
}
// A pooling's image and result: NC1HWC2, channels padded to one atom.
constexpr sdp_shape pool_image(const pool_geometry& g, bool output) {
  sdp_shape s;
  s.dtype = g.dtype;
  s.layout = operand_layout::surface;
  s.M = output ? g.out_h * g.out_w : g.H * g.W;
  s.N = g.C;
  s.atom = g.atom;
  s.padded_N = g.padded_C;
  return s;
}

// The defaults of the interface: no tensor of its own, not on the SDP, checked by the graph
// on each occurrence.
struct step_defaults {
  static constexpr std::uint64_t bias_bytes(const graph_step&) { return 0; }
  static constexpr bool reads_flat_view = false;
  static constexpr bool checks_itself = false;
  static constexpr bool same_op(const graph_step&, const graph_step&) { return false; }
};

}  // namespace detail

template <graph_op_kind K>
struct graph_step_of;

// A matmul, planned: N and M tiles, K slices summed on the device by flat fp16 SDP adds
// over M x N (N padded to the weight tile); the plan weighs their tasks when it chooses
// the slices.
template <>
struct graph_step_of<graph_op_kind::matmul> : detail::step_defaults {
  static constexpr graph_op_kind kind = graph_op_kind::matmul;
  template <class Soc>
  static constexpr status resolve(const graph_op& op, graph_step& s) {
    // The request's rules come first: a precision without a weight tile pads N to nothing.
    const matmul_spec& m = op.matmul;
    if (status r = check_request<Soc>(m); !r) return r.err();
    // N padded to the weight tile, bounded before it is rounded to 32 bits (core/math.hpp):
    // a wider N is the plan's operand-size error
    const std::uint64_t padded_n = round_up(m.N, matmul::weight_tile_n<Soc>(m.dtype.features));
    const result<ew_geometry> add =
        padded_n > UINT32_MAX
            ? result<ew_geometry>{make_error(rules::operand_size, "graph", "N", padded_n)}
            : resolve_ew<Soc>({.op = ew_op::add, .M = m.M, .N = static_cast<std::uint32_t>(padded_n), .layout = operand_layout::row_major});
    const result<plan_shape> p = plan<Soc>(m, {.device_sum_tasks = add ? add.value().tasks() : 1});
    if (!p) return p.err();
    s.matmul = p.value();
    if (!s.sums_slices()) return {};
    const bool summable = add && m.out_dtype == precision::fp16 && m.layout == operand_layout::row_major && m.output_pitch == 0;
    if (!summable && k_fits_one_op<Soc>(s.matmul.whole.K)) {
      // The cheapest grid splits K, but the slices cannot be summed on the device (an
      // integer accumulator, a padded output): K whole in every tile, M and N tiled, as
      // librknnrt does.
      const result<plan_shape> whole = plan<Soc>(m, {.whole_k = true});
      if (!whole) return whole.err();
      s.matmul = whole.value();
      return {};
    }
    if (!summable) return make_error(rules::graph_k_split, "graph", "K", m.K).with_note(op.out.view());
    s.ew = add.value();
    return {};
  }
  static constexpr detail::op_uses uses(const graph_op& op, const graph_step& s) {
    const plan_shape& p = s.matmul;
    detail::op_uses u;
    u(op.a, operand_role::feature, detail::matmul_feature_format(p), matmul::plan_feature_bytes(p));
    u(op.b, operand_role::weight, weight_format(p.whole.in, p.whole.K, p.whole.N), p.weight_bytes());
    if (s.sums_slices()) return u(op.out, operand_role::output, detail::sdp_format(s.ew), s.ew.tensor_bytes());
    return u(op.out, operand_role::output, detail::matmul_output_format(p), matmul::plan_output_bytes(p));
  }
  static constexpr bool on_sdp(const graph_step& s) { return s.sums_slices(); }
  static constexpr program_size size(const graph_step& s) {
    const program_size sums = ew_kind::size(s.ew);  // per add, when K is split
    const std::size_t adds = s.matmul.slices - 1;
    return {matmul::plan_entries(s.matmul) + adds * sums.entries, matmul::plan_slots(s.matmul) + adds * sums.slots,
            s.matmul.tasks() + adds * sums.tasks};
  }
  template <class Soc>
  static constexpr void emit(program_writer& w, const graph_step& s) {
    matmul::emit_plan<Soc>(w, s.matmul);
  }
  static constexpr bool checks_itself = true;  // each tile template
};

template <>
struct graph_step_of<graph_op_kind::ew> : detail::step_defaults {
  static constexpr graph_op_kind kind = graph_op_kind::ew;
  template <class Soc>
  static constexpr status resolve(const graph_op& op, graph_step& s) {
    const result<ew_geometry> g = resolve_ew<Soc>(op.ew);
    if (!g) return g.err();
    s.ew = g.value();
    return {};
  }
  static constexpr detail::op_uses uses(const graph_op& op, const graph_step& s) {
    const ew_geometry& g = s.ew;
    detail::op_uses u;
    u(op.a, operand_role::feature, detail::sdp_format(g), g.tensor_bytes());
    if (g.operand != ew_operand::immediate)
      u(op.b, operand_role::ew_operand, g.operand == ew_operand::per_channel ? vector_format(g.dtype, g.padded_N) : detail::sdp_format(g),
        g.operand_bytes());
    return u(op.out, operand_role::output, detail::sdp_format(g), g.tensor_bytes());
  }
  static constexpr bool on_sdp(const graph_step&) { return true; }
  static constexpr program_size size(const graph_step& s) { return ew_kind::size(s.ew); }
  template <class Soc>
  static constexpr void emit(program_writer& w, const graph_step& s) {
    sdp::emit(w, s.ew);
  }
  static constexpr bool same_op(const graph_step& a, const graph_step& b) { return a.ew == b.ew; }
};

template <>
struct graph_step_of<graph_op_kind::act> : detail::step_defaults {
  static constexpr graph_op_kind kind = graph_op_kind::act;
  template <class Soc>
  static constexpr status resolve(const graph_op& op, graph_step& s) {
    const result<act_geometry> g = resolve_act<Soc>(op.act);
    if (!g) return g.err();
    s.act = g.value();
    return {};
  }
  static constexpr detail::op_uses uses(const graph_op& op, const graph_step& s) {
    return detail::op_uses{}(op.a, operand_role::feature, detail::sdp_format(s.act), s.act.tensor_bytes())(
        op.out, operand_role::output, detail::sdp_format(s.act), s.act.tensor_bytes());
  }
  static constexpr bool on_sdp(const graph_step&) { return true; }
  static constexpr bool reads_flat_view = true;
  static constexpr program_size size(const graph_step& s) {
    return {act::entries_of(s.act), std::size_t{s.act.tasks()} * 4, s.act.tasks()};
  }
  template <class Soc>
  static constexpr void emit(program_writer& w, const graph_step& s) {
    act::emit(w, s.act);
  }
};

template <>
struct graph_step_of<graph_op_kind::conv> : detail::step_defaults {
  static constexpr graph_op_kind kind = graph_op_kind::conv;
  template <class Soc>
  static constexpr status resolve(const graph_op& op, graph_step& s) {
    const result<conv_geometry> g = resolve_conv(op.conv);
    if (!g) return g.err();
    const result<conv_plan> p = conv::plan<Soc>(g.value());
    if (!p) return p.err();
    s.conv = p.value();
    return {};
  }
  static constexpr detail::op_uses uses(const graph_op& op, const graph_step& s) {
    const conv_geometry& g = s.conv.conv;
    detail::op_uses u;
    u(op.a, operand_role::feature, detail::conv_input_format(g), conv::feature_bytes(g));
    u(op.b, operand_role::weight, detail::conv_weight_format(g), conv::weight_bytes(g));
    if (g.spec.residual_add)  // the output's cube, at the residual's quantization
      u(op.c, operand_role::residual, detail::conv_residual_format(g), conv::residual_bytes(g));
    return u(op.out, operand_role::output, detail::conv_output_format(g), conv::output_bytes(g));
  }
  // A quantized conv's bias (and the correction every quantized conv reads with it), an
  // fp16 conv's bias.
  static constexpr std::uint64_t bias_bytes(const graph_step& s) {
    return s.conv.conv.quantized() || s.conv.conv.ew_bias() ? conv::bias_bytes(s.conv.conv) : 0;
  }
  static constexpr bool on_sdp(const graph_step&) { return false; }
  static constexpr program_size size(const graph_step& s) {
    return {s.conv.tasks() * conv::task_entries, std::size_t{s.conv.tasks()} * 6, s.conv.tasks()};
  }
  template <class Soc>
  static constexpr void emit(program_writer& w, const graph_step& s) {
    conv::emit<Soc>(w, s.conv);
  }
};

template <>
struct graph_step_of<graph_op_kind::pool> : detail::step_defaults {
  static constexpr graph_op_kind kind = graph_op_kind::pool;
  template <class Soc>
  static constexpr status resolve(const graph_op& op, graph_step& s) {
    const result<pool_geometry> g = resolve_pool<Soc>(op.pool);
    if (!g) return g.err();
    s.pool = g.value();
    return {};
  }
  static constexpr detail::op_uses uses(const graph_op& op, const graph_step& s) {
    return detail::op_uses{}(op.a, operand_role::feature, detail::sdp_format(detail::pool_image(s.pool, false)),
                             s.pool.input_bytes())(
        op.out, operand_role::output, detail::sdp_format(detail::pool_image(s.pool, true)), s.pool.output_bytes());
  }
  static constexpr bool on_sdp(const graph_step&) { return false; }
  static constexpr program_size size(const graph_step& s) { return pool_kind::size(s.pool); }
  template <class Soc>
  static constexpr void emit(program_writer& w, const graph_step& s) {
    pooling::emit(w, s.pool);
  }
};

// A concatenation along channels: no task. Its parts are surfaces of whole atoms inside its
// result, which the graph places (graph.hpp, place), so the ops writing them write it.
template <>
struct graph_step_of<graph_op_kind::concat> : detail::step_defaults {
  static constexpr graph_op_kind kind = graph_op_kind::concat;
  template <class Soc>
  static constexpr status resolve(const graph_op& op, graph_step& s) {
    const concat_spec& c = op.concat;
    if ((c.dtype != precision::fp16 && c.dtype != precision::int8) || c.pixels == 0 || c.channels_a == 0 ||
        c.channels_b == 0 || std::uint64_t{c.channels_a} + c.channels_b > UINT32_MAX)
      return make_error(rules::concat_shape, "graph", "concat").with_note(op.out.view());
    const std::uint32_t atom = 16 / static_cast<std::uint32_t>(bytes_of(c.dtype, 1));
    if (c.channels_a % atom != 0) return make_error(rules::concat_atoms, "graph", "channels_a", c.channels_a);
    s.concat = {.dtype = c.dtype, .layout = operand_layout::surface, .M = c.pixels, .N = c.channels_a + c.channels_b,
                .atom = atom, .padded_N = static_cast<std::uint32_t>(round_up(std::uint64_t{c.channels_a} + c.channels_b, atom))};
    s.concat_first = c.channels_a;
    if (!fits_address_space<Soc>(s.concat.surfaces() * std::uint64_t{c.pixels} * 16))
      return make_error(rules::operand_size, "graph", "concat", s.concat.surfaces() * std::uint64_t{c.pixels} * 16);
    return {};
  }
  static constexpr sdp_shape part(const graph_step& s, bool second) {
    sdp_shape p = s.concat;
    p.N = second ? s.concat.N - s.concat_first : s.concat_first;
    p.padded_N = static_cast<std::uint32_t>(round_up(p.N, p.atom));
    return p;
  }
  static constexpr detail::op_uses uses(const graph_op& op, const graph_step& s) {
    const sdp_shape a = part(s, false), b = part(s, true);
    return detail::op_uses{}(op.a, operand_role::feature, detail::sdp_format(a), a.tensor_bytes())(
        op.b, operand_role::feature, detail::sdp_format(b), b.tensor_bytes())(
        op.out, operand_role::output, detail::sdp_format(s.concat), s.concat.tensor_bytes());
  }
  static constexpr bool on_sdp(const graph_step&) { return false; }
  static constexpr program_size size(const graph_step&) { return {0, 0, 0}; }
  template <class Soc>
  static constexpr void emit(program_writer&, const graph_step&) {}
  static constexpr bool checks_itself = true;  // nothing to check: no task
};

// f(graph_step_of<K>{}) for the op kind K named at run time: the one place the graph turns
// a kind into its interface.
template <class F>
constexpr decltype(auto) with_step_kind(graph_op_kind kind, F&& f) {
  switch (kind) {
    case graph_op_kind::matmul: return f(graph_step_of<graph_op_kind::matmul>{});
    case graph_op_kind::ew: return f(graph_step_of<graph_op_kind::ew>{});
    case graph_op_kind::act: return f(graph_step_of<graph_op_kind::act>{});
    case graph_op_kind::conv: return f(graph_step_of<graph_op_kind::conv>{});
    case graph_op_kind::concat: return f(graph_step_of<graph_op_kind::concat>{});
    case graph_op_kind::pool: break;
  }
  return f(graph_step_of<graph_op_kind::pool>{});
}

}  // namespace regcmd
