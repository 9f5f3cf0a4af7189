// A tiny LLaMA generating tokens on the NPU: 4 decoder layers of dimension 256, 8 query heads
// and 2 key/value heads of 32, a feed-forward of 688, a vocabulary of 1024, a context of 256,
// seeded random weights in fp16. A 16-token prompt in one prefill (M = 16), then greedy
// decoding (M = 1), every op of every layer on the NPU. The prompt: one submit for the first
// layer's q, k, v and one per layer (llm/decoder_layer.hpp), the host appending each layer's
// new keys and values to its caches between submits (llm/attention.hpp says why). A new
// token: one submit for all layers (llama_decode_token: each attention takes the token's own
// key and value from the graph, the host appends them after the run), or with --per-layer
// one a layer as the prompt.
//
// The same model in double (regcmd/reference/llama.hpp) decodes alongside: at every step the
// logits' cosine similarity must be at least 0.999 and both must choose the same token. Then
// a second run with int8 weights and activations (W8A8, tiny_llama_int8.hpp), its agreement
// with float64 reported (its logits' cosine must stay above 0.99).
//
//   regcmd-tiny-llama [--tokens N] [--per-layer]   (N: default 64; 3 ≤ N ≤ 240: the context holds 256)
//
// Exit status: 0 agreed, 1 disagreed, 2 an error, 3 no NPU device here.
#include <algorithm>
#include <chrono>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <regcmd/core/roofline.hpp>
#include <regcmd/decode/accounting.hpp>
#include <regcmd/decode/format.hpp>
#include <regcmd/programs/llm.hpp>
#include <regcmd/reference/llama.hpp>
#include <regcmd/runtime/graph_buffers.hpp>
#include <regcmd/runtime/session.hpp>

#include "example_device.hpp"
#include "tiny_llama_int8.hpp"
#include "tiny_llama_model.hpp"

using namespace regcmd;
using namespace tiny_llama;

namespace {

struct run_totals {
  unsigned submits = 0;
  double append_us = 0;  // the host appending keys and values to the caches
};

// One run of p with a run's constants (the masks and angles of its positions) packed.
template <std::size_t MaxOps>
status run_with(runtime::session& npu, on_device<MaxOps>& p, const result<std::vector<norm_constant>>& constants,
                run_totals& totals) {
  if (!constants) return constants.err();
  if (status st = pack_constants(p.geometry, constants.value(), {}, p.io.bytes(operand_role::ew_operand)); !st) return st;
  const auto report = npu.run(p.prepared);
  if (!report) return report.err();
  totals.submits += report.value().submits;
  return {};
}

// Where a run's keys and values go besides its own caches: (layer, first position, k, v).
using kv_sink = std::function<status(std::uint32_t, std::uint32_t, const std::vector<float>&, const std::vector<float>&)>;

// Rows of keys and values ([M][G·d] each) at positions first ... into the caches of a graph's
// attention `prefix`.
template <class Geometry>
status append_rows(const Geometry& g, std::span<std::uint8_t> weights, std::string_view prefix, const attention_spec& a,
                   std::uint32_t first, const std::vector<float>& k, const std::vector<float>& v) {
  const std::size_t row = std::size_t{kv_heads} * (dim / heads);
  for (std::size_t m = 0; m < k.size() / row; ++m)
    if (status st = append_kv(g, weights, prefix, a, first + static_cast<std::uint32_t>(m),
                              std::span<const float>(k).subspan(m * row, row), std::span<const float>(v).subspan(m * row, row));
        !st)
      return st;
  return {};
}

// Every program of one run size M: the first layer's inputs, then each layer (the last with
// the logits), each with its weights packed.
class stack {
 public:
  status create(runtime::session& npu, const runtime::device& dev, std::uint32_t M, const reference::llama_params& p) {
    s_ = spec_of(M);
    for (std::uint32_t l = 0; l <= layers; ++l) {
      const large_graph_spec g = l == 0        ? llama_layer_inputs(s_)
                                 : l < layers ? llama_decoder_layer(s_, layer_tail::next_layer)
                                              : llama_decoder_layer(s_, layer_tail::logits);
      const auto constants = constants_of(l, p);
      if (!constants) return constants.err();
      on_device<>& d = programs_.emplace_back();
      if (status st = place(d, npu, dev, g, constants.value()); !st) return st;
      bound_ns_ += d.bound_ns;
      tasks_ += d.tasks;
    }
    return {};
  }

