// LayerNorm: the graph it adds and on the model against the definition in double.
#include <regcmd/testing/doctest.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/norm/layer_norm.hpp>

#include "model_board.hpp"

using namespace regcmd;

TEST_CASE("layer norm: fourteen ops with β, eleven without, refused as RMSNorm is") {
  const auto with = build(layer_norm({.M = 2, .D = 64}));
  REQUIRE(with.ok());
  CHECK(with.value().view().tasks.size() == 14);
  const auto without = build(layer_norm({.M = 2, .D = 64, .eps = 0, .bias = false}));
  REQUIRE(without.ok());
  CHECK(without.value().view().tasks.size() == 11);
  CHECK_BREAKS(build(layer_norm({.M = 2, .D = 20000})), rules::norm_shape);
  constexpr auto fixed_norm = fixed<layer_norm({.M = 1, .D = 128})>();
  CHECK(fixed_norm.view().tasks.size() == 14);
}

TEST_CASE("layer norm on the model: offset rows of several spreads, within 2^-9 of float64") {
  constexpr std::uint32_t M = 6, D = 160;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> d(-1, 1);
  const double offset[M] = {0, 3, -20, 0.5, 100, -2}, spread[M] = {1, 0.01, 4, 30, 2, 0.2};
  std::vector<float> x(M * D), gamma(D), beta(D);
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t k = 0; k < D; ++k) x[m * D + k] = half_to_float(float_to_half(static_cast<float>(offset[m] + spread[m] * d(rng))));
  for (std::uint32_t n = 0; n < D; ++n) {
    gamma[n] = half_to_float(float_to_half(static_cast<float>(1 + 0.5 * d(rng))));
    beta[n] = half_to_float(float_to_half(static_cast<float>(0.3 * d(rng))));
  }
  const layer_norm_spec s{.M = M, .D = D, .eps = 1e-5f};
  const auto built = build(layer_norm(s));
  REQUIRE(built.ok());
  const graph_geometry& g = built.value().geometry;
  testing::model_board board;
  board.allocate_each(g.buffer_bytes, 0x5a);
  REQUIRE(pack_tensor<float>(g, "x", x, board[operand_role::feature]).ok());
  REQUIRE(pack_layer_norm(g, "norm", s, gamma, beta, board[operand_role::weight], board[operand_role::ew_operand]).ok());
  const auto r = board.run(built.value().view());
  REQUIRE(r.faults.empty());
  CHECK(r.tasks_completed == 14);
  std::vector<float> y(M * D);
  REQUIRE(unpack_tensor<float>(g, "y", board[operand_role::output], y).ok());
  // The error, against outputs of about ±2: the bands' 1/√ (2^-10 relative), fp16's roundings
  // of xc, the product and the sum (2^-11 each).
  double worst = 0;
  for (std::uint32_t m = 0; m < M; ++m) {
    double mean = 0, var = 0;
    for (std::uint32_t k = 0; k < D; ++k) mean += x[m * D + k];
    mean /= D;
    for (std::uint32_t k = 0; k < D; ++k) var += (x[m * D + k] - mean) * (x[m * D + k] - mean);
    var /= D;
    for (std::uint32_t n = 0; n < D; ++n) {
      const double want = (x[m * D + n] - mean) * gamma[n] / std::sqrt(var + s.eps) + beta[n];
      const double error = std::abs(y[m * D + n] - want);
      worst = error <= worst ? worst : error;
    }
  }
  MESSAGE("layer norm, M = 6, D = 160: worst absolute error " << worst);
  CHECK(worst <= std::ldexp(1.0, -8));
  CHECK(worst > 0);
}
