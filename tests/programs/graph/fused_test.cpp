// Fused matmul -> SDP chains and the per-channel scaled matmul: encoding, rules, and end to
// end on the functional model against a host computation.
#include <regcmd/testing/doctest.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <regcmd/model/npu.hpp>
#include <regcmd/programs/graph/fused.hpp>
#include <regcmd/programs/matmul/packing.hpp>
#include <regcmd/rules/program_rules.hpp>

#include "model_board.hpp"

using namespace regcmd;
using model::fault_kind;

namespace {
constexpr std::uint16_t dpu = 0x1001, rdma = 0x2001;

operand_role role_at(const program_view& p, std::uint16_t target, std::uint16_t offset) {
  for (const slot& s : p.slots)
    if (p.entries[s.entry].target() == target && p.entries[s.entry].offset() == offset) return s.role;
  FAIL("no slot");
  return {};
}

// Buffers of a fused chain: A, B, the intermediate C, the SDP's operand and its output.
struct chain_bench : testing::model_board {
  std::vector<std::uint8_t>&a, &w, &c, &b, &out;
  explicit chain_bench(const runtime_program<fused_geometry>& p)
      : a(allocate(operand_role::feature, p.geometry.mm.feature_bytes())),
        w(allocate(operand_role::weight, p.geometry.mm.weight_bytes())),
        c(allocate(operand_role::intermediate, fused_intermediate_bytes(p.geometry))),
        b(allocate(operand_role::ew_operand, std::max<std::uint32_t>(16, fused_operand_bytes(p.geometry)))),
        out(allocate(operand_role::output, fused_output_bytes(p.geometry), 0xee)) {}
};

// Runs a chain on random data; the largest difference from the host result: the matmul in
// double rounded to fp16 (as the DPU writes it), then the op in fp32, rounded to fp16.
double run_chain(const fused_spec& spec, std::uint32_t seed) {
  auto built = build(spec);
  REQUIRE_MESSAGE(built.ok(), built.err().id());
  const runtime_program<fused_geometry>& p = built.value();
  const fused_geometry& g = p.geometry;
  const std::uint32_t M = spec.matmul.M, K = spec.matmul.K, N = spec.matmul.N;
  chain_bench bench(p);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  auto half = [](float v) { return half_to_float(float_to_half(v)); };
  std::vector<float> a(std::size_t{M} * K), w(std::size_t{K} * N);
  std::vector<float> b(spec.operand == ew_operand::per_channel ? N : std::size_t{M} * N);
  for (float& v : a) v = half(d(rng));
  for (float& v : w) v = half(d(rng));
  for (float& v : b) v = half(d(rng) * 2);
  REQUIRE(matmul::pack_features<float>(g.mm, a, bench.a).ok());
  REQUIRE(matmul::pack_weights<float>(g.mm, w, bench.w).ok());
  if (spec.operand != ew_operand::immediate) REQUIRE(pack_fused_operand<float>(g, b, bench.b).ok());
  const auto r = bench.run(p.view());
  REQUIRE_MESSAGE(r.faults.empty(), r.faults.front().what);
  REQUIRE(r.tasks_completed == p.view().tasks.size());
  std::vector<float> out(std::size_t{M} * N);
  REQUIRE(unpack_fused_output<float>(g, bench.out, out).ok());
  double worst = 0;
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t n = 0; n < N; ++n) {
      double acc = 0;
      for (std::uint32_t k = 0; k < K; ++k) acc += double(a[m * K + k]) * w[k * N + n];
      const float cm = half(static_cast<float>(acc));
      const float y = spec.operand == ew_operand::per_channel ? b[n]
                      : spec.operand == ew_operand::immediate ? spec.immediate
                                                              : b[std::size_t{m} * N + n];
      float want = spec.op == ew_op::mul ? cm * y : spec.op == ew_op::add ? cm + y
                   : spec.op == ew_op::max ? std::max(cm, y) : std::min(cm, y);
      want = half(want);
      // the model accumulates in fp32: allow the difference of one fp16 rounding of C
      worst = std::max(worst, std::abs(double(want) - out[std::size_t{m} * N + n]) / (1 + std::abs(want)));
    }
  return worst;
}
}  // namespace

