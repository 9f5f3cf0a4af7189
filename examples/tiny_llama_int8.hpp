#pragma once
// The tiny LLaMA with int8 weights and activations (W8A8): every linear map an int8 matmul on
// the NPU, weights with a scale per output channel, activations with a scale per token
// (symmetric, round to nearest); the norms, RoPE, attention and SwiGLU as fp16 graphs on the
// NPU, as in the fp16 run.
//
// It cannot stay on the device: RK3588's int8 matmul writes only its int32 accumulators (a
// narrower output never completes), and nothing on the NPU reads int32 back — the SDP's read
// DMA fetches half of each element (regcmd-isa-reference, "int16/narrow-output MATMUL does
// NOT self-complete" and the "loopback" after it). So each int8 matmul ends a submit, and
// the host scales its int32 sums to floats (acc · s_x[m] · s_w[n]) and quantizes the next
// matmul's input: nine submits a layer (norm, q/k/v, RoPE, attention, W_o, residual and norm,
// gate/up, SwiGLU, down), two more for the logits, one token a run (the prompt too).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "tiny_llama_model.hpp"

namespace tiny_llama {

// int8 values and their scales: v ≈ q · scale, one scale per row (a token) or per column (an
// output channel); a row or column of zeros takes scale 1.
struct quantized {
  std::vector<std::int8_t> q;
  std::vector<float> scale;
};

inline quantized quantize(std::span<const float> v, std::uint32_t rows, std::uint32_t cols, bool per_row) {
  quantized out{std::vector<std::int8_t>(v.size()), std::vector<float>(per_row ? rows : cols, 0.0f)};
  for (std::uint32_t r = 0; r < rows; ++r)
    for (std::uint32_t c = 0; c < cols; ++c) {
      float& s = out.scale[per_row ? r : c];
      s = std::max(s, std::abs(v[std::size_t{r} * cols + c]) / 127.0f);
    }
  for (float& s : out.scale) s = s > 0 ? s : 1.0f;
  for (std::uint32_t r = 0; r < rows; ++r)
    for (std::uint32_t c = 0; c < cols; ++c) {
      const float s = out.scale[per_row ? r : c];
      out.q[std::size_t{r} * cols + c] = static_cast<std::int8_t>(std::lround(v[std::size_t{r} * cols + c] / s));
    }
  return out;
}

// The columns of several [K][N_i] matrices side by side, each widened to its width in `to`.
inline std::vector<float> side_by_side(std::uint32_t K, std::initializer_list<std::pair<std::span<const float>, std::uint32_t>> parts,
                                       std::initializer_list<std::uint32_t> to) {
  std::uint32_t total = 0;
  for (std::uint32_t w : to) total += w;
  std::vector<float> out(std::size_t{K} * total, 0.0f);
  std::uint32_t at = 0;
  auto width = to.begin();
  for (const auto& [m, n] : parts) {
    for (std::uint32_t k = 0; k < K; ++k)
      std::copy_n(m.begin() + std::ptrdiff_t(std::size_t{k} * n), n, out.begin() + std::ptrdiff_t(std::size_t{k} * total + at));
    at += *width++;
  }
  return out;
}

class w8a8_model {
 public:
  status create(runtime::session& npu, const runtime::device& dev, const reference::llama_params& p) {
    s_ = spec_of(1);
    const std::uint32_t D = dim, d = dim / heads, Hd = heads * d, Gd = kv_heads * d, Fp = s_.ffn_padded();
    for (std::uint32_t l = 0; l < layers; ++l) {
      const reference::llama_layer_params& w = p.layers[l];
      layer_programs L;
      auto put = [&](const large_graph_spec& g, const std::vector<norm_constant>& k) -> result<on_device<>*> {
        on_device<>& d = programs_.emplace_back();
        if (status st = place(d, npu, dev, g, k); !st) return st.err();
        return &d;
      };
      auto norm = rms_norm_constants("an", s_.norm(), w.attention_norm);
      auto ffn_norm = rms_norm_constants("fn", s_.norm(), w.ffn_norm);
      auto attention_k = attention_constants("attn", s_.attention());
      if (!norm || !ffn_norm || !attention_k) return make_error(rules::host_size, "w8a8", "constants");
      std::vector<norm_constant> rotations;
      for (const auto& [prefix, n] : {std::pair{"rq", heads}, std::pair{"rk", kv_heads}}) {
        auto r = rope_constants(prefix, s_.rope(n), 0);
        if (!r) return r.err();
        for (norm_constant& k : r.value())
          if (k.role == operand_role::weight) rotations.push_back(std::move(k));
      }
      const struct {
        on_device<>** at;
        result<on_device<>*> made;
      } segments[] = {
          {&L.norm, put(norm_graph("an", l > 0), norm.value())},
          {&L.qkv, put(int8_matmul(D, Hd + 2 * Gd), {})},
          {&L.rope, put(rope_graph(), rotations)},
          {&L.attention, put(attention(s_.attention()), attention_k.value())},
          {&L.wo, put(int8_matmul(Hd, D), {})},
          {&L.residual_norm, put(residual_norm_graph(), ffn_norm.value())},
          {&L.gate_up, put(int8_matmul(D, 2 * Fp), {})},
          {&L.swiglu, put(swiglu_graph(), {})},
          {&L.down, put(int8_matmul(Fp, D), {})},
      };
      for (const auto& seg : segments) {
        if (!seg.made) return seg.made.err();
        *seg.at = seg.made.value();
      }
      // the weights, quantized per output channel; W_q's columns carry 1/√d in their scales
      if (status st = pack_weights(*L.qkv, side_by_side(D, {{w.wq, Hd}, {w.wk, Gd}, {w.wv, Gd}}, {Hd, Gd, Gd}), D, Hd + 2 * Gd, L.s_qkv); !st)
        return st;
      for (std::uint32_t n = 0; n < Hd; ++n) L.s_qkv[n] /= std::sqrt(static_cast<float>(d));
      if (status st = pack_weights(*L.wo, w.wo, Hd, D, L.s_o); !st) return st;
      if (status st = pack_weights(*L.gate_up, side_by_side(D, {{w.w_gate, ffn}, {w.w_up, ffn}}, {Fp, Fp}), D, 2 * Fp, L.s_gate_up); !st)
        return st;
      std::vector<float> down(std::size_t{Fp} * D, 0.0f);
      std::copy(w.w_down.begin(), w.w_down.end(), down.begin());  // rows past F: zeros
      if (status st = pack_weights(*L.down, down, Fp, D, L.s_down); !st) return st;
      layers_.push_back(L);
    }
    auto fin = rms_norm_constants("fin", s_.norm(), p.final_norm);
    if (!fin) return fin.err();
    final_norm_ = &programs_.emplace_back();
    if (status st = place(*final_norm_, npu, dev, norm_graph("fin", true), fin.value()); !st) return st;
    lm_head_ = &programs_.emplace_back();
    if (status st = place(*lm_head_, npu, dev, int8_matmul(D, vocab), {}); !st) return st;
    return pack_weights(*lm_head_, p.lm_head, D, vocab, s_lm_);
  }

