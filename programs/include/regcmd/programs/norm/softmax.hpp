#pragma once
// Softmax over the last axis of a row-major fp16 [M][N] tensor, numerically stable, as
// graph ops:
//
//   p[m][n] = exp(x[m][n] - max_k x[m][k]) / Σ_k exp(x[m][k] - max_k x[m][k])
//
// The SDP and the PPU never mix the 8 fp16 lanes of a 16-byte atom, and the CNA sums but does
// not take a maximum. So the row's maximum comes in two steps:
//
//   z      = x + mask                    SDP, when asked: -32768 hides an element
//   part   = maxpool(z)  [M][4][8]       PPU over z as an 8-channel image, M rows of N/8
//                                        pixels, windows of N/32 pixels (1 or 2 passes): 32
//                                        partial maxima per row, each over its own elements
//   t1..t6 = relu(t · W_l)               CNA, 6 levels: the spread over the row's first
//                                        element, then max(a, b) = relu(a - b) + b, 32 -> 1
//                                        per row, each level's pairs read from the last's
//                                        columns (norm::max_tree)
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
// the exp table's floor e^-16 = 1.1e-7, not 0. Pooling runs on the rknpu node (rule rocket-interrupt).
// Rule softmax-shape: N a multiple of 32 whose N / 32 windows fit two pooling passes of at
// most 16 pixels (softmax_row_length gives the row to hold a shorter one in, its padding
// masked), inputs within ±32767 (the tree's differences stay in fp16).

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <regcmd/core/error.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/graph/spec.hpp>
#include <regcmd/programs/norm/band.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

struct softmax_spec {
  std::uint32_t M = 0;  // rows
  std::uint32_t N = 0;  // elements a row holds (softmax_row_length)
  bool mask = false;    // add a [M][N] fp16 mask first: 0 keeps an element, -32768 hides it
  friend constexpr bool operator==(const softmax_spec&, const softmax_spec&) = default;
};

namespace norm {
inline constexpr std::uint32_t softmax_max_N = 32 * pool_max_kernel * pool_max_kernel;
inline constexpr float softmax_hidden = -32768.0f;  // a mask's value that hides an element
inline constexpr std::uint32_t tree_levels = 6;     // 32 partial maxima -> 1
// Level l's output columns: 64 while its 33 or 34 columns need them, then 32.
constexpr std::uint32_t tree_width(std::uint32_t l) { return l < 2 ? 64 : 32; }
// The row's sum in bands of 1/y over 4^-7 .. 4^10 (band.hpp): a row's sum is 1 to N.
inline band_set softmax_bands() { return {band_function::reciprocal, 9, 1}; }

// The pooling windows of a row of N / 8 pixels down to 4: N / 32 = first · second, each at
// most 16 (second = 1: one pass); {0, 0} when no such split exists.
struct pool_windows {
  std::uint32_t first = 0, second = 0;
};
constexpr pool_windows windows_of(std::uint32_t N) {
  if (N == 0 || N % 32 != 0) return {};
  const std::uint32_t w = N / 32;
  for (std::uint32_t first = pool_max_kernel; first >= 1; --first)
    if (w % first == 0 && w / first <= pool_max_kernel) return {first, w / first};
  return {};
}
}  // namespace norm

// The shortest row softmax takes that holds `length` elements: the padding is masked.
constexpr std::uint32_t softmax_row_length(std::uint32_t length) {
  std::uint32_t N = length < 32 ? 32 : (length + 31) / 32 * 32;
  while (N <= norm::softmax_max_N && norm::windows_of(N).first == 0) N += 32;
  return N;
}

constexpr status check_softmax(const softmax_spec& s) {
  if (s.M == 0 || s.N == 0) return make_error(rules::shape_nonzero, "softmax");
  if (s.N > norm::softmax_max_N || norm::windows_of(s.N).first == 0)
    return make_error(rules::softmax_shape, "softmax", "N", s.N);
  return {};
}

