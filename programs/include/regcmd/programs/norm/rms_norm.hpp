#pragma once
// RMSNorm over the last axis of a row-major fp16 [M][D] tensor, as graph ops:
//
//   y[m][n] = x[m][n] · γ[n] / √(mean_k x[m][k]² + ε)
//
// The hardware has no divide and no square root, and its tables interpolate linearly
// between entries spaced evenly (ops-reference §6.2), so one table of 1/√ over the whole fp16
// range would be useless near 0. The row's sum goes into bands instead:
//
//   sq    = x ⊙ x                              SDP, flat
//   sum   = sq · S       [D][32]               CNA: column j = the mean · u_j, u_j = ρ · 4^(j-7)
//   sum  += ε · u_j      (ε > 0)               SDP, a constant [M][32]
//   band  = rsqrt_band(sum)                    SDP table: 1/√clamp(y, 1, 4) - 1/2
//   scale = band · G     [32][D]               CNA: G[j][n] = γ[n] · √u_j
//   y     = x ⊙ scale                          SDP, flat
//
// With y_j = s · u_j and u_{j+1} = 4 u_j, band j is 1/2 below its band, 1/√y_j - 1/2 inside,
// 0 above, so Σ_j √u_j band_j telescopes to 1/√s - √u_0 / 2 for every s whose band exists;
// column 17 has no weights (y = 0, band = 1/2) and carries √u_0 back. The 17 bands cover
// s · ρ from 4^-9 to 4^8, all a mean of fp16 squares can be (|x| ≤ 255: x² is fp16). ρ =
// D / 2^⌈log2 D⌉ keeps every weight of S a power of two, exact in fp16 from its least
// subnormal 2^-24 to 2^15; a weight beyond is 0 and its band gone: past D = 1024 the top
// bands' (D = 4096: a mean square past 4^7, an rms of 128, reads 1/√ at that bound; D =
// 16384: past 4^6), below D = 5 the bottom bands' (D = 1: below 4^-7). Rule rms-norm-shape:
// D ≤ 16384.

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
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

struct rms_norm_spec {
  std::uint32_t M = 0;  // rows
  std::uint32_t D = 0;  // the normalized axis
  float eps = 1e-5f;
  friend constexpr bool operator==(const rms_norm_spec&, const rms_norm_spec&) = default;
};

namespace norm {
inline constexpr std::uint32_t band_count = 17;      // columns 0..16
inline constexpr std::uint32_t band_constant = 17;   // no weights: band 1/2, weighted √u of the first band
inline constexpr std::uint32_t band_columns = 32;    // two weight tiles of N; 18..31 unused
inline constexpr std::uint32_t max_D = 1u << 14;

// ⌈log2 D⌉ and ρ = D / 2^⌈log2 D⌉ in (1/2, 1].
constexpr int ceil_log2(std::uint32_t D) {
  int p = 0;
  while ((std::uint64_t{1} << p) < D) ++p;
  return p;
}
inline double rho(std::uint32_t D) { return std::ldexp(static_cast<double>(D), -ceil_log2(D)); }
// u_j = ρ 4^(j-7): the factor on the row's mean in column j.
inline double band_factor(std::uint32_t D, std::uint32_t j) { return rho(D) * std::ldexp(1.0, 2 * static_cast<int>(j) - 14); }
// S[k][j] = 4^(j-7) / 2^⌈log2 D⌉, a power of two; 0 where fp16 cannot hold it (below its
// least subnormal 2^-24, above 2^15) and outside the bands.
inline double sum_weight(std::uint32_t D, std::uint32_t j) {
  const int e = 2 * static_cast<int>(j) - 14 - ceil_log2(D);
  return j < band_count && e >= -24 && e <= 15 ? std::ldexp(1.0, e) : 0;
}
// G[j][n] / γ[n]: √u_j on the bands that have weights, and on the constant column √u of the
// first of them, where the telescoping sum starts.
inline double scale_weight(std::uint32_t D, std::uint32_t j) {
  if (j < band_count) return sum_weight(D, j) != 0 ? std::sqrt(band_factor(D, j)) : 0;
  if (j != band_constant) return 0;
  std::uint32_t first = 0;
  while (sum_weight(D, first) == 0) ++first;
  return std::sqrt(band_factor(D, first));
}
}  // namespace norm

// The rule of an RMSNorm request: rows of D = 1 to 2^14 elements, M ≥ 1, ε in [0, 65504].
constexpr status check_rms_norm(const rms_norm_spec& s) {
  if (s.M == 0 || s.D == 0) return make_error(rules::shape_nonzero, "rms_norm");
  if (s.D > norm::max_D) return make_error(rules::rms_norm_shape, "rms_norm", "D", s.D);
  if (!(s.eps >= 0) || s.eps > 65504.0f) return make_error(rules::rms_norm_shape, "rms_norm", "eps");
  return {};
}

