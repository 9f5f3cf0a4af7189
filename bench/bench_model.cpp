// The functional model's throughput on a 512x4096x4096 fp16 matmul (a chained K-split
// plan), against a plain triple loop and a blocked host matmul measured in the same run.
// The host baselines run on the first 32 rows (same K and N, so the same memory traffic
// per row), long enough for a stable rate without minutes of waiting.
#include <algorithm>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include <regcmd/core/half.hpp>
#include <regcmd/model/npu.hpp>
#include <regcmd/programs/matmul/packing.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/rules/program_rules.hpp>

#include "harness.hpp"

using namespace regcmd;

namespace {
constexpr std::uint32_t M = 512, K = 4096, N = 4096, host_rows = 32;

// C[m][n] = sum_k A[m][k] * B[k][n], the textbook loop order.
void triple_loop(const float* a, const float* b, float* c, std::uint32_t rows) {
  for (std::uint32_t m = 0; m < rows; ++m)
    for (std::uint32_t n = 0; n < N; ++n) {
      float sum = 0;
      for (std::uint32_t k = 0; k < K; ++k) sum += a[m * K + k] * b[std::size_t{k} * N + n];
      c[m * N + n] = sum;
    }
}

// Cache-blocked, with the inner loop running along rows of B and C (vectorizes).
void blocked(const float* a, const float* b, float* c, std::uint32_t rows) {
  constexpr std::uint32_t bk = 256, bn = 512;
  std::fill(c, c + std::size_t{rows} * N, 0.0f);
  for (std::uint32_t k0 = 0; k0 < K; k0 += bk)
    for (std::uint32_t n0 = 0; n0 < N; n0 += bn)
      for (std::uint32_t m = 0; m < rows; ++m)
        for (std::uint32_t k = k0; k < k0 + bk; ++k) {
          const float x = a[m * K + k];
          const float* brow = b + std::size_t{k} * N + n0;
          float* crow = c + std::size_t{m} * N + n0;
          for (std::uint32_t n = 0; n < bn; ++n) crow[n] += x * brow[n];
        }
}

double gmacs(double rows, double ns) { return rows * K * N / ns; }
}  // namespace

int main() {
  const matmul_spec spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = M, .K = K, .N = N};
  const result<runtime_program<plan_shape>> built = build(plan_request{spec});
  if (!built) return 1;
  const runtime_program<plan_shape>& p = built.value();

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(std::size_t{M} * K), b(std::size_t{K} * N);
  for (float& v : a) v = half_to_float(float_to_half(dist(rng)));
  for (float& v : b) v = half_to_float(float_to_half(dist(rng)));

  std::vector<std::uint8_t> regcmd(p.code.entries.size() * 8 + 64), feature(matmul::plan_feature_bytes(p.geometry)),
      weight(p.geometry.weight_bytes()), output(matmul::plan_output_bytes(p.geometry));
  if (!matmul::pack_features<float>(p.geometry.whole, a, feature) || !matmul::pack_weights<float>(p.geometry, b, weight)) return 1;
  model::iova_space memory;
  memory.add(0x1000'0000, regcmd);
  memory.add(0x2000'0000, feature);
  memory.add(0x3000'0000, weight);
  memory.add(0x4000'0000, output);
  operand_addresses base{};
  base[static_cast<std::size_t>(operand_role::regcmd)] = 0x1000'0000;
  base[static_cast<std::size_t>(operand_role::feature)] = 0x2000'0000;
  base[static_cast<std::size_t>(operand_role::weight)] = 0x3000'0000;
  base[static_cast<std::size_t>(operand_role::output)] = 0x4000'0000;
  std::vector<entry> code = p.code.entries;
  if (!patch_slots(code, p.code.slots, base)) return 1;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const auto bytes = code[i].to_bytes();
    std::copy(bytes.begin(), bytes.end(), regcmd.begin() + static_cast<std::ptrdiff_t>(i * 8));
  }

  auto run_model = [&](unsigned threads) {
    model::npu npu;
    npu.behaviour = {false, false};
    npu.threads = threads;
    return bench::measure([&] {
      const model::run_result r = npu.run(memory, 0x1000'0000, pc_fetch_amount(p.code.tasks[0].count),
                                          static_cast<std::uint32_t>(p.code.tasks.size()), true);
      if (!r.completed() || !r.faults.empty()) std::abort();
    }, 5, 0);
  };
  std::vector<float> c(std::size_t{host_rows} * N);
  const bench::timing one = run_model(1);
  const bench::timing all = run_model(0);
  const bench::timing naive = bench::measure([&] { triple_loop(a.data(), b.data(), c.data(), host_rows); bench::keep(c.data()); }, 5, 0);
  const bench::timing fast = bench::measure([&] { blocked(a.data(), b.data(), c.data(), host_rows); bench::keep(c.data()); }, 5, 0);

  const double model1 = gmacs(M, one.median_ns), model_all = gmacs(M, all.median_ns);
  const double loop = gmacs(host_rows, naive.median_ns), block = gmacs(host_rows, fast.median_ns);
  std::printf("model %ux%ux%u fp16 (%zu tasks): %.2f s on 1 thread, %.2f s on all; host triple loop %.2f GMAC/s, "
              "blocked %.2f GMAC/s\n", M, K, N, p.code.tasks.size(), one.median_ns / 1e9, all.median_ns / 1e9, loop, block);
  const std::string g = "model, 512x4096x4096 fp16";
  bench::row(g, "model, GMAC/s, 1 thread", bench::fixed(model1));
  bench::row(g, "model, GMAC/s, all threads", bench::fixed(model_all));
  bench::row(g, "host triple loop, GMAC/s", bench::fixed(loop));
  bench::row(g, "host blocked matmul, GMAC/s", bench::fixed(block));
  bench::row(g, "model (1 thread) / triple loop", bench::fixed(model1 / loop, 1));
  bench::row(g, "model (1 thread) / blocked", bench::fixed(model1 / block, 2));
  return 0;
}
