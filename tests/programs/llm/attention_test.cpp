// Attention: its rule, its mask, the caches appended in place, and the program on the model
// against the definition in double (grouped heads, causal; prefill and decode).
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/llm/attention.hpp>

#include "model_board.hpp"

using namespace regcmd;

namespace {
double fp16(double v) { return half_to_float(float_to_half(static_cast<float>(v))); }
}  // namespace

TEST_CASE("rule attention-shape: grouped heads, heads and cache in 32s, a row softmax takes") {
  const attention_spec tiny{.M = 1, .heads = 8, .kv_heads = 2, .head_dim = 32, .context = 256};
  CHECK(check_attention(tiny).ok());
  CHECK_BREAKS(check_attention({.M = 1, .heads = 6, .kv_heads = 4, .head_dim = 32, .context = 64}), rules::attention_shape);
  CHECK_BREAKS(check_attention({.M = 1, .heads = 2, .kv_heads = 2, .head_dim = 16, .context = 64}), rules::attention_shape);
  CHECK_BREAKS(check_attention({.M = 1, .heads = 2, .kv_heads = 2, .head_dim = 32, .context = 48}), rules::attention_shape);
  // 17 pooling windows of a 544-element row fit no two passes of 16 (softmax-shape)
  CHECK_BREAKS(check_attention({.M = 1, .heads = 2, .kv_heads = 1, .head_dim = 32, .context = 544}), rules::attention_shape);
  // 2 x 8192 keys: past the longest row (8192)
  CHECK_BREAKS(check_attention({.M = 1, .heads = 2, .kv_heads = 2, .head_dim = 32, .context = 8192}), rules::attention_shape);
  CHECK_BREAKS(check_attention({.M = 0, .heads = 2, .kv_heads = 2, .head_dim = 32, .context = 64}), rules::shape_nonzero);
  CHECK_BREAKS(build(attention({.M = 1, .heads = 6, .kv_heads = 4, .head_dim = 32, .context = 64})), rules::attention_shape);
  // scores, the masked softmax's terms of 2 x 256 = 512 keys (13 tasks), the values, 1/Σe
  // broadcast, the product; a self slot adds 8
  CHECK(build(attention(tiny)).value().view().tasks.size() == 17);
  attention_spec self = tiny;
  self.self_slot = true;
  CHECK(build(attention(self)).value().view().tasks.size() == 25);
}

TEST_CASE("attention's mask: each query row sees its own group's keys up to its position") {
  const attention_spec s{.M = 2, .heads = 4, .kv_heads = 2, .head_dim = 32, .context = 32};
  const auto mask = attention_mask("attn", s, 3);
  REQUIRE(mask.ok());
  CHECK(mask.value().name.view() == "attn.sm.mask");
  CHECK(mask.value().role == operand_role::ew_operand);
  const std::vector<float>& v = mask.value().values;
  REQUIRE(v.size() == 8 * 64);
  // row (token m, head h) = m * 4 + h; heads 0, 1 read group 0, heads 2, 3 group 1; columns
  // in runs of 8 positions: 0..7 group 0's positions 0..7, 8..15 group 1's, 16..23 group 0's
  // 8..15, ...
  const auto row = [&](std::uint32_t m, std::uint32_t h) { return std::span<const float>(v).subspan((m * 4 + h) * 64, 64); };
  for (std::uint32_t c = 0; c < 64; ++c) {
    CHECK(row(0, 0)[c] == (c <= 3 ? 0.0f : -32768.0f));  // positions 0..3 of group 0
    CHECK(row(0, 1)[c] == (c <= 3 ? 0.0f : -32768.0f));
    CHECK(row(1, 2)[c] == (c >= 8 && c <= 12 ? 0.0f : -32768.0f));  // positions 0..4 of group 1
    CHECK(row(1, 3)[c] == (c >= 8 && c <= 12 ? 0.0f : -32768.0f));
  }
  CHECK(norm::cache_column(s, 1, 9) == 25);
  CHECK(norm::cache_column(s, 0, 31) == 55);
  CHECK_BREAKS(attention_mask("attn", s, 31), rules::attention_shape);  // positions 31, 32: past the cache

  // a self slot: slot 0 is the token's own, position p in slot p + 1; at position 3 a head of
  // group 1 sees slots 0..3 of group 1 (columns 8..11), and position 30 is the last that fits
  attention_spec self = s;
  self.M = 1;
  self.self_slot = true;
  const auto self_mask = attention_mask("attn", self, 3);
  REQUIRE(self_mask.ok());
  for (std::uint32_t c = 0; c < 64; ++c) CHECK(self_mask.value().values[2 * 64 + c] == (c >= 8 && c <= 11 ? 0.0f : -32768.0f));
  CHECK(attention_mask("attn", self, 30).ok());
  CHECK_BREAKS(attention_mask("attn", self, 31), rules::attention_shape);
  CHECK(norm::cache_slot(self, 5) == 6);
  self.M = 2;
  CHECK_BREAKS(check_attention(self), rules::attention_shape);  // a self slot is decode's alone
}

