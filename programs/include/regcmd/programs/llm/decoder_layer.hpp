#pragma once
// LLaMA's decoder layer as one graph, one submit, for M tokens (1 at decode, a prompt at
// prefill):
//
//   a      = attention(q)                         llm/attention.hpp, over the layer's caches
//   h      = x + a · W_o
//   hn     = RMSNorm(h) · γ_ffn                   norm/rms_norm.hpp
//   x_out  = h + (SiLU(hn · W_gate) ⊙ (hn · W_up)) · W_down
//
// and, in the same submit, the tail: the next layer's inputs
//
//   xn     = RMSNorm(x_out) · γ_attn'             (the next layer's weights)
//   q_next = RoPE(xn · W_q' / √d),  k_next = RoPE(xn · W_k'),  v_next = xn · W_v'
//
// or, after the last layer, the logits: logits = RMSNorm(x_out) · γ_final · W_lm.
//
// Why the tail: the caches are matmul weights, which the host appends to between submits
// (attention.hpp: no DPU output layout writes a token's value in place). A layer's attention
// needs its own token's key and value in the cache, so the submit before it computes them;
// the host appends k_next and v_next, and the next layer runs on q_next. A token is one
// submit per layer, and one more (llama_layer_inputs) for the first layer's q, k, v.
//
// Tensors of the layer graph: inputs x, q; weights "wo", "w_gate", "w_up", "w_down" (W_gate,
// W_up with their columns and W_down with its rows padded to a multiple of 32 with zeros: the
// feed-forward's width is the down projection's K; SiLU(0)·0 = 0 keeps the padding 0), the
// tail's "wq", "wk", "wv" or "lm_head", and the constants of the ops' presets (prefixes "attn",
// "fn", "an" or "fin", "rq", "rk"); outputs q_next, k_next, v_next or logits, and x_out read
// back (the residual stream). The host's packing: llama_layer_constants (once per layer) and
// llama_run_constants (per run: the mask and RoPE's angles).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include <regcmd/core/error.hpp>
#include <regcmd/programs/graph/spec.hpp>
#include <regcmd/programs/llm/attention.hpp>
#include <regcmd/programs/norm/constants.hpp>
#include <regcmd/programs/norm/rms_norm.hpp>
#include <regcmd/programs/norm/rope.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

struct llama_layer_spec {
  std::uint32_t M = 0;         // tokens a run
  std::uint32_t dim = 0;       // D, the residual stream's width
  std::uint32_t heads = 0;     // H query heads of D / H
  std::uint32_t kv_heads = 0;  // G key/value heads
  std::uint32_t ffn = 0;       // F, the feed-forward's width
  std::uint32_t context = 0;   // T, positions each cache holds
  std::uint32_t vocab = 0;     // the LM head's width (the last layer's tail)
  float eps = 1e-5f;
  float rope_base = 10000.0f;
  friend constexpr bool operator==(const llama_layer_spec&, const llama_layer_spec&) = default;

  constexpr std::uint32_t head_dim() const { return heads ? dim / heads : 0; }
  constexpr std::uint32_t ffn_padded() const { return (ffn + 31) / 32 * 32; }
  constexpr attention_spec attention() const {
    return {.M = M, .heads = heads, .kv_heads = kv_heads, .head_dim = head_dim(), .context = context};
  }
  constexpr rms_norm_spec norm() const { return {.M = M, .D = dim, .eps = eps}; }
  constexpr rope_spec rope(std::uint32_t rotated_heads) const {
    return {.M = M, .heads = rotated_heads, .head_dim = head_dim(), .base = rope_base};
  }
};

// What follows a layer in its submit: the next layer's q, k, v, or the logits.
enum class layer_tail : std::uint8_t { next_layer, logits };