namespace detail {
// "<prefix>.<what>", or an empty name when it does not fit (graph-operands then names it).
constexpr graph_name joined(std::string_view prefix, std::string_view what) {
  char text[graph_name::capacity + 1]{};
  if (prefix.size() + 1 + what.size() > graph_name::capacity) return {};
  std::size_t n = 0;
  for (char c : prefix) text[n++] = c;
  text[n++] = '.';
  for (char c : what) text[n++] = c;
  return graph_name::of(std::string_view(text, n));
}
}  // namespace detail

// The ops of y = RMSNorm(x) appended to g: x and y by name, the op's own tensors as
// "<prefix>.sq", ".sum", ".sum_w", ".eps", ".sume", ".band", ".gamma_w", ".scale" (pack
// .sum_w, .gamma_w and .eps with pack_rms_norm). A request that breaks a rule adds nothing
// and marks g refused with it.
template <std::size_t MaxOps>
constexpr status add_rms_norm(basic_graph_spec<MaxOps>& g, graph_name y, graph_name x, std::string_view prefix,
                              const rms_norm_spec& s) {
  if (status c = check_rms_norm(s); !c) {
    g.refused = c.err().violated;
    return c;
  }
  auto name = [&](std::string_view what) { return detail::joined(prefix, what); };
  const auto flat = [](ew_op op, std::uint32_t M, std::uint32_t N) {
    return ew_spec{.op = op, .M = M, .N = N, .layout = operand_layout::row_major};
  };
  const auto fp16 = [](std::uint32_t M, std::uint32_t K, std::uint32_t N) {
    return matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = M, .K = K, .N = N,
                       .tile_pad = tile_padding::zero};
  };
  const graph_name sum = name("sum"), banded = s.eps > 0 ? name("sume") : sum;
  const graph_op ops[] = {
      graph_ew(name("sq"), x, x, flat(ew_op::mul, s.M, s.D)),
      graph_matmul(sum, name("sq"), name("sum_w"), fp16(s.M, s.D, norm::band_columns)),
      graph_ew(name("sume"), sum, name("eps"), flat(ew_op::add, s.M, norm::band_columns)),
      graph_act(name("band"), banded, {.fn = activation::rsqrt_band, .M = s.M, .N = norm::band_columns}),
      graph_matmul(name("scale"), name("band"), name("gamma_w"), fp16(s.M, norm::band_columns, s.D)),
      graph_ew(y, x, name("scale"), flat(ew_op::mul, s.M, s.D)),
  };
  for (const graph_op& op : ops) {
    if (op.out == name("sume") && s.eps == 0) continue;
    if (status c = add_op(g, op); !c) return c;
  }
  return {};
}

// The constants of an RMSNorm added as `prefix` (add_rms_norm), γ its D weights: S and G into
// the weight buffer, ε's [M][32] into the element-wise operands' buffer.
inline status pack_rms_norm(const graph_view& g, std::string_view prefix, const rms_norm_spec& s,
                            std::span<const float> gamma, std::span<std::uint8_t> weight_buffer,
                            std::span<std::uint8_t> ew_operand_buffer) {
  if (status c = check_rms_norm(s); !c) return c;
  if (gamma.size() != s.D) return make_error(rules::host_size, "rms_norm", "gamma", gamma.size());
  const std::uint32_t C = norm::band_columns;
  std::vector<float> S(std::size_t{s.D} * C), G(std::size_t{C} * s.D), E(std::size_t{s.M} * C);
  for (std::uint32_t k = 0; k < s.D; ++k)
    for (std::uint32_t j = 0; j < C; ++j) S[std::size_t{k} * C + j] = static_cast<float>(norm::sum_weight(s.D, j));
  for (std::uint32_t j = 0; j < C; ++j)
    for (std::uint32_t n = 0; n < s.D; ++n)
      G[std::size_t{j} * s.D + n] = static_cast<float>(gamma[n] * norm::scale_weight(s.D, j));
  for (std::uint32_t m = 0; m < s.M; ++m)
    for (std::uint32_t j = 0; j < norm::band_count; ++j)
      E[std::size_t{m} * C + j] = static_cast<float>(std::min(s.eps * norm::band_factor(s.D, j), 65504.0));
  if (status c = pack_tensor<float>(g, detail::joined(prefix, "sum_w").view(), S, weight_buffer); !c) return c;
  if (status c = pack_tensor<float>(g, detail::joined(prefix, "gamma_w").view(), G, weight_buffer); !c) return c;
  if (s.eps == 0) return {};
  return pack_tensor<float>(g, detail::joined(prefix, "eps").view(), E, ew_operand_buffer);
}

// y = RMSNorm(x) alone: inputs x (row-major [M][D]) and the constants (pack_rms_norm with
// prefix "norm"), output y. A request that breaks rms-norm-shape gives a graph that build()
// and fixed<>() refuse with that rule.
constexpr graph_spec rms_norm(const rms_norm_spec& s) {
  graph_spec g;
  (void)add_rms_norm(g, "y", "x", "norm", s);
  return g;
}

}  // namespace regcmd