  // One token (its embedding) at `position`: the logits. Submits are counted in `submits`.
  result<std::vector<float>> step(runtime::session& npu, const std::vector<float>& embedded, std::uint32_t position,
                                  unsigned& submits) {
    const std::uint32_t D = dim, d = dim / heads, Hd = heads * d, Gd = kv_heads * d, Fp = s_.ffn_padded();
    std::vector<float> x = embedded, h, f, xn(D), q(Hd), k(Gd), v(Gd), a(Hd), o(D), hn(D), gate(Fp), up(Fp), m(Fp);
    const auto run = [&](on_device<>& p) -> status {
      const auto report = npu.run(p.prepared);
      if (!report) return report.err();
      submits += report.value().submits;
      return {};
    };
    for (layer_programs& L : layers_) {
      const bool first = &L == &layers_.front();
      status st = first ? L.norm->io.pack<float>("x", x) : pack_all(*L.norm, {{"h", &h}, {"f", &f}});
      if (st) st = run(*L.norm);
      if (st) st = L.norm->io.unpack<float>("xn", xn);
      if (st && !first) st = read_back(*L.norm, "x", x);
      std::vector<float> qkv(Hd + 2 * Gd);
      if (st) st = linear(npu, *L.qkv, xn, L.s_qkv, qkv, submits);
      if (!st) return st.err();
      std::copy_n(qkv.begin(), Hd, q.begin());
      std::copy_n(qkv.begin() + Hd, Gd, k.begin());
      std::copy_n(qkv.begin() + Hd + Gd, Gd, v.begin());
      const auto angles = llama_run_constants(s_, position, false, true);
      if (!angles) return angles.err();
      st = pack_all(*L.rope, {{"q", &q}, {"k", &k}});
      if (st) st = pack_constants(L.rope->geometry, angles.value(), {}, L.rope->io.bytes(operand_role::ew_operand));
      if (st) st = run(*L.rope);
      if (st) st = L.rope->io.unpack<float>("q_next", q);
      if (st) st = L.rope->io.unpack<float>("k_next", k);
      if (st) st = append_kv(L.attention->geometry, L.attention->io.bytes(operand_role::weight), "attn", s_.attention(), position, k, v);
      const auto mask = attention_mask("attn", s_.attention(), position);
      if (!mask) return mask.err();
      if (st) st = L.attention->io.pack<float>("q", q);
      if (st) st = pack_constants(L.attention->geometry, {mask.value()}, {}, L.attention->io.bytes(operand_role::ew_operand));
      if (st) st = run(*L.attention);
      if (st) st = L.attention->io.unpack<float>("out", a);
      if (st) st = linear(npu, *L.wo, a, L.s_o, o, submits);
      if (st) st = pack_all(*L.residual_norm, {{"x", &x}, {"o", &o}});
      if (st) st = run(*L.residual_norm);
      if (st) st = L.residual_norm->io.unpack<float>("hn", hn);
      h.resize(D);
      if (st) st = read_back(*L.residual_norm, "h", h);
      std::vector<float> gu(2 * Fp);
      if (st) st = linear(npu, *L.gate_up, hn, L.s_gate_up, gu, submits);
      if (!st) return st.err();
      std::copy_n(gu.begin(), Fp, gate.begin());
      std::copy_n(gu.begin() + Fp, Fp, up.begin());
      st = pack_all(*L.swiglu, {{"gate", &gate}, {"up", &up}});
      if (st) st = run(*L.swiglu);
      if (st) st = L.swiglu->io.unpack<float>("m", m);
      f.resize(D);
      if (st) st = linear(npu, *L.down, m, L.s_down, f, submits);
      if (!st) return st.err();
    }
    std::vector<float> logits(vocab);
    status st = pack_all(*final_norm_, {{"h", &h}, {"f", &f}});
    if (st) st = run(*final_norm_);
    if (st) st = final_norm_->io.unpack<float>("xn", xn);
    if (st) st = linear(npu, *lm_head_, xn, s_lm_, logits, submits);
    if (!st) return st.err();
    return logits;
  }

