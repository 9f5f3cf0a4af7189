// RoPE: its rule and the program on the model against LLaMA's rotate-half in double.
#include <regcmd/testing/doctest.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/norm/rope.hpp>

#include "model_board.hpp"

using namespace regcmd;

TEST_CASE("rule rope-shape: even heads, rows a multiple of 32, up to 4096 unless heads take R alone") {
  CHECK(check_rope({.M = 1, .heads = 8, .head_dim = 32}).ok());
  CHECK_BREAKS(check_rope({.M = 1, .heads = 2, .head_dim = 31}), rules::rope_shape);
  CHECK_BREAKS(check_rope({.M = 1, .heads = 3, .head_dim = 10}), rules::rope_shape);
  CHECK_BREAKS(check_rope({.M = 1, .heads = 256, .head_dim = 24}), rules::rope_shape);  // R of 6144²
  CHECK(check_rope({.M = 1, .heads = 64, .head_dim = 128}).ok());                        // R of 128²
  CHECK_BREAKS(check_rope({.M = 1, .heads = 2, .head_dim = 16, .base = 1.0f}), rules::rope_shape);
  CHECK_BREAKS(check_rope({.M = 0, .heads = 2, .head_dim = 16}), rules::shape_nonzero);
  CHECK_BREAKS(build(rope({.M = 1, .heads = 2, .head_dim = 31})), rules::rope_shape);
  CHECK(build(rope({.M = 2, .heads = 4, .head_dim = 16})).value().view().tasks.size() == 4);
}

namespace {
// The program on the model for tokens from position `first`: the worst |y - y_float64|.
double rope_error(const rope_spec& s, std::uint32_t first) {
  const std::uint32_t d = s.head_dim, W = s.heads * d;
  const auto built = build(rope(s));
  REQUIRE(built.ok());
  const graph_geometry& g = built.value().geometry;
  testing::model_board board;
  board.allocate_each(g.buffer_bytes, 0x5a);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-2, 2);
  std::vector<float> x(s.M * W);
  for (float& v : x) v = half_to_float(float_to_half(u(rng)));
  REQUIRE(pack_tensor<float>(g, "x", x, board[operand_role::feature]).ok());
  const auto constants = rope_constants("rope", s, first);
  REQUIRE(constants.ok());
  REQUIRE(pack_constants(g, constants.value(), board[operand_role::weight], board[operand_role::ew_operand]).ok());
  const auto r = board.run(built.value().view());
  REQUIRE(r.faults.empty());
  std::vector<float> y(s.M * W);
  REQUIRE(unpack_tensor<float>(g, "y", board[operand_role::output], y).ok());
  double worst = 0;
  for (std::uint32_t m = 0; m < s.M; ++m)
    for (std::uint32_t h = 0; h < s.heads; ++h)
      for (std::uint32_t i = 0; i < d; ++i) {
        // x_h[i] cos(p θ_j) + rotate_half(x_h)[i] sin(p θ_j), θ_j = 10000^(-2j/d), j = i mod d/2
        const std::uint32_t j = i % (d / 2);
        const double angle = (first + m) * std::pow(10000.0, -2.0 * j / d);
        const double xi = x[m * W + h * d + i];
        const double rotated = i < d / 2 ? -double(x[m * W + h * d + i + d / 2]) : double(x[m * W + h * d + i - d / 2]);
        const double want = xi * std::cos(angle) + rotated * std::sin(angle);
        worst = std::max(worst, std::abs(y[m * W + h * d + i] - want));
      }
  return worst;
}
}  // namespace

TEST_CASE("rope on the model: tokens from position 37, heads of 16 and of 32, within fp16's roundings") {
  // heads of 16: R block-diagonal over the row [64][64]; heads of 32: one head's R [32][32]
  // over the rows read as one head each
  CHECK(norm::rope_side({.M = 3, .heads = 4, .head_dim = 16}) == 64);
  CHECK(norm::rope_side({.M = 3, .heads = 2, .head_dim = 32}) == 32);
  for (const rope_spec& s : {rope_spec{.M = 3, .heads = 4, .head_dim = 16}, rope_spec{.M = 3, .heads = 2, .head_dim = 32}}) {
    const double worst = rope_error(s, 37);
    MESSAGE("rope, 3 tokens x " << s.heads << " heads of " << s.head_dim << ": worst absolute error " << worst);
    // cos and sin rounded to fp16 (2^-12), two products and the sum rounded (2^-11 of ≤ 2.8)
    CHECK(worst <= 4e-3);
    CHECK(worst > 0);
  }
}
