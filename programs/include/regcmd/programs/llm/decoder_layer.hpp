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
// A tensor of a layer: "<layer>.<what>", or `what` alone in a graph of one layer.
constexpr graph_name layer_name(std::string_view layer, std::string_view what) {
  return layer.empty() ? graph_name::of(what) : graph_name::prefixed(layer, what);
}
// "l<i>": layer i's tensors in a graph of several layers.
constexpr graph_name layer_prefix(std::uint32_t i) {
  char text[12] = {'l'};
  std::size_t n = 1;
  char digits[10] = {};
  std::size_t count = 0;
  do digits[count++] = static_cast<char>('0' + i % 10);
  while ((i /= 10) > 0);
  while (count > 0) text[n++] = digits[--count];
  return graph_name::of(std::string_view(text, n));
}

// A layer's inputs from x: xn = RMSNorm(x) (its "an"), then q, k, v (RoPE's "rq", "rk").
template <std::size_t MaxOps>
constexpr status add_layer_inputs(basic_graph_spec<MaxOps>& g, graph_name x, const llama_layer_spec& s,
                                  std::string_view layer, graph_name q, graph_name k, graph_name v) {
  const std::uint32_t D = s.dim, d = s.head_dim();
  const auto n = [&](std::string_view what) { return layer_name(layer, what); };
  const graph_name an = n("an"), rq = n("rq"), rk = n("rk");
  status c = add_rms_norm(g, n("xn"), x, an.view(), s.norm());
  if (c) c = add_op(g, graph_matmul(n("qp"), n("xn"), n("wq"), llama_matmul(s.M, D, s.heads * d)));
  if (c) c = add_op(g, graph_matmul(n("kp"), n("xn"), n("wk"), llama_matmul(s.M, D, s.kv_heads * d)));
  if (c) c = add_op(g, graph_matmul(v, n("xn"), n("wv"), llama_matmul(s.M, D, s.kv_heads * d)));
  if (c) c = add_rope(g, q, n("qp"), rq.view(), s.rope(s.heads));
  if (c) c = add_rope(g, k, n("kp"), rk.view(), s.rope(s.kv_heads));
  return c;
}

// A layer from x and its q (and, with a self slot, its own key and value) to x_out: attention
// ("attn"), W_o, the residual, RMSNorm ("fn"), SwiGLU, the residual.
template <std::size_t MaxOps>
constexpr status add_layer_body(basic_graph_spec<MaxOps>& g, const llama_layer_spec& s, const attention_spec& a,
                                std::string_view layer, graph_name x, graph_name q, graph_name key, graph_name value,
                                graph_name x_out) {
  const std::uint32_t D = s.dim, F = s.ffn_padded(), M = s.M, width = s.heads * s.head_dim();
  const auto n = [&](std::string_view what) { return layer_name(layer, what); };
  const graph_name attn = n("attn"), fn = n("fn");
  status c = add_attention(g, n("a"), q, attn.view(), a, key, value);
  if (c) c = add_op(g, graph_matmul(n("o"), n("a"), n("wo"), llama_matmul(M, width, D)));
  if (c) c = add_op(g, graph_ew(n("h"), x, n("o"), llama_add(M, D)));
  if (c) c = add_rms_norm(g, n("hn"), n("h"), fn.view(), s.norm());
  if (c) c = add_op(g, graph_matmul(n("gate"), n("hn"), n("w_gate"), llama_matmul(M, D, F)));
  if (c) c = add_op(g, graph_matmul(n("up"), n("hn"), n("w_up"), llama_matmul(M, D, F)));
  if (c) c = add_op(g, graph_act(n("act"), n("gate"), {.fn = activation::silu, .M = M, .N = F}));
  if (c) c = add_op(g, graph_ew(n("mul"), n("act"), n("up"), {.op = ew_op::mul, .M = M, .N = F, .layout = operand_layout::row_major}));
  if (c) c = add_op(g, graph_matmul(n("f"), n("mul"), n("w_down"), llama_matmul(M, F, D)));
  if (c) c = add_op(g, graph_ew(x_out, n("h"), n("f"), llama_add(M, D)));
  return c;
}