TEST_CASE("append_kv stores a token's key and value where the weight packer puts them") {
  const attention_spec s{.M = 1, .heads = 4, .kv_heads = 2, .head_dim = 32, .context = 64};
  const auto built = build(attention(s));
  REQUIRE(built.ok());
  const large_graph_geometry& g = built.value().geometry;
  const std::size_t weight_bytes = g.buffer_bytes[static_cast<std::size_t>(operand_role::weight)];
  std::vector<std::uint8_t> packed(weight_bytes, 0), appended(weight_bytes, 0);
  // token 37: key [2][32] and value [2][32] of distinct values; the caches as the matmuls' B:
  // K's [d][G·T], V's [G·T][d], position 37 of group g at column (row) 4·16 + 8g + 5
  std::vector<float> key(64), value(64), K(32 * 128, 0.0f), V(128 * 32, 0.0f);
  for (std::uint32_t group = 0; group < 2; ++group)
    for (std::uint32_t i = 0; i < 32; ++i) {
      key[group * 32 + i] = static_cast<float>(group * 32 + i + 1);
      value[group * 32 + i] = -static_cast<float>(group * 32 + i + 1) / 4;
      K[i * 128 + 69 + group * 8] = key[group * 32 + i];
      V[(69 + group * 8) * 32 + i] = value[group * 32 + i];
    }
  REQUIRE(pack_tensor<float>(g, "attn.k_cache", K, packed).ok());
  REQUIRE(pack_tensor<float>(g, "attn.v_cache", V, packed).ok());
  REQUIRE(append_kv(g, appended, "attn", s, 37, key, value).ok());
  CHECK(packed == appended);
  CHECK_BREAKS(append_kv(g, appended, "attn", s, 64, key, value), rules::attention_shape);
  CHECK_BREAKS(append_kv(g, appended, "attn", s, 3, std::span<const float>(key).first(32), value), rules::host_size);
  CHECK_BREAKS(append_kv(g, appended, "other", s, 3, key, value), rules::unknown_tensor);
  CHECK_BREAKS(append_kv(g, std::span<std::uint8_t>(appended).first(100), "attn", s, 37, key, value), rules::buffer_size);
}

