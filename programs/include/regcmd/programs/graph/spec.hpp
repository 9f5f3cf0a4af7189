#pragma once
// A graph: ops wired by named tensors, as a user writes it.
//
//   constexpr graph_spec ffn = make_graph(
//       graph_matmul("gate", "x", "w_gate", {.dtype = fp16, .out_dtype = fp16, .M = 1, .K = 4096, .N = 11008}),
//       graph_matmul("up", "x", "w_up", {...}),
//       graph_act("act", "gate", {.fn = activation::silu, .M = 1, .N = 11008}),
//       graph_ew("h", "act", "up", {.op = ew_op::mul, .M = 1, .N = 11008, .layout = operand_layout::row_major}),
//       graph_matmul("y", "h", "w_down", {...}));
//
// Every op names the tensor it writes and the tensors it reads; what each tensor is follows
// from the wiring: read and never written, an input (a matmul's B: a weight); written and
// read later, an intermediate; written and never read, an output. Each op keeps its own
// spec, so a graph is checked op by op with the ops' own rules, then at every boundary
// (regcmd/programs/graph/graph.hpp). A graph_spec is a structural value: a template argument for a
// graph known at compile time, a plain value at run time.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <regcmd/core/error.hpp>
#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/conv/spec.hpp>
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/matmul/spec.hpp>
#include <regcmd/programs/pooling/pooling.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

// A tensor's or an op's name: fixed storage, so that a graph is a structural type.
struct graph_name {
  static constexpr std::size_t capacity = 23;
  std::array<char, capacity + 1> text{};

  constexpr graph_name() = default;
  template <std::size_t N>
  constexpr graph_name(const char (&s)[N]) {  // NOLINT: a literal is the usual way to name
    static_assert(N - 1 <= capacity, "regcmd: a graph name holds at most 23 characters");
    for (std::size_t i = 0; i + 1 < N; ++i) text[i] = s[i];
  }
  // A name known at run time: empty when it does not fit (check with fits()).
  static constexpr graph_name of(std::string_view s) {
    graph_name n;
    if (s.size() > capacity) return n;
    for (std::size_t i = 0; i < s.size(); ++i) n.text[i] = s[i];
    return n;
  }
  static constexpr bool fits(std::string_view s) { return !s.empty() && s.size() <= capacity; }
  // "<prefix>.<what>": a preset's own tensors (norm/); empty when it does not fit.
  static constexpr graph_name prefixed(std::string_view prefix, std::string_view what) {
    graph_name n;
    if (prefix.size() + 1 + what.size() > capacity) return n;
    std::size_t at = 0;
    for (char c : prefix) n.text[at++] = c;
    n.text[at++] = '.';
    for (char c : what) n.text[at++] = c;
    return n;
  }
  constexpr std::string_view view() const {
    std::size_t n = 0;
    while (n < capacity && text[n] != 0) ++n;
    return {text.data(), n};
  }
  constexpr bool empty() const { return text[0] == 0; }
  friend constexpr bool operator==(const graph_name&, const graph_name&) = default;
};

enum class graph_op_kind : std::uint8_t { matmul, ew, act, conv, pool, concat };

// Two NC1HWC2 surfaces of the same pixels joined along their channels, as the graph places
// them: the second operand's atom planes right after the first's, both inside the result's
// bytes, so the ops writing them write the result and nothing is copied (graph.hpp).
struct concat_spec {
  precision dtype = precision::fp16;  // fp16 or int8
  std::uint32_t pixels = 0;
  std::uint32_t channels_a = 0, channels_b = 0;
  friend constexpr bool operator==(const concat_spec&, const concat_spec&) = default;
};

// One op: the tensor it writes (out), its first operand (a), its second (b: a matmul's or
// a conv's weights, an element-wise op's second operand, a concatenation's second part;
// empty for an activation, a pooling or an immediate) and a conv's residual (c: with
// residual_add only). Only the spec of its kind is read.
struct graph_op {
  graph_op_kind kind{};
  graph_name out, a, b;
  matmul_spec matmul{};
  ew_spec ew{};
  act_spec act{};
  conv_spec conv{};
  pool_spec pool{};
  graph_name c;
  concat_spec concat{};
  friend constexpr bool operator==(const graph_op&, const graph_op&) = default;
};

namespace detail {
constexpr graph_op op_of(graph_op_kind kind, graph_name out, graph_name a, graph_name b = {}) {
  graph_op op;
  op.kind = kind;
  op.out = out;
  op.a = a;
  op.b = b;
  return op;
}
}  // namespace detail

