// libFuzzer target: the run-time program doors with random requests (a matmul, a plan, an
// SDP element-wise op, a fused chain). Every input gets a program or a rule error, and every
// program small enough is run on the functional model (which shares no code with programs/)
// with random operands: any fault the model reports (hang, wedge, timeout, wild access,
// zeros, a wrong result) or an output other than the host's is a finding.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <regcmd/core/half.hpp>
#include <regcmd/model/npu.hpp>
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/sdp/packing.hpp>
#include <regcmd/programs/graph/fused.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/packing.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/rules/program_rules.hpp>
#include <regcmd/reference/elementwise.hpp>
#include <regcmd/reference/matmul.hpp>

#include "fuzz_input.hpp"

namespace {
using namespace regcmd;
using fuzzing::reader;

// Operand values in {-1, 0, 1}: every sum a program here makes is exact in fp32 and within
// fp16's range, so the host's result rounded once is what the NPU stores.
struct values {
  std::uint32_t state;
  float next() {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return static_cast<float>(static_cast<int>(state % 3) - 1);
  }
  std::vector<float> take(std::size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = next();
    return v;
  }
};

// What the model runs on: a buffer per role, the program placed at its regcmd IOVA.
struct board {
  model::iova_space memory;
  model::npu npu;
  std::array<std::vector<std::uint8_t>, operand_role_count> buffers;
  operand_addresses base{};

