#pragma once
// A LLaMA-architecture model in double, from its definition (RMSNorm, rotate-half RoPE,
// causal grouped-query attention with a key/value cache, SwiGLU feed-forward), sharing no
// code with the programs it checks: the tiny LLaMA's oracle (examples/tiny_llama.cpp) and
// the decoder layer's (tests/programs/llm).
//
//   llama_reference model{config, weights};
//   std::vector<double> logits = model.forward(tokens, first_position);   // [M][vocab]
//
// Weights row-major [in][out] (y = x · W), as the programs take them.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace regcmd::reference {

struct llama_config {
  std::uint32_t dim = 0, heads = 0, kv_heads = 0, ffn = 0, context = 0, vocab = 0, layers = 0;
  double eps = 1e-5, rope_base = 10000;
  std::uint32_t head_dim() const { return dim / heads; }
};

struct llama_layer_params {
  std::vector<float> attention_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down;
};

struct llama_params {
  std::vector<float> embedding;  // [vocab][dim]
  std::vector<llama_layer_params> layers;
  std::vector<float> final_norm;  // [dim]
  std::vector<float> lm_head;     // [dim][vocab]
};

// How closely a device's logits follow the reference's: their cosine similarity.
inline double cosine_similarity(std::span<const float> device, std::span<const double> reference) {
  double dr = 0, dd = 0, rr = 0;
  for (std::size_t i = 0; i < device.size() && i < reference.size(); ++i) {
    dr += device[i] * reference[i];
    dd += double(device[i]) * device[i];
    rr += reference[i] * reference[i];
  }
  return dr / std::sqrt(dd * rr);
}

class llama_reference {
 public:
  llama_reference(const llama_config& c, const llama_params& p)
      : c_(c), p_(p), keys_(c.layers, std::vector<double>(std::size_t{c.context} * c.kv_heads * c.head_dim())),
        values_(keys_) {}

