// RMSNorm: the band decomposition's constants, the graph it adds, its rule, and the program
// on the model against y = x γ / √(mean x² + ε) in double.
#include <regcmd/testing/doctest.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/norm/rms_norm.hpp>

#include "model_board.hpp"

using namespace regcmd;

namespace {
// RMSNorm in double, from its definition.
double rms_norm_value(const std::vector<float>& x, const std::vector<float>& gamma, std::uint32_t D, std::uint32_t m,
                      std::uint32_t n, double eps) {
  double sum = 0;
  for (std::uint32_t k = 0; k < D; ++k) sum += double(x[m * D + k]) * x[m * D + k];
  return x[m * D + n] * double(gamma[n]) / std::sqrt(sum / D + eps);
}

struct norm_run {
  std::vector<float> y;
  std::uint32_t tasks = 0;
};

norm_run run_on_model(const rms_norm_spec& s, const std::vector<float>& x, const std::vector<float>& gamma) {
  const auto built = build(rms_norm(s));
  REQUIRE(built.ok());
  const graph_geometry& g = built.value().geometry;
  testing::model_board board;
  board.allocate_each(g.buffer_bytes, 0x5a);
  REQUIRE(pack_tensor<float>(g, "x", x, board[operand_role::feature]).ok());
  REQUIRE(pack_rms_norm(g, "norm", s, gamma, board[operand_role::weight], board[operand_role::ew_operand]).ok());
  const auto r = board.run(built.value().view());
  REQUIRE(r.faults.empty());
  norm_run out{std::vector<float>(std::size_t{s.M} * s.D), r.tasks_completed};
  REQUIRE(unpack_tensor<float>(g, "y", board[operand_role::output], out.y).ok());
  return out;
}
}  // namespace

TEST_CASE("rms norm: the bands' weights are powers of two whose square roots telescope") {
  // D = 64: ρ = 1, S's column j = 4^(j-7) / 64, G's = 2^(j-7); the constant column √u_0 = 2^-7
  const norm::band_set d64 = norm::rms_bands(64), d4096 = norm::rms_bands(4096), d3 = norm::rms_bands(3);
  CHECK(d64.sum_weight(0) == std::ldexp(1.0, -20));
  CHECK(d64.sum_weight(16) == std::ldexp(1.0, 12));
  CHECK(d64.sum_weight(17) == 0);
  CHECK(d64.coefficient(3) == std::ldexp(1.0, -4));
  CHECK(d64.coefficient(17) == std::ldexp(1.0, -7));
  CHECK(d64.coefficient(18) == 0);
  // D = 4096: band 0's 2^-26 is below fp16's least subnormal: gone, the sum starts at band 1
  CHECK(d4096.sum_weight(0) == 0);
  CHECK(d4096.sum_weight(1) == std::ldexp(1.0, -24));
  CHECK(d4096.coefficient(17) == std::ldexp(1.0, -6));
  // D = 3: ρ = 3/4; band 16's 2^16 is beyond fp16
  CHECK(d3.sum_weight(16) == 0);
  CHECK(d3.coefficient(15) == doctest::Approx(std::sqrt(0.75 * std::ldexp(1.0, 16))));
  // The identity itself, with the exact band function: Σ c_j band(y_j) = 1/√s
  for (const double s : {4e-6, 1e-3, 0.37, 1.0, 5.0, 2000.0, 60000.0}) {
    double sum = 0;
    for (std::uint32_t j = 0; j < norm::band_columns; ++j) {
      const double y = s * 64 * d64.sum_weight(j);
      sum += d64.coefficient(j) * (1 / std::sqrt(std::clamp(y, 1.0, 4.0)) - 0.5);
    }
    CHECK(sum == doctest::Approx(1 / std::sqrt(s)).epsilon(1e-12));
  }
}

TEST_CASE("rms norm: six ops, five without epsilon, one task each at M = 4, D = 64") {
  const auto with = build(rms_norm({.M = 4, .D = 64}));
  REQUIRE(with.ok());
  CHECK(with.value().view().tasks.size() == 6);
  const auto without = build(rms_norm({.M = 4, .D = 64, .eps = 0}));
  REQUIRE(without.ok());
  CHECK(without.value().view().tasks.size() == 5);
  CHECK(with.value().geometry.find("norm.eps") != nullptr);
  CHECK(without.value().geometry.find("norm.eps") == nullptr);
  // at compile time
  constexpr auto fixed_norm = fixed<rms_norm({.M = 1, .D = 256})>();
  CHECK(fixed_norm.view().tasks.size() == 6);
}

TEST_CASE("rule norm-shape: the row's length and epsilon") {
  CHECK(check_rms_norm({.M = 1, .D = 16384}).ok());
  CHECK_BREAKS(check_rms_norm({.M = 1, .D = 40}), rules::norm_shape);
  CHECK_BREAKS(check_rms_norm({.M = 1, .D = 16385}), rules::norm_shape);
  CHECK_BREAKS(check_rms_norm({.M = 1, .D = 32, .eps = -1}), rules::norm_shape);
  CHECK_BREAKS(check_rms_norm({.M = 1, .D = 32, .eps = std::nanf("")}), rules::norm_shape);
  CHECK_BREAKS(check_rms_norm({.M = 0, .D = 8}), rules::shape_nonzero);
  large_graph_spec g;
  CHECK_BREAKS(add_rms_norm(g, "y", "x", "n", {.M = 1, .D = 16385}), rules::norm_shape);
  CHECK(g.count == 0);
  // the constants of another shape, and γ of another length
  const auto built = build(rms_norm({.M = 2, .D = 64}));
  REQUIRE(built.ok());
  std::vector<std::uint8_t> w(built.value().geometry.buffer_bytes[std::size_t(operand_role::weight)]),
      e(built.value().geometry.buffer_bytes[std::size_t(operand_role::ew_operand)]);
  const std::vector<float> gamma(63, 1.0f);
  CHECK_BREAKS(pack_rms_norm(built.value().geometry, "norm", {.M = 2, .D = 64}, gamma, w, e), rules::host_size);
}

TEST_CASE("rms norm on the model: rows from 1e-3 to 100 in rms, within 2^-9 of float64") {
  // Each row a different magnitude, so each takes another band; γ around 1.
  constexpr std::uint32_t M = 8, D = 96;
  std::mt19937 rng(36);
  std::uniform_real_distribution<float> d(-1, 1);
  const double rms[M] = {1e-3, 1e-2, 0.1, 0.5, 1, 3, 20, 100};
  std::vector<float> x(M * D), gamma(D);
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t k = 0; k < D; ++k) x[m * D + k] = half_to_float(float_to_half(static_cast<float>(d(rng) * rms[m] * 1.7)));
  for (float& v : gamma) v = half_to_float(float_to_half(1 + 0.5f * d(rng)));
  const rms_norm_spec s{.M = M, .D = D, .eps = 1e-5f};
  const norm_run r = run_on_model(s, x, gamma);
  CHECK(r.tasks == 6);
  double worst = 0;
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t n = 0; n < D; ++n) {
      const double want = rms_norm_value(x, gamma, D, m, n, s.eps);
      const double error = std::abs(r.y[m * D + n] - want) / (std::abs(want) + 1e-3);
      worst = std::max(worst, error);
    }
  MESSAGE("rms norm, M = 8, D = 96: worst relative error " << worst);
  CHECK(worst <= std::ldexp(1.0, -9));
  CHECK(worst > 0);
}
