#pragma once
// The tiny LLaMA of examples/tiny_llama.cpp: its shape, its seeded weights, and a graph placed
// on the device with its own buffers.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <random>
#include <vector>

#include <regcmd/core/roofline.hpp>
#include <regcmd/decode/accounting.hpp>
#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/llm.hpp>
#include <regcmd/reference/llama.hpp>
#include <regcmd/runtime/graph_buffers.hpp>
#include <regcmd/runtime/session.hpp>

namespace tiny_llama {

using namespace regcmd;

constexpr std::uint32_t layers = 4, dim = 256, heads = 8, kv_heads = 2, ffn = 688, vocab = 1024, context = 256,
                        prompt_length = 16;

inline llama_layer_spec spec_of(std::uint32_t M) {
  return {.M = M, .dim = dim, .heads = heads, .kv_heads = kv_heads, .ffn = ffn, .context = context, .vocab = vocab};
}

// Seeded weights, each rounded to fp16 (what the NPU holds): linear maps of variance 1/in,
// norms' γ around 1, embeddings in ±1.
inline reference::llama_params random_model(std::uint32_t seed) {
  std::mt19937 rng(seed);
  const auto draw = [&](std::size_t n, double half_width, double centre = 0) {
    std::uniform_real_distribution<double> u(centre - half_width, centre + half_width);
    std::vector<float> v(n);
    for (float& x : v) x = half_to_float(float_to_half(static_cast<float>(u(rng))));
    return v;
  };
  const auto linear = [&](std::uint32_t in, std::uint32_t out) { return draw(std::size_t{in} * out, std::sqrt(3.0 / in)); };
  const std::uint32_t kv = kv_heads * (dim / heads);
  reference::llama_params p;
  p.embedding = draw(std::size_t{vocab} * dim, 1);
  for (std::uint32_t l = 0; l < layers; ++l)
    p.layers.push_back({.attention_norm = draw(dim, 0.2, 1), .wq = linear(dim, dim), .wk = linear(dim, kv),
                        .wv = linear(dim, kv), .wo = linear(dim, dim), .ffn_norm = draw(dim, 0.2, 1),
                        .w_gate = linear(dim, ffn), .w_up = linear(dim, ffn), .w_down = linear(ffn, dim)});
  p.final_norm = draw(dim, 0.2, 1);
  p.lm_head = draw(std::size_t{dim} * vocab, 3 * std::sqrt(3.0 / dim));  // logits of a few units
  return p;
}

inline llama_layer_weights weights_of(const reference::llama_layer_params& r) {
  return {r.attention_norm, r.wq, r.wk, r.wv, r.wo, r.ffn_norm, r.w_gate, r.w_up, r.w_down};
}

// One program on the device with its own buffers, bound once (place).
template <std::size_t MaxOps = large_graph_max_ops>
struct on_device {
  basic_graph_geometry<MaxOps> geometry;
  runtime::prepared_program prepared;
  runtime::graph_buffers io{};
  double bound_ns = 0;  // at the SoC's peak rates (core/roofline.hpp)
  std::size_t tasks = 0;
};

inline std::uint32_t argmax(std::span<const float> row) {
  return static_cast<std::uint32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}
inline std::uint32_t argmax(std::span<const double> row) {
  return static_cast<std::uint32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}
inline std::vector<float> embed(const reference::llama_params& p, std::span<const std::uint32_t> tokens) {
  std::vector<float> x(tokens.size() * dim);
  for (std::size_t m = 0; m < tokens.size(); ++m)
    std::copy_n(p.embedding.begin() + std::ptrdiff_t(std::size_t{tokens[m]} * dim), dim, x.begin() + std::ptrdiff_t(m * dim));
  return x;
}

// g built, prepared and bound into d, with buffers of its own and `constants` packed (d must
// not move afterwards: its buffers view its geometry).
template <std::size_t MaxOps>
status place(on_device<MaxOps>& d, runtime::session& npu, const runtime::device& dev, const basic_graph_spec<MaxOps>& g,
             const std::vector<norm_constant>& constants) {
  const auto built = build(g);
  if (!built) return built.err();
  auto prepared = npu.prepare(built.value().view());
  if (!prepared) return prepared.err();
  d.geometry = built.value().geometry;
  d.prepared = std::move(prepared).value();
  d.bound_ns = roofline(account(built.value().view()), soc_roofline()).ns();
  d.tasks = built.value().view().tasks.size();
  auto io = runtime::graph_buffers::create(dev, d.geometry);
  if (!io) return io.err();
  d.io = std::move(io).value();
  if (status st = pack_constants(d.geometry, constants, d.io.bytes(operand_role::weight), d.io.bytes(operand_role::ew_operand)); !st)
    return st;
  return npu.bind(d.prepared, d.io.operands());
}

}  // namespace tiny_llama
