#pragma once
// Causal attention over a key/value cache, grouped-query, as graph ops: M query tokens at
// positions p0 .. p0 + M - 1, H query heads and G key/value heads (H a multiple of G) of d
// elements, a cache of T positions per key/value head:
//
//   out[m][h] = Σ_t softmax_t(q[m][h] · K_g[t]) V_g[t]     g = h / (H / G), t ≤ p0 + m
//
//   scores = q · Kᵀ       [M·H][d] · [d][G·T]    CNA: q's bytes [M][H·d] read as M·H rows of
//                                                one head each; every query row against every
//                                                cached key of every group
//   e, band                                      softmax's terms (norm/softmax.hpp) of
//                                                scores + mask: e = exp(· - shift), the mask
//                                                hiding the other groups' columns and the
//                                                future (t > p0 + m); band: 1/Σe in bands
//   u      = e · V        [M·H][G·T] · [G·T][d]  CNA
//   inv    = band · G     [M·H][32] · [32][d]    CNA: 1/Σe in d columns
//   out    = u ⊙ inv                             SDP: [M·H][d] is [M][H·d], what W_o reads
//
// Normalizing after the values, on [M·H][d], spares softmax's last broadcast and product over
// [M·H][G·T]: a quarter of the attention's traffic.
//
// The caches' columns hold the groups' positions interleaved in runs of 8 (norm::cache_column:
// the row maximum needs a real element where it starts). q comes scaled by 1/√d (fold it into
// W_q). The caches are weights (the CNA reads a matmul's
// B only from the weight buffer, in tiles: regcmd-isa-reference "Operand tile layouts"): K as
// the scores' B [d][G·T], V as the values' B [G·T][d]. In the fp16 tile [N/16][K/32][16][32]
// a token's key is one 2·d-byte run of K's B (d = 32: row-major [G·T][32]), but its value is d
// elements 64 bytes apart in V's B: the DPU writes 16-byte atoms of consecutive channels, so no
// output layout lands a token's value in place. The host appends both (append_kv: 2·G·d
// fp16 stores a layer a token) between submits. A hidden element weighs exp(-16) = 1.1e-7
// (softmax's floor): the cache's unused positions must hold finite values (zeros:
// attention_constants).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <regcmd/core/error.hpp>
#include <regcmd/core/half.hpp>
#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/graph/spec.hpp>
#include <regcmd/programs/matmul/packing.hpp>
#include <regcmd/programs/norm/constants.hpp>
#include <regcmd/programs/norm/softmax.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

struct attention_spec {
  std::uint32_t M = 0;         // query tokens: 1 at decode, the prompt's at prefill
  std::uint32_t heads = 0;     // H
  std::uint32_t kv_heads = 0;  // G: H / G query heads share a key/value head
  std::uint32_t head_dim = 0;  // d
  std::uint32_t context = 0;   // T: slots the cache holds
  // Decode (M = 1) with the token's own key and value as tensors of the graph (the layer
  // computed them in the same submit): slot 0 of each group stands for them (its cache
  // entries stay zero), positions 0, 1, ... in slots 1, 2, ... (add_attention's self terms).
  bool self_slot = false;
  friend constexpr bool operator==(const attention_spec&, const attention_spec&) = default;

  constexpr std::uint32_t rows() const { return M * heads; }           // the scores' rows
  constexpr std::uint32_t keys() const { return kv_heads * context; }  // the scores' columns
  constexpr softmax_spec scores() const { return {.M = rows(), .N = keys(), .mask = true}; }
};