constexpr status check_llama_layer(const llama_layer_spec& s) {
  if (s.M == 0 || s.dim == 0 || s.heads == 0 || s.ffn == 0 || s.vocab == 0) return make_error(rules::shape_nonzero, "llama_layer");
  if (s.dim % s.heads != 0) return make_error(rules::llama_shape, "llama_layer", "dim", s.dim);
  if (s.ffn > UINT32_MAX - 32) return make_error(rules::llama_shape, "llama_layer", "ffn", s.ffn);
  if (status c = check_attention(s.attention()); !c) return c;
  if (status c = check_rms_norm(s.norm()); !c) return c;
  if (status c = check_rope(s.rope(s.heads)); !c) return c;
  return check_rope(s.rope(s.kv_heads));
}

namespace detail {
constexpr matmul_spec llama_matmul(std::uint32_t M, std::uint32_t K, std::uint32_t N) {
  return {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = M, .K = K, .N = N};
}
constexpr ew_spec llama_add(std::uint32_t M, std::uint32_t N) {
  return {.op = ew_op::add, .M = M, .N = N, .layout = operand_layout::row_major};
}

// xn = RMSNorm(x) (prefix "an"), then q_next, k_next, v_next.
template <std::size_t MaxOps>
constexpr status add_layer_inputs(basic_graph_spec<MaxOps>& g, graph_name x, const llama_layer_spec& s) {
  const std::uint32_t D = s.dim, d = s.head_dim();
  status c = add_rms_norm(g, "xn", x, "an", s.norm());
  if (c) c = add_op(g, graph_matmul("qp", "xn", "wq", llama_matmul(s.M, D, s.heads * d)));
  if (c) c = add_op(g, graph_matmul("kp", "xn", "wk", llama_matmul(s.M, D, s.kv_heads * d)));
  if (c) c = add_op(g, graph_matmul("v_next", "xn", "wv", llama_matmul(s.M, D, s.kv_heads * d)));
  if (c) c = add_rope(g, "q_next", "qp", "rq", s.rope(s.heads));
  if (c) c = add_rope(g, "k_next", "kp", "rk", s.rope(s.kv_heads));
  return c;
}
}  // namespace detail

// The first layer's q, k, v of x (inputs x and the constants of llama_inputs_constants):
// one submit a run before the first layer's.
constexpr large_graph_spec llama_layer_inputs(const llama_layer_spec& s) {
  large_graph_spec g;
  if (!refuse_unless(g, check_llama_layer(s))) return g;
  if (status c = detail::add_layer_inputs(g, "x", s); !c && !g.refused) g.refused = c.err().violated;
  return g;
}

// One decoder layer and its tail, one submit (the header's comment).
constexpr large_graph_spec llama_decoder_layer(const llama_layer_spec& s, layer_tail tail) {
  large_graph_spec g;
  if (!refuse_unless(g, check_llama_layer(s))) return g;
  const std::uint32_t D = s.dim, F = s.ffn_padded(), M = s.M, width = s.heads * s.head_dim();
  status c = add_attention(g, "a", "q", "attn", s.attention());
  if (c) c = add_op(g, graph_matmul("o", "a", "wo", detail::llama_matmul(M, width, D)));
  if (c) c = add_op(g, graph_ew("h", "x", "o", detail::llama_add(M, D)));
  if (c) c = add_rms_norm(g, "hn", "h", "fn", s.norm());
  if (c) c = add_op(g, graph_matmul("gate", "hn", "w_gate", detail::llama_matmul(M, D, F)));
  if (c) c = add_op(g, graph_matmul("up", "hn", "w_up", detail::llama_matmul(M, D, F)));
  if (c) c = add_op(g, graph_act("act", "gate", {.fn = activation::silu, .M = M, .N = F}));
  if (c) c = add_op(g, graph_ew("mul", "act", "up", {.op = ew_op::mul, .M = M, .N = F, .layout = operand_layout::row_major}));
  if (c) c = add_op(g, graph_matmul("f", "mul", "w_down", detail::llama_matmul(M, F, D)));
  if (c) c = add_op(g, graph_ew("x_out", "h", "f", detail::llama_add(M, D)));
  if (c && tail == layer_tail::next_layer) c = detail::add_layer_inputs(g, "x_out", s);
  if (c && tail == layer_tail::logits) {
    c = add_rms_norm(g, "xn", "x_out", "fin", s.norm());
    if (c) c = add_op(g, graph_matmul("logits", "xn", "lm_head", detail::llama_matmul(M, D, s.vocab)));
  }
  g.read_back[0] = "x_out";
  if (!c && !g.refused) g.refused = c.err().violated;
  return g;
}