  board() {
    npu.behaviour = {false, false};  // the runtime's warm-up and reset rules have their own tests
    npu.threads = 1;
  }
  std::span<std::uint8_t> buffer(operand_role role, std::size_t bytes) {
    const auto r = static_cast<std::size_t>(role);
    buffers[r].assign(bytes, 0xa5);  // not zero: a byte a program reads but nobody wrote shows
    base[r] = 0x1000'0000u * (r + 1);
    memory.add(base[r], buffers[r]);
    memory.mark_warm(base[r]);
    return buffers[r];
  }
  // True when every task completed without a fault.
  bool run(const program_view& p) {
    std::vector<entry> code(p.entries.begin(), p.entries.end());
    // The PC fetches 16-byte words: a task of an odd entry count reads 8 bytes past its end.
    const std::span<std::uint8_t> regcmd = buffer(operand_role::regcmd, code.size() * 8 + 8);
    if (!patch_slots(code, p.slots, base)) return false;
    for (std::size_t i = 0; i < code.size(); ++i) {
      const auto bytes = code[i].to_bytes();
      std::copy(bytes.begin(), bytes.end(), regcmd.begin() + static_cast<std::ptrdiff_t>(i * 8));
    }
    const model::run_result r = npu.run(memory, base[static_cast<std::size_t>(operand_role::regcmd)] + p.tasks[0].first * 8,
                                        pc_fetch_amount(p.tasks[0].count), static_cast<std::uint32_t>(p.tasks.size()),
                                        p.pingpong);
    return r.faults.empty() && r.tasks_completed == p.tasks.size();
  }
};

void require(bool ok) {
  if (!ok) __builtin_trap();
}

// What the output holds for an exact integer result v, in output precision `out`.
float stored(precision out, double v) {
  if (out == precision::fp16) return reference::to_fp16(v);
  return static_cast<float>(reference::saturate(out, v));
}

std::vector<double> host_matmul(const std::vector<float>& a, const std::vector<float>& b, std::uint32_t M,
                                std::uint32_t K, std::uint32_t N) {
  std::vector<double> c;
  for (const reference::products& p : reference::matmul<float, float>(a, b, M, K, N)) c.push_back(p.sum);
  return c;
}

constexpr std::uint64_t model_budget = 1u << 18;  // MACs or elements per program run
constexpr std::uint64_t buffer_budget = 16u << 20;

// A matmul program (one op or a plan) on the model against the host: `pack_weights` and
// `read_output` are the packers of its kind.
template <class PackWeights, class ReadOutput>
void run_matmul(const program_view& program, const matmul_geometry& g, std::size_t feature_bytes,
                std::size_t weight_bytes, std::size_t output_bytes, PackWeights&& pack_weights,
                ReadOutput&& read_output, values& rng) {
  const std::uint32_t M = g.M, K = g.logical_K, N = g.logical_N;
  if (std::uint64_t{g.M} * g.K * g.N > model_budget || feature_bytes > buffer_budget || output_bytes > buffer_budget)
    return;
  board b;
  const std::vector<float> a = rng.take(std::size_t{M} * K), w = rng.take(std::size_t{K} * N);
  require(matmul::pack_features<float>(g, a, b.buffer(operand_role::feature, feature_bytes)).ok());
  require(pack_weights(std::span<const float>(w), b.buffer(operand_role::weight, weight_bytes)).ok());
  const std::span<std::uint8_t> out = b.buffer(operand_role::output, output_bytes);
  require(b.run(program));
  std::vector<float> c(std::size_t{M} * N);
  require(read_output(std::span<const std::uint8_t>(out), std::span<float>(c)).ok());
  const std::vector<double> want = host_matmul(a, w, M, K, N);
  for (std::size_t i = 0; i < c.size(); ++i) require(c[i] == stored(g.out, want[i]));
}

void run_op(const runtime_program<matmul_geometry>& built, values& rng) {
  const matmul_geometry& g = built.geometry;
  run_matmul(
      built.view(), g, g.feature_bytes(), g.weight_bytes(), g.output_bytes(),
      [&](std::span<const float> w, std::span<std::uint8_t> out) { return matmul::pack_weights<float>(g, w, out); },
      [&](std::span<const std::uint8_t> in, std::span<float> c) { return matmul::unpack_output<float>(g, in, c); }, rng);
}

void run_plan(const runtime_program<plan_shape>& built, values& rng) {
  const plan_shape& p = built.geometry;
  run_matmul(
      built.view(), p.whole, matmul::plan_feature_bytes(p), p.weight_bytes(), matmul::plan_output_bytes(p),
      [&](std::span<const float> w, std::span<std::uint8_t> out) { return matmul::pack_weights<float>(p, w, out); },
      [&](std::span<const std::uint8_t> in, std::span<float> c) { return matmul::finish_plan<float>(p, in, c); }, rng);
}

void run_ew(const runtime_program<ew_geometry>& built, const ew_spec& spec, values& rng) {
  const ew_geometry& g = built.geometry;
  if (std::uint64_t{g.M} * g.N > model_budget) return;
  board b;
  const std::vector<float> x = rng.take(std::size_t{g.M} * g.N);
  const std::vector<float> y = rng.take(g.operand == ew_operand::per_channel ? g.N : std::size_t{g.M} * g.N);
  require(sdp::pack_tensor<float>(g, x, b.buffer(operand_role::feature, g.tensor_bytes())).ok());
  const std::span<std::uint8_t> operand = b.buffer(operand_role::ew_operand, std::max(16u, g.operand_bytes()));
  if (g.operand == ew_operand::per_element) require(sdp::pack_tensor<float>(g, y, operand).ok());
  if (g.operand == ew_operand::per_channel) require(sdp::pack_vector<float>(g, y, operand).ok());
  const std::span<std::uint8_t> out = b.buffer(operand_role::output, g.tensor_bytes());
  require(b.run(built.view()));
  std::vector<float> c(x.size());
  require(sdp::unpack_tensor<float>(g, out, c).ok());
  for (std::uint32_t m = 0; m < g.M; ++m)
    for (std::uint32_t n = 0; n < g.N; ++n) {
      const std::size_t i = std::size_t{m} * g.N + n;
      const float other = g.operand == ew_operand::immediate ? spec.immediate
                          : g.operand == ew_operand::per_channel ? y[n]
                                                                 : y[i];
      require(c[i] == stored(g.dtype, reference::apply(g.op, x[i], other)));
    }
}

void run_fused(const runtime_program<fused_geometry>& built, const fused_spec& spec, values& rng) {
  const fused_geometry& g = built.geometry;
  const std::uint32_t M = g.mm.M, K = g.mm.logical_K, N = g.mm.logical_N;
  if (std::uint64_t{g.mm.M} * g.mm.K * g.mm.N > model_budget) return;
  board b;
  const std::vector<float> a = rng.take(std::size_t{M} * K), w = rng.take(std::size_t{K} * N);
  const std::vector<float> y = rng.take(spec.operand == ew_operand::per_channel ? N : std::size_t{M} * N);
  require(matmul::pack_features<float>(g.mm, a, b.buffer(operand_role::feature, g.mm.feature_bytes())).ok());
  require(matmul::pack_weights<float>(g.mm, w, b.buffer(operand_role::weight, g.mm.weight_bytes())).ok());
  b.buffer(operand_role::intermediate, fused_intermediate_bytes(g));
  const std::span<std::uint8_t> operand = b.buffer(operand_role::ew_operand, std::max(16u, fused_operand_bytes(g)));
  if (spec.operand != ew_operand::immediate) require(pack_fused_operand<float>(g, y, operand).ok());
  const std::span<std::uint8_t> out = b.buffer(operand_role::output, fused_output_bytes(g));
  require(b.run(built.view()));
  std::vector<float> c(std::size_t{M} * N);
  require(unpack_fused_output<float>(g, out, c).ok());
  const std::vector<double> mm = host_matmul(a, w, M, K, N);
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t n = 0; n < N; ++n) {
      const std::size_t i = std::size_t{m} * N + n;
      const float other = spec.operand == ew_operand::immediate ? spec.immediate
                          : spec.operand == ew_operand::per_channel ? y[n]
                                                                    : y[i];
      require(c[i] == stored(precision::fp16, reference::apply(spec.op, stored(precision::fp16, mm[i]), other)));
    }
}

