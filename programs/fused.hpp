#pragma once
// A fused chain: a matmul and an SDP element-wise op on its result, in one submit.
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
#include <utility>
#include <vector>

#include <regcmd/core/error.hpp>
#include <regcmd/program/writer.hpp>
#include <regcmd/programs/elementwise.hpp>
#include <regcmd/programs/ew_packing.hpp>
#include <regcmd/programs/matmul.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/rules/program_rules.hpp>

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
  return {.matmul = {.in = precision::fp16, .out = precision::fp16, .M = M, .K = K, .N = N},
          .op = ew_op::mul,
          .operand = ew_operand::per_channel};
}

struct fused_geometry {
  matmul_geometry mm;  // N padded to the weight tile
  ew_geometry ew;      // flat, over the matmul's M x padded N
  ew_operand operand{};  // as asked: per_channel is packed broadcast
  friend constexpr bool operator==(const fused_geometry&, const fused_geometry&) = default;
};

constexpr result<fused_geometry> resolve_fused(const fused_spec& s) {
  if (s.matmul.out != precision::fp16 || s.matmul.in.features != precision::fp16)
    return make_error(rules::fused_precision_path, "fused", "matmul.out", static_cast<std::uint32_t>(s.matmul.out));
  if (s.matmul.layout != operand_layout::row_major) return make_error(rules::fused_layout, "fused");
  const result<matmul_geometry> mm = resolve(s.matmul);
  if (!mm) return mm.err();
  if (mm.value().output_pitch != bytes_of(precision::fp16, mm.value().N))
    return make_error(rules::ew_line_stride, "fused", "matmul.output_pitch", mm.value().output_pitch);
  const ew_operand hardware = s.operand == ew_operand::per_channel ? ew_operand::per_element : s.operand;
  const result<ew_geometry> ew = resolve_ew({.op = s.op, .dtype = precision::fp16, .M = mm.value().M,
                                             .N = mm.value().N, .operand = hardware, .layout = ew_layout::flat,
                                             .immediate = s.immediate});
  if (!ew) return ew.err();
  return fused_geometry{mm.value(), ew.value(), s.operand};
}

template <class Soc = soc::rk3588>
constexpr void emit_fused(program_writer& w, const fused_geometry& g) {
  emit_matmul_task<Soc>(w, g.mm, {}, operand_role::intermediate);
  emit_ew<Soc>(w, g.ew, operand_role::intermediate);
}

constexpr std::uint32_t fused_entries(const fused_geometry& g) { return matmul_task_entries + ew_entries(g.ew); }
constexpr std::uint32_t fused_tasks(const fused_geometry& g) { return 1 + g.ew.tasks(); }

// Bytes of each buffer: the intermediate C and the operand and output of the SDP.
constexpr std::uint32_t fused_intermediate_bytes(const fused_geometry& g) { return g.mm.output_bytes(); }
constexpr std::uint32_t fused_operand_bytes(const fused_geometry& g) { return g.ew.operand_bytes(); }
constexpr std::uint32_t fused_output_bytes(const fused_geometry& g) { return g.ew.tensor_bytes(); }

template <std::size_t Entries, std::size_t Tasks>
struct fused_program {
  fused_geometry geometry;
  program<Entries, Tasks> code;
};

// A run-time fused chain (ping-pong off: it has SDP tasks).
using fused_runtime_program = heap_program<fused_geometry>;

template <class Soc = soc::rk3588>
result<fused_runtime_program> build_fused(const fused_spec& spec) {
  const result<fused_geometry> g = resolve_fused(spec);
  if (!g) return g.err();
  return build_on_heap(
      g.value(), {fused_entries(g.value()), std::size_t{fused_tasks(g.value())} * 4, fused_tasks(g.value())}, false,
      false, [&](program_writer& w) { emit_fused<Soc>(w, g.value()); },
      [](const program_view& v) { return validate<Soc>(v, "fused"); });
}

namespace detail {
template <fused_spec Spec, class Soc>
struct fixed_fused {
  static constexpr fused_geometry geometry = resolve_fused(Spec).value();
  using type = fused_program<fused_entries(geometry), fused_tasks(geometry)>;
  static constexpr std::pair<type, status> build() {
    type out{geometry, {}};
    out.code.pingpong = false;
    status s = fill(out.code, [](program_writer& w) { emit_fused<Soc>(w, geometry); });
    if (s) s = validate<Soc>(out.code.view(), "fused");
    return {out, s};
  }
  static constexpr std::pair<type, status> built = build();
};
}  // namespace detail

// The compile-time front door: a violated rule fails here with the rule's message.
template <fused_spec Spec, class Soc = soc::rk3588>
constexpr auto fused() {
  constexpr result<fused_geometry> g = resolve_fused(Spec);
  static_assert(report<violated_rule(g)>());
  if constexpr (g.ok()) {
    using fixed = detail::fixed_fused<Spec, Soc>;
    static_assert(report<violated_rule(fixed::built.second)>());
    return fixed::built.first;
  } else {
    return fused_program<1, 1>{};  // not reached: the report above failed
  }
}

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
