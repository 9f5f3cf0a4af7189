#pragma once
// The maximum of each row of a row-major fp16 [M][N] tensor, as graph ops: what softmax
// shifts by and ReduceMax returns.
//
// The SDP and the PPU never mix the 8 fp16 lanes of a 16-byte atom, and the CNA sums but does
// not take a maximum. So the maximum comes in two steps:
//
//   part   = maxpool(x)  [M][4][8]       PPU over x as an 8-channel image, M rows of N/8
//                                        pixels, windows of N/32 pixels (1 or 2 passes): 32
//                                        partial maxima per row, each over its own elements
//   t1..t6 = relu(t · W_l)               CNA, 6 levels: the spread over the row's first
//                                        element, then max(a, b) = relu(a - b) + b, 32 -> 1
//                                        per row, each level's pairs read from the last's
//                                        columns (norm::max_tree)
//
// and a last matmul reads the maximum (or softmax's shift) off t6's columns. Pooling runs on
// the rknpu node (rule rocket-interrupt). The row: N a multiple of 32 whose N / 32 windows fit
// two pooling passes of at most 16 pixels, finite values within ±32767 (the tree's
// differences stay in fp16), its first element a real one (a mask hides later ones only).

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <regcmd/core/error.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/graph/spec.hpp>
#include <regcmd/programs/norm/constants.hpp>

namespace regcmd {

namespace norm {
inline constexpr std::uint32_t row_max_N = 32 * pool_max_kernel * pool_max_kernel;
inline constexpr std::uint32_t tree_levels = 6;  // 32 partial maxima -> 1
// Level l's output columns: 64 while its 33 or 34 columns need them, then 32.
constexpr std::uint32_t tree_width(std::uint32_t l) { return l < 2 ? 64 : 32; }

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

namespace norm {
// The tree's levels as [K][N] row-major matrices, and the last level's readings: the
// maximum = Σ_k top[k] t6[k], and softmax's -s = Σ_k shift[k] t6[k].
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
  std::vector<float> top, shift;  // [32] each
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
  // max = p_0 + r; -s = -(p_0 + r (1 + 2^-7) + |p_0| 2^-10)
  t.top.assign(32, 0.0f);
  t.shift.assign(32, 0.0f);
  for (std::uint32_t k = 0; k < 32; ++k) {
    t.top[k] = values[0][k];
    t.shift[k] = -values[0][k] * (1.0f + 0x1p-7f);
  }
  t.top[carried] = 1;
  t.top[carried + 1] = -1;
  t.shift[carried] = -1.0f - 0x1p-10f;
  t.shift[carried + 1] = 1.0f - 0x1p-10f;
  return t;
}
}  // namespace norm

namespace detail {
// The pooling passes and the tree over z: "<prefix>.part" (".part2"), ".t1" .. ".t6", the
// weights ".w1" .. ".w6" (max_tree_constants).
template <std::size_t MaxOps>
constexpr status add_max_tree(basic_graph_spec<MaxOps>& g, graph_name z, std::string_view prefix, std::uint32_t M,
                              std::uint32_t N) {
  auto name = [&](std::string_view what) { return graph_name::prefixed(prefix, what); };
  const norm::pool_windows w = norm::windows_of(N);
  const auto pool = [&](std::uint32_t pixels, std::uint32_t window) {
    return pool_spec{.op = pool_op::max, .H = M, .W = pixels, .C = 8, .kernel_h = 1, .kernel_w = window};
  };
  const graph_name part = w.second > 1 ? name("part2") : name("part");
  const graph_name levels[norm::tree_levels] = {name("t1"), name("t2"), name("t3"), name("t4"), name("t5"), name("t6")};
  const graph_name level_weights[norm::tree_levels] = {name("w1"), name("w2"), name("w3"), name("w4"), name("w5"), name("w6")};
  status c = add_op(g, graph_pool(name("part"), z, pool(N / 8, w.first)));
  if (c && w.second > 1) c = add_op(g, graph_pool(part, name("part"), pool(N / 8 / w.first, w.second)));
  for (std::uint32_t l = 0; c && l < norm::tree_levels; ++l)
    c = add_op(g, graph_matmul(levels[l], l == 0 ? part : levels[l - 1], level_weights[l],
                               {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = M,
                                .K = l == 0 ? 32 : norm::tree_width(l - 1), .N = norm::tree_width(l),
                                .activation = output_activation::relu}));
  return c;
}

inline std::vector<norm_constant> max_tree_constants(std::string_view prefix) {
  norm::tree_weights tree = norm::max_tree();
  const char* names[norm::tree_levels] = {"w1", "w2", "w3", "w4", "w5", "w6"};
  std::vector<norm_constant> out;
  for (std::uint32_t l = 0; l < norm::tree_levels; ++l)
    out.push_back({graph_name::prefixed(prefix, names[l]), operand_role::weight, std::move(tree.levels[l])});
  return out;
}
}  // namespace detail

}  // namespace regcmd
