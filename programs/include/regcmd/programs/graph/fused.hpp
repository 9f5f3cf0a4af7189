#pragma once
// A fused chain: a matmul and an SDP element-wise op on its result, in one submit; a graph
// preset (graph.hpp): the spec turned into a graph of the two ops, built by the graph's code.
//
//   task 0     C[M][N] = A . B, fp16, row-major, into the intermediate buffer
//   task 1..   out = C (op) b, the SDP reading C in the flat layout (row-major [M][N])
//
// The reference's rules for it ("Chained 2-input SDP", "fp16 matmul -> fp16 output
// stage"): the SDP reads the precision the matmul wrote, so the matmul writes fp16 (the
// SDP computes fp16; int32 features stall its read DMA); a fp16 matmul writes row-major
// only (the atom-8 write-out hangs), and the DPU_RDMA has no line stride, so C is packed
// and the SDP reads it flat; ping-pong is off for the whole submit.
//
// A per-channel b (a scale or bias per output column) reaches the flat SDP as a per-element
// operand, b[n] repeated on every row by the packer: the vendor's per-channel mul is
// encoded the same way (per element, compiler-broadcast). With op mul that is the
// per-channel scaled matmul out[m][n] = (A . B)[m][n] * scale[n] of the reference's SDP
// path, here in one submit; N is padded to the matmul's weight tile and stripped again.

#include <cstdint>
#include <span>
#include <string_view>

#include <regcmd/core/error.hpp>
#include <regcmd/programs/door.hpp>
#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/sdp/packing.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

struct fused_spec {
  matmul_spec matmul;  // its output precision must be fp16, its layout row_major
  ew_op op = ew_op::mul;
  ew_operand operand = ew_operand::per_channel;
  float immediate = 0.0f;
  friend constexpr bool operator==(const fused_spec&, const fused_spec&) = default;
};

// out[m][n] = (A . B)[m][n] * scale[n], any N >= 1.
constexpr fused_spec per_channel_scaled_matmul(std::uint32_t M, std::uint32_t K, std::uint32_t N) {
  return {.matmul = {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = M, .K = K, .N = N},
          .op = ew_op::mul,
          .operand = ew_operand::per_channel};
}

// The chain as a graph (graph.hpp): the matmul into the intermediate "c", the SDP op on it
// into "out". A per-channel b reaches the SDP per element (its packer repeats b[n] on every
// row), so the op runs over M x padded N: the matmul's whole output.
constexpr graph_spec fused_graph(const fused_spec& s, std::uint32_t padded_n) {
  const ew_operand hardware = s.operand == ew_operand::per_channel ? ew_operand::per_element : s.operand;
  const ew_spec op{.op = s.op, .dtype = precision::fp16, .M = s.matmul.M, .N = padded_n, .operand = hardware,
                   .layout = operand_layout::row_major, .immediate = s.immediate};
  const graph_op sdp = hardware == ew_operand::immediate ? graph_ew("out", "c", op) : graph_ew("out", "c", "b", op);
  return make_graph(graph_matmul("c", "a", "w", s.matmul), sdp);
}

struct fused_geometry {
  graph_geometry graph;  // the tensors a, w, b (inputs), c (the intermediate), out
  matmul_geometry mm;    // N padded to the weight tile
  ew_geometry ew;        // flat, over the matmul's M x padded N
  ew_operand operand{};  // as asked: per_channel is packed broadcast
};

// The matmul of a chain with an SDP task after it: fp16 out (the SDP computes fp16), row-major
// and packed (the DPU_RDMA has no line stride). `where` names the chain in the error.
template <class Soc = soc::rk3588>
constexpr result<matmul_geometry> resolve_chained_matmul(const matmul_spec& s, std::string_view where) {
  if (s.out_dtype != precision::fp16 || s.dtype.features != precision::fp16)
    return make_error(rules::fused_precision_path, where, "matmul.out_dtype", static_cast<std::uint32_t>(s.out_dtype));
  if (s.layout != operand_layout::row_major) return make_error(rules::fused_layout, where);
  const result<matmul_geometry> mm = resolve<Soc>(s);
  if (!mm) return mm.err();
  if (mm.value().output_pitch != bytes_of(precision::fp16, mm.value().N))
    return make_error(rules::ew_line_stride, where, "matmul.output_pitch", mm.value().output_pitch);
  return mm;
}

