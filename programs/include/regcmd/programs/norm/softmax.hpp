#pragma once
// Softmax over the last axis of a row-major fp16 [M][N] tensor, numerically stable, as
// graph ops:
//
//   p[m][n] = exp(x[m][n] - max_k x[m][k]) / Σ_k exp(x[m][k] - max_k x[m][k])
//
//   z      = x + mask                    SDP, when asked: -32768 hides an element
//   part, t1..t6                         the row's maximum: PPU partial maxima and a ReLU tree
//                                        on the CNA (row_max.hpp)
//   neg    = t6 · B          [M][N]      CNA: -s in every column, s = the maximum and a margin
//                                        over the tree's roundings
//   d      = z + neg                     SDP: ≤ 0
//   e      = exp(d)                      SDP table over [-16, 0]
//   sum    = e · S           [M][32]     CNA: the row's sum in bands of 1/y (band.hpp), each
//                                        column clamped at 6 in fp32 (a fused ReLU6: past its
//                                        band the table reads 0 either way, and fp16 holds it)
//   band   = reciprocal_band(sum)        SDP table
//   inv    = band · G        [M][N]      CNA: 1/sum in every column
//   p      = e ⊙ inv                     SDP
//
// The shift cancels in the quotient: only its margin's ulps reach p. A hidden element's e is
// the exp table's floor e^-16 = 1.1e-7, not 0. Rule softmax-shape: the rows row_max.hpp takes
// (softmax_row_length gives the row to hold a shorter one in, its padding masked).

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <regcmd/core/error.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/graph/spec.hpp>
#include <regcmd/programs/norm/band.hpp>
#include <regcmd/programs/norm/constants.hpp>
#include <regcmd/programs/norm/row_max.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

struct softmax_spec {
  std::uint32_t M = 0;  // rows
  std::uint32_t N = 0;  // elements a row holds (softmax_row_length)
  bool mask = false;    // add a [M][N] fp16 mask first: 0 keeps an element, -32768 hides it
  friend constexpr bool operator==(const softmax_spec&, const softmax_spec&) = default;
};

namespace norm {
inline constexpr float softmax_hidden = -32768.0f;  // a mask's value that hides an element
// The row's sum in bands of 1/y over 4^-7 .. 4^10 (band.hpp): a row's sum is 1 to N.
inline band_set softmax_bands() { return {band_function::reciprocal, 9, 1}; }

}  // namespace norm

// The shortest row softmax takes that holds `length` elements: the padding is masked.
constexpr std::uint32_t softmax_row_length(std::uint32_t length) {
  std::uint32_t N = length < 32 ? 32 : (length + 31) / 32 * 32;
  while (N <= norm::row_max_N && norm::windows_of(N).first == 0) N += 32;
  return N;
}

constexpr status check_softmax(const softmax_spec& s) {
  if (s.M == 0 || s.N == 0) return make_error(rules::shape_nonzero, "softmax");
  if (s.N > norm::row_max_N || norm::windows_of(s.N).first == 0)
    return make_error(rules::softmax_shape, "softmax", "N", s.N);
  return {};
}

namespace detail {
// Softmax's terms: "<prefix>.e" = exp(x - shift) and "<prefix>.band", from which a matmul
// broadcasts 1/Σe (the ops above up to band; add_softmax and attention normalize after).
template <std::size_t MaxOps>
constexpr status add_softmax_terms(basic_graph_spec<MaxOps>& g, graph_name x, std::string_view prefix, const softmax_spec& s) {
  auto name = [&](std::string_view what) { return graph_name::prefixed(prefix, what); };
  const auto flat = [&](ew_op op) { return ew_spec{.op = op, .M = s.M, .N = s.N, .layout = operand_layout::row_major}; };
  const auto fp16 = [](std::uint32_t M, std::uint32_t K, std::uint32_t N, output_activation a) {
    return matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = M, .K = K, .N = N, .activation = a};
  };
  const graph_name z = s.mask ? name("masked") : x;
  auto add = [&](const graph_op& op) { return add_op(g, op); };
  status c{};
  if (s.mask) c = add(graph_ew(z, x, name("mask"), flat(ew_op::add)));
  if (c) c = detail::add_max_tree(g, z, prefix, s.M, s.N);
  if (c) c = add(graph_matmul(name("neg"), name("t6"), name("neg_w"), fp16(s.M, 32, s.N, output_activation::none)));
  if (c) c = add(graph_ew(name("d"), z, name("neg"), flat(ew_op::add)));
  if (c) c = add(graph_act(name("e"), name("d"), {.fn = activation::exp, .M = s.M, .N = s.N}));
  if (c) c = add(graph_matmul(name("sum"), name("e"), name("sum_w"), fp16(s.M, s.N, norm::band_columns, output_activation::relu6)));
  if (c) c = add(graph_act(name("band"), name("sum"), {.fn = activation::reciprocal_band, .M = s.M, .N = norm::band_columns}));
  return c;
}

