// LLaMA's decoder layer: its rule, its ops, and one layer with the logits tail on the model
// (a prompt of 4, then one token) against the float64 reference model.
#include <regcmd/testing/doctest.hpp>

#include <cmath>
#include <memory>
#include <cstdint>
#include <random>
#include <vector>

#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/llm/decoder_layer.hpp>
#include <regcmd/reference/llama.hpp>

#include "model_board.hpp"

using namespace regcmd;

namespace {
constexpr llama_layer_spec tiny_decode{.M = 1, .dim = 256, .heads = 8, .kv_heads = 2, .ffn = 688, .context = 256, .vocab = 1024};

std::uint32_t op_count(const large_graph_spec& g) { return g.count; }

// n values uniform in offset ± scale, each an fp16 value.
std::vector<float> random_fp16(std::mt19937& rng, std::size_t n, double scale, double offset) {
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<float> out(n);
  for (float& x : out) x = half_to_float(float_to_half(static_cast<float>(offset + u(rng))));
  return out;
}
}  // namespace

TEST_CASE("rule llama-shape: the dimension split evenly over the heads, and the parts' own rules") {
  CHECK(check_llama_layer(tiny_decode).ok());
  llama_layer_spec s = tiny_decode;
  s.heads = 6;
  CHECK_BREAKS(check_llama_layer(s), rules::llama_shape);
  CHECK_BREAKS(build(llama_decoder_layer(s, layer_tail::next_layer)), rules::llama_shape);
  CHECK_BREAKS(build(llama_layer_inputs(s)), rules::llama_shape);
  s = tiny_decode;
  s.kv_heads = 3;
  CHECK_BREAKS(check_llama_layer(s), rules::attention_shape);
  s = tiny_decode;
  s.dim = 272;  // heads of 34
  s.heads = 8;
  CHECK_BREAKS(check_llama_layer(s), rules::attention_shape);
  s = tiny_decode;
  s.vocab = 0;
  CHECK_BREAKS(check_llama_layer(s), rules::shape_nonzero);
}

TEST_CASE("the decoder layer's ops and tasks at decode and prefill") {
  // attention 17 ops (scores, a masked softmax of 15, values), W_o and the residual 2, the
  // feed-forward norm 6, the feed-forward 5, the residual 1: 31; the next layer's inputs 17
  // (norm 6, three projections, two RoPEs of 4), or the logits 7 (norm 6, the LM head)
  CHECK(op_count(llama_decoder_layer(tiny_decode, layer_tail::next_layer)) == 48);
  CHECK(op_count(llama_decoder_layer(tiny_decode, layer_tail::logits)) == 38);
  CHECK(op_count(llama_layer_inputs(tiny_decode)) == 17);
  for (const std::uint32_t M : {1u, 16u}) {
    llama_layer_spec s = tiny_decode;
    s.M = M;
    const auto layer = build(llama_decoder_layer(s, layer_tail::next_layer));
    REQUIRE_MESSAGE(layer.ok(), to_string(layer.err()));
    const large_graph_geometry& g = layer.value().geometry;
    CHECK(g.find("x_out")->read_back);
    CHECK(g.find("x")->kind == tensor_kind::input);
    CHECK(g.find("q")->kind == tensor_kind::input);
    CHECK(g.find("attn.k_cache")->kind == tensor_kind::weight);
    for (const char* out : {"q_next", "k_next", "v_next"}) CHECK(g.find(out)->kind == tensor_kind::output);
    MESSAGE("tiny LLaMA layer, M " << M << ": " << layer.value().view().tasks.size() << " tasks, one submit");
  }
}

namespace {
// One layer, its inputs graph and its layer graph (logits tail) for M tokens, each on a board.
struct one_layer {
  llama_layer_spec s;
  decltype(build(large_graph_spec{})) inputs, layer;
  testing::model_board in_board, layer_board;