// The logits of x: RMSNorm ("fin"), the LM head.
template <std::size_t MaxOps>
constexpr status add_logits(basic_graph_spec<MaxOps>& g, const llama_layer_spec& s, graph_name x) {
  status c = add_rms_norm(g, "xn_final", x, "fin", s.norm());
  if (c) c = add_op(g, graph_matmul("logits", "xn_final", "lm_head", llama_matmul(s.M, s.dim, s.vocab)));
  return c;
}

template <std::size_t MaxOps>
constexpr void refuse_on(basic_graph_spec<MaxOps>& g, const status& c) {
  if (!c && !g.refused) g.refused = c.err().violated;
}
}  // namespace detail

// The first layer's q, k, v of x (inputs x and the constants of llama_inputs_constants):
// one submit a run before the first layer's.
constexpr large_graph_spec llama_layer_inputs(const llama_layer_spec& s) {
  large_graph_spec g;
  if (!refuse_unless(g, check_llama_layer(s))) return g;
  detail::refuse_on(g, detail::add_layer_inputs(g, "x", s, "", "q_next", "k_next", "v_next"));
  return g;
}

// One decoder layer and its tail, one submit (the header's comment).
constexpr large_graph_spec llama_decoder_layer(const llama_layer_spec& s, layer_tail tail) {
  large_graph_spec g;
  if (!refuse_unless(g, check_llama_layer(s))) return g;
  status c = detail::add_layer_body(g, s, s.attention(), "", "x", "q", {}, {}, "x_out");
  if (c && tail == layer_tail::next_layer) c = detail::add_layer_inputs(g, "x_out", s, "", "q_next", "k_next", "v_next");
  if (c && tail == layer_tail::logits) c = detail::add_logits(g, s, "x_out");
  g.read_back[0] = "x_out";
  detail::refuse_on(g, c);
  return g;
}