  // y = x · W for rows of x ([rows][in]), W [in][out].
  static std::vector<double> times(const std::vector<double>& x, std::span<const float> w, std::uint32_t in, std::uint32_t out) {
    const std::size_t rows = x.size() / in;
    std::vector<double> y(rows * out, 0.0);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::uint32_t k = 0; k < in; ++k) {
        const double a = x[r * in + k];
        for (std::uint32_t n = 0; n < out; ++n) y[r * out + n] += a * w[std::size_t{k} * out + n];
      }
    return y;
  }
  // x[r][n] γ[n] / √(mean_k x[r][k]² + ε)
  std::vector<double> rms_norm(const std::vector<double>& x, std::span<const float> gamma) const {
    std::vector<double> y(x.size());
    for (std::size_t r = 0; r < x.size() / c_.dim; ++r) {
      double mean = 0;
      for (std::uint32_t k = 0; k < c_.dim; ++k) mean += x[r * c_.dim + k] * x[r * c_.dim + k];
      const double scale = 1 / std::sqrt(mean / c_.dim + c_.eps);
      for (std::uint32_t k = 0; k < c_.dim; ++k) y[r * c_.dim + k] = x[r * c_.dim + k] * scale * gamma[k];
    }
    return y;
  }
  // Each head of d rotated in pairs (i, i + d/2) by position · base^(-2i/d).
  void rope(std::vector<double>& x, std::uint32_t heads, std::uint32_t first) const {
    const std::uint32_t d = c_.head_dim(), width = heads * d;
    for (std::size_t r = 0; r < x.size() / width; ++r)
      for (std::uint32_t h = 0; h < heads; ++h)
        for (std::uint32_t i = 0; i < d / 2; ++i) {
          const double angle = double(first + r) * std::pow(c_.rope_base, -2.0 * i / d);
          double& a = x[r * width + h * d + i];
          double& b = x[r * width + h * d + i + d / 2];
          const double a0 = a, b0 = b;
          a = a0 * std::cos(angle) - b0 * std::sin(angle);
          b = b0 * std::cos(angle) + a0 * std::sin(angle);
        }
  }

  // One layer over the residual stream x [M][dim] of tokens at first .. first + M - 1; the
  // layer's cache takes their keys and values.
  std::vector<double> layer(std::uint32_t l, const std::vector<double>& x, std::uint32_t first) {
    const llama_layer_params& w = p_.layers[l];
    const std::uint32_t D = c_.dim, d = c_.head_dim(), H = c_.heads, G = c_.kv_heads, M = static_cast<std::uint32_t>(x.size() / D);
    const std::vector<double> xn = rms_norm(x, w.attention_norm);
    std::vector<double> q = times(xn, w.wq, D, H * d), k = times(xn, w.wk, D, G * d);
    const std::vector<double> v = times(xn, w.wv, D, G * d);
    rope(q, H, first);
    rope(k, G, first);
    for (std::uint32_t m = 0; m < M; ++m)
      for (std::uint32_t j = 0; j < G * d; ++j) {
        keys_[l][std::size_t{first + m} * G * d + j] = k[std::size_t{m} * G * d + j];
        values_[l][std::size_t{first + m} * G * d + j] = v[std::size_t{m} * G * d + j];
      }
    std::vector<double> a(std::size_t{M} * H * d, 0.0);
    for (std::uint32_t m = 0; m < M; ++m)
      for (std::uint32_t h = 0; h < H; ++h) {
        const std::uint32_t g = h / (H / G), seen = first + m + 1;
        std::vector<double> p(seen);
        double top = -INFINITY, total = 0;
        for (std::uint32_t t = 0; t < seen; ++t) {
          double s = 0;
          for (std::uint32_t i = 0; i < d; ++i)
            s += q[(std::size_t{m} * H + h) * d + i] * keys_[l][(std::size_t{t} * G + g) * d + i];
          p[t] = s / std::sqrt(double(d));
          top = std::max(top, p[t]);
        }
        for (double& s : p) total += s = std::exp(s - top);
        for (std::uint32_t t = 0; t < seen; ++t)
          for (std::uint32_t i = 0; i < d; ++i)
            a[(std::size_t{m} * H + h) * d + i] += p[t] / total * values_[l][(std::size_t{t} * G + g) * d + i];
      }
    std::vector<double> h = times(a, w.wo, H * d, D);
    for (std::size_t i = 0; i < h.size(); ++i) h[i] += x[i];
    const std::vector<double> hn = rms_norm(h, w.ffn_norm);
    const std::vector<double> gate = times(hn, w.w_gate, D, c_.ffn), up = times(hn, w.w_up, D, c_.ffn);
    std::vector<double> mid(gate.size());
    for (std::size_t i = 0; i < mid.size(); ++i) mid[i] = gate[i] / (1 + std::exp(-gate[i])) * up[i];
    std::vector<double> f = times(mid, w.w_down, c_.ffn, D);
    for (std::size_t i = 0; i < f.size(); ++i) f[i] += h[i];
    return f;
  }

  std::vector<double> logits(const std::vector<double>& x) const {
    return times(rms_norm(x, p_.final_norm), p_.lm_head, c_.dim, c_.vocab);
  }

  // The logits [M][vocab] of tokens at positions first .. first + M - 1.
  std::vector<double> forward(std::span<const std::uint32_t> tokens, std::uint32_t first) {
    std::vector<double> x(tokens.size() * c_.dim);
    for (std::size_t m = 0; m < tokens.size(); ++m)
      for (std::uint32_t k = 0; k < c_.dim; ++k) x[m * c_.dim + k] = p_.embedding[std::size_t{tokens[m]} * c_.dim + k];
    for (std::uint32_t l = 0; l < c_.layers; ++l) x = layer(l, x, first);
    return logits(x);
  }

 private:
  llama_config c_;
  llama_params p_;
  std::vector<std::vector<double>> keys_, values_;  // per layer: [T][G][d]
};

}  // namespace regcmd::reference
