#pragma once
// Reductions over the last axis of a row-major fp16 [M][N] tensor, as graph ops; the result
// is [M][16], every column the row's value (a matmul writes whole weight tiles of N):
//
//   sum    x · S     [N][16]      CNA: S = 1 on the counted elements, 0 past them
//   mean   x · S     [N][16]      CNA: S = 1/count rounded to fp16 (2^-12 relative)
//   max    (x + mask), the row's maximum tree (row_max.hpp), then t6 · T [32][16]
//
// A row holds N elements, a multiple of 32; `count` of them count (the rest are padding:
// sum and mean weigh it 0, max needs it hidden by the mask, -32768). Rule reduce-shape.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <regcmd/core/error.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/graph/spec.hpp>
#include <regcmd/programs/norm/constants.hpp>
#include <regcmd/programs/norm/row_max.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

enum class row_reduce_op : std::uint8_t { sum, mean, max };

struct row_reduce_spec {
  row_reduce_op op = row_reduce_op::sum;
  std::uint32_t M = 0;      // rows
  std::uint32_t N = 0;      // elements a row holds: a multiple of 32
  std::uint32_t count = 0;  // the elements that count, the first ones; 0: all N
  bool mask = false;        // max: add a [M][N] mask first (0 keeps, -32768 hides)
  friend constexpr bool operator==(const row_reduce_spec&, const row_reduce_spec&) = default;
};

namespace norm {
inline constexpr std::uint32_t reduce_columns = 16;
constexpr std::uint32_t counted(const row_reduce_spec& s) { return s.count ? s.count : s.N; }
}  // namespace norm

constexpr status check_row_reduce(const row_reduce_spec& s) {
  if (s.M == 0 || s.N == 0) return make_error(rules::shape_nonzero, "reduce");
  if (s.N % 32 != 0 || s.count > s.N) return make_error(rules::reduce_shape, "reduce", "N", s.N);
  if (s.op == row_reduce_op::max &&
      (s.N > norm::row_max_N || norm::windows_of(s.N).first == 0 || (norm::counted(s) < s.N && !s.mask)))
    return make_error(rules::reduce_shape, "reduce", "N", s.N);
  if (s.op != row_reduce_op::max && s.mask) return make_error(rules::reduce_shape, "reduce", "mask");
  return {};
}

// The ops of y = reduce(x) appended to g (x and y by name; with s.mask "<prefix>.mask"; the
// constants "<prefix>.w" and max's tree: pack_row_reduce). A request that breaks a rule adds
// nothing and marks g refused with it.
template <std::size_t MaxOps>
constexpr status add_row_reduce(basic_graph_spec<MaxOps>& g, graph_name y, graph_name x, std::string_view prefix,
                                const row_reduce_spec& s) {
  if (status c = refuse_unless(g, check_row_reduce(s)); !c) return c;
  auto name = [&](std::string_view what) { return graph_name::prefixed(prefix, what); };
  const auto fp16 = [](std::uint32_t M, std::uint32_t K) {
    return matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = M, .K = K, .N = norm::reduce_columns};
  };
  if (s.op != row_reduce_op::max) return add_op(g, graph_matmul(y, x, name("w"), fp16(s.M, s.N)));
  const graph_name z = s.mask ? name("masked") : x;
  status c{};
  if (s.mask) c = add_op(g, graph_ew(z, x, name("mask"), {.op = ew_op::add, .M = s.M, .N = s.N, .layout = operand_layout::row_major}));
  if (c) c = detail::add_max_tree(g, z, prefix, s.M, s.N);
  if (c) c = add_op(g, graph_matmul(y, name("t6"), name("w"), fp16(s.M, 32)));
  return c;
}

// The constants of a reduction added as `prefix` (add_row_reduce): all weights.
inline result<std::vector<norm_constant>> row_reduce_constants(std::string_view prefix, const row_reduce_spec& s) {
  if (status c = check_row_reduce(s); !c) return c.err();
  const std::uint32_t C = norm::reduce_columns;
  std::vector<norm_constant> out;
  std::vector<float> W;
  if (s.op == row_reduce_op::max) {
    out = detail::max_tree_constants(prefix);
    const norm::tree_weights tree = norm::max_tree();
    W.assign(std::size_t{32} * C, 0.0f);
    for (std::uint32_t k = 0; k < 32; ++k)
      for (std::uint32_t n = 0; n < C; ++n) W[std::size_t{k} * C + n] = tree.top[k];
  } else {
    const float weight = s.op == row_reduce_op::sum ? 1.0f : 1.0f / static_cast<float>(norm::counted(s));
    W.assign(std::size_t{s.N} * C, 0.0f);
    for (std::uint32_t k = 0; k < norm::counted(s); ++k)
      for (std::uint32_t n = 0; n < C; ++n) W[std::size_t{k} * C + n] = weight;
  }
  out.push_back({graph_name::prefixed(prefix, "w"), operand_role::weight, std::move(W)});
  return out;
}
inline status pack_row_reduce(const graph_view& g, std::string_view prefix, const row_reduce_spec& s,
                              std::span<std::uint8_t> weight_buffer) {
  const auto constants = row_reduce_constants(prefix, s);
  if (!constants) return constants.err();
  return pack_constants(g, constants.value(), weight_buffer, {});
}

// y = reduce(x) alone: input x (row-major [M][N]), the constants (pack_row_reduce with prefix
// "reduce"), output y ([M][16]).
constexpr graph_spec row_reduce(const row_reduce_spec& s) {
  graph_spec g;
  (void)add_row_reduce(g, "y", "x", "reduce", s);
  return g;
}

}  // namespace regcmd