constexpr status check_attention(const attention_spec& s) {
  if (s.M == 0 || s.heads == 0 || s.kv_heads == 0 || s.head_dim == 0 || s.context == 0)
    return make_error(rules::shape_nonzero, "attention");
  if (s.heads % s.kv_heads != 0) return make_error(rules::attention_shape, "attention", "heads", s.heads);
  if (s.head_dim % 32 != 0) return make_error(rules::attention_shape, "attention", "head_dim", s.head_dim);
  const std::uint64_t keys = std::uint64_t{s.kv_heads} * s.context;
  if (s.context % 32 != 0 || keys > norm::row_max_N || softmax_row_length(static_cast<std::uint32_t>(keys)) != keys)
    return make_error(rules::attention_shape, "attention", "context", s.context);
  if (std::uint64_t{s.M} * s.heads > UINT32_MAX || (s.self_slot && s.M != 1))
    return make_error(rules::attention_shape, "attention", "M", s.M);
  return {};
}

namespace detail {
constexpr matmul_spec attention_matmul(std::uint32_t M, std::uint32_t K, std::uint32_t N) {
  return {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = M, .K = K, .N = N};
}
}  // namespace detail

// The ops of out = attention(q) appended to g (q and out by name, row-major [M][H·d]); the
// op's own tensors "<prefix>.scores", ".u", ".inv", the weights ".k_cache", ".v_cache",
// ".inv_w", and the softmax's as "<prefix>.sm.*" (its mask ".sm.mask": attention_mask). With
// s.self_slot, `key` and `value` name the token's own ([1][G·d] each) and 8 more ops add
// them: its score into slot 0's columns, its value weighed by slot 0's e (the weights
// ".expand", ".self_w", ".pick_w"). A request that breaks a rule adds nothing and marks g
// refused with it.
template <std::size_t MaxOps>
constexpr status add_attention(basic_graph_spec<MaxOps>& g, graph_name out, graph_name q, std::string_view prefix,
                               const attention_spec& s, graph_name key = {}, graph_name value = {}) {
  if (status c = refuse_unless(g, check_attention(s)); !c) return c;
  auto name = [&](std::string_view what) { return graph_name::prefixed(prefix, what); };
  const graph_name sm = graph_name::prefixed(prefix, "sm");  // the softmax's own tensors
  if (sm.empty() || s.self_slot == key.empty() || s.self_slot == value.empty())
    return make_error(rules::graph_operands, "attention", "prefix, key or value").with_note(prefix);
  const auto sm_name = [&](std::string_view what) { return graph_name::prefixed(sm.view(), what); };
  const auto flat = [&](ew_op op, std::uint32_t rows, std::uint32_t N) {
    return ew_spec{.op = op, .M = rows, .N = N, .layout = operand_layout::row_major};
  };
  const std::uint32_t H = s.heads, d = s.head_dim, width = H * d, kv = s.kv_heads * d;
  status c = add_op(g, graph_matmul(name(s.self_slot ? "cached" : "scores"), q, name("k_cache"),
                                    detail::attention_matmul(s.rows(), d, s.keys())));
  if (c && s.self_slot) {
    // the token's own score q_h · k_g(h) in each group's slot 0: k repeated per head, the
    // product with q, its rows summed into those columns
    c = add_op(g, graph_matmul(name("krep"), key, name("expand"), detail::attention_matmul(1, kv, width)));
    if (c) c = add_op(g, graph_ew(name("qk"), q, name("krep"), flat(ew_op::mul, 1, width)));
    if (c) c = add_op(g, graph_matmul(name("own"), name("qk"), name("self_w"), detail::attention_matmul(H, d, s.keys())));
    if (c) c = add_op(g, graph_ew(name("scores"), name("cached"), name("own"), flat(ew_op::add, H, s.keys())));
  }
  if (c) c = detail::add_softmax_terms(g, name("scores"), sm.view(), s.scores());
  if (c) c = add_op(g, graph_matmul(name(s.self_slot ? "uc" : "u"), sm_name("e"), name("v_cache"),
                                    detail::attention_matmul(s.rows(), s.keys(), d)));
  if (c && s.self_slot) {
    // its own value weighed by slot 0's e: e picked into d columns, v repeated per head
    c = add_op(g, graph_matmul(name("eown"), sm_name("e"), name("pick_w"), detail::attention_matmul(H, s.keys(), d)));
    if (c) c = add_op(g, graph_matmul(name("vrep"), value, name("expand"), detail::attention_matmul(1, kv, width)));
    if (c) c = add_op(g, graph_ew(name("vown"), name("eown"), name("vrep"), flat(ew_op::mul, H, d)));
    if (c) c = add_op(g, graph_ew(name("u"), name("uc"), name("vown"), flat(ew_op::add, H, d)));
  }
  if (c) c = add_op(g, graph_matmul(name("inv"), sm_name("band"), name("inv_w"),
                                    detail::attention_matmul(s.rows(), norm::band_columns, d)));
  if (c) c = add_op(g, graph_ew(out, name("u"), name("inv"), flat(ew_op::mul, s.rows(), d)));
  return c;
}