  // Tokens at positions first .. first + M - 1 (their embeddings [M][dim]) through every
  // layer: the logits [M][vocab]. The keys and values go to this stack's caches and to
  // `other`'s (the other programs that decode after it).
  result<std::vector<float>> run(runtime::session& npu, const std::vector<float>& x_in, std::uint32_t first,
                                 const kv_sink& other, run_totals& totals) {
    const std::uint32_t M = s_.M, d = dim / heads;
    std::vector<float> x = x_in, q(std::size_t{M} * heads * d), k(std::size_t{M} * kv_heads * d), v(k.size());
    std::vector<float> logits(std::size_t{M} * vocab);
    for (std::uint32_t l = 0; l <= layers; ++l) {
      on_device<>& p = programs_[l];
      if (status st = p.io.pack<float>("x", x); !st) return st.err();
      if (l > 0) {
        if (status st = p.io.pack<float>("q", q); !st) return st.err();
        // this layer's new keys and values, computed by the last submit, into its caches
        const auto start = std::chrono::steady_clock::now();
        if (status st = append(l - 1, first, k, v); !st) return st.err();
        if (status st = other(l - 1, first, k, v); !st) return st.err();
        totals.append_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
      }
      if (status st = run_with(npu, p, llama_run_constants(s_, first, l > 0, l < layers), totals); !st) return st.err();
      if (l == layers) {
        if (status st = p.io.unpack<float>("logits", logits); !st) return st.err();
        break;
      }
      for (const auto& [name, host] : {std::pair{"q_next", &q}, std::pair{"k_next", &k}, std::pair{"v_next", &v}})
        if (status st = p.io.unpack<float>(name, *host); !st) return st.err();
      if (l > 0) {  // the residual stream, read back from the arena
        if (status st = p.io.read_back(operand_role::intermediate); !st) return st.err();
        if (status st = p.io.unpack<float>("x_out", x); !st) return st.err();
      }
    }
    return logits;
  }

  double bound_ns() const { return bound_ns_; }
  std::size_t tasks() const { return tasks_; }
  std::size_t programs() const { return programs_.size(); }

  // Layer `layer`'s keys and values of tokens first ... into its caches (program layer + 1
  // runs it).
  status append(std::uint32_t layer, std::uint32_t first, const std::vector<float>& k, const std::vector<float>& v) {
    on_device<>& p = programs_[layer + 1];
    return append_rows(p.geometry, p.io.bytes(operand_role::weight), "attn", s_.attention(), first, k, v);
  }

 private:
  result<std::vector<norm_constant>> constants_of(std::uint32_t l, const reference::llama_params& p) const {
    if (l == 0) return llama_inputs_constants(s_, weights_of(p.layers[0]));
    if (l == layers) return llama_layer_constants(s_, weights_of(p.layers[l - 1]), nullptr, p.final_norm, p.lm_head);
    const llama_layer_weights next = weights_of(p.layers[l]);
    return llama_layer_constants(s_, weights_of(p.layers[l - 1]), &next);
  }
  llama_layer_spec s_{};
  std::deque<on_device<>> programs_;  // stable addresses: each io views its geometry
  double bound_ns_ = 0;
  std::size_t tasks_ = 0;
};

// A whole token at decode in one submit (llama_decode_token): every layer's attention takes
// its token's own key and value from the graph; the host appends them after the run.
class token_program {
 public:
  static constexpr std::size_t capacity = 256;  // 231 ops for 4 layers

  status create(runtime::session& npu, const runtime::device& dev, const reference::llama_params& p) {
    s_ = spec_of(1);
    attention_ = s_.attention();
    attention_.self_slot = true;
    std::vector<llama_layer_weights> weights;
    for (const auto& layer : p.layers) weights.push_back(weights_of(layer));
    const auto constants = llama_token_constants(s_, weights, p.final_norm, p.lm_head);
    if (!constants) return constants.err();
    program_ = std::make_unique<on_device<capacity>>();
    return place(*program_, npu, dev, llama_decode_token<capacity>(s_, layers), constants.value());
  }

  // Layer `layer`'s keys and values of tokens first ... into its caches.
  status append(std::uint32_t layer, std::uint32_t first, const std::vector<float>& k, const std::vector<float>& v) {
    const graph_name attention = graph_name::prefixed(detail::layer_prefix(layer).view(), "attn");
    return append_rows(program_->geometry, program_->io.bytes(operand_role::weight), attention.view(), attention_, first, k, v);
  }