  one_layer(const llama_layer_spec& spec, const llama_layer_weights& w, const reference::llama_params& p)
      : s(spec), inputs(build(llama_layer_inputs(spec))), layer(build(llama_decoder_layer(spec, layer_tail::logits))) {
    REQUIRE_MESSAGE(inputs.ok(), to_string(inputs.err()));
    REQUIRE_MESSAGE(layer.ok(), to_string(layer.err()));
    in_board.allocate_each(inputs.value().geometry.buffer_bytes, 0x5a);
    layer_board.allocate_each(layer.value().geometry.buffer_bytes, 0x5a);
    const auto ki = llama_inputs_constants(s, w);
    REQUIRE(ki.ok());
    REQUIRE(pack_constants(inputs.value().geometry, ki.value(), in_board[operand_role::weight], in_board[operand_role::ew_operand]).ok());
    const auto kl = llama_layer_constants(s, w, nullptr, p.final_norm, p.lm_head);
    REQUIRE(kl.ok());
    REQUIRE(pack_constants(layer.value().geometry, kl.value(), layer_board[operand_role::weight],
                           layer_board[operand_role::ew_operand])
                .ok());
  }

  // The run at positions first..: x [M][D] in; k and v of each token out (for other boards'
  // caches), the logits and x_out.
  void run(const std::vector<float>& x, std::uint32_t first, std::vector<float>& k, std::vector<float>& v,
           std::vector<float>& logits, std::vector<float>& x_out) {
    const large_graph_geometry& gi = inputs.value().geometry;
    const large_graph_geometry& gl = layer.value().geometry;
    const std::uint32_t Hd = s.heads * s.head_dim(), Gd = s.kv_heads * s.head_dim();
    REQUIRE(pack_tensor<float>(gi, "x", x, in_board[gi.find("x")->role]).ok());
    const auto ri = llama_run_constants(s, first, false, true);
    REQUIRE(ri.ok());
    REQUIRE(pack_constants(gi, ri.value(), {}, in_board[operand_role::ew_operand]).ok());
    REQUIRE(in_board.run(inputs.value().view()).faults.empty());
    std::vector<float> q(std::size_t{s.M} * Hd);
    k.resize(std::size_t{s.M} * Gd);
    v.resize(k.size());
    REQUIRE(unpack_tensor<float>(gi, "q_next", in_board[operand_role::output], q).ok());
    REQUIRE(unpack_tensor<float>(gi, "k_next", in_board[operand_role::output], k).ok());
    REQUIRE(unpack_tensor<float>(gi, "v_next", in_board[operand_role::output], v).ok());
    append(first, k, v);
    REQUIRE(pack_tensor<float>(gl, "q", q, layer_board[gl.find("q")->role]).ok());
    REQUIRE(pack_tensor<float>(gl, "x", x, layer_board[gl.find("x")->role]).ok());
    const auto rl = llama_run_constants(s, first, true, false);
    REQUIRE(rl.ok());
    REQUIRE(pack_constants(gl, rl.value(), {}, layer_board[operand_role::ew_operand]).ok());
    REQUIRE(layer_board.run(layer.value().view()).faults.empty());
    logits.resize(std::size_t{s.M} * s.vocab);
    x_out.resize(x.size());
    REQUIRE(unpack_tensor<float>(gl, "logits", layer_board[operand_role::output], logits).ok());
    REQUIRE(unpack_tensor<float>(gl, "x_out", layer_board[operand_role::intermediate], x_out).ok());
  }
  void append(std::uint32_t first, const std::vector<float>& k, const std::vector<float>& v) {
    const std::size_t Gd = std::size_t{s.kv_heads} * s.head_dim();
    for (std::uint32_t m = 0; m < k.size() / Gd; ++m)
      REQUIRE(append_kv(layer.value().geometry, layer_board[operand_role::weight], "attn", s.attention(), first + m,
                        std::span<const float>(k).subspan(m * Gd, Gd), std::span<const float>(v).subspan(m * Gd, Gd))
                  .ok());
  }
};

}  // namespace