// A whole token at decode (s.M = 1), every layer, one submit: x, then layer i's q, k, v
// ("l<i>.q", "l<i>.k", "l<i>.v"), its attention over its caches and its own key and value
// (attention_spec::self_slot: computed in this submit, so not yet in the cache), its
// feed-forward, the next layer's q, k, v, ..., the logits. The host appends each layer's k and
// v (read back) after the run, for the next token. Its tensors and constants are a layer
// graph's under "l<i>." (llama_token_constants); MaxOps the graph's capacity (the tiny
// LLaMA's 4 layers take 231 ops: 17 for the first layer's inputs, 39 a layer, 17 a next layer's
// inputs, 7 for the logits).
template <std::size_t MaxOps>
constexpr basic_graph_spec<MaxOps> llama_decode_token(const llama_layer_spec& s, std::uint32_t layers) {
  basic_graph_spec<MaxOps> g;
  if (!refuse_unless(g, check_llama_layer(s))) return g;
  if (s.M != 1 || layers == 0 || 2 * layers > g.read_back.size()) {
    g.refused = &rules::llama_shape;
    return g;
  }
  attention_spec a = s.attention();
  a.self_slot = true;
  const auto n = [](std::uint32_t i, std::string_view what) { return graph_name::prefixed(detail::layer_prefix(i).view(), what); };
  status c = detail::add_layer_inputs(g, "x", s, detail::layer_prefix(0).view(), n(0, "q"), n(0, "k"), n(0, "v"));
  for (std::uint32_t i = 0; c && i < layers; ++i) {
    const graph_name layer = detail::layer_prefix(i);
    c = detail::add_layer_body(g, s, a, layer.view(), i == 0 ? graph_name("x") : n(i - 1, "x_out"), n(i, "q"), n(i, "k"),
                               n(i, "v"), n(i, "x_out"));
    if (c && i + 1 < layers) {
      const graph_name next = detail::layer_prefix(i + 1);
      c = detail::add_layer_inputs(g, n(i, "x_out"), s, next.view(), n(i + 1, "q"), n(i + 1, "k"), n(i + 1, "v"));
    }
    g.read_back[2 * i] = n(i, "k");
    g.read_back[2 * i + 1] = n(i, "v");
  }
  if (c) c = detail::add_logits(g, s, n(layers - 1, "x_out"));
  detail::refuse_on(g, c);
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

// A layer's inputs' constants: the attention norm's, W_q / √d, W_k, W_v, RoPE's rotations.
inline status add_inputs_constants(std::vector<norm_constant>& out, const llama_layer_spec& s, const llama_layer_weights& w,
                                   std::string_view layer) {
  const std::uint32_t D = s.dim, d = s.head_dim(), Hd = s.heads * d, Gd = s.kv_heads * d;
  for (const auto& [v, n, what] : {std::tuple{&w.wq, std::size_t{D} * Hd, "wq"}, std::tuple{&w.wk, std::size_t{D} * Gd, "wk"},
                                   std::tuple{&w.wv, std::size_t{D} * Gd, "wv"}})
    if (status c = check_size(*v, n, what); !c) return c;
  auto norm = rms_norm_constants(layer_name(layer, "an").view(), s.norm(), w.attention_norm);
  if (!norm) return norm.err();
  out.insert(out.end(), norm.value().begin(), norm.value().end());
  std::vector<float> wq = w.wq;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  for (float& v : wq) v *= scale;
  out.push_back({layer_name(layer, "wq"), operand_role::weight, std::move(wq)});
  out.push_back({layer_name(layer, "wk"), operand_role::weight, w.wk});
  out.push_back({layer_name(layer, "wv"), operand_role::weight, w.wv});
  for (const auto& [what, heads] : {std::pair{"rq", s.heads}, std::pair{"rk", s.kv_heads}}) {
    auto rope = rope_constants(layer_name(layer, what).view(), s.rope(heads), 0);
    if (!rope) return rope.err();
    for (norm_constant& k : rope.value())
      if (k.role == operand_role::weight) out.push_back(std::move(k));  // R; the angles are a run's
  }
  return {};
}

// A layer body's constants: its attention's (empty caches), W_o, the feed-forward norm's and
// its weights (padded to a multiple of 32).
inline status add_body_constants(std::vector<norm_constant>& out, const llama_layer_spec& s, const attention_spec& a,
                                 const llama_layer_weights& w, std::string_view layer) {
  const std::uint32_t D = s.dim, Hd = s.heads * s.head_dim(), F = s.ffn, Fp = s.ffn_padded();
  for (const auto& [v, n, what] : {std::tuple{&w.wo, std::size_t{Hd} * D, "wo"}, std::tuple{&w.w_gate, std::size_t{D} * F, "w_gate"},
                                   std::tuple{&w.w_up, std::size_t{D} * F, "w_up"}, std::tuple{&w.w_down, std::size_t{F} * D, "w_down"}})
    if (status c = check_size(*v, n, what); !c) return c;
  auto attention = attention_constants(layer_name(layer, "attn").view(), a);
  if (!attention) return attention.err();
  out.insert(out.end(), attention.value().begin(), attention.value().end());
  out.push_back({layer_name(layer, "wo"), operand_role::weight, w.wo});
  auto ffn_norm = rms_norm_constants(layer_name(layer, "fn").view(), s.norm(), w.ffn_norm);
  if (!ffn_norm) return ffn_norm.err();
  out.insert(out.end(), ffn_norm.value().begin(), ffn_norm.value().end());
  out.push_back({layer_name(layer, "w_gate"), operand_role::weight, zero_padded(w.w_gate, D, F, D, Fp)});
  out.push_back({layer_name(layer, "w_up"), operand_role::weight, zero_padded(w.w_up, D, F, D, Fp)});
  out.push_back({layer_name(layer, "w_down"), operand_role::weight, zero_padded(w.w_down, F, D, Fp, D)});
  return {};
}

// The final norm's γ [D] and the LM head [D][vocab].
inline status add_logits_constants(std::vector<norm_constant>& out, const llama_layer_spec& s, std::span<const float> final_norm,
                                   std::span<const float> lm_head) {
  if (status c = check_size(lm_head, std::size_t{s.dim} * s.vocab, "lm_head"); !c) return c;
  auto fin = rms_norm_constants("fin", s.norm(), final_norm);
  if (!fin) return fin.err();
  out.insert(out.end(), fin.value().begin(), fin.value().end());
  out.push_back({"lm_head", operand_role::weight, std::vector<float>(lm_head.begin(), lm_head.end())});
  return {};
}

// A run's RoPE angles for a layer's inputs at positions first ...
inline status add_angles(std::vector<norm_constant>& out, const llama_layer_spec& s, std::uint32_t first, std::string_view layer) {
  if (std::uint64_t{first} + s.M > s.context) return make_error(rules::attention_shape, "llama", "position", first);
  for (const auto& [what, heads] : {std::pair{"rq", s.heads}, std::pair{"rk", s.kv_heads}}) {
    auto rope = rope_constants(layer_name(layer, what).view(), s.rope(heads), first);
    if (!rope) return rope.err();
    for (norm_constant& k : rope.value())
      if (k.role == operand_role::ew_operand) out.push_back(std::move(k));
  }
  return {};
}
}  // namespace detail

