#pragma once
// Rotary position embedding, LLaMA's rotate-half convention, over a row-major fp16 [M][H·d]
// tensor of M tokens at positions p0 .. p0 + M - 1, H heads of d elements each:
//
//   y = x ⊙ cos + rotate_half(x) ⊙ sin,   rotate_half(x_h) = [-x_h[d/2:], x_h[:d/2]] per head
//   cos[m][h·d + i] = cos((p0 + m) θ_i),  θ_i = base^(-2 (i mod d/2) / d)      (sin alike)
//
//   rot = x · R       [d][d]         CNA: each head's rotate-half, ±1 and 0 (exact: one product
//                                    a column, accumulated in fp32), x's bytes read as M·H
//                                    rows of one head; a head of d not a multiple of 32 (the
//                                    matmul's K) takes R block-diagonal over the row, [H·d][H·d]
//   xc  = x ⊙ cos                    SDP, the tables an element-wise operand
//   rs  = rot ⊙ sin                  SDP
//   y   = xc + rs                    SDP
//
// The tables depend on the positions: the host packs them for each run (rope_constants);
// R is the head layout's alone. Rule rope-shape: d even, H·d a multiple of 32 (R's K), at
// most 4096 when R is block-diagonal ((H·d)² weights: 32 MiB there).

#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <regcmd/core/error.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/graph/spec.hpp>
#include <regcmd/programs/norm/constants.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

struct rope_spec {
  std::uint32_t M = 0;          // tokens
  std::uint32_t heads = 0;      // H
  std::uint32_t head_dim = 0;   // d
  float base = 10000.0f;        // θ's base (LLaMA: 10000)
  friend constexpr bool operator==(const rope_spec&, const rope_spec&) = default;
};

namespace norm {
inline constexpr std::uint32_t rope_max_width = 4096;
// R's side: one head's d when the matmul can take a head as a row (d a multiple of its K
// alignment, 32), else the whole row's H·d.
constexpr std::uint32_t rope_side(const rope_spec& s) { return s.head_dim % 32 == 0 ? s.head_dim : s.heads * s.head_dim; }
}

constexpr status check_rope(const rope_spec& s) {
  if (s.M == 0 || s.heads == 0 || s.head_dim == 0) return make_error(rules::shape_nonzero, "rope");
  const std::uint64_t width = std::uint64_t{s.heads} * s.head_dim;
  if (s.head_dim % 2 != 0 || width % 32 != 0 || (s.head_dim % 32 != 0 && width > norm::rope_max_width))
    return make_error(rules::rope_shape, "rope", "width", width);
  if (!(s.base > 1.0f) || s.base > 1e30f) return make_error(rules::rope_shape, "rope", "base");
  return {};
}

// The ops of y = RoPE(x) appended to g (x and y by name; the op's own tensors "<prefix>.rot",
// ".xc", ".rs" and the constants ".rot_w", ".cos", ".sin": rope_constants). A request that
// breaks a rule adds nothing and marks g refused with it.
template <std::size_t MaxOps>
constexpr status add_rope(basic_graph_spec<MaxOps>& g, graph_name y, graph_name x, std::string_view prefix,
                          const rope_spec& s) {
  if (status c = refuse_unless(g, check_rope(s)); !c) return c;
  auto name = [&](std::string_view what) { return graph_name::prefixed(prefix, what); };
  const std::uint32_t W = s.heads * s.head_dim, side = norm::rope_side(s);
  const auto flat = [&](ew_op op) { return ew_spec{.op = op, .M = s.M, .N = W, .layout = operand_layout::row_major}; };
  const graph_op ops[] = {
      graph_matmul(name("rot"), x, name("rot_w"),
                   {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = s.M * W / side, .K = side, .N = side}),
      graph_ew(name("xc"), x, name("cos"), flat(ew_op::mul)),
      graph_ew(name("rs"), name("rot"), name("sin"), flat(ew_op::mul)),
      graph_ew(y, name("xc"), name("rs"), flat(ew_op::add)),
  };
  for (const graph_op& op : ops)
    if (status c = add_op(g, op); !c) return c;
  return {};
}

// R ([side][side], norm::rope_side), and the cos and sin tables of rows at positions
// first .. first + M - 1.
inline result<std::vector<norm_constant>> rope_constants(std::string_view prefix, const rope_spec& s, std::uint32_t first) {
  if (status c = check_rope(s); !c) return c.err();
  const std::uint32_t W = s.heads * s.head_dim, half = s.head_dim / 2, side = norm::rope_side(s);
  std::vector<float> R(std::size_t{side} * side, 0.0f), C(std::size_t{s.M} * W), S(std::size_t{s.M} * W);
  for (std::uint32_t h = 0; h < side / s.head_dim; ++h)
    for (std::uint32_t i = 0; i < half; ++i) {
      const std::uint32_t lo = h * s.head_dim + i, hi = lo + half;
      R[std::size_t{hi} * side + lo] = -1;  // rot[lo] = -x[hi]
      R[std::size_t{lo} * side + hi] = 1;   // rot[hi] = x[lo]
    }
  for (std::uint32_t m = 0; m < s.M; ++m)
    for (std::uint32_t n = 0; n < W; ++n) {
      const std::uint32_t i = n % s.head_dim % half;
      const double theta = std::pow(static_cast<double>(s.base), -2.0 * i / s.head_dim);
      const double angle = static_cast<double>(first + m) * theta;
      C[std::size_t{m} * W + n] = static_cast<float>(std::cos(angle));
      S[std::size_t{m} * W + n] = static_cast<float>(std::sin(angle));
    }
  std::vector<norm_constant> out;
  out.push_back({graph_name::prefixed(prefix, "rot_w"), operand_role::weight, std::move(R)});
  out.push_back({graph_name::prefixed(prefix, "cos"), operand_role::ew_operand, std::move(C)});
  out.push_back({graph_name::prefixed(prefix, "sin"), operand_role::ew_operand, std::move(S)});
  return out;
}

// y = RoPE(x) alone: input x (row-major [M][H·d]), the constants (rope_constants with prefix
// "rope"), output y.
constexpr graph_spec rope(const rope_spec& s) {
  graph_spec g;
  (void)add_rope(g, "y", "x", "rope", s);
  return g;
}

}  // namespace regcmd