// The chain's own rules, then its graph's.
template <class Soc = soc::rk3588>
constexpr result<fused_geometry> resolve_fused(const fused_spec& s) {
  const result<matmul_geometry> mm = resolve_chained_matmul<Soc>(s.matmul, "fused");
  if (!mm) return mm.err();
  const result<graph_geometry> g = resolve_graph<Soc>(fused_graph(s, mm.value().N));
  if (!g) return g.err();
  return fused_geometry{g.value(), mm.value(), g.value().steps[1].ew, s.operand};
}

// Bytes of each buffer: the intermediate C and the operand and output of the SDP.
constexpr std::uint32_t fused_intermediate_bytes(const fused_geometry& g) { return g.graph.arena_bytes(); }
constexpr std::uint32_t fused_operand_bytes(const fused_geometry& g) { return g.ew.operand_bytes(); }
constexpr std::uint32_t fused_output_bytes(const fused_geometry& g) { return g.ew.tensor_bytes(); }

// A fused chain: its graph's program.
struct fused_kind : graph_preset<fused_spec, fused_geometry> {
  static constexpr std::string_view name = "fused";
  template <class Soc>
  static constexpr result<geometry> resolve(const spec& s) { return resolve_fused<Soc>(s); }
};

fused_kind program_kind_of(const fused_spec&);

// The names before regcmd::fixed and regcmd::build (docs/changelog.md).
template <fused_spec Spec, class Soc = soc::rk3588>
[[deprecated("use regcmd::fixed<spec>()")]] constexpr auto fused() { return fixed<Spec, Soc>(); }
template <class Soc = soc::rk3588>
[[deprecated("use regcmd::build(spec)")]] auto build_fused(const fused_spec& spec) { return build<Soc>(spec); }

// b into the SDP operand buffer: b[M][N] per element, or b[N] repeated on every row.
template <class T>
constexpr status pack_fused_operand(const fused_geometry& g, std::span<const T> b, std::span<std::uint8_t> out) {
  const std::uint32_t M = g.mm.M, N = g.mm.logical_N, Np = g.ew.N;
  const bool per_channel = g.operand == ew_operand::per_channel;
  if (b.size() != (per_channel ? std::size_t{N} : std::size_t{M} * N))
    return make_error(per_channel ? rules::ew_vector_size : rules::host_size, "fused operand", "", b.size());
  if (out.size() < g.ew.tensor_bytes()) return make_error(rules::buffer_size, "fused operand", "", out.size());
  detail::fill_zero(out.first(g.ew.tensor_bytes()));
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t n = 0; n < N; ++n)
      detail::store_le(out, (std::size_t{m} * Np + n) * 2,
                       detail::ew_bits(precision::fp16, b[per_channel ? n : std::size_t{m} * N + n]), 2);
  return {};
}

// The chain's result into c[M][N], the padding columns stripped.
template <class T>
constexpr status unpack_fused_output(const fused_geometry& g, std::span<const std::uint8_t> in, std::span<T> c) {
  const std::uint32_t M = g.mm.M, N = g.mm.logical_N, Np = g.ew.N;
  if (c.size() != std::size_t{M} * N) return make_error(rules::host_size, "fused output", "", c.size());
  if (in.size() < g.ew.tensor_bytes()) return make_error(rules::buffer_size, "fused output", "", in.size());
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t n = 0; n < N; ++n)
      c[std::size_t{m} * N + n] = detail::ew_value<T>(
          precision::fp16, static_cast<std::uint32_t>(detail::load_le(in, (std::size_t{m} * Np + n) * 2, 2)));
  return {};
}

}  // namespace regcmd
