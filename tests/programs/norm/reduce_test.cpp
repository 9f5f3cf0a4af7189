// Row reductions: their graphs, rule and results on the model against double.
#include <regcmd/testing/doctest.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/norm/reduce.hpp>
#include <regcmd/programs/norm/softmax.hpp>

#include "model_board.hpp"

using namespace regcmd;

namespace {
// The rows' values as the model computes them, column 0 of each [M][16] row; the padding
// past `count` holds 1000 (weighed 0 by sum and mean, hidden by max's mask).
std::vector<float> reduce_on_model(const row_reduce_spec& s, const std::vector<float>& x) {
  const auto built = build(row_reduce(s));
  REQUIRE(built.ok());
  const graph_geometry& g = built.value().geometry;
  testing::model_board board;
  board.allocate_each(g.buffer_bytes, 0x5a);
  REQUIRE(pack_tensor<float>(g, "x", x, board[operand_role::feature]).ok());
  if (s.mask) {
    std::vector<float> mask(x.size(), 0.0f);
    for (std::size_t i = 0; i < mask.size(); ++i)
      if (i % s.N >= norm::counted(s)) mask[i] = norm::softmax_hidden;
    REQUIRE(pack_tensor<float>(g, "reduce.mask", mask, board[operand_role::ew_operand]).ok());
  }
  REQUIRE(pack_row_reduce(g, "reduce", s, board[operand_role::weight]).ok());
  const auto r = board.run(built.value().view());
  REQUIRE(r.faults.empty());
  std::vector<float> y(std::size_t{s.M} * 16);
  REQUIRE(unpack_tensor<float>(g, "y", board[operand_role::output], y).ok());
  std::vector<float> column(s.M);
  for (std::uint32_t m = 0; m < s.M; ++m) {
    for (std::uint32_t n = 1; n < 16; ++n) CHECK(y[m * 16 + n] == y[m * 16]);  // every column
    column[m] = y[m * 16];
  }
  return column;
}
}  // namespace

TEST_CASE("rule reduce-shape: rows of a multiple of 32, a maximum's padding masked") {
  CHECK(check_row_reduce({.op = row_reduce_op::sum, .M = 1, .N = 64, .count = 3}).ok());
  CHECK_BREAKS(check_row_reduce({.op = row_reduce_op::sum, .M = 1, .N = 40}), rules::reduce_shape);
  CHECK_BREAKS(check_row_reduce({.op = row_reduce_op::mean, .M = 1, .N = 64, .count = 65}), rules::reduce_shape);
  CHECK_BREAKS(check_row_reduce({.op = row_reduce_op::max, .M = 1, .N = 64, .count = 40}), rules::reduce_shape);
  CHECK_BREAKS(check_row_reduce({.op = row_reduce_op::max, .M = 1, .N = 544}), rules::reduce_shape);
  CHECK_BREAKS(check_row_reduce({.op = row_reduce_op::sum, .M = 1, .N = 64, .mask = true}), rules::reduce_shape);
  CHECK_BREAKS(build(row_reduce({.op = row_reduce_op::max, .M = 1, .N = 64, .count = 40})), rules::reduce_shape);
  // one task for a sum or a mean; a maximum's pooling, tree and reading
  CHECK(build(row_reduce({.op = row_reduce_op::mean, .M = 3, .N = 96})).value().view().tasks.size() == 1);
  CHECK(build(row_reduce({.op = row_reduce_op::max, .M = 3, .N = 96})).value().view().tasks.size() == 8);
}

TEST_CASE("row reductions on the model: sum and mean within fp16's rounding, max exact") {
  constexpr std::uint32_t M = 5, N = 96, count = 77;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<float> x(M * N);
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t n = 0; n < N; ++n)
      x[m * N + n] = n < count ? half_to_float(float_to_half(static_cast<float>(d(rng) * (1 + 10 * m) - 5.0 * m))) : 1000.0f;
  const std::vector<float> sums = reduce_on_model({.op = row_reduce_op::sum, .M = M, .N = N, .count = count}, x);
  const std::vector<float> means = reduce_on_model({.op = row_reduce_op::mean, .M = M, .N = N, .count = count}, x);
  const std::vector<float> maxima = reduce_on_model({.op = row_reduce_op::max, .M = M, .N = N, .count = count, .mask = true}, x);
  for (std::uint32_t m = 0; m < M; ++m) {
    double sum = 0, magnitude = 0, top = -1e300;
    for (std::uint32_t n = 0; n < count; ++n) {
      sum += x[m * N + n];
      magnitude += std::abs(x[m * N + n]);
      top = std::max(top, double(x[m * N + n]));
    }
    // fp32 accumulation, one fp16 rounding (2^-11 relative); the mean's weight 1/77 rounded (2^-11)
    CHECK(std::abs(sums[m] - sum) <= std::abs(sum) * 0x1p-11 + magnitude * 0x1p-20);
    CHECK(std::abs(means[m] - sum / count) <= std::abs(sum / count) * 0x1p-10 + magnitude / count * 0x1p-20);
    // the maximum: an element, through the tree's fp16 columns (2^-11 of the spread each level)
    CHECK(std::abs(maxima[m] - top) <= (top - x[m * N]) * 0x1p-8 + std::abs(top) * 0x1p-11);
  }
}