TEST_CASE("one decoder layer on the model, a prompt of 4 then a token, against the float64 model") {
  const reference::llama_config c{.dim = 64, .heads = 2, .kv_heads = 1, .ffn = 80, .context = 32, .vocab = 64, .layers = 1};
  std::mt19937 rng(7);
  const auto random = [&](std::size_t n, double scale, double offset = 0) { return random_fp16(rng, n, scale, offset); };
  const std::uint32_t D = 64, F = 80, V = 64;
  const double s = 1 / std::sqrt(double(D));
  reference::llama_params p;
  p.layers.push_back({.attention_norm = random(D, 0.2, 1), .wq = random(D * D, s), .wk = random(D * 32, s), .wv = random(D * 32, s),
                      .wo = random(D * D, s), .ffn_norm = random(D, 0.2, 1), .w_gate = random(D * F, s),
                      .w_up = random(D * F, s), .w_down = random(F * D, 1 / std::sqrt(double(F)))});
  p.final_norm = random(D, 0.2, 1);
  p.lm_head = random(D * V, s);
  const reference::llama_layer_params& r = p.layers[0];
  const llama_layer_weights w{r.attention_norm, r.wq, r.wk, r.wv, r.wo, r.ffn_norm, r.w_gate, r.w_up, r.w_down};
  reference::llama_reference model(c, p);

  const llama_layer_spec prompt{.M = 4, .dim = D, .heads = 2, .kv_heads = 1, .ffn = F, .context = 32, .vocab = V};
  llama_layer_spec step = prompt;
  step.M = 1;
  one_layer prefill(prompt, w, p), decode(step, w, p);
  const std::vector<float> x = random(5 * D, 1);
  std::vector<float> k, v, logits, x_out;
  prefill.run({x.begin(), x.begin() + 4 * D}, 0, k, v, logits, x_out);
  decode.append(0, k, v);  // the prompt's keys and values, into the other program's caches
  const std::vector<double> x0(x.begin(), x.begin() + 4 * D), want0 = model.logits(model.layer(0, x0, 0));
  const double prompt_cos = reference::cosine_similarity(logits, want0);
  decode.run({x.begin() + 4 * D, x.end()}, 4, k, v, logits, x_out);
  const std::vector<double> x1(x.begin() + 4 * D, x.end()), x1_out = model.layer(0, x1, 4), want1 = model.logits(x1_out);
  const double token_cos = reference::cosine_similarity(logits, want1);
  double stream = 0;
  for (std::uint32_t i = 0; i < D; ++i) stream = std::max(stream, std::abs(x_out[i] - x1_out[i]));
  MESSAGE("one layer: logits' 1 - cosine " << 1 - prompt_cos << " (prompt of 4), " << 1 - token_cos
                                           << " (the token at 4); residual stream's worst error " << stream);
  CHECK(prompt_cos >= 0.999);
  CHECK(token_cos >= 0.999);
  CHECK(stream <= 2e-2);
}