TEST_CASE("a fused chain: the matmul writes the intermediate, the SDP reads it flat") {
  const auto p = build(per_channel_scaled_matmul(16, 64, 64)).value();
  const auto v = p.view();
  REQUIRE(v.tasks.size() == 2);
  CHECK(v.tasks[0].enable_mask == 0xd);
  CHECK(v.tasks[1].enable_mask == 0x18);
  CHECK_FALSE(v.pingpong);
  CHECK(role_at(v, dpu, 0x4020) == operand_role::intermediate);  // the matmul's DST_BASE_ADDR first
  CHECK_REGISTER(v, reg::DPU_DATA_FORMAT::from_bits(0x48000002), testing::in_task{0});              // fp16 -> fp16 (reference)
  CHECK_REGISTER(v, reg::DPU_OUT_CVT_SCALE::from_bits(0x00010001), testing::in_task{0});              // FP32TOFP16_EN
  // the vendor's per-channel mul: per element with a broadcast operand
  CHECK_REGISTER(v, reg::DPU_EW_CFG::from_bits(0x20800384), testing::in_task{1});
  CHECK_REGISTER(v, reg::DPU_RDMA_RDMA_ERDMA_CFG::from_bits(0x8000000a), testing::in_task{1});
  CHECK_REGISTER(v, reg::DPU_RDMA_RDMA_FEATURE_MODE_CFG::from_bits(0x00017849), testing::in_task{1});
  CHECK_REGISTER(v, reg::DPU_DATA_CUBE_WIDTH::from_bits(16 * 64 / 8 - 1), testing::in_task{1});  // 128 pixels of 8 fp16
  CHECK(role_at(v, rdma, 0x5018) == operand_role::intermediate);
  CHECK(role_at(v, rdma, 0x5038) == operand_role::ew_operand);
  CHECK(p.geometry.ew.N == 64);
}

TEST_CASE("fused chains on the model against the host") {
  // the per-channel scaled matmul at any N (the reference's decode N = 1, 3, 17, 33)
  for (const std::uint32_t N : {1u, 3u, 17u, 33u, 64u}) {
    CAPTURE(N);
    CHECK(run_chain(per_channel_scaled_matmul(8, 128, N), N) < 2e-3);
  }
  CHECK(run_chain({.matmul = {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 32, .K = 256, .N = 48},
                   .op = ew_op::add, .operand = ew_operand::per_element}, 11) < 2e-3);
  CHECK(run_chain({.matmul = {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 32},
                   .op = ew_op::max, .operand = ew_operand::immediate, .immediate = 0.0f}, 12) < 2e-3);
  // a C of 700 x 128 fp16 takes two SDP tasks after the matmul
  const auto big = build(fused_spec{.matmul = {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 700, .K = 256, .N = 128},
                                .op = ew_op::add, .operand = ew_operand::per_channel});
  REQUIRE(big.ok());
  CHECK(big.value().view().tasks.size() == 3);
  CHECK(run_chain({.matmul = {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 700, .K = 256, .N = 128},
                   .op = ew_op::add, .operand = ew_operand::per_channel}, 13) < 2e-3);
}

TEST_CASE("the fused chain's rules, and its matmul's own, refuse at run time with their ids") {
  CHECK_BREAKS(build(fused_spec{.matmul = {.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 32}}), rules::fused_precision_path);
  CHECK_BREAKS(build(fused_spec{.matmul = {.dtype = precision::int8, .out_dtype = precision::int32, .M = 4, .K = 64, .N = 32}}), rules::fused_precision_path);
  CHECK_BREAKS(build(fused_spec{.matmul = {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 32,
                       .layout = operand_layout::surface}}), rules::fused_layout);
  CHECK_BREAKS(build(fused_spec{.matmul = {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 32, .output_pitch = 128}}), rules::ew_line_stride);
  CHECK_BREAKS(build(fused_spec{.matmul = {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 32},
            .op = ew_op::mul, .operand = ew_operand::immediate}), rules::ew_immediate);
  // the matmul's own rules still apply
  CHECK_BREAKS(build(per_channel_scaled_matmul(4, 20000, 32)), rules::k_single_op_max);
}