// A layer's weights as the host holds them, each row-major [in][out] (a matmul's B).
struct llama_layer_weights {
  std::vector<float> attention_norm;  // γ [D]
  std::vector<float> wq, wk, wv;      // [D][H·d], [D][G·d], [D][G·d]
  std::vector<float> wo;              // [H·d][D]
  std::vector<float> ffn_norm;        // γ [D]
  std::vector<float> w_gate, w_up;    // [D][F]
  std::vector<float> w_down;          // [F][D]
};

namespace detail {
// B [rows][cols] widened to [rows][padded_cols] or heightened to [padded_rows][cols] with zeros.
inline std::vector<float> zero_padded(std::span<const float> b, std::uint32_t rows, std::uint32_t cols,
                                      std::uint32_t padded_rows, std::uint32_t padded_cols) {
  std::vector<float> out(std::size_t{padded_rows} * padded_cols, 0.0f);
  for (std::uint32_t r = 0; r < rows; ++r)
    std::copy_n(b.begin() + std::ptrdiff_t(std::size_t{r} * cols), cols, out.begin() + std::ptrdiff_t(std::size_t{r} * padded_cols));
  return out;
}
inline status check_size(std::span<const float> v, std::size_t n, const char* what) {
  return v.size() == n ? status{} : make_error(rules::host_size, "llama", what, v.size());
}

// The tail's (or the inputs graph's) constants: the attention norm's, W_q / √d, W_k, W_v, R.
inline status add_inputs_constants(std::vector<norm_constant>& out, const llama_layer_spec& s, const llama_layer_weights& w) {
  const std::uint32_t D = s.dim, d = s.head_dim(), Hd = s.heads * d, Gd = s.kv_heads * d;
  for (const auto& [v, n, what] : {std::tuple{&w.wq, std::size_t{D} * Hd, "wq"}, std::tuple{&w.wk, std::size_t{D} * Gd, "wk"},
                                   std::tuple{&w.wv, std::size_t{D} * Gd, "wv"}})
    if (status c = check_size(*v, n, what); !c) return c;
  auto norm = rms_norm_constants("an", s.norm(), w.attention_norm);
  if (!norm) return norm.err();
  out.insert(out.end(), norm.value().begin(), norm.value().end());
  std::vector<float> wq = w.wq;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  for (float& v : wq) v *= scale;
  out.push_back({"wq", operand_role::weight, std::move(wq)});
  out.push_back({"wk", operand_role::weight, w.wk});
  out.push_back({"wv", operand_role::weight, w.wv});
  for (const auto& [prefix, heads] : {std::pair{"rq", s.heads}, std::pair{"rk", s.kv_heads}}) {
    auto rope = rope_constants(prefix, s.rope(heads), 0);
    if (!rope) return rope.err();
    for (norm_constant& k : rope.value())
      if (k.role == operand_role::weight) out.push_back(std::move(k));  // R; the angles are a run's
  }
  return {};
}
}  // namespace detail

// The constants of llama_layer_inputs (the first layer's attention norm and projections).
inline result<std::vector<norm_constant>> llama_inputs_constants(const llama_layer_spec& s, const llama_layer_weights& first) {
  if (status c = check_llama_layer(s); !c) return c.err();
  std::vector<norm_constant> out;
  if (status c = detail::add_inputs_constants(out, s, first); !c) return c.err();
  return out;
}