namespace {
struct attention_case {
  attention_spec s;
  std::uint32_t first;  // the tokens' first position
};

// The program on the model, the cache filled up to the last query's position and past it
// (values there large: the mask must hide them); the worst |out - out_float64|.
double attention_error(const attention_case& c, std::uint32_t seed) {
  const attention_spec& s = c.s;
  const std::uint32_t d = s.head_dim, H = s.heads, G = s.kv_heads, group_size = H / G;
  const auto built = build(attention(s));
  REQUIRE(built.ok());
  const large_graph_geometry& g = built.value().geometry;
  testing::model_board board;
  board.allocate_each(g.buffer_bytes, 0x5a);
  const auto constants = attention_constants("attn", s);
  REQUIRE(constants.ok());
  REQUIRE(pack_constants(g, constants.value(), board[operand_role::weight], board[operand_role::ew_operand]).ok());
  const auto mask = attention_mask("attn", s, c.first);
  REQUIRE(mask.ok());
  REQUIRE(pack_constants(g, {mask.value()}, {}, board[operand_role::ew_operand]).ok());

  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::uint32_t filled = std::min(s.context, c.first + s.M + 4);  // 4 future positions
  std::vector<std::vector<double>> K(G * s.context, std::vector<double>(d, 0.0)), V = K;
  for (std::uint32_t t = 0; t < filled; ++t) {
    std::vector<float> key(G * d), value(G * d);
    for (std::uint32_t group = 0; group < G; ++group)
      for (std::uint32_t i = 0; i < d; ++i) {
        const bool future = t >= c.first + s.M;
        K[group * s.context + t][i] = fp16(u(rng) * (future ? 8 : 1));
        V[group * s.context + t][i] = fp16(u(rng) * (future ? 100 : 1));
        key[group * d + i] = static_cast<float>(K[group * s.context + t][i]);
        value[group * d + i] = static_cast<float>(V[group * s.context + t][i]);
      }
    if (s.self_slot && t == c.first) {  // the token's own: tensors of the graph, not in the cache
      REQUIRE(pack_tensor<float>(g, "key", key, board[g.find("key")->role]).ok());
      REQUIRE(pack_tensor<float>(g, "value", value, board[g.find("value")->role]).ok());
    } else {
      REQUIRE(append_kv(g, board[operand_role::weight], "attn", s, t, key, value).ok());
    }
  }
  // q already scaled by 1/√d, as W_q makes it
  std::vector<float> q(std::size_t{s.M} * H * d);
  for (float& v : q) v = static_cast<float>(fp16(u(rng) * 2 / std::sqrt(double(d))));
  REQUIRE(pack_tensor<float>(g, "q", q, board[operand_role::feature]).ok());
  const auto r = board.run(built.value().view());
  REQUIRE(r.faults.empty());
  std::vector<float> out(q.size());
  REQUIRE(unpack_tensor<float>(g, "out", board[operand_role::output], out).ok());

  double worst = 0;
  for (std::uint32_t m = 0; m < s.M; ++m)
    for (std::uint32_t h = 0; h < H; ++h) {
      // the definition: row (m, h) over its group's keys at positions 0 .. first + m
      const std::uint32_t group = h / group_size, seen = c.first + m + 1;
      std::vector<double> score(seen);
      double top = -1e300, total = 0;
      for (std::uint32_t t = 0; t < seen; ++t) {
        score[t] = 0;
        for (std::uint32_t i = 0; i < d; ++i) score[t] += q[(m * H + h) * d + i] * K[group * s.context + t][i];
        top = std::max(top, score[t]);
      }
      for (double& v : score) total += v = std::exp(v - top);
      for (std::uint32_t i = 0; i < d; ++i) {
        double want = 0;
        for (std::uint32_t t = 0; t < seen; ++t) want += score[t] / total * V[group * s.context + t][i];
        worst = std::max(worst, std::abs(out[(m * H + h) * d + i] - want));
      }
    }
  return worst;
}
}  // namespace

TEST_CASE("attention on the model: grouped heads, causal, against float64") {
  const attention_case cases[] = {
      // prefill: 3 tokens from position 5, 4 heads over 2 groups
      {{.M = 3, .heads = 4, .kv_heads = 2, .head_dim = 32, .context = 64}, 5},
      // decode: 1 token at position 40, 8 heads over 2 groups (the tiny LLaMA's heads)
      {{.M = 1, .heads = 8, .kv_heads = 2, .head_dim = 32, .context = 64}, 40},
      // a whole prompt of 16 from position 0, one group: its first row attends to itself alone
      {{.M = 16, .heads = 2, .kv_heads = 1, .head_dim = 64, .context = 32}, 0},
      // decode with the token's own key and value as graph tensors (slot 0), at 40 and at 0
      {{.M = 1, .heads = 8, .kv_heads = 2, .head_dim = 32, .context = 64, .self_slot = true}, 40},
      {{.M = 1, .heads = 4, .kv_heads = 2, .head_dim = 32, .context = 32, .self_slot = true}, 0},
  };
  std::uint32_t seed = 1;
  for (const attention_case& c : cases) {
    const double worst = attention_error(c, seed++);
    MESSAGE("attention M " << c.s.M << " H " << c.s.heads << " G " << c.s.kv_heads << " d " << c.s.head_dim << " T "
                           << c.s.context << (c.s.self_slot ? std::string(" (self slot)") : std::string()) << " from " << c.first
                           << ": worst absolute error " << worst);
    // softmax's 4e-4 per weight over up to 45 values of |v| ≤ 1 in a random walk, the scores'
    // fp16 rounding (2^-11 of |q·k| ≤ 2), out's own (2^-11)
    CHECK(worst <= 4e-3);
    CHECK(worst > 0);
  }
}
