#pragma once
// Fused chains with an activation or pooling, in one submit: graph presets (graph.hpp), each
// spec turned into the graph below and built by the graph's code.
//
//   matmul -> activation            C = A . B (fp16, row-major) into the intermediate buffer,
//                                   then f(C) flat over it (regcmd/programs/activation/activation.hpp)
//   conv -> activation -> pooling   the conv's NC1HWC2 output into the intermediate buffer,
//                                   f over it, then the pooling of the result; either stage
//                                   may be left out
//
// The boundaries follow fused.hpp's rules (the reference's "Chained 2-input SDP", "fp16
// matmul -> fp16 output stage"): an SDP reads fp16, int8 or int16, so the matmul writes fp16
// and a conv followed by an activation writes fp16 or int8; the matmul writes row-major
// packed (the DPU_RDMA has no line stride); ping-pong is off for the whole submit (SDP).
// An activation is element-wise, so it walks a conv's NC1HWC2 output as one flat vector:
// every surface, every pixel. Intermediates share the intermediate buffer: the conv's output
// at offset 0, the activation's after it (64-byte aligned) when pooling follows.

#include <cstdint>
#include <string_view>

#include <regcmd/core/error.hpp>
#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/conv/packing.hpp>
#include <regcmd/programs/door.hpp>
#include <regcmd/programs/graph/fused.hpp>
#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/pooling/pooling.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

// The activation of a chain: its fn and parameters (act_spec's dtype, shape and layout are
// the chain's to set).
struct matmul_act_spec {
  matmul_spec matmul;  // output fp16, row-major
  act_spec activation{};
  friend constexpr bool operator==(const matmul_act_spec&, const matmul_act_spec&) = default;
};

// The chain as a graph: the matmul into the intermediate "c", f over its whole output
// (M x N padded to the weight tile) into "out".
constexpr graph_spec matmul_act_graph(const matmul_act_spec& s, std::uint32_t padded_n) {
  act_spec a = s.activation;
  a.dtype = precision::fp16;
  a.M = s.matmul.M;
  a.N = padded_n;
  a.layout = operand_layout::row_major;
  return make_graph(graph_matmul("c", "a", "w", s.matmul), graph_act("out", "c", a));
}

struct matmul_act_geometry {
  graph_geometry graph;  // the tensors a, w (inputs), c (the intermediate), out
  matmul_geometry mm;    // N padded to the weight tile
  act_geometry act;      // flat over M x padded N
};

template <class Soc = soc::rk3588>
constexpr result<matmul_act_geometry> resolve_matmul_act(const matmul_act_spec& s) {
  const result<matmul_geometry> mm = resolve_chained_matmul<Soc>(s.matmul, "chain");
  if (!mm) return mm.err();
  const result<graph_geometry> g = resolve_graph<Soc>(matmul_act_graph(s, mm.value().N));
  if (!g) return g.err();
  return matmul_act_geometry{g.value(), mm.value(), g.value().steps[1].act};
}

struct matmul_act_kind : graph_preset<matmul_act_spec, matmul_act_geometry> {
  static constexpr std::string_view name = "chain";
  template <class Soc>
  static constexpr result<geometry> resolve(const spec& s) { return resolve_matmul_act<Soc>(s); }
};

struct conv_chain_spec {
  conv_spec conv;  // with residual_add, its residual is the tensor "residual"
  bool activate = false;
  act_spec activation{};
  bool pool = false;
  pool_spec pooling{};  // op, kernel, stride and padding: the image is the conv's output
  friend constexpr bool operator==(const conv_chain_spec&, const conv_chain_spec&) = default;
};

