// Chains with an activation or pooling in one submit (regcmd/programs/graph/chain.hpp): how the tasks are
// wired (roles, offsets, ping-pong), the boundary rules, and, on the functional model, that a
// chain computes exactly what its ops compute run one after the other as separate programs.
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <regcmd/core/half.hpp>
#include <regcmd/model/npu.hpp>
#include <regcmd/programs/graph/chain.hpp>

#include "model_board.hpp"

using namespace regcmd;

namespace {

// Random fp16 values in [-1, 1] as raw bytes: the equivalence needs no layout.
std::vector<std::uint8_t> random_fp16(std::size_t bytes, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<std::uint8_t> out(bytes);
  for (std::size_t i = 0; i + 1 < bytes; i += 2) {
    const std::uint16_t h = float_to_half(d(rng));
    out[i] = static_cast<std::uint8_t>(h);
    out[i + 1] = static_cast<std::uint8_t>(h >> 8);
  }
  return out;
}

// Runs `p` with the given buffers (by role); returns the output buffer.
std::vector<std::uint8_t> run(const program_view& p, const std::vector<std::pair<operand_role, std::vector<std::uint8_t>>>& in,
                              std::size_t output_bytes, std::size_t intermediate_bytes = 0) {
  testing::model_board board;
  for (const auto& [role, bytes] : in) {
    std::vector<std::uint8_t>& buffer = board.allocate(role, bytes.size());
    std::copy(bytes.begin(), bytes.end(), buffer.begin());
  }
  if (intermediate_bytes) board.allocate(operand_role::intermediate, intermediate_bytes, 0x5a);
  board.allocate(operand_role::output, output_bytes, 0xee);
  const auto r = board.run(p);
  REQUIRE_MESSAGE(r.faults.empty(), r.faults.front().what);
  REQUIRE(r.tasks_completed == p.tasks.size());
  return board[operand_role::output];
}

operand_role role_of(const program_view& p, std::uint16_t target, std::uint16_t offset, std::size_t t, std::uint32_t* at = nullptr) {
  for (const slot& s : p.slots)
    if (s.entry >= p.tasks[t].first && s.entry < p.tasks[t].first + p.tasks[t].count &&
        p.entries[s.entry].target() == target && p.entries[s.entry].offset() == offset) {
      if (at) *at = s.offset;
      return s.role;
    }
  FAIL("no slot");
  return {};
}

constexpr conv_spec fp16_conv{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 12, .W = 10, .C = 16, .out_channels = 24,
                              .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::same};

}  // namespace

TEST_CASE("conv -> activation -> pooling: one program, intermediates wired in order") {
  const auto built = build(conv_chain_spec{.conv = fp16_conv, .activate = true, .activation = {.fn = activation::silu},
                                       .pool = true, .pooling = {.op = pool_op::max}});
  REQUIRE_MESSAGE(built.ok(), built.err().id());
  const auto& g = built.value().geometry;
  const program_view v = built.value().view();
  REQUIRE(v.tasks.size() == 3);  // conv, SiLU (1 task, the table uploaded), pooling
  CHECK_FALSE(v.pingpong);       // an SDP task runs
  CHECK(v.tasks[0].enable_mask == 0x0d);
  CHECK(v.tasks[1].enable_mask == 0x18);
  CHECK(v.tasks[2].enable_mask == 0x60);
  // conv out -> intermediate + 0; the activation reads it there and writes after it
  CHECK(role_of(v, 0x1001, 0x4020, 0) == operand_role::intermediate);
  std::uint32_t at = 1;
  CHECK(role_of(v, 0x2001, 0x5018, 1, &at) == operand_role::intermediate);
  CHECK(at == 0);
  CHECK(role_of(v, 0x1001, 0x4020, 1, &at) == operand_role::intermediate);
  CHECK(at == g.act_offset);
  CHECK(g.act_offset % 64 == 0);
  CHECK(g.act_offset >= g.conv_bytes());
  CHECK(role_of(v, 0x8001, 0x701c, 2, &at) == operand_role::intermediate);
  CHECK(at == g.act_offset);
  CHECK(role_of(v, 0x4001, 0x6070, 2) == operand_role::output);
  // the activation covers every element of the conv's output: 12 x 10 pixels x 24 -> 32 channels
  CHECK(g.act.elements == 12 * 10 * 32);
  CHECK(g.pooling.out_h == 6);
  CHECK(g.pooling.out_w == 5);
}