// The ops of y = softmax(x) appended to g (x and y by name; with s.mask, "<prefix>.mask" the
// mask). The constants "<prefix>.w1" .. ".w6", ".neg_w", ".sum_w", ".inv_w": pack_softmax. A
// request that breaks a rule adds nothing and marks g refused with it.
template <std::size_t MaxOps>
constexpr status add_softmax(basic_graph_spec<MaxOps>& g, graph_name y, graph_name x, std::string_view prefix,
                             const softmax_spec& s) {
  if (status c = check_softmax(s); !c) {
    g.refused = c.err().violated;
    return c;
  }
  auto name = [&](std::string_view what) { return graph_name::prefixed(prefix, what); };
  const auto flat = [&](ew_op op) { return ew_spec{.op = op, .M = s.M, .N = s.N, .layout = operand_layout::row_major}; };
  const auto fp16 = [](std::uint32_t M, std::uint32_t K, std::uint32_t N, output_activation a) {
    return matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = M, .K = K, .N = N, .activation = a};
  };
  constexpr auto relu = output_activation::relu, none = output_activation::none, relu6 = output_activation::relu6;
  const norm::pool_windows w = norm::windows_of(s.N);
  const auto pool = [&](std::uint32_t pixels, std::uint32_t window) {
    return pool_spec{.op = pool_op::max, .H = s.M, .W = pixels, .C = 8, .kernel_h = 1, .kernel_w = window};
  };
  const graph_name z = s.mask ? name("masked") : x, part = w.second > 1 ? name("part2") : name("part");
  const graph_name levels[norm::tree_levels] = {name("t1"), name("t2"), name("t3"), name("t4"), name("t5"), name("t6")};
  const graph_name level_weights[norm::tree_levels] = {name("w1"), name("w2"), name("w3"), name("w4"), name("w5"), name("w6")};
  auto add = [&](const graph_op& op) { return add_op(g, op); };
  status c{};
  if (s.mask) c = add(graph_ew(z, x, name("mask"), flat(ew_op::add)));
  if (c) c = add(graph_pool(name("part"), z, pool(s.N / 8, w.first)));
  if (c && w.second > 1) c = add(graph_pool(part, name("part"), pool(s.N / 8 / w.first, w.second)));
  for (std::uint32_t l = 0; c && l < norm::tree_levels; ++l)
    c = add(graph_matmul(levels[l], l == 0 ? part : levels[l - 1], level_weights[l],
                         fp16(s.M, l == 0 ? 32 : norm::tree_width(l - 1), norm::tree_width(l), relu)));
  if (c) c = add(graph_matmul(name("neg"), levels[norm::tree_levels - 1], name("neg_w"), fp16(s.M, 32, s.N, none)));
  if (c) c = add(graph_ew(name("d"), z, name("neg"), flat(ew_op::add)));
  if (c) c = add(graph_act(name("e"), name("d"), {.fn = activation::exp, .M = s.M, .N = s.N}));
  if (c) c = add(graph_matmul(name("sum"), name("e"), name("sum_w"), fp16(s.M, s.N, norm::band_columns, relu6)));
  if (c) c = add(graph_act(name("band"), name("sum"), {.fn = activation::reciprocal_band, .M = s.M, .N = norm::band_columns}));
  if (c) c = add(graph_matmul(name("inv"), name("band"), name("inv_w"), fp16(s.M, norm::band_columns, s.N, none)));
  if (c) c = add(graph_ew(y, name("e"), name("inv"), flat(ew_op::mul)));
  return c;
}