  // The token at `position` (its embedding [dim]): the logits [vocab].
  result<std::vector<float>> run(runtime::session& npu, const std::vector<float>& x, std::uint32_t position, run_totals& totals) {
    on_device<capacity>& p = *program_;
    if (status st = p.io.pack<float>("x", x); !st) return st.err();
    if (status st = run_with(npu, p, llama_token_run_constants(s_, layers, position), totals); !st) return st.err();
    std::vector<float> logits(vocab), k(std::size_t{kv_heads} * (dim / heads)), v(k.size());
    if (status st = p.io.unpack<float>("logits", logits); !st) return st.err();
    // every layer's key and value, read back, into its caches for the next token
    if (status st = p.io.read_back(operand_role::intermediate); !st) return st.err();
    for (std::uint32_t layer = 0; layer < layers; ++layer) {
      const graph_name prefix = detail::layer_prefix(layer);
      if (status st = p.io.unpack<float>(graph_name::prefixed(prefix.view(), "k").view(), k); !st) return st.err();
      if (status st = p.io.unpack<float>(graph_name::prefixed(prefix.view(), "v").view(), v); !st) return st.err();
      const auto start = std::chrono::steady_clock::now();
      if (status st = append(layer, position, k, v); !st) return st.err();
      totals.append_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    }
    return logits;
  }

  double bound_ns() const { return program_->bound_ns; }
  std::size_t tasks() const { return program_->tasks; }

 private:
  llama_layer_spec s_{};
  attention_spec attention_{};
  std::unique_ptr<on_device<capacity>> program_;  // a megabyte of geometry: on the heap
};

}  // namespace

