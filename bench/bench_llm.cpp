// What a LLaMA decoder layer costs as one submit (llm/decoder_layer.hpp), read from its
// registers (decode/accounting.hpp): tasks, the DMA traffic against the layer's minimum
// (every weight once, the key/value cache once, its inputs and outputs once), and the
// roofline bound on RK3588 (one core), at decode (M = 1) and prefill (M = 64, 512), for the
// tiny LLaMA of examples/tiny_llama.cpp and two 7-8B shapes. The attention alone
// (llm/attention.hpp) is measured beside it: its share of the traffic and of the bound.
// Counts, not timings: exact for the programs as emitted.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <regcmd/core/roofline.hpp>
#include <regcmd/decode/accounting.hpp>
#include <regcmd/decode/format.hpp>
#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/llm.hpp>

#include "harness.hpp"

using namespace regcmd;

namespace {

struct model_shape {
  const char* name;
  llama_layer_spec layer;  // M set per row
  std::uint32_t layers;
};

// Bytes the layer cannot do without, fp16: W_o, the feed-forward's three, the next layer's
// W_q, W_k, W_v; both caches whole (the run at the context's end); x and q in; x_out,
// q_next, k_next, v_next out.
double minimum_bytes(const llama_layer_spec& s) {
  const double D = s.dim, Hd = double(s.heads) * s.head_dim(), Gd = double(s.kv_heads) * s.head_dim();
  const double weights = D * Hd + 3 * D * s.ffn + D * (Hd + 2 * Gd);
  const double caches = 2 * Gd * s.context;
  const double activations = s.M * (D + Hd + D + Hd + 2 * Gd);
  return 2 * (weights + caches + activations);
}

}  // namespace

int main() {
  const model_shape models[] = {
      {"tiny LLaMA (examples/)", {.dim = 256, .heads = 8, .kv_heads = 2, .ffn = 688, .context = 256, .vocab = 1024}, 4},
      {"LLaMA-2-7B shape", {.dim = 4096, .heads = 32, .kv_heads = 32, .ffn = 11008, .context = 256, .vocab = 32000}, 32},
      {"LLaMA-3-8B shape", {.dim = 4096, .heads = 32, .kv_heads = 8, .ffn = 14336, .context = 1024, .vocab = 128256}, 32},
  };
  std::printf("| model | context | M | ops | tasks | submits | traffic MB | minimum MB | traffic / min | attention's traffic | "
              "bound us | limited by | attention's bound | tokens/s at the bound (all layers) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const model_shape& m : models)
    for (const std::uint32_t M : {1u, 64u, 512u}) {
      llama_layer_spec s = m.layer;
      s.M = M;
      if (M > s.context) {
        std::printf("| %s | %u | %u | | | | | | | | | | | a prompt longer than the context |\n", m.name, s.context, M);
        continue;
      }
      const large_graph_spec spec = llama_decoder_layer(s, layer_tail::next_layer);
      const auto layer = build(spec);
      const auto attention_only = build(attention(s.attention()));
      if (!layer || !attention_only) {
        std::printf("| %s | %u | %u | refused: %s |\n", m.name, s.context, M,
                    to_string(layer ? attention_only.err() : layer.err()).c_str());
        continue;
      }
      const program_cost cost = account(layer.value().view()), attention_cost = account(attention_only.value().view());
      const time_bound bound = roofline(cost, soc_roofline()), attention_bound = roofline(attention_cost, soc_roofline());
      const double minimum = minimum_bytes(s);
      std::printf("| %s | %u | %u | %u | %zu | 1 | %.1f | %.1f | %.2f | %.0f%% | %.0f | %s | %.0f%% | %.1f |\n", m.name,
                  s.context, M, spec.count, layer.value().view().tasks.size(), double(cost.traffic()) / 1e6, minimum / 1e6,
                  double(cost.traffic()) / minimum, 100.0 * double(attention_cost.traffic()) / double(cost.traffic()),
                  bound.ns() / 1e3, std::string(bound.limited_by()).c_str(), 100.0 * attention_bound.ns() / bound.ns(),
                  M / (m.layers * bound.ns() * 1e-9));
    }
  // A whole token of the tiny LLaMA in one submit (llama_decode_token) against its five
  // submits of a layer each (the first layer's inputs, four layers).
  {
    const llama_layer_spec s = {.M = 1, .dim = 256, .heads = 8, .kv_heads = 2, .ffn = 688, .context = 256, .vocab = 1024};
    const auto token = build(llama_decode_token<256>(s, 4));
    if (!token) return 1;
    double per_layer_ns = 0, per_layer_bytes = 0;
    std::size_t per_layer_tasks = 0;
    for (std::uint32_t l = 0; l <= 4; ++l) {
      const auto program = build(l == 0  ? llama_layer_inputs(s)
                                 : l < 4 ? llama_decoder_layer(s, layer_tail::next_layer)
                                         : llama_decoder_layer(s, layer_tail::logits));
      const program_cost c = account(program.value().view());
      per_layer_ns += roofline(c, soc_roofline()).ns();
      per_layer_bytes += double(c.traffic());
      per_layer_tasks += program.value().view().tasks.size();
    }
    const program_cost cost = account(token.value().view());
    const double ns = roofline(cost, soc_roofline()).ns();
    std::printf("\n| tiny LLaMA decode, 4 layers | tasks | submits | traffic MB | bound us | tokens/s at the bound |\n");
    std::printf("|---|---|---|---|---|---|\n");
    std::printf("| a submit a layer (and the first layer's inputs) | %zu | 5 | %.1f | %.0f | %.0f |\n", per_layer_tasks,
                per_layer_bytes / 1e6, per_layer_ns / 1e3, 1e9 / per_layer_ns);
    std::printf("| the whole token in one submit | %zu | 1 | %.1f | %.0f | %.0f |\n", token.value().view().tasks.size(),
                double(cost.traffic()) / 1e6, ns / 1e3, 1e9 / ns);
  }

  // The host's append between submits, at decode (the caches' layout does not depend on M).
  for (const model_shape& m : {models[0], models[2]}) {
    llama_layer_spec s = m.layer;
    s.M = 1;
    const auto layer = build(llama_decoder_layer(s, layer_tail::next_layer));
    if (!layer) return 1;
    const large_graph_geometry& g = layer.value().geometry;
    std::vector<std::uint8_t> weights(g.buffer_bytes[static_cast<std::size_t>(operand_role::weight)]);
    const std::size_t row = std::size_t{s.kv_heads} * s.head_dim();
    const std::vector<float> key(row, 0.5f), value(row, -0.25f);
    std::uint32_t position = 0;
    const bench::timing append = bench::measure([&] {
      bench::keep(append_kv(g, weights, "attn", s.attention(), position, key, value).ok());
      position = (position + 1) % s.context;
    });
    std::vector<std::uint8_t> from(4 * row), to(4 * row);
    const bench::timing copy = bench::measure([&] {
      std::memcpy(to.data(), bench::opaque(from.data()), from.size());
      bench::keep(to.data());
    });
    const std::string group = std::string("append_kv, ") + m.name;
    bench::row(group, "fp16 stores a layer a token (2 G d)", std::to_string(2 * row));
    bench::row(group, "append_kv, ns", std::to_string(append.median_ns));
    bench::row(group, "append_kv / memcpy of its bytes", std::to_string(append.median_ns / copy.median_ns));
  }
  return 0;
}