namespace norm {
// The tree's levels as [K][N] row-major matrices, and B's column: -s = Σ_k neg[k] t6[k].
//
// Level 0 takes the 32 partial maxima p_i to r_i = relu(p_i - p_0), i = 1..31, and carries
// relu(p_0) and relu(-p_0): p_0 holds the row's first element, which no mask hides, so the
// r_i are the row's own spread (a hidden element's r is 0 exactly) and the tree never
// subtracts values of far apart magnitudes, which fp16 would round away. Levels 1 to 5 halve
// the nonnegative r: max(a, b) = relu(a - b) + b, each pair two columns, the carried pair
// after them. The shift s is max + a margin over the roundings the tree stored (each level's
// columns are fp16, 2^-11 relative: 6 levels are covered by 2^-7 of the spread) and the
// output's rounding of s (2^-10 of |p_0|), so x - s ≤ 0 and the exp table never clips.
struct tree_weights {
  std::vector<float> levels[tree_levels];
  std::vector<float> neg;  // [32]
};
inline tree_weights max_tree() {
  tree_weights t;
  using coefficients = std::vector<float>;
  // level 0
  std::vector<float>& first = t.levels[0];
  first.assign(std::size_t{32} * tree_width(0), 0.0f);
  const std::uint32_t N0 = tree_width(0);
  for (std::uint32_t i = 1; i < 32; ++i) {
    first[i * N0 + (i - 1)] = 1;
    first[0 * N0 + (i - 1)] = -1;
  }
  first[0 * N0 + 31] = 1;   // relu(p_0)
  first[0 * N0 + 32] = -1;  // relu(-p_0)
  // the values in play as coefficients over the last level's columns: r_0 = 0, r_1..r_31
  std::vector<coefficients> values(32, coefficients(N0, 0.0f));
  for (std::uint32_t i = 1; i < 32; ++i) values[i][i - 1] = 1;
  std::uint32_t carried = 31;
  for (std::uint32_t l = 1; l < tree_levels; ++l) {
    const std::uint32_t K = tree_width(l - 1), N = tree_width(l);
    std::vector<float>& W = t.levels[l];
    W.assign(std::size_t{K} * N, 0.0f);
    const std::uint32_t pairs = static_cast<std::uint32_t>(values.size() / 2);
    std::vector<coefficients> next(pairs, coefficients(N, 0.0f));
    for (std::uint32_t i = 0; i < pairs; ++i) {
      const coefficients &a = values[2 * i], &b = values[2 * i + 1];
      for (std::uint32_t k = 0; k < K; ++k) {
        W[k * N + 2 * i] = a[k] - b[k];  // relu(a - b)
        W[k * N + 2 * i + 1] = b[k];     // b ≥ 0: itself
      }
      next[i][2 * i] = 1;
      next[i][2 * i + 1] = 1;
    }
    W[carried * N + 2 * pairs] = 1;
    W[(carried + 1) * N + 2 * pairs + 1] = 1;
    carried = 2 * pairs;
    values = std::move(next);
  }
  // -s = -(p_0 + r (1 + 2^-7) + |p_0| 2^-10)
  t.neg.assign(32, 0.0f);
  for (std::uint32_t k = 0; k < 32; ++k) t.neg[k] = -values[0][k] * (1.0f + 0x1p-7f);
  t.neg[carried] = -1.0f - 0x1p-10f;
  t.neg[carried + 1] = 1.0f - 0x1p-10f;
  return t;
}
}  // namespace norm

// The constants of a softmax added as `prefix` (add_softmax) into the weight buffer.
inline status pack_softmax(const graph_view& g, std::string_view prefix, const softmax_spec& s,
                           std::span<std::uint8_t> weight_buffer) {
  if (status c = check_softmax(s); !c) return c;
  const norm::tree_weights tree = norm::max_tree();
  const char* level_names[norm::tree_levels] = {"w1", "w2", "w3", "w4", "w5", "w6"};
  for (std::uint32_t l = 0; l < norm::tree_levels; ++l)
    if (status c = pack_tensor<float>(g, graph_name::prefixed(prefix, level_names[l]).view(), tree.levels[l], weight_buffer); !c)
      return c;
  const std::uint32_t C = norm::band_columns;
  const norm::band_set bands = norm::softmax_bands();
  std::vector<float> neg(std::size_t{32} * s.N), S(std::size_t{s.N} * C), inv(std::size_t{C} * s.N);
  for (std::uint32_t k = 0; k < 32; ++k)
    for (std::uint32_t n = 0; n < s.N; ++n) neg[std::size_t{k} * s.N + n] = tree.neg[k];
  for (std::uint32_t k = 0; k < s.N; ++k)
    for (std::uint32_t j = 0; j < C; ++j) S[std::size_t{k} * C + j] = static_cast<float>(bands.sum_weight(j));
  for (std::uint32_t j = 0; j < C; ++j)
    for (std::uint32_t n = 0; n < s.N; ++n) inv[std::size_t{j} * s.N + n] = static_cast<float>(bands.coefficient(j));
  if (status c = pack_tensor<float>(g, graph_name::prefixed(prefix, "neg_w").view(), neg, weight_buffer); !c) return c;
  if (status c = pack_tensor<float>(g, graph_name::prefixed(prefix, "sum_w").view(), S, weight_buffer); !c) return c;
  return pack_tensor<float>(g, graph_name::prefixed(prefix, "inv_w").view(), inv, weight_buffer);
}

// y = softmax(x) alone: input x (row-major [M][N]), with s.mask "softmax.mask", and the
// constants (pack_softmax with prefix "softmax"); output y.
constexpr graph_spec softmax(const softmax_spec& s) {
  graph_spec g;
  (void)add_softmax(g, "y", "x", "softmax", s);
  return g;
}

}  // namespace regcmd