 private:
  struct layer_programs {
    on_device<> *norm = nullptr, *qkv = nullptr, *rope = nullptr, *attention = nullptr, *wo = nullptr,
              *residual_norm = nullptr, *gate_up = nullptr, *swiglu = nullptr, *down = nullptr;
    std::vector<float> s_qkv, s_o, s_gate_up, s_down;  // the weights' scales, per output channel
  };

  // RMSNorm of x, or (residual) of x = h + f, x then read back: "xn" out.
  large_graph_spec norm_graph(const char* prefix, bool residual) const {
    large_graph_spec g;
    graph_name x = "x";
    if (residual) {
      (void)add_op(g, graph_ew("x", "h", "f", {.op = ew_op::add, .M = 1, .N = dim, .layout = operand_layout::row_major}));
      g.read_back[0] = "x";
    }
    (void)add_rms_norm(g, "xn", x, prefix, s_.norm());
    return g;
  }
  large_graph_spec int8_matmul(std::uint32_t K, std::uint32_t N) const {
    large_graph_spec g;
    (void)add_op(g, graph_matmul("y", "x", "w", {.dtype = precision::int8, .out_dtype = precision::int32, .M = 1, .K = K, .N = N}));
    return g;
  }
  large_graph_spec rope_graph() const {
    large_graph_spec g;
    (void)add_rope(g, "q_next", "q", "rq", s_.rope(heads));
    (void)add_rope(g, "k_next", "k", "rk", s_.rope(kv_heads));
    return g;
  }
  // h = x + o read back, hn = RMSNorm(h)
  large_graph_spec residual_norm_graph() const {
    large_graph_spec g;
    (void)add_op(g, graph_ew("h", "x", "o", {.op = ew_op::add, .M = 1, .N = dim, .layout = operand_layout::row_major}));
    (void)add_rms_norm(g, "hn", "h", "fn", s_.norm());
    g.read_back[0] = "h";
    return g;
  }
  large_graph_spec swiglu_graph() const {
    const std::uint32_t Fp = s_.ffn_padded();
    large_graph_spec g;
    (void)add_op(g, graph_act("act", "gate", {.fn = activation::silu, .M = 1, .N = Fp}));
    (void)add_op(g, graph_ew("m", "act", "up", {.op = ew_op::mul, .M = 1, .N = Fp, .layout = operand_layout::row_major}));
    return g;
  }