namespace norm {
// The cache's column of (group, position t): the groups' positions in runs of 8, interleaved
// (positions 0..7 of group 0, of group 1, ..., then 8..15 of each). The row maximum's first
// partial maximum (row_max.hpp) is over elements 0, 8, 16, ... of the first window, which then
// holds every group's position 0: a real element of every row, never a hidden one.
constexpr std::uint32_t cache_column(const attention_spec& s, std::uint32_t group, std::uint32_t t) {
  return t / 8 * 8 * s.kv_heads + group * 8 + t % 8;
}
// The cache slot of a position (attention_spec::self_slot keeps slot 0 for the token's own).
constexpr std::uint32_t cache_slot(const attention_spec& s, std::uint32_t position) { return position + (s.self_slot ? 1 : 0); }
// Whether query row (token m, head h) sees slot `slot` of `group`: its own group's, up to its
// own position (with a self slot: slot 0, then the positions before it).
constexpr bool attends(const attention_spec& s, std::uint32_t first_position, std::uint32_t m, std::uint32_t h,
                       std::uint32_t group, std::uint32_t slot) {
  return group == h / (s.heads / s.kv_heads) && slot <= first_position + m;
}
}  // namespace norm

// The mask of a run whose tokens sit at positions first .. first + M - 1: 0 where a query row
// sees a cached key (its group's, not after it), softmax's hidden value elsewhere.
inline result<norm_constant> attention_mask(std::string_view prefix, const attention_spec& s, std::uint32_t first) {
  if (status c = check_attention(s); !c) return c.err();
  if (std::uint64_t{norm::cache_slot(s, first)} + s.M > s.context)
    return make_error(rules::attention_shape, "attention", "position", first);
  std::vector<float> mask(std::size_t{s.rows()} * s.keys());
  for (std::uint32_t m = 0; m < s.M; ++m)
    for (std::uint32_t h = 0; h < s.heads; ++h)
      for (std::uint32_t group = 0; group < s.kv_heads; ++group)
        for (std::uint32_t t = 0; t < s.context; ++t)
          mask[(std::size_t{m} * s.heads + h) * s.keys() + norm::cache_column(s, group, t)] =
              norm::attends(s, first, m, h, group, t) ? 0.0f : norm::softmax_hidden;
  return norm_constant{graph_name::prefixed(graph_name::prefixed(prefix, "sm").view(), "mask"), operand_role::ew_operand,
                       std::move(mask)};
}

