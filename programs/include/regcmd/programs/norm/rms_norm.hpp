#pragma once
// RMSNorm over the last axis of a row-major fp16 [M][D] tensor, as graph ops:
//
//   y[m][n] = x[m][n] · γ[n] / √(mean_k x[m][k]² + ε)
//
// The hardware has no divide and no square root: the row's mean goes into bands (band.hpp).
//
//   sq    = x ⊙ x                              SDP, flat
//   sum   = sq · S       [D][32]               CNA: column j = the mean · u_j, clamped at 6
//                                              in fp32 (a fused ReLU6: past its band the
//                                              table reads 0 either way, and fp16 holds it)
//   sum  += ε · u_j      (ε > 0)               SDP, a constant [M][32]
//   band  = rsqrt_band(sum)                    SDP table: 1/√clamp(y, 1, 4) - 1/2
//   scale = band · G     [32][D]               CNA: G[j][n] = γ[n] · c_j, so scale = γ / √(mean + ε)
//   y     = x ⊙ scale                          SDP, flat
//
// The bands cover a mean of 4^-9 .. 4^8 (|x| ≤ 255: x² is fp16). Past D = 1024 the top bands'
// weights fall below fp16's least subnormal and are gone: at D = 4096 a mean square past 4^7
// (an rms of 128) reads 1/√ at that bound, at D = 16384 past 4^6. Rule norm-shape: D ≤ 16384.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>
#include <string_view>

#include <regcmd/core/error.hpp>
#include <regcmd/core/half.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/graph/spec.hpp>
#include <regcmd/programs/norm/band.hpp>
#include <regcmd/programs/norm/constants.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

struct rms_norm_spec {
  std::uint32_t M = 0;  // rows
  std::uint32_t D = 0;  // the normalized axis
  float eps = 1e-5f;
  friend constexpr bool operator==(const rms_norm_spec&, const rms_norm_spec&) = default;
};

namespace norm {
inline constexpr std::uint32_t max_D = 1u << 14;
// The mean of x² in bands of 1/√ (band.hpp), over 4^-9 .. 4^8: all a mean of fp16 squares can be.
inline band_set rms_bands(std::uint32_t D) { return {band_function::rsqrt, 7, D}; }
}  // namespace norm

// The rule of an RMSNorm request: rows of D = 32 to 2^14 elements, a multiple of 32 (the
// row sums' K), M ≥ 1, ε in [0, 65504].
constexpr status check_rms_norm(const rms_norm_spec& s) {
  if (s.M == 0 || s.D == 0) return make_error(rules::shape_nonzero, "rms_norm");
  if (s.D > norm::max_D || s.D % 32 != 0) return make_error(rules::norm_shape, "rms_norm", "D", s.D);
  if (!(s.eps >= 0) || s.eps > 65504.0f) return make_error(rules::norm_shape, "rms_norm", "eps");
  return {};
}


