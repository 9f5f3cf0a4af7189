#pragma once
// Fused chains with an activation or pooling, in one submit:
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
#include <regcmd/core/math.hpp>
#include <regcmd/task/emit_task.hpp>
#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/conv/emit.hpp>
#include <regcmd/programs/conv/packing.hpp>
#include <regcmd/programs/door.hpp>
#include <regcmd/programs/graph/fused.hpp>
#include <regcmd/programs/matmul/emit.hpp>
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

struct matmul_act_geometry {
  matmul_geometry mm;  // N padded to the weight tile
  act_geometry act;    // flat over M x padded N
};

template <class Soc = soc::rk3588>
constexpr result<matmul_act_geometry> resolve_matmul_act(const matmul_act_spec& s) {
  const result<matmul_geometry> mm = resolve_chained_matmul<Soc>(s.matmul, "chain");
  if (!mm) return mm.err();
  act_spec a = s.activation;
  a.dtype = precision::fp16;
  a.M = mm.value().M;
  a.N = mm.value().N;
  a.layout = operand_layout::row_major;
  const result<act_geometry> act = resolve_act<Soc>(a);
  if (!act) return act.err();
  return matmul_act_geometry{mm.value(), act.value()};
}

struct matmul_act_kind {
  using spec = matmul_act_spec;
  using geometry = matmul_act_geometry;
  static constexpr std::string_view name = "chain";
  template <class Soc>
  static constexpr result<geometry> resolve(const spec& s) { return resolve_matmul_act<Soc>(s); }
  static constexpr program_size size(const geometry& g) {
    return {matmul_task_entries + act_entries(g.act), std::size_t{1 + g.act.tasks()} * 4, 1 + g.act.tasks()};
  }
  static constexpr submit_options options(const geometry&) { return {.pingpong = false}; }
  template <class Soc>
  static constexpr void emit(program_writer& w, const geometry& g) {
    emit_task(w, matmul_task<Soc>(g.mm, {}, operand_role::intermediate));
    emit_act(w, g.act, operand_role::intermediate);
  }
  static constexpr program_checks checks = program_checks::every_rule;
};

struct conv_chain_spec {
  conv_spec conv;
  bool activate = false;
  act_spec activation{};
  bool pool = false;
  pool_spec pooling{};  // op, kernel, stride and padding: the image is the conv's output
  friend constexpr bool operator==(const conv_chain_spec&, const conv_chain_spec&) = default;
};

struct conv_chain_geometry {
  conv_plan conv;
  bool activate = false, pool = false;
  act_geometry act;    // flat over the conv's whole output
  pool_geometry pooling;
  std::uint32_t act_offset = 0;  // of the activation's output in the intermediate buffer

  constexpr std::uint32_t conv_bytes() const { return static_cast<std::uint32_t>(conv_output_bytes(conv.conv)); }
  constexpr std::uint32_t intermediate_bytes() const {
    return activate && pool ? act_offset + act.tensor_bytes() : conv_bytes();
  }
  constexpr std::uint32_t output_bytes() const {
    return pool ? pooling.output_bytes() : activate ? act.tensor_bytes() : conv_bytes();
  }
};

template <class Soc = soc::rk3588>
constexpr result<conv_chain_geometry> resolve_conv_chain(const conv_chain_spec& s) {
  const result<conv_geometry> cg = resolve_conv(s.conv);
  if (!cg) return cg.err();
  const result<conv_plan> plan = plan_conv<Soc>(cg.value());
  if (!plan) return plan.err();
  conv_chain_geometry g;
  g.conv = plan.value();
  g.activate = s.activate;
  g.pool = s.pool;
  const conv_geometry& c = g.conv.conv;
  const precision out = s.conv.out_dtype;
  if ((s.activate || s.pool) && out != precision::fp16 && out != precision::int8)
    return make_error(rules::fused_precision_path, "chain", "conv.out_dtype", static_cast<std::uint32_t>(out));
  if (s.activate) {
    act_spec a = s.activation;
    a.dtype = out;
    a.M = 1;
    a.N = g.conv_bytes() / static_cast<std::uint32_t>(bytes_of(out, 1));
    a.layout = operand_layout::row_major;
    const result<act_geometry> act = resolve_act<Soc>(a);
    if (!act) return act.err();
    g.act = act.value();
    g.act_offset = align_up(g.conv_bytes(), 64u);
  }
  if (s.pool) {
    pool_spec p = s.pooling;
    p.dtype = out;
    p.H = c.out_h;
    p.W = c.out_w;
    p.C = s.conv.out_channels;
    const result<pool_geometry> pg = resolve_pool<Soc>(p);
    if (!pg) return pg.err();
    g.pooling = pg.value();
  }
  return g;
}

struct conv_chain_kind {
  using spec = conv_chain_spec;
  using geometry = conv_chain_geometry;
  static constexpr std::string_view name = "chain";
  template <class Soc>
  static constexpr result<geometry> resolve(const spec& s) { return resolve_conv_chain<Soc>(s); }
  static constexpr std::uint32_t tasks(const geometry& g) {
    return g.conv.tasks() + (g.activate ? g.act.tasks() : 0) + (g.pool ? g.pooling.tasks() : 0);
  }
  static constexpr program_size size(const geometry& g) {
    return {g.conv.tasks() * conv_task_entries + (g.activate ? act_entries(g.act) : 0) +
                (g.pool ? g.pooling.tasks() * pool_task_entries : 0),
            std::size_t{tasks(g)} * 6, tasks(g)};
  }
  // Ping-pong off where an SDP task runs (rule sdp-pingpong), else the conv's and pooling's.
  static constexpr submit_options options(const geometry& g) { return {.pingpong = !g.activate}; }
  template <class Soc>
  static constexpr void emit(program_writer& w, const geometry& g) {
    const bool last_conv = !g.activate && !g.pool;
    emit_conv<Soc>(w, g.conv, last_conv ? operand_role::output : operand_role::intermediate);
    if (g.activate)
      emit_act(w, g.act, operand_role::intermediate, 0, g.pool ? operand_role::intermediate : operand_role::output,
                    g.pool ? g.act_offset : 0);
    if (g.pool) emit_pool(w, g.pooling, operand_role::intermediate, g.activate ? g.act_offset : 0);
  }
  static constexpr program_checks checks = program_checks::every_rule;
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