int main(int argc, char** argv) {
  std::uint32_t new_tokens = 64;
  bool per_layer = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--per-layer") {
      per_layer = true;
      continue;
    }
    bool ok = a == "--tokens" && i + 1 < argc;
    if (ok) {
      const std::string_view n = argv[++i];
      const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), new_tokens);
      ok = ec == std::errc{} && end == n.data() + n.size() && new_tokens >= 3 && new_tokens + prompt_length <= context;
    }
    if (!ok) {
      std::fprintf(stderr, "usage: regcmd-tiny-llama [--tokens N] [--per-layer] (N: 3 to %u)\n", context - prompt_length);
      return 2;
    }
  }
  int exit_status = 0;
  std::optional<runtime::device> device = example::open_device("tiny-llama", exit_status);
  if (!device) return exit_status;
  std::printf("device %s: %s\n", device.value().path().c_str(), device.value().driver_version().c_str());
  const auto fail = [](const error& e) {
    std::fprintf(stderr, "tiny-llama: %s\n", to_string(e).c_str());
    return 2;
  };

  const reference::llama_params model = random_model(2026);
  reference::llama_reference host({.dim = dim, .heads = heads, .kv_heads = kv_heads, .ffn = ffn, .context = context,
                                   .vocab = vocab, .layers = layers},
                                  model);
  runtime::session npu{device.value()};
  // prefill one submit a layer; decode a whole token in one submit, or (--per-layer) one a layer
  stack prefill, decode_layers;
  token_program decode_token;
  if (status s = prefill.create(npu, device.value(), prompt_length, model); !s) return fail(s.err());
  if (status s = per_layer ? decode_layers.create(npu, device.value(), 1, model) : decode_token.create(npu, device.value(), model); !s)
    return fail(s.err());
  std::printf("tiny LLaMA: %u layers, dim %u, %u heads (%u key/value), ffn %u, vocab %u, context %u, fp16\n", layers, dim,
              heads, kv_heads, ffn, vocab, context);
  std::printf("programs: prefill (M=%u) %zu tasks in %zu submits a run; decode (M=1) %zu tasks in %zu submit%s a run\n",
              prompt_length, prefill.tasks(), prefill.programs(), per_layer ? decode_layers.tasks() : decode_token.tasks(),
              per_layer ? decode_layers.programs() : 1, per_layer ? "s" : "");
  const kv_sink to_decoder = [&](std::uint32_t layer, std::uint32_t first, const std::vector<float>& k,
                                 const std::vector<float>& v) {
    return per_layer ? decode_layers.append(layer, first, k, v) : decode_token.append(layer, first, k, v);
  };
  const kv_sink nowhere = [](std::uint32_t, std::uint32_t, const std::vector<float>&, const std::vector<float>&) { return status{}; };

  std::vector<std::uint32_t> prompt(prompt_length);
  std::mt19937 rng(7);
  for (std::uint32_t& t : prompt) t = std::uniform_int_distribution<std::uint32_t>(0, vocab - 1)(rng);

  // The prompt: both sides' logits of every row, the next token from the last.
  run_totals prompt_totals;
  const auto first_logits = prefill.run(npu, embed(model, prompt), 0, to_decoder, prompt_totals);
  if (!first_logits) return fail(first_logits.err());
  const std::vector<double> want = host.forward(prompt, 0);
  double worst = 1;
  for (std::uint32_t m = 0; m < prompt_length; ++m)
    worst = std::min(worst, reference::cosine_similarity(std::span(first_logits.value()).subspan(m * vocab, vocab), std::span(want).subspan(m * vocab, vocab)));
  std::uint32_t token = argmax(std::span(first_logits.value()).last(vocab));
  bool same = token == argmax(std::span(want).last(vocab));
  std::printf("prefill: %u tokens, 1 - cosine of the logits at most %.2e over its %u rows\n", prompt_length, 1 - worst,
              prompt_length);

  // Greedy decoding, the device's token fed to both. The first step's runs are each program's
  // first on its buffers (with a warm-up submit: runtime/session.hpp); the figures are the
  // other steps'.
  std::vector<std::uint32_t> generated{token};
  run_totals totals, warm_up;
  double device_us = 0;
  std::uint32_t first_disagreement = 0;
  for (std::uint32_t step = 1; step < new_tokens; ++step) {
    const std::uint32_t position = prompt_length + step - 1;
    const auto start = std::chrono::steady_clock::now();
    run_totals& counted = step == 1 ? warm_up : totals;
    const std::vector<float> x = embed(model, std::span(&token, 1));
    const auto logits = per_layer ? decode_layers.run(npu, x, position, nowhere, counted) : decode_token.run(npu, x, position, counted);
    if (step > 1) device_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (!logits) return fail(logits.err());
    const std::vector<double> host_logits = host.forward(std::span(&token, 1), position);
    worst = std::min(worst, reference::cosine_similarity(logits.value(), host_logits));
    token = argmax(logits.value());
    if (token != argmax(host_logits) && same) first_disagreement = step;
    same = same && token == argmax(host_logits);
    generated.push_back(token);
  }
  const unsigned steps = new_tokens - 1, measured = std::max(steps - 1, 1u);
  const double decode_bound_ns = per_layer ? decode_layers.bound_ns() : decode_token.bound_ns();
  std::printf("generated:");
  for (std::uint32_t t : generated) std::printf(" %u", t);
  std::printf("\n");
  std::printf("decode: %u tokens, %.1f tokens/s on this device (%.0f us a token, the host's appends %.1f us of it), "
              "%.2f submits a token; bound %.0f tokens/s (%.1f us a token at the SoC's peak rates, one core)\n",
              steps, measured / (device_us * 1e-6), device_us / measured, totals.append_us / measured,
              double(totals.submits) / measured,
              1e9 / decode_bound_ns, decode_bound_ns / 1e3);
  const bool agreed = same && worst >= 0.999;
  std::printf("fp16 against float64: 1 - cosine at most %.2e over every step, %s tokens%s: %s\n", 1 - worst,
              same ? "the same" : "different", same ? "" : (" from step " + std::to_string(first_disagreement)).c_str(),
              agreed ? "PASS" : "FAIL");

  // The second run: int8 weights and activations (tiny_llama_int8.hpp), the prompt token by
  // token, the same number of new tokens; the float64 model follows its tokens, and says at
  // each step whether it would have chosen the same one.
  w8a8_model int8;
  if (status s = int8.create(npu, device.value(), model); !s) return fail(s.err());
  reference::llama_reference host8({.dim = dim, .heads = heads, .kv_heads = kv_heads, .ffn = ffn, .context = context,
                                    .vocab = vocab, .layers = layers},
                                   model);
  double worst8 = 1;
  unsigned submits8 = 0, warm_up8 = 0, chosen_alike = 0;
  for (std::uint32_t position = 0; position < prompt_length + new_tokens - 1; ++position) {
    const std::uint32_t input = position < prompt_length ? prompt[position] : token;
    auto logits = int8.step(npu, embed(model, std::span(&input, 1)), position, position == 0 ? warm_up8 : submits8);
    if (!logits) return fail(logits.err());
    const std::vector<double> want8 = host8.forward(std::span(&input, 1), position);
    worst8 = std::min(worst8, reference::cosine_similarity(logits.value(), want8));
    if (position + 1 >= prompt_length) {
      token = argmax(logits.value());
      chosen_alike += token == argmax(want8);
    }
  }
  // a quantization gone wrong reads as noise (cosine near 0), not as a little under 1
  const bool int8_sane = worst8 >= 0.99;
  std::printf("int8 (W8A8, per-channel weights, per-token activations): %u tokens after the prompt fed one by one, "
              "%.2f submits a token (each int8 matmul ends at the host); against float64: 1 - cosine at most %.2e, "
              "the float64 model's own choice at %u of %u steps: %s\n",
              new_tokens, double(submits8) / (prompt_length + new_tokens - 2), 1 - worst8, chosen_alike, new_tokens,
              int8_sane ? "PASS" : "FAIL");
  return agreed && int8_sane ? 0 : 1;
}