TEST_CASE("program rules on hand-made chains: the precision path, ping-pong, the SDP's feature precision") {
  const auto fp32_matmul = build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 32}).value();
  const auto add = resolve_ew({.op = ew_op::add, .M = 16, .N = 8, .layout = operand_layout::row_major}).value();
  program<256, 2> chain;
  chain.pingpong = false;
  REQUIRE(fill(chain, [&](program_writer& w) {
    w.bind(operand_binding{}(operand_role::output, operand_role::intermediate));
    emit_task(w, matmul::make_task(fp32_matmul.geometry));
    w.bind(operand_binding{}(operand_role::feature, operand_role::intermediate));
    sdp::emit(w, add);
  }).ok());
  CHECK_BREAKS(validate(chain.view()), rules::sdp_precision_path);

  // Regression (fuzz_validate): only the task just before an SDP was compared with what it
  // reads; a second SDP on the matmul's fp16 result, reading it as int8, validated
  const auto fp16_matmul = build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 32}).value();
  const auto int8_sdp = resolve_ew({.op = ew_op::add, .dtype = precision::int8, .M = 16, .N = 16, .layout = operand_layout::row_major}).value();
  program<512, 3> reread;
  reread.pingpong = false;
  REQUIRE(fill(reread, [&](program_writer& w) {
    w.bind(operand_binding{}(operand_role::output, operand_role::intermediate));
    emit_task(w, matmul::make_task(fp16_matmul.geometry));
    w.bind(operand_binding{}(operand_role::feature, operand_role::intermediate));
    sdp::emit(w, add);
    sdp::emit(w, int8_sdp);
  }).ok());
  CHECK_BREAKS(validate(reread.view()), rules::sdp_precision_path);
  program<512, 3> twice;  // the same fp16 SDP twice is fine
  twice.pingpong = false;
  REQUIRE(fill(twice, [&](program_writer& w) {
    w.bind(operand_binding{}(operand_role::output, operand_role::intermediate));
    emit_task(w, matmul::make_task(fp16_matmul.geometry));
    w.bind(operand_binding{}(operand_role::feature, operand_role::intermediate));
    sdp::emit(w, add);
    sdp::emit(w, add);
  }).ok());
  CHECK(validate(twice.view()).ok());

  program<64, 1> lone;
  REQUIRE(fill(lone, [&](program_writer& w) { sdp::emit(w, add); }).ok());
  lone.pingpong = true;
  CHECK_BREAKS(validate(lone.view()), rules::sdp_pingpong);
  lone.pingpong = false;
  CHECK(validate(lone.view()).ok());
  for (std::uint32_t i = 0; i < lone.entry_count; ++i)
    if (lone.entries[i].target() == rdma && lone.entries[i].offset() == 0x5044)
      lone.entries[i] = lone.entries[i].with_value(
          encode(reg::DPU_RDMA_RDMA_FEATURE_MODE_CFG{.FLYING_MODE = 1, .PROC_PRECISION = precision::int32,
                                                      .BURST_LEN = 15, .IN_PRECISION = precision::int32})
              .value()
              .value());
  CHECK_BREAKS(validate(lone.view()), rules::sdp_feature_precision);
}

TEST_CASE("the model stalls a chained SDP fed bytes of another precision") {
  // buffers sized by a valid chain of the same shape; the intermediate large enough for fp32
  const auto valid = build(per_channel_scaled_matmul(4, 64, 32)).value();
  chain_bench bench(valid);
  bench.allocate(operand_role::intermediate, 4 * 32 * 4);
  // an unchecked chain: a fp32-output matmul, then a fp16 SDP on its result
  const auto fp32_matmul = build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 32}).value();
  const auto add = resolve_ew({.op = ew_op::add, .M = 16, .N = 8, .layout = operand_layout::row_major}).value();
  program<256, 2> chain;
  chain.pingpong = false;
  REQUIRE(fill(chain, [&](program_writer& w) {
    w.bind(operand_binding{}(operand_role::output, operand_role::intermediate));
    emit_task(w, matmul::make_task(fp32_matmul.geometry));
    w.bind(operand_binding{}(operand_role::feature, operand_role::intermediate));
    sdp::emit(w, add);
  }).ok());
  const auto r = bench.run(chain.view());
  REQUIRE(r.faults.size() == 1);
  CHECK(r.faults[0].kind == fault_kind::timeout);
  CHECK(r.faults[0].task == 1);
  CHECK(r.tasks_completed == 1);
}

TEST_CASE("a fused chain at compile time: two tasks, N padded to 32, the SDP task's enable 0x18") {
  constexpr auto p = fixed<per_channel_scaled_matmul(4, 64, 17)>();
  static_assert(p.code.task_count == 2);
  static_assert(p.geometry.mm.N == 32);
  CHECK(p.code.tasks[1].enable_mask == 0x18);
}