template <class Built>
bool refused_with_a_rule(const Built& b) {
  return !b.ok() && *b.err().violated != no_violation && !b.err().message().empty();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  reader in{data, size};
  const std::uint32_t flags = in.take(2);
  matmul_spec spec;
  spec.dtype = input_precisions{static_cast<precision>(flags & 7), static_cast<precision>(flags & 0x100 ? (flags >> 3) & 7 : flags & 7)};
  spec.out_dtype = static_cast<precision>((flags >> 6) & 7);
  spec.M = in.take(2) % 5000;
  spec.K = in.take(2) % 24000;
  spec.N = in.take(2) % 20000;
  spec.layout = flags & 0x200 ? operand_layout::surface : operand_layout::row_major;
  spec.sched = static_cast<schedule>((flags >> 10) % 3);
  spec.tile_pad = flags & 0x1000 ? tile_padding::none : tile_padding::zero;
  if (flags & 0x2000) spec.feature_pitch = in.take(2) * 16;
  if (flags & 0x4000) spec.output_pitch = in.take(2) * 16;
  plan_options options;
  if (flags & 0x8000) options.k_slice = in.take(2) % 4096;
  options.delta_tasks = in.take(1) & 1;
  values rng{in.take(4) | 1};

  // one op
  if (const auto mm = build(spec); mm.ok()) run_op(mm.value(), rng);
  else require(refused_with_a_rule(mm));
  // an SDP op and a fused chain from the same request
  const std::uint32_t ew_flags = in.take(1);
  // mul, or for an odd K prelu (the same multiply on the negatives only)
  const ew_op op = (ew_flags & 3) == 1 && spec.K % 2 == 1 ? ew_op::prelu : static_cast<ew_op>(ew_flags & 3);
  const ew_spec e{.op = op,
                  .dtype = static_cast<precision>((ew_flags >> 2) & 7),
                  .M = spec.M,
                  .N = spec.N % 9000,
                  .operand = static_cast<ew_operand>((ew_flags >> 5) % 3),
                  .layout = ew_flags & 0x80 ? operand_layout::row_major : operand_layout::surface,
                  .tile_pad = spec.tile_pad,
                  .immediate = static_cast<float>(spec.K % 64) / 8.0f};
  if (std::uint64_t{e.M} * e.N <= 2'000'000) {
    if (const auto built = build(e); built.ok()) run_ew(built.value(), e, rng);
    else require(refused_with_a_rule(built));
    const fused_spec chain_spec{.matmul = spec, .op = e.op, .operand = e.operand, .immediate = e.immediate};
    if (const auto chain = build(chain_spec); chain.ok()) run_fused(chain.value(), chain_spec, rng);
    else require(refused_with_a_rule(chain));
  }
  // a plan, bounded so one input stays fast; its whole program passes every rule
  const auto p = plan(spec, options);
  if (!p.ok()) {
    require(refused_with_a_rule(p));
    return 0;
  }
  if (p.value().tasks() > 512) return 0;
  const auto built = build(plan_request{spec, options});
  require(built.ok());  // a plan that resolves must emit, and its tiles pass every rule together
  require(validate(built.value().view()).ok());
  run_plan(built.value(), rng);
  return 0;
}