constexpr graph_op graph_matmul(graph_name out, graph_name a, graph_name weights, const matmul_spec& s) {
  graph_op op = detail::op_of(graph_op_kind::matmul, out, a, weights);
  op.matmul = s;
  return op;
}
constexpr graph_op graph_ew(graph_name out, graph_name a, graph_name b, const ew_spec& s) {
  graph_op op = detail::op_of(graph_op_kind::ew, out, a, b);
  op.ew = s;
  return op;
}
// An element-wise op with a register immediate (s.operand = immediate): no second tensor.
constexpr graph_op graph_ew(graph_name out, graph_name a, const ew_spec& s) {
  graph_op op = detail::op_of(graph_op_kind::ew, out, a);
  op.ew = s;
  return op;
}
constexpr graph_op graph_act(graph_name out, graph_name a, const act_spec& s) {
  graph_op op = detail::op_of(graph_op_kind::act, out, a);
  op.act = s;
  return op;
}
// A conv; with s.residual_add, `residual` names the tensor it adds. A quantized conv's bias
// (and the correction every quantized conv reads with it) is the op's own tensor, packed
// with its weights (graph_packing.hpp: pack_conv).
constexpr graph_op graph_conv(graph_name out, graph_name a, graph_name weights, const conv_spec& s,
                              graph_name residual = {}) {
  graph_op op = detail::op_of(graph_op_kind::conv, out, a, weights);
  op.conv = s;
  op.c = residual;
  return op;
}
constexpr graph_op graph_pool(graph_name out, graph_name a, const pool_spec& s) {
  graph_op op = detail::op_of(graph_op_kind::pool, out, a);
  op.pool = s;
  return op;
}
// out = a then b along the channels: no task; the ops writing a and b write into out.
constexpr graph_op graph_concat(graph_name out, graph_name a, graph_name b, const concat_spec& s) {
  graph_op op = detail::op_of(graph_op_kind::concat, out, a, b);
  op.concat = s;
  return op;
}

// The ops a graph holds at most, and the tensors (every op adds at most one written tensor,
// two read ones and one of its own, or a conv three read ones and its bias). A graph written
// in code (make_graph, a template argument) holds 16; one built at run time from a graph file
// or a model (large_graph_spec) holds 128: a whole network in one submit.
inline constexpr std::size_t graph_max_ops = 16;
inline constexpr std::size_t large_graph_max_ops = 128;
constexpr std::size_t graph_max_tensors_of(std::size_t max_ops) { return 4 * max_ops; }
inline constexpr std::size_t graph_max_tensors = graph_max_tensors_of(graph_max_ops);

template <std::size_t MaxOps>
struct basic_graph_spec {
  static constexpr std::size_t max_ops = MaxOps;
  std::array<graph_op, MaxOps> ops{};
  std::uint32_t count = 0;
  // Every intermediate in bytes of its own, none reused when its lifetime ends: each can be
  // read back after the run (to check every op, as regcmd-run does), for a larger arena.
  bool keep_intermediates = false;
  // Tensors the host reads back after the run though later ops read them too (a decoder
  // layer's residual stream, which the next layer's norm reads): an intermediate among them
  // keeps its bytes in the arena to the end of the run. Each must be written by an op.
  static constexpr std::size_t max_read_back = 16;
  std::array<graph_name, max_read_back> read_back{};
  // The rule a preset's request broke (add_rms_norm, ...), which building the graph reports
  // before anything else: a preset that could not add its ops leaves a graph that says why.
  const rule* refused = nullptr;
  friend constexpr bool operator==(const basic_graph_spec&, const basic_graph_spec&) = default;
};
// Graphs of two capacities are equal when they hold the same ops (a graph file's against one
// written in code).
template <std::size_t A, std::size_t B>
  requires(A != B)
constexpr bool operator==(const basic_graph_spec<A>& x, const basic_graph_spec<B>& y) {
  if (x.count != y.count || x.keep_intermediates != y.keep_intermediates || x.read_back != y.read_back ||
      x.refused != y.refused)
    return false;
  for (std::uint32_t i = 0; i < x.count; ++i)
    if (!(x.ops[i] == y.ops[i])) return false;
  return true;
}
using graph_spec = basic_graph_spec<graph_max_ops>;
using large_graph_spec = basic_graph_spec<large_graph_max_ops>;

// A graph of the given ops, in the order they run. More than graph_max_ops ops do not
// compile; at run time, add ops with add_op (which says when the graph is full).
template <class... Ops>
constexpr graph_spec make_graph(const Ops&... ops) {
  static_assert(sizeof...(Ops) >= 1 && sizeof...(Ops) <= graph_max_ops,
                "regcmd rule graph-capacity: a graph holds 1 to 16 ops: split a larger one into several graphs");
  graph_spec g;
  ((g.ops[g.count++] = ops), ...);
  return g;
}

// A preset's check: a broken rule marks g refused with it (and is returned).
template <std::size_t MaxOps>
constexpr status refuse_unless(basic_graph_spec<MaxOps>& g, status checked) {
  if (!checked) g.refused = checked.err().violated;
  return checked;
}

template <std::size_t MaxOps>
constexpr status add_op(basic_graph_spec<MaxOps>& g, const graph_op& op) {
  if (g.count == MaxOps) return make_error(rules::graph_capacity, "graph", "ops", g.count + 1);
  g.ops[g.count++] = op;
  return {};
}

}  // namespace regcmd