// The constants of llama_layer_inputs (the first layer's attention norm and projections).
inline result<std::vector<norm_constant>> llama_inputs_constants(const llama_layer_spec& s, const llama_layer_weights& first) {
  if (status c = check_llama_layer(s); !c) return c.err();
  std::vector<norm_constant> out;
  if (status c = detail::add_inputs_constants(out, s, first, ""); !c) return c.err();
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
  std::vector<norm_constant> out;
  status c = detail::add_body_constants(out, s, s.attention(), layer, "");
  if (c) c = next ? detail::add_inputs_constants(out, s, *next, "") : detail::add_logits_constants(out, s, final_norm, lm_head);
  if (!c) return c.err();
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
  if (with_inputs)
    if (status c = detail::add_angles(out, s, first, ""); !c) return c.err();
  return out;
}

// The constants of llama_decode_token(s, layers.size()), packed once: every layer's under
// "l<i>.", the final norm's and the LM head.
inline result<std::vector<norm_constant>> llama_token_constants(const llama_layer_spec& s,
                                                               std::span<const llama_layer_weights> layers,
                                                               std::span<const float> final_norm, std::span<const float> lm_head) {
  if (status c = check_llama_layer(s); !c) return c.err();
  attention_spec a = s.attention();
  a.self_slot = true;
  std::vector<norm_constant> out;
  status c{};
  for (std::uint32_t i = 0; c && i < layers.size(); ++i) {
    const graph_name layer = detail::layer_prefix(i);
    c = detail::add_inputs_constants(out, s, layers[i], layer.view());
    if (c) c = detail::add_body_constants(out, s, a, layers[i], layer.view());
  }
  if (c) c = detail::add_logits_constants(out, s, final_norm, lm_head);
  if (!c) return c.err();
  return out;
}

// The run's constants of llama_decode_token for the token at `position`: every layer's mask
// and RoPE angles.
inline result<std::vector<norm_constant>> llama_token_run_constants(const llama_layer_spec& s, std::uint32_t layers,
                                                                   std::uint32_t position) {
  if (status c = check_llama_layer(s); !c) return c.err();
  attention_spec a = s.attention();
  a.self_slot = true;
  std::vector<norm_constant> out;
  for (std::uint32_t i = 0; i < layers; ++i) {
    const graph_name layer = detail::layer_prefix(i);
    auto mask = attention_mask(detail::layer_name(layer.view(), "attn").view(), a, position);
    if (!mask) return mask.err();
    out.push_back(std::move(mask).value());
    if (status c = detail::add_angles(out, s, position, layer.view()); !c) return c.err();
  }
  return out;
}

}  // namespace regcmd
