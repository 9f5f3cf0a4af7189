// The matmul API's host overhead: the time librknnrt.so spends around the submit in
// rknn_matmul_run (lookups, locks, operand checks, staging, the session's run) against
// regcmd's own session run of the same program, for the GGML backends' shapes (M = 1 and
// 64, K = 4096, N = 4096 and 11008; types 1, 2, 10; native B, normal A and C: their layouts).
// On the emulated device (LD_PRELOAD=libregcmd-emu.so) a run's host time is its wall time
// less the time spent in the submit ioctls (the model's arithmetic, regcmd_emu_stats); on a
// board it is the wall time, NPU included.
// Exit status 3: no device.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/runtime/session.hpp>
#include <rknn/rknn_matmul_api.h>

#include "emu_stats.h"
#include "harness.hpp"

using namespace regcmd;
namespace rt = regcmd::runtime;

namespace {

// Nanoseconds the emulated device spent in submits so far (0 on a board).
std::uint64_t device_ns() {
  using get = int (*)(regcmd_emu_stats*);
  static const auto fn = reinterpret_cast<get>(dlsym(RTLD_DEFAULT, "regcmd_emu_get_stats"));
  if (!fn) return 0;
  regcmd_emu_stats s{};
  fn(&s);
  return s.submit_ns;
}

// The median host time of `runs` calls of f, in microseconds.
template <class F>
double host_us(F&& f, int runs) {
  std::vector<double> samples;
  for (int i = 0; i < runs; ++i) {
    const std::uint64_t device_before = device_ns();
    const auto start = std::chrono::steady_clock::now();
    if (!f()) std::exit(1);
    const double wall = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    samples.push_back((wall - static_cast<double>(device_ns() - device_before)) / 1000);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

struct shape {
  rknn_matmul_type type;
  int M, K, N;
};

void fill_random(std::uint8_t* p, std::size_t n, precision in) {
  std::mt19937 rng(7);
  for (std::size_t i = 0; i < n; ++i)  // small values: fp16 halves with small exponents, int8/int4 anything
    p[i] = static_cast<std::uint8_t>(in == precision::fp16 && i % 2 ? 0x30 + rng() % 8 : rng());
}

void measure(const rt::device& dev, const shape& s, int runs) {
  const precision in = s.type == RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 ? precision::fp16
                       : s.type == RKNN_INT8_MM_INT8_TO_INT32       ? precision::int8
                                                                    : precision::int4;
  const precision out = in == precision::fp16   ? precision::fp32
                        : in == precision::int8 ? precision::int32
                                                : precision::int16;
  const std::string name = std::string(get_matmul_type_string(s.type)) + " " + std::to_string(s.M) + "x" +
                           std::to_string(s.K) + "x" + std::to_string(s.N);

  // the matmul API
  rknn_matmul_info info{};
  info.M = s.M, info.K = s.K, info.N = s.N, info.type = s.type, info.B_layout = RKNN_MM_LAYOUT_NATIVE;
  rknn_matmul_ctx ctx = 0;
  rknn_matmul_io_attr io{};
  if (rknn_matmul_create(&ctx, &info, &io) != RKNN_SUCC) std::exit(1);
  rknn_tensor_mem* a = rknn_create_mem(ctx, io.A.size);
  rknn_tensor_mem* b = rknn_create_mem(ctx, io.B.size);
  rknn_tensor_mem* c = rknn_create_mem(ctx, io.C.size);
  if (!a || !b || !c) std::exit(1);
  fill_random(static_cast<std::uint8_t*>(a->virt_addr), io.A.size, in);
  fill_random(static_cast<std::uint8_t*>(b->virt_addr), io.B.size, in);
  rknn_matmul_set_io_mem(ctx, a, &io.A);
  rknn_matmul_set_io_mem(ctx, b, &io.B);
  rknn_matmul_set_io_mem(ctx, c, &io.C);
  if (rknn_matmul_run(ctx) != RKNN_SUCC) std::exit(1);  // builds and prepares; warms C up
  const double api = host_us([&] { return rknn_matmul_run(ctx) == RKNN_SUCC; }, runs);

  // regcmd's session, the same program (one K segment, K whole: the library's plan)
  const auto K = static_cast<std::uint32_t>(s.K);
  const auto code = build(plan_request{{.dtype = in,
                                .out_dtype = out,
                                .M = static_cast<std::uint32_t>(s.M),
                                .K = K,
                                .N = static_cast<std::uint32_t>(s.N),
                                .tile_pad = tile_padding::none}, {.whole_k = true}});
  if (!code) std::exit(1);
  const plan_shape& g = code.value().geometry;
  auto fa = rt::buffer::create(dev, matmul::plan_feature_bytes(g)).value();
  auto fb = rt::buffer::create(dev, g.weight_bytes()).value();
  auto fc = rt::buffer::create(dev, matmul::plan_output_bytes(g)).value();
  fill_random(fa.bytes().data(), fa.size(), in);
  fill_random(fb.bytes().data(), fb.size(), in);
  rt::session npu{dev};
  auto p = npu.prepare(code.value().view()).value();
  if (!npu.bind(p, {.feature = &fa, .weight = &fb, .output = &fc})) std::exit(1);
  if (!npu.run(p)) std::exit(1);
  const double session = host_us([&] { return npu.run(p, {.use = rt::cores::round_robin}).ok(); }, runs);

  bench::row("matmul API, " + name, "tasks", std::to_string(code.value().view().tasks.size()));
  bench::row("matmul API, " + name, "host us: rknn_matmul_run / session run",
             bench::fixed(api, 1) + " / " + bench::fixed(session, 1));
  bench::row("matmul API, " + name, "rknn_matmul_run / session run", bench::fixed(api / session));
  rknn_destroy_mem(ctx, a);
  rknn_destroy_mem(ctx, b);
  rknn_destroy_mem(ctx, c);
  rknn_matmul_destroy(ctx);
}

}  // namespace

int main() {
  auto dev = rt::device::open();
  if (!dev) {
    std::fprintf(stderr, "bench_rknn: no NPU device (%s)\n", std::string(dev.err().id()).c_str());
    return 3;
  }
  std::printf("bench_rknn on %s (%s): host time per run, median of 5 runs (201 for 1x64x64)%s\n",
              dev.value().path().c_str(), dev.value().driver_version().c_str(),
              device_ns() || dlsym(RTLD_DEFAULT, "regcmd_emu_get_stats")
                  ? ", the emulated device's submit time left out"
                  : ", NPU time included");
  for (rknn_matmul_type type :
       {RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, RKNN_INT8_MM_INT8_TO_INT32, RKNN_INT4_MM_INT4_TO_INT16})
    for (int M : {1, 64})
      for (int N : {4096, 11008}) measure(dev.value(), {type, M, 4096, N}, 5);
  // A shape whose operands stay in the caches: the library's own work without the misses
  // that a pass of the model over megabytes of weights leaves behind.
  measure(dev.value(), {RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, 1, 64, 64}, 201);
}