// The terms' constants: the tree's, neg_w and sum_w.
inline std::vector<norm_constant> softmax_term_constants(std::string_view prefix, const softmax_spec& s) {
  std::vector<norm_constant> out = detail::max_tree_constants(prefix);
  const norm::tree_weights tree = norm::max_tree();
  const std::uint32_t C = norm::band_columns;
  const norm::band_set bands = norm::softmax_bands();
  std::vector<float> neg(std::size_t{32} * s.N), S(std::size_t{s.N} * C);
  for (std::uint32_t k = 0; k < 32; ++k)
    for (std::uint32_t n = 0; n < s.N; ++n) neg[std::size_t{k} * s.N + n] = tree.shift[k];
  for (std::uint32_t k = 0; k < s.N; ++k)
    for (std::uint32_t j = 0; j < C; ++j) S[std::size_t{k} * C + j] = static_cast<float>(bands.sum_weight(j));
  out.push_back({graph_name::prefixed(prefix, "neg_w"), operand_role::weight, std::move(neg)});
  out.push_back({graph_name::prefixed(prefix, "sum_w"), operand_role::weight, std::move(S)});
  return out;
}

// G [32][columns]: band · G is 1/Σe in each of `columns` columns.
inline norm_constant reciprocal_broadcast(graph_name name, std::uint32_t columns) {
  const norm::band_set bands = norm::softmax_bands();
  std::vector<float> G(std::size_t{norm::band_columns} * columns);
  for (std::uint32_t j = 0; j < norm::band_columns; ++j)
    for (std::uint32_t n = 0; n < columns; ++n) G[std::size_t{j} * columns + n] = static_cast<float>(bands.coefficient(j));
  return {name, operand_role::weight, std::move(G)};
}
}  // namespace detail

// The ops of y = softmax(x) appended to g (x and y by name; with s.mask, "<prefix>.mask" the
// mask). The constants "<prefix>.w1" .. ".w6", ".neg_w", ".sum_w", ".inv_w": pack_softmax. A
// request that breaks a rule adds nothing and marks g refused with it.
template <std::size_t MaxOps>
constexpr status add_softmax(basic_graph_spec<MaxOps>& g, graph_name y, graph_name x, std::string_view prefix,
                             const softmax_spec& s) {
  if (status c = refuse_unless(g, check_softmax(s)); !c) return c;
  auto name = [&](std::string_view what) { return graph_name::prefixed(prefix, what); };
  status c = detail::add_softmax_terms(g, x, prefix, s);
  if (c) c = add_op(g, graph_matmul(name("inv"), name("band"), name("inv_w"),
                                    {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = s.M, .K = norm::band_columns, .N = s.N}));
  if (c) c = add_op(g, graph_ew(y, name("e"), name("inv"), {.op = ew_op::mul, .M = s.M, .N = s.N, .layout = operand_layout::row_major}));
  return c;
}

// The constants of a softmax added as `prefix` (add_softmax): all weights.
inline result<std::vector<norm_constant>> softmax_constants(std::string_view prefix, const softmax_spec& s) {
  if (status c = check_softmax(s); !c) return c.err();
  std::vector<norm_constant> out = detail::softmax_term_constants(prefix, s);
  out.push_back(detail::reciprocal_broadcast(graph_name::prefixed(prefix, "inv_w"), s.N));
  return out;
}
inline status pack_softmax(const graph_view& g, std::string_view prefix, const softmax_spec& s,
                           std::span<std::uint8_t> weight_buffer) {
  const auto constants = softmax_constants(prefix, s);
  if (!constants) return constants.err();
  return pack_constants(g, constants.value(), weight_buffer, {});
}

// y = softmax(x) alone: input x (row-major [M][N]), with s.mask "softmax.mask", and the
// constants (pack_softmax with prefix "softmax"); output y.
constexpr graph_spec softmax(const softmax_spec& s) {
  graph_spec g;
  (void)add_softmax(g, "y", "x", "softmax", s);
  return g;
}

}  // namespace regcmd