  static status pack_weights(on_device<>& p, std::span<const float> w, std::uint32_t K, std::uint32_t N, std::vector<float>& scales) {
    quantized qw = quantize(w, K, N, false);
    scales = std::move(qw.scale);
    return p.io.pack<std::int8_t>("w", qw.q);
  }
  static status pack_all(on_device<>& p, std::initializer_list<std::pair<const char*, const std::vector<float>*>> inputs) {
    for (const auto& [name, host] : inputs)
      if (status st = p.io.pack<float>(name, *host); !st) return st;
    return {};
  }
  static status read_back(on_device<>& p, const char* name, std::vector<float>& host) {
    if (status st = p.io.read_back(operand_role::intermediate); !st) return st;
    return p.io.unpack<float>(name, host);
  }
  // y = x · W on the NPU in int8: x quantized per token, the int32 sums scaled back.
  static status linear(runtime::session& npu, on_device<>& p, std::span<const float> x, const std::vector<float>& w_scale,
                       std::vector<float>& y, unsigned& submits) {
    const quantized qx = quantize(x, 1, static_cast<std::uint32_t>(x.size()), true);
    if (status st = p.io.pack<std::int8_t>("x", qx.q); !st) return st;
    const auto report = npu.run(p.prepared);
    if (!report) return report.err();
    submits += report.value().submits;
    std::vector<std::int32_t> acc(w_scale.size());
    if (status st = p.io.unpack<std::int32_t>("y", acc); !st) return st;
    y.resize(acc.size());
    for (std::size_t n = 0; n < acc.size(); ++n) y[n] = static_cast<float>(double(acc[n]) * qx.scale[0] * w_scale[n]);
    return {};
  }

  llama_layer_spec s_{};
  std::deque<on_device<>> programs_;
  std::vector<layer_programs> layers_;
  on_device<> *final_norm_ = nullptr, *lm_head_ = nullptr;
  std::vector<float> s_lm_;
};

}  // namespace tiny_llama
