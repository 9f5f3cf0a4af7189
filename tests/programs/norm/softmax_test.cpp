// Softmax: the maximum tree's weights, the graph it adds, its rule, and the program on the
// model against the definition in double over rows of 1 to 4096 elements.
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/norm/softmax.hpp>

#include "model_board.hpp"

using namespace regcmd;

namespace {
// The tree's levels applied in double with a ReLU after each, then s = -(neg · t6).
double tree_shift(const norm::tree_weights& t, const std::vector<double>& partial) {
  std::vector<double> v = partial;
  for (std::uint32_t l = 0; l < norm::tree_levels; ++l) {
    const std::size_t K = v.size(), N = t.levels[l].size() / K;
    std::vector<double> next(N, 0.0);
    for (std::size_t n = 0; n < N; ++n) {
      for (std::size_t k = 0; k < K; ++k) next[n] += v[k] * t.levels[l][k * N + n];
      next[n] = std::max(next[n], 0.0);
    }
    v = next;
  }
  double neg = 0;
  for (std::size_t k = 0; k < 32; ++k) neg += v[k] * t.shift[k];
  return -neg;
}

struct softmax_case {
  std::uint32_t M, length;
  double spread;  // inputs uniform in ±spread
};

// Worst |p - p_float64| over the held elements, and the worst row sum's distance from 1.
struct softmax_errors {
  double element = 0, row_sum = 0;
  std::uint32_t tasks = 0;
};

softmax_errors run_on_model(const softmax_case& c, std::uint32_t seed) {
  const std::uint32_t N = softmax_row_length(c.length);
  const softmax_spec s{.M = c.M, .N = N, .mask = N != c.length};
  const auto built = build(softmax(s));
  REQUIRE(built.ok());
  const graph_geometry& g = built.value().geometry;
  testing::model_board board;
  board.allocate_each(g.buffer_bytes, 0x5a);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-c.spread, c.spread);
  std::vector<float> x(std::size_t{c.M} * N, 0.0f), mask(std::size_t{c.M} * N, 0.0f);
  for (std::uint32_t m = 0; m < c.M; ++m)
    for (std::uint32_t n = 0; n < N; ++n) {
      x[m * N + n] = n < c.length ? half_to_float(float_to_half(static_cast<float>(d(rng) + 3 * m))) : 0.0f;
      mask[m * N + n] = n < c.length ? 0.0f : norm::softmax_hidden;
    }
  REQUIRE(pack_tensor<float>(g, "x", x, board[operand_role::feature]).ok());
  if (s.mask) REQUIRE(pack_tensor<float>(g, "softmax.mask", mask, board[operand_role::ew_operand]).ok());
  REQUIRE(pack_softmax(g, "softmax", s, board[operand_role::weight]).ok());
  const auto r = board.run(built.value().view());
  REQUIRE(r.faults.empty());
  std::vector<float> p(std::size_t{c.M} * N);
  REQUIRE(unpack_tensor<float>(g, "y", board[operand_role::output], p).ok());

  softmax_errors e{0, 0, r.tasks_completed};
  for (std::uint32_t m = 0; m < c.M; ++m) {
    double top = -1e300, sum = 0, held = 0;
    for (std::uint32_t n = 0; n < c.length; ++n) top = std::max(top, double(x[m * N + n]));
    for (std::uint32_t n = 0; n < c.length; ++n) sum += std::exp(double(x[m * N + n]) - top);
    for (std::uint32_t n = 0; n < N; ++n) {
      const double want = n < c.length ? std::exp(double(x[m * N + n]) - top) / sum : 0.0;
      const double error = std::abs(p[m * N + n] - want);
      e.element = error <= e.element ? e.element : error;  // NaN stays
      held += p[m * N + n];
    }
    const double off = std::abs(held - 1);
    e.row_sum = off <= e.row_sum ? e.row_sum : off;
  }
  return e;
}
}  // namespace