// The constants packed once: the softmax's terms', 1/Σe's broadcast, and both caches empty (zeros: a hidden
// position's weight reaches its value).
inline result<std::vector<norm_constant>> attention_constants(std::string_view prefix, const attention_spec& s) {
  if (status c = check_attention(s); !c) return c.err();
  std::vector<norm_constant> out = detail::softmax_term_constants(graph_name::prefixed(prefix, "sm").view(), s.scores());
  out.push_back(detail::reciprocal_broadcast(graph_name::prefixed(prefix, "inv_w"), s.head_dim));
  const std::size_t cache = std::size_t{s.keys()} * s.head_dim;
  out.push_back({graph_name::prefixed(prefix, "k_cache"), operand_role::weight, std::vector<float>(cache)});
  out.push_back({graph_name::prefixed(prefix, "v_cache"), operand_role::weight, std::vector<float>(cache)});
  if (!s.self_slot) return out;
  // E [G·d][H·d]: head h's d columns copy its group's; slot 0's columns (rows) of every group
  const std::uint32_t d = s.head_dim, width = s.heads * d, kv = s.kv_heads * d, N = s.keys();
  std::vector<float> E(std::size_t{kv} * width, 0.0f), own(std::size_t{d} * N, 0.0f), pick(std::size_t{N} * d, 0.0f);
  for (std::uint32_t h = 0; h < s.heads; ++h)
    for (std::uint32_t i = 0; i < d; ++i) E[std::size_t{h / (s.heads / s.kv_heads) * d + i} * width + h * d + i] = 1;
  for (std::uint32_t group = 0; group < s.kv_heads; ++group)
    for (std::uint32_t i = 0; i < d; ++i) {
      own[std::size_t{i} * N + norm::cache_column(s, group, 0)] = 1;
      pick[std::size_t{norm::cache_column(s, group, 0)} * d + i] = 1;
    }
  out.push_back({graph_name::prefixed(prefix, "expand"), operand_role::weight, std::move(E)});
  out.push_back({graph_name::prefixed(prefix, "self_w"), operand_role::weight, std::move(own)});
  out.push_back({graph_name::prefixed(prefix, "pick_w"), operand_role::weight, std::move(pick)});
  return out;
}

// One token's key and value ([G][d] each, row-major) into the caches of the graph's attention
// `prefix` at `position`, in place in its weight buffer: 2·G·d fp16 stores.
inline status append_kv(const graph_view& g, std::span<std::uint8_t> weight_buffer, std::string_view prefix,
                        const attention_spec& s, std::uint32_t position, std::span<const float> key,
                        std::span<const float> value) {
  if (status c = check_attention(s); !c) return c;
  if (norm::cache_slot(s, position) >= s.context) return make_error(rules::attention_shape, "attention", "position", position);
  const std::size_t row = std::size_t{s.kv_heads} * s.head_dim;
  if (key.size() != row || value.size() != row) return make_error(rules::host_size, "append_kv", "key", key.size());
  for (const bool is_key : {true, false}) {
    const graph_name cache = graph_name::prefixed(prefix, is_key ? "k_cache" : "v_cache");
    const graph_tensor* x = g.find(cache.view());
    if (!x || x->kind != tensor_kind::weight) return make_error(rules::unknown_tensor, "append_kv", "cache").with_note(cache.view());
    if (std::size_t{x->offset} + x->bytes > weight_buffer.size())
      return make_error(rules::buffer_size, "append_kv", "", weight_buffer.size());
    const plan_shape& p = g.steps[x->packer_op].matmul;
    for (std::uint32_t group = 0; group < s.kv_heads; ++group)
      for (std::uint32_t i = 0; i < s.head_dim; ++i) {
        const std::uint32_t column = norm::cache_column(s, group, norm::cache_slot(s, position));
        // K's B is [d][G·T]: (i, column); V's B is [G·T][d]: (column, i)
        const std::size_t at = x->offset + (is_key ? matmul::weight_offset(p, i, column) : matmul::weight_offset(p, column, i));
        const float v = (is_key ? key : value)[std::size_t{group} * s.head_dim + i];
        detail::store_le(weight_buffer, at, float_to_half(v), 2);
      }
  }
  return {};
}

// out = attention(q) alone: inputs q (row-major [M][H·d], scaled by 1/√d) and, with a self
// slot, the token's "key" and "value"; the caches and the constants (attention_constants with
// prefix "attn", appended by append_kv), the mask (attention_mask); output out.
constexpr large_graph_spec attention(const attention_spec& s) {
  large_graph_spec g;
  (void)add_attention(g, "out", "q", "attn", s, s.self_slot ? graph_name("key") : graph_name{},
                      s.self_slot ? graph_name("value") : graph_name{});
  return g;
}

}  // namespace regcmd