TEST_CASE("chain boundary rules: an output precision the SDP cannot read, a table over int8, an int8 average pool") {
  conv_spec fp32 = fp16_conv;
  fp32.out_dtype = precision::fp32;
  auto chain = build(conv_chain_spec{.conv = fp32, .activate = true});
  REQUIRE_FALSE(chain.ok());
  CHECK_BREAKS(chain, rules::fused_precision_path);
  conv_spec int8 = fp16_conv;
  int8.dtype = conv_data::int8;
  int8.out_dtype = precision::int8;
  int8.input = int8.weights = {0.05f, 0};
  int8.output = {0.1f, 0};
  auto lut = build(conv_chain_spec{.conv = int8, .activate = true, .activation = {.fn = activation::sigmoid}});
  REQUIRE_FALSE(lut.ok());
  CHECK_BREAKS(lut, rules::act_lut_precision);
  auto avg = build(conv_chain_spec{.conv = int8, .pool = true, .pooling = {.op = pool_op::average}});
  REQUIRE_FALSE(avg.ok());
  CHECK_BREAKS(avg, rules::pool_int8_average);
  auto mm = build(matmul_act_spec{.matmul = {.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 32, .N = 16}});
  REQUIRE_FALSE(mm.ok());
  CHECK_BREAKS(mm, rules::fused_precision_path);
}

TEST_CASE("on the model, a conv chain computes what its three programs compute one after the other") {
  for (const activation fn : {activation::relu6, activation::leaky_relu, activation::gelu}) {
    CAPTURE(static_cast<int>(fn));
    const conv_chain_spec spec{.conv = fp16_conv, .activate = true, .activation = {.fn = fn, .slope = 0.125f},
                               .pool = true, .pooling = {.op = pool_op::max, .kernel_h = 3, .kernel_w = 3,
                                                         .stride_y = 2, .stride_x = 2, .padding = conv_padding::same}};
    const auto chain = build(spec).value();
    const auto& g = chain.geometry;
    const auto features = random_fp16(conv::feature_bytes(g.conv.conv), 1), weights = random_fp16(conv::weight_bytes(g.conv.conv), 2);
    const auto fused = run(chain.view(), {{operand_role::feature, features}, {operand_role::weight, weights}},
                           g.output_bytes(), g.intermediate_bytes());

    const auto conv_alone = build(fp16_conv).value();
    const auto conv_out = run(conv_alone.view(), {{operand_role::feature, features}, {operand_role::weight, weights}},
                              conv::output_bytes(conv_alone.geometry.conv));
    act_spec a = spec.activation;
    a.M = 1;
    a.N = static_cast<std::uint32_t>(conv_out.size() / 2);
    const auto act = build(a).value();
    const auto act_out = run(act.view(), {{operand_role::feature, conv_out}}, act.geometry.tensor_bytes());
    pool_spec p = spec.pooling;
    p.H = g.conv.conv.out_h;
    p.W = g.conv.conv.out_w;
    p.C = fp16_conv.out_channels;
    const auto pool = build(p).value();
    const auto pooled = run(pool.view(), {{operand_role::feature, act_out}}, pool.geometry.output_bytes());
    CHECK(fused == pooled);
  }
}

TEST_CASE("on the model, matmul -> activation computes what the two programs compute") {
  const matmul_spec mm{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 24, .K = 64, .N = 40};
  for (const activation fn : {activation::relu, activation::silu, activation::exp}) {
    CAPTURE(static_cast<int>(fn));
    const auto chain = build(matmul_act_spec{.matmul = mm, .activation = {.fn = fn}}).value();
    const auto& g = chain.geometry;
    const auto a = random_fp16(g.mm.feature_bytes(), 3), b = random_fp16(g.mm.weight_bytes(), 4);
    const auto fused = run(chain.view(), {{operand_role::feature, a}, {operand_role::weight, b}}, g.act.tensor_bytes(),
                           g.mm.output_bytes());
    const auto matmul = build(mm).value();
    const auto c = run(matmul.view(), {{operand_role::feature, a}, {operand_role::weight, b}}, g.mm.output_bytes());
    const auto act = build(act_spec{.fn = fn, .M = g.mm.M, .N = g.mm.N}).value();
    CHECK(fused == run(act.view(), {{operand_role::feature, c}}, act.geometry.tensor_bytes()));
  }
}