TEST_CASE("softmax: the maximum tree's six levels give the maximum of 32 values and a margin") {
  const norm::tree_weights t = norm::max_tree();
  CHECK(t.levels[0].size() == 32 * 64);
  CHECK(t.levels[1].size() == 64 * 64);
  CHECK(t.levels[2].size() == 64 * 32);
  CHECK(t.levels[5].size() == 32 * 32);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> d(-100, 100);
  for (int trial = 0; trial < 64; ++trial) {
    std::vector<double> v(32);
    for (double& x : v) x = d(rng);
    const double top = 150 + trial;
    v[static_cast<std::size_t>(trial) % 32] = top;  // the maximum, at each place in turn
    if (trial % 2) v[31 - static_cast<std::size_t>(trial) % 32] = -32768;  // hidden, except the first
    v[0] = trial % 3 ? v[0] : -32000.5;  // and a first element far below the rest
    if (trial % 32 == 0) v[0] = top;
    // s = max + 2^-7 (max - p_0) + 2^-10 |p_0|
    CHECK(tree_shift(t, v) == doctest::Approx(top + (top - v[0]) / 128 + std::abs(v[0]) / 1024).epsilon(1e-12));
  }
}

TEST_CASE("softmax: the rows it holds, and the windows of its pooling") {
  CHECK(softmax_row_length(1) == 32);
  CHECK(softmax_row_length(32) == 32);
  CHECK(softmax_row_length(100) == 128);
  CHECK(softmax_row_length(545) == 576);  // 17 windows do not split into two passes of 16; 18 do
  CHECK(softmax_row_length(4096) == 4096);
  CHECK(norm::windows_of(4096).first == 16);
  CHECK(norm::windows_of(4096).second == 8);
  CHECK(norm::windows_of(96).first == 3);
  CHECK(norm::windows_of(96).second == 1);
  CHECK(norm::windows_of(544).first == 0);
}

TEST_CASE("rule softmax-shape: rows of a multiple of 32 that two passes pool") {
  CHECK(check_softmax({.M = 1, .N = 8192}).ok());
  CHECK_BREAKS(check_softmax({.M = 1, .N = 8224}), rules::softmax_shape);
  CHECK_BREAKS(check_softmax({.M = 1, .N = 100}), rules::softmax_shape);
  CHECK_BREAKS(check_softmax({.M = 1, .N = 544}), rules::softmax_shape);
  CHECK_BREAKS(check_softmax({.M = 0, .N = 32}), rules::shape_nonzero);
  CHECK_BREAKS(build(softmax({.M = 2, .N = 100})), rules::softmax_shape);
}

TEST_CASE("softmax: 14 tasks at N = 256, 16 with a mask and two pooling passes, one submit") {
  const auto one = build(softmax({.M = 4, .N = 256}));
  REQUIRE(one.ok());
  CHECK(one.value().view().tasks.size() == 14);
  const auto two = build(softmax({.M = 4, .N = 1024, .mask = true}));
  REQUIRE(two.ok());
  CHECK(two.value().view().tasks.size() == 16);
  constexpr auto fixed_softmax = fixed<softmax({.M = 1, .N = 256})>();
  CHECK(fixed_softmax.view().tasks.size() == 14);
}

TEST_CASE("softmax on the model: rows of 1 to 4096 elements against float64") {
  // The error: fp16's rounding of p (2^-12 of the largest), the exp table's interpolation
  // and entries (2^-15), the bands' roundings of 1/sum (relative 2^-10); measured 4.0e-4 at
  // most, rows within 8e-4 of 1.
  const softmax_case cases[] = {{2, 1, 4},     {3, 5, 4},      {4, 32, 8},    {4, 100, 8},
                                {2, 256, 12},  {2, 1000, 16},  {2, 4096, 8},  {8, 64, 30}};
  std::uint32_t seed = 1;
  for (const softmax_case& c : cases) {
    const softmax_errors e = run_on_model(c, seed++);
    MESSAGE("softmax rows of " << c.length << " (held in " << softmax_row_length(c.length) << "), inputs ±"
                               << c.spread << ": max |p - float64| " << e.element << ", row sums within "
                               << e.row_sum << " of 1, " << e.tasks << " tasks");
    CHECK(e.element <= 1e-3);
    CHECK(e.row_sum <= 2e-3);
  }
}
