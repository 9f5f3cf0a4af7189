#pragma once
// LayerNorm over the last axis of a row-major fp16 [M][D] tensor, as graph ops:
//
//   y[m][n] = (x[m][n] - μ_m) · γ[n] / √(var_m + ε) + β[n],   μ, var over the row
//
//   mean1   = x · A        [D][32]     CNA: column 0 = Σ x / 2^⌈log2 D⌉ (exact weights)
//   negmean1 = mean1 · B   [32][D]     CNA: B[0][n] = -2^⌈log2 D⌉ / D, so -μ in every column
//   xc1     = x + negmean1             SDP
//   mean2, negmean2, xc                the same over xc1: what fp16 rounded off μ
//   scale   = γ / √(mean xc² + ε)      RMSNorm's bands over xc (rms_norm.hpp)
//   prod    = xc ⊙ scale               SDP
//   beta    = band · Bβ    [32][D]     CNA, with β: the bands' constant column holds 1/2
//                                      exactly, Bβ[17][n] = 2 β[n]
//   y       = prod + beta              SDP, with β
//
// Centred twice: fp16 holds μ to 2^-11 of |μ|, which a row of 3 ± 0.01 cannot spare; the
// second mean is that rounding's, 2^-11 of it left. Rule norm-shape.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <regcmd/core/error.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/graph/spec.hpp>
#include <regcmd/programs/norm/band.hpp>
#include <regcmd/programs/norm/rms_norm.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

struct layer_norm_spec {
  std::uint32_t M = 0;  // rows
  std::uint32_t D = 0;  // the normalized axis
  float eps = 1e-5f;
  bool bias = true;     // add β
  friend constexpr bool operator==(const layer_norm_spec&, const layer_norm_spec&) = default;
};

constexpr rms_norm_spec rms_part(const layer_norm_spec& s) { return {.M = s.M, .D = s.D, .eps = s.eps}; }
constexpr status check_layer_norm(const layer_norm_spec& s) { return check_rms_norm(rms_part(s)); }

// The ops of y = LayerNorm(x) appended to g (x and y by name; the op's own tensors
// "<prefix>.mean1", ".xc", ... and the constants ".mean_w", ".negmean_w", ".beta_w" with
// RMSNorm's: pack_layer_norm). A request that breaks a rule adds nothing and marks g refused.
template <std::size_t MaxOps>
constexpr status add_layer_norm(basic_graph_spec<MaxOps>& g, graph_name y, graph_name x, std::string_view prefix,
                                const layer_norm_spec& s) {
  if (status c = refuse_unless(g, check_layer_norm(s)); !c) return c;
  auto name = [&](std::string_view what) { return graph_name::prefixed(prefix, what); };
  using detail::flat_ew, detail::norm_matmul;
  constexpr auto none = output_activation::none;
  const graph_op centre[] = {
      graph_matmul(name("mean1"), x, name("mean_w"), norm_matmul(s.M, s.D, norm::band_columns, none)),
      graph_matmul(name("negmean1"), name("mean1"), name("negmean_w"), norm_matmul(s.M, norm::band_columns, s.D, none)),
      graph_ew(name("xc1"), x, name("negmean1"), flat_ew(ew_op::add, s.M, s.D)),
      graph_matmul(name("mean2"), name("xc1"), name("mean_w"), norm_matmul(s.M, s.D, norm::band_columns, none)),
      graph_matmul(name("negmean2"), name("mean2"), name("negmean_w"), norm_matmul(s.M, norm::band_columns, s.D, none)),
      graph_ew(name("xc"), name("xc1"), name("negmean2"), flat_ew(ew_op::add, s.M, s.D)),
  };
  for (const graph_op& op : centre)
    if (status c = add_op(g, op); !c) return c;
  if (status c = detail::add_norm_scale(g, name("xc"), prefix, rms_part(s)); !c) return c;
  const graph_name prod = s.bias ? name("prod") : y;
  if (status c = add_op(g, graph_ew(prod, name("xc"), name("scale"), flat_ew(ew_op::mul, s.M, s.D))); !c || !s.bias) return c;
  if (status c = add_op(g, graph_matmul(name("beta"), name("band"), name("beta_w"), norm_matmul(s.M, norm::band_columns, s.D, none))); !c)
    return c;
  return add_op(g, graph_ew(y, prod, name("beta"), flat_ew(ew_op::add, s.M, s.D)));
}

// The constants of a LayerNorm added as `prefix`: γ (D values), β (D values with s.bias,
// else empty).
inline result<std::vector<norm_constant>> layer_norm_constants(std::string_view prefix, const layer_norm_spec& s,
                                                              std::span<const float> gamma, std::span<const float> beta) {
  if (status c = check_layer_norm(s); !c) return c.err();
  if (beta.size() != (s.bias ? s.D : 0)) return make_error(rules::host_size, "layer_norm", "beta", beta.size());
  auto out = detail::norm_scale_constants(prefix, rms_part(s), gamma);
  if (!out) return out;
  const std::uint32_t C = norm::band_columns;
  const int shift = norm::ceil_log2(s.D);
  std::vector<float> A(std::size_t{s.D} * C, 0.0f), B(std::size_t{C} * s.D, 0.0f);
  for (std::uint32_t k = 0; k < s.D; ++k) A[std::size_t{k} * C] = std::ldexp(1.0f, -shift);
  for (std::uint32_t n = 0; n < s.D; ++n) B[n] = -std::ldexp(1.0f, shift) / static_cast<float>(s.D);
  out.value().push_back({graph_name::prefixed(prefix, "mean_w"), operand_role::weight, std::move(A)});
  out.value().push_back({graph_name::prefixed(prefix, "negmean_w"), operand_role::weight, std::move(B)});
  if (s.bias) {
    std::vector<float> Bb(std::size_t{C} * s.D, 0.0f);
    for (std::uint32_t n = 0; n < s.D; ++n) Bb[std::size_t{norm::band_constant} * s.D + n] = 2 * beta[n];
    out.value().push_back({graph_name::prefixed(prefix, "beta_w"), operand_role::weight, std::move(Bb)});
  }
  return out;
}
inline status pack_layer_norm(const graph_view& g, std::string_view prefix, const layer_norm_spec& s,
                              std::span<const float> gamma, std::span<const float> beta,
                              std::span<std::uint8_t> weight_buffer, std::span<std::uint8_t> ew_operand_buffer) {
  const auto constants = layer_norm_constants(prefix, s, gamma, beta);
  if (!constants) return constants.err();
  return pack_constants(g, constants.value(), weight_buffer, ew_operand_buffer);
}

// y = LayerNorm(x) alone: input x (row-major [M][D]), the constants (pack_layer_norm with
// prefix "norm"), output y.
constexpr graph_spec layer_norm(const layer_norm_spec& s) {
  graph_spec g;
  (void)add_layer_norm(g, "y", "x", "norm", s);
  return g;
}

}  // namespace regcmd
