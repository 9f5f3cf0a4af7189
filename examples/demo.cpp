// The main job: build a matmul program at compile time, print it decoded, run it on the
// NPU (a board's rknpu /dev/dri/card1 or rocket /dev/accel/accel0, or the emulated device
// on top of the functional model) with random data, and check every output against a host
// matmul.
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/packing.hpp>
#include <regcmd/runtime/session.hpp>

#include "example_device.hpp"

using namespace regcmd;

// One line, checked at compile time: a shape that breaks a rule would not compile.
constexpr auto mm = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 64, .K = 512, .N = 256}>();

// Exit status: 0 checked, 1 a wrong result, 2 an error, 3 no NPU device here.
int main() {
  int exit_status = 0;
  std::optional<runtime::device> device = example::open_device("demo", exit_status);
  if (!device) return exit_status;
  const matmul_geometry& g = mm.geometry;
  std::printf("fp16 x fp16 -> fp32 matmul, M=%u K=%u N=%u, row-major: %u entries in %u task\n", g.M, g.K, g.N,
              mm.code.entry_count, mm.code.task_count);
  for (std::size_t i = 0; i < mm.code.entry_count; ++i)
    std::printf("%s\n", format_text(decode(mm.code.entries[i]), i).c_str());
  std::printf("\ndevice %s: %s\n", device.value().path().c_str(), device.value().driver_version().c_str());
  auto a = runtime::buffer::create(device.value(), g.feature_bytes());
  auto b = runtime::buffer::create(device.value(), g.weight_bytes());
  auto c = runtime::buffer::create(device.value(), g.output_bytes());
  if (!a || !b || !c) return 2;

  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> A(std::size_t{g.M} * g.K), B(std::size_t{g.K} * g.N), C(std::size_t{g.M} * g.N);
  for (float& v : A) v = half_to_float(float_to_half(dist(rng)));
  for (float& v : B) v = half_to_float(float_to_half(dist(rng)));
  if (!matmul::pack_features<float>(g, A, a.value().bytes()) || !matmul::pack_weights<float>(g, B, b.value().bytes())) return 2;

  runtime::session npu{device.value()};
  auto prepared = npu.prepare(mm.code.view());
  if (!prepared) return 2;
  if (status s = npu.bind(prepared.value(), {.feature = &a.value(), .weight = &b.value(), .output = &c.value()}); !s) {
    std::fprintf(stderr, "demo: %s\n", to_string(s.err()).c_str());
    return 2;
  }
  const auto report = npu.run(prepared.value());
  if (!report) {
    std::fprintf(stderr, "demo: %s\n", to_string(report.err()).c_str());
    return 2;
  }
  if (!matmul::unpack_output<float>(g, c.value().bytes(), C)) return 2;

  double max_rel = 0;
  for (std::uint32_t m = 0; m < g.M; ++m)
    for (std::uint32_t n = 0; n < g.N; ++n) {
      double ref = 0, scale = 0;
      for (std::uint32_t k = 0; k < g.K; ++k) {
        ref += double(A[m * g.K + k]) * B[k * g.N + n];
        scale += std::abs(double(A[m * g.K + k]) * B[k * g.N + n]);
      }
      max_rel = std::max(max_rel, std::abs(C[m * g.N + n] - ref) / scale);
    }
  const double tolerance = (g.K + 2) * std::ldexp(1.0, -24);  // fp32 accumulation
  std::printf("ran in %u submits (a warm-up for the fresh output buffer first): max_rel_error=%.3g, tolerance %.3g: %s\n",
              report.value().submits, max_rel, tolerance, max_rel <= tolerance ? "PASS" : "FAIL");
  return max_rel <= tolerance ? 0 : 1;
}