// The chain as a graph: the conv of "image" by "weights" into "conv", f over all of its
// bytes (every surface, every pixel: one flat vector) into "act", the pooling into "pool";
// the last stage writes the output. `c` is the conv resolved.
constexpr graph_spec conv_chain_graph(const conv_chain_spec& s, const conv_geometry& c) {
  const precision out = s.conv.out_dtype;
  const graph_name residual = s.conv.residual_add ? graph_name("residual") : graph_name{};
  graph_spec g = make_graph(graph_conv("conv", "image", "weights", s.conv, residual));
  graph_name last = "conv";
  if (s.activate) {
    act_spec a = s.activation;
    a.dtype = out;
    a.M = 1;
    a.N = static_cast<std::uint32_t>(conv::output_bytes(c) / bytes_of(out, 1));
    a.layout = operand_layout::row_major;
    g.ops[g.count++] = graph_act("act", last, a);
    last = "act";
  }
  if (s.pool) {
    pool_spec p = s.pooling;
    p.dtype = out;
    p.H = c.out_h;
    p.W = c.out_w;
    p.C = s.conv.out_channels;
    g.ops[g.count++] = graph_pool("pool", last, p);
  }
  return g;
}

struct conv_chain_geometry {
  graph_geometry graph;  // the tensors image, weights, residual (inputs), conv, act, pool
  conv_plan conv;
  bool activate = false, pool = false;
  act_geometry act;    // flat over the conv's whole output
  pool_geometry pooling;
  std::uint32_t act_offset = 0;  // of the activation's output in the intermediate buffer

  constexpr std::uint32_t conv_bytes() const { return static_cast<std::uint32_t>(conv::output_bytes(conv.conv)); }
  constexpr std::uint32_t intermediate_bytes() const { return graph.arena_bytes(); }
  constexpr std::uint32_t output_bytes() const {
    return pool ? pooling.output_bytes() : activate ? act.tensor_bytes() : conv_bytes();
  }
};

// The chain's own rule (an SDP reads fp16 or int8 from a conv), then its graph's.
template <class Soc = soc::rk3588>
constexpr result<conv_chain_geometry> resolve_conv_chain(const conv_chain_spec& s) {
  const result<conv_geometry> c = resolve_conv(s.conv);
  if (!c) return c.err();
  const precision out = s.conv.out_dtype;
  if ((s.activate || s.pool) && out != precision::fp16 && out != precision::int8)
    return make_error(rules::fused_precision_path, "chain", "conv.out_dtype", static_cast<std::uint32_t>(out));
  const result<graph_geometry> graph = resolve_graph<Soc>(conv_chain_graph(s, c.value()));
  if (!graph) return graph.err();
  conv_chain_geometry g;
  g.graph = graph.value();
  g.conv = g.graph.steps[0].conv;
  g.activate = s.activate;
  g.pool = s.pool;
  if (s.activate) {
    g.act = g.graph.steps[1].act;
    g.act_offset = g.graph.find("act")->offset;
  }
  if (s.pool) g.pooling = g.graph.steps[g.graph.step_count - 1].pool;
  return g;
}

struct conv_chain_kind : graph_preset<conv_chain_spec, conv_chain_geometry> {
  static constexpr std::string_view name = "chain";
  template <class Soc>
  static constexpr result<geometry> resolve(const spec& s) { return resolve_conv_chain<Soc>(s); }
};

matmul_act_kind program_kind_of(const matmul_act_spec&);

// The names before regcmd::fixed and regcmd::build (docs/changelog.md).
template <matmul_act_spec Spec, class Soc = soc::rk3588>
[[deprecated("use regcmd::fixed<spec>()")]] constexpr auto matmul_activation() { return fixed<Spec, Soc>(); }
template <class Soc = soc::rk3588>
[[deprecated("use regcmd::build(spec)")]] auto build_matmul_activation(const matmul_act_spec& spec) { return build<Soc>(spec); }

conv_chain_kind program_kind_of(const conv_chain_spec&);

// The names before regcmd::fixed and regcmd::build (docs/changelog.md).
template <conv_chain_spec Spec, class Soc = soc::rk3588>
[[deprecated("use regcmd::fixed<spec>()")]] constexpr auto conv_chain() { return fixed<Spec, Soc>(); }
template <class Soc = soc::rk3588>
[[deprecated("use regcmd::build(spec)")]] auto build_conv_chain(const conv_chain_spec& spec) { return build<Soc>(spec); }

}  // namespace regcmd