TEST_CASE("a whole token in one submit: two layers on the model, three tokens from position 0, against the float64 model") {
  const reference::llama_config c{.dim = 64, .heads = 2, .kv_heads = 1, .ffn = 80, .context = 32, .vocab = 64, .layers = 2};
  const llama_layer_spec s{.M = 1, .dim = 64, .heads = 2, .kv_heads = 1, .ffn = 80, .context = 32, .vocab = 64};
  std::mt19937 rng(11);
  const auto random = [&](std::size_t n, double scale, double offset = 0) { return random_fp16(rng, n, scale, offset); };
  const double w = 1 / std::sqrt(64.0);
  reference::llama_params p;
  std::vector<llama_layer_weights> layers;
  for (int l = 0; l < 2; ++l) {
    p.layers.push_back({.attention_norm = random(64, 0.2, 1), .wq = random(64 * 64, w), .wk = random(64 * 32, w),
                        .wv = random(64 * 32, w), .wo = random(64 * 64, w), .ffn_norm = random(64, 0.2, 1),
                        .w_gate = random(64 * 80, w), .w_up = random(64 * 80, w), .w_down = random(80 * 64, 1 / std::sqrt(80.0))});
    const reference::llama_layer_params& r = p.layers.back();
    layers.push_back({r.attention_norm, r.wq, r.wk, r.wv, r.wo, r.ffn_norm, r.w_gate, r.w_up, r.w_down});
  }
  p.final_norm = random(64, 0.2, 1);
  p.lm_head = random(64 * 64, w);
  reference::llama_reference model(c, p);

  // 2 layers: inputs 17, 2 x 39, the second layer's inputs 17, the logits 7
  const basic_graph_spec<128> spec = llama_decode_token<128>(s, 2);
  CHECK(spec.count == 119);
  const auto built = build(spec);
  REQUIRE_MESSAGE(built.ok(), to_string(built.err()));
  const basic_graph_geometry<128>& g = built.value().geometry;
  testing::model_board board;
  board.allocate_each(g.buffer_bytes, 0x5a);
  const auto constants = llama_token_constants(s, layers, p.final_norm, p.lm_head);
  REQUIRE(constants.ok());
  REQUIRE(pack_constants(g, constants.value(), board[operand_role::weight], board[operand_role::ew_operand]).ok());
  attention_spec a = s.attention();
  a.self_slot = true;
  const std::vector<float> x = random(3 * 64, 1);
  double worst = 1;
  for (std::uint32_t position = 0; position < 3; ++position) {
    const std::vector<float> token(x.begin() + position * 64, x.begin() + (position + 1) * 64);
    REQUIRE(pack_tensor<float>(g, "x", token, board[g.find("x")->role]).ok());
    const auto run = llama_token_run_constants(s, 2, position);
    REQUIRE(run.ok());
    REQUIRE(pack_constants(g, run.value(), {}, board[operand_role::ew_operand]).ok());
    REQUIRE(board.run(built.value().view()).faults.empty());
    std::vector<float> logits(64), k(32), v(32);
    REQUIRE(unpack_tensor<float>(g, "logits", board[operand_role::output], logits).ok());
    // each layer's key and value, read back, into its caches for the next token
    for (const char* layer : {"l0", "l1"}) {
      REQUIRE(unpack_tensor<float>(g, graph_name::prefixed(layer, "k").view(), board[operand_role::intermediate], k).ok());
      REQUIRE(unpack_tensor<float>(g, graph_name::prefixed(layer, "v").view(), board[operand_role::intermediate], v).ok());
      REQUIRE(append_kv(g, board[operand_role::weight], graph_name::prefixed(layer, "attn").view(), a, position, k, v).ok());
    }
    std::vector<double> h(token.begin(), token.end());
    for (std::uint32_t l = 0; l < 2; ++l) h = model.layer(l, h, position);
    worst = std::min(worst, reference::cosine_similarity(logits, model.logits(h)));
  }
  MESSAGE("a whole token in one submit, 2 layers, 3 tokens: " << built.value().view().tasks.size()
                                                                << " tasks, logits' 1 - cosine at most " << 1 - worst);
  CHECK(worst >= 0.999);
  CHECK_BREAKS(build(llama_decode_token<128>(llama_layer_spec{.M = 2, .dim = 64, .heads = 2, .kv_heads = 1, .ffn = 80,
                                                                .context = 32, .vocab = 64}, 2)),
               rules::llama_shape);
  // 18 keys and values to read back: refused before any op is added
  const auto nine = std::make_unique<basic_graph_spec<256>>(llama_decode_token<256>(s, 9));
  CHECK(nine->refused == &rules::llama_shape);
  CHECK(nine->count == 0);
}