// The constants of llama_decoder_layer(s, tail) for `layer`, packed once: its attention's
// (empty caches), W_o, its feed-forward's, and the tail's: the next layer's attention norm and
// projections, or the final norm's γ [D] and the LM head [D][vocab].
inline result<std::vector<norm_constant>> llama_layer_constants(const llama_layer_spec& s, const llama_layer_weights& layer,
                                                               const llama_layer_weights* next,
                                                               std::span<const float> final_norm = {},
                                                               std::span<const float> lm_head = {}) {
  if (status c = check_llama_layer(s); !c) return c.err();
  const std::uint32_t D = s.dim, Hd = s.heads * s.head_dim(), F = s.ffn, Fp = s.ffn_padded();
  for (const auto& [v, n, what] : {std::tuple{&layer.wo, std::size_t{Hd} * D, "wo"}, std::tuple{&layer.w_gate, std::size_t{D} * F, "w_gate"},
                                   std::tuple{&layer.w_up, std::size_t{D} * F, "w_up"}, std::tuple{&layer.w_down, std::size_t{F} * D, "w_down"}})
    if (status c = detail::check_size(*v, n, what); !c) return c.err();
  auto out = attention_constants("attn", s.attention());
  if (!out) return out.err();
  std::vector<norm_constant>& k = out.value();
  k.push_back({"wo", operand_role::weight, layer.wo});
  auto ffn_norm = rms_norm_constants("fn", s.norm(), layer.ffn_norm);
  if (!ffn_norm) return ffn_norm.err();
  k.insert(k.end(), ffn_norm.value().begin(), ffn_norm.value().end());
  k.push_back({"w_gate", operand_role::weight, detail::zero_padded(layer.w_gate, D, F, D, Fp)});
  k.push_back({"w_up", operand_role::weight, detail::zero_padded(layer.w_up, D, F, D, Fp)});
  k.push_back({"w_down", operand_role::weight, detail::zero_padded(layer.w_down, F, D, Fp, D)});
  if (next) {
    if (status c = detail::add_inputs_constants(k, s, *next); !c) return c.err();
    return out;
  }
  if (status c = detail::check_size(lm_head, std::size_t{D} * s.vocab, "lm_head"); !c) return c.err();
  auto fin = rms_norm_constants("fin", s.norm(), final_norm);
  if (!fin) return fin.err();
  k.insert(k.end(), fin.value().begin(), fin.value().end());
  k.push_back({"lm_head", operand_role::weight, std::vector<float>(lm_head.begin(), lm_head.end())});
  return out;
}

// A run's constants for tokens at positions first .. first + M - 1: the attention's mask
// (with_attention: a layer's graph) and the tail's RoPE angles (with_inputs: a graph that
// ends with the next layer's q and k).
inline result<std::vector<norm_constant>> llama_run_constants(const llama_layer_spec& s, std::uint32_t first,
                                                             bool with_attention, bool with_inputs) {
  if (status c = check_llama_layer(s); !c) return c.err();
  std::vector<norm_constant> out;
  if (with_attention) {
    auto mask = attention_mask("attn", s.attention(), first);
    if (!mask) return mask.err();
    out.push_back(std::move(mask).value());
  }
  if (!with_inputs) return out;
  if (std::uint64_t{first} + s.M > s.context) return make_error(rules::attention_shape, "llama", "position", first);
  for (const auto& [prefix, heads] : {std::pair{"rq", s.heads}, std::pair{"rk", s.kv_heads}}) {
    auto rope = rope_constants(prefix, s.rope(heads), first);
    if (!rope) return rope.err();
    for (norm_constant& k : rope.value())
      if (k.role == operand_role::ew_operand) out.push_back(std::move(k));
  }
  return out;
}

}  // namespace regcmd