namespace detail {
constexpr ew_spec flat_ew(ew_op op, std::uint32_t M, std::uint32_t N) {
  return {.op = op, .M = M, .N = N, .layout = operand_layout::row_major};
}
constexpr matmul_spec norm_matmul(std::uint32_t M, std::uint32_t K, std::uint32_t N, output_activation a) {
  return {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = M, .K = K, .N = N,
          .tile_pad = tile_padding::zero, .activation = a};
}

// "<prefix>.scale" = γ / √(mean x² + ε) in every column of x's rows (the first five ops above).
template <std::size_t MaxOps>
constexpr status add_norm_scale(basic_graph_spec<MaxOps>& g, graph_name x, std::string_view prefix, const rms_norm_spec& s) {
  auto name = [&](std::string_view what) { return graph_name::prefixed(prefix, what); };
  const graph_name sum = name("sum"), banded = s.eps > 0 ? name("sume") : sum;
  const graph_op ops[] = {
      graph_ew(name("sq"), x, x, flat_ew(ew_op::mul, s.M, s.D)),
      graph_matmul(sum, name("sq"), name("sum_w"), norm_matmul(s.M, s.D, norm::band_columns, output_activation::relu6)),
      graph_ew(name("sume"), sum, name("eps"), flat_ew(ew_op::add, s.M, norm::band_columns)),
      graph_act(name("band"), banded, {.fn = activation::rsqrt_band, .M = s.M, .N = norm::band_columns}),
      graph_matmul(name("scale"), name("band"), name("gamma_w"), norm_matmul(s.M, norm::band_columns, s.D, output_activation::none)),
  };
  for (const graph_op& op : ops) {
    if (op.out == name("sume") && s.eps == 0) continue;
    if (status c = add_op(g, op); !c) return c;
  }
  return {};
}

// add_norm_scale's constants: S and G (weights), ε's [M][32] (an element-wise operand).
inline result<std::vector<norm_constant>> norm_scale_constants(std::string_view prefix, const rms_norm_spec& s,
                                                              std::span<const float> gamma) {
  if (gamma.size() != s.D) return make_error(rules::host_size, "norm", "gamma", gamma.size());
  const std::uint32_t C = norm::band_columns;
  const norm::band_set bands = norm::rms_bands(s.D);
  std::vector<float> S(std::size_t{s.D} * C), G(std::size_t{C} * s.D), E(std::size_t{s.M} * C);
  for (std::uint32_t k = 0; k < s.D; ++k)
    for (std::uint32_t j = 0; j < C; ++j) S[std::size_t{k} * C + j] = static_cast<float>(bands.sum_weight(j));
  for (std::uint32_t j = 0; j < C; ++j)
    for (std::uint32_t n = 0; n < s.D; ++n)
      G[std::size_t{j} * s.D + n] = static_cast<float>(gamma[n] * bands.coefficient(j));
  for (std::uint32_t m = 0; m < s.M; ++m)
    for (std::uint32_t j = 0; j < norm::band_count; ++j)
      E[std::size_t{m} * C + j] = static_cast<float>(std::min(s.eps * bands.factor(j), 65504.0));
  std::vector<norm_constant> out;
  out.push_back({graph_name::prefixed(prefix, "sum_w"), operand_role::weight, std::move(S)});
  out.push_back({graph_name::prefixed(prefix, "gamma_w"), operand_role::weight, std::move(G)});
  if (s.eps > 0) out.push_back({graph_name::prefixed(prefix, "eps"), operand_role::ew_operand, std::move(E)});
  return out;
}
}  // namespace detail

// The ops of y = RMSNorm(x) appended to g: x and y by name, the op's own tensors as
// "<prefix>.sq", ".sum", ".sum_w", ".eps", ".sume", ".band", ".gamma_w", ".scale" (pack
// .sum_w, .gamma_w and .eps with pack_rms_norm). A request that breaks a rule adds nothing
// and marks g refused with it.
template <std::size_t MaxOps>
constexpr status add_rms_norm(basic_graph_spec<MaxOps>& g, graph_name y, graph_name x, std::string_view prefix,
                              const rms_norm_spec& s) {
  if (status c = refuse_unless(g, check_rms_norm(s)); !c) return c;
  if (status c = detail::add_norm_scale(g, x, prefix, s); !c) return c;
  return add_op(g, graph_ew(y, x, graph_name::prefixed(prefix, "scale"), detail::flat_ew(ew_op::mul, s.M, s.D)));
}

// The constants of an RMSNorm added as `prefix` (add_rms_norm), γ its D weights.
inline result<std::vector<norm_constant>> rms_norm_constants(std::string_view prefix, const rms_norm_spec& s,
                                                            std::span<const float> gamma) {
  if (status c = check_rms_norm(s); !c) return c.err();
  return detail::norm_scale_constants(prefix, s, gamma);
}
inline status pack_rms_norm(const graph_view& g, std::string_view prefix, const rms_norm_spec& s,
                            std::span<const float> gamma, std::span<std::uint8_t> weight_buffer,
                            std::span<std::uint8_t> ew_operand_buffer) {
  const auto constants = rms_norm_constants(prefix, s, gamma);
  if (!constants) return constants.err();
  return pack_constants(g, constants.value(), weight_buffer, ew_operand_buffer);
}

// y = RMSNorm(x) alone: inputs x (row-major [M][D]) and the constants (pack_rms_norm with
// prefix "norm"), output y. A request that breaks norm-shape gives a graph that build()
// and fixed<>() refuse with that rule.
constexpr graph_spec rms_norm(const rms_norm_spec& s) {
  graph_spec g;
  (void)add_rms_norm(g, "y", "x", "norm", s);
  return g;
}

}  // namespace regcmd
