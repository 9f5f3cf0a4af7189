// A matmul built and checked at compile time, run on the NPU, its result checked on the host.
#include <cstdio>
#include <vector>

#include <regcmd/decode/format.hpp>    // to_string(error), format_text(decode(entry), index)
#include <regcmd/programs/matmul.hpp>  // matmul_spec, fixed<>, matmul::pack_features, matmul::pack_weights, matmul::unpack_output
#include <regcmd/runtime/session.hpp>  // device, buffer, session

using namespace regcmd;

constexpr auto mm = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 32}>();

int fail(const error& e) {
  std::fprintf(stderr, "quickstart: %s\n", to_string(e).c_str());
  return 1;
}

int main() {
  const matmul_geometry& g = mm.geometry;
  std::printf("program: %u entries in %u task; the first: %s\n", mm.code.entry_count, mm.code.task_count,
              format_text(decode(mm.code.entries[0]), 0).c_str());

  // A[m][k] = (m + 1) / 4 and B[k][n] = (k + n) % 4 / 2: exact in fp16, their sums exact in fp32.
  std::vector<float> A(g.M * g.K), B(g.K * g.N), C(g.M * g.N);
  for (unsigned m = 0; m < g.M; ++m)
    for (unsigned k = 0; k < g.K; ++k) A[m * g.K + k] = float(m + 1) / 4;
  for (unsigned k = 0; k < g.K; ++k)
    for (unsigned n = 0; n < g.N; ++n) B[k * g.N + n] = float((k + n) % 4) / 2;

  auto dev = runtime::device::open();  // $REGCMD_DEVICE, else the rknpu or rocket node found
  if (!dev) return fail(dev.err());
  auto a = runtime::buffer::create(dev.value(), g.feature_bytes());
  auto b = runtime::buffer::create(dev.value(), g.weight_bytes());
  auto c = runtime::buffer::create(dev.value(), g.output_bytes());
  if (!a) return fail(a.err());
  if (!b) return fail(b.err());
  if (!c) return fail(c.err());
  if (status s = matmul::pack_features<float>(g, A, a.value().bytes()); !s) return fail(s.err());
  if (status s = matmul::pack_weights<float>(g, B, b.value().bytes()); !s) return fail(s.err());

  runtime::session npu{dev.value()};
  auto prepared = npu.prepare(mm.code.view());  // every program rule again, then placed
  if (!prepared) return fail(prepared.err());
  if (status s = npu.bind(prepared.value(), {.feature = &a.value(), .weight = &b.value(), .output = &c.value()}); !s)
    return fail(s.err());
  auto report = npu.run(prepared.value());  // a fresh output costs a warm-up submit first
  if (!report) return fail(report.err());
  if (status s = matmul::unpack_output<float>(g, c.value().bytes(), C); !s) return fail(s.err());

  unsigned equal = 0;
  for (unsigned m = 0; m < g.M; ++m)
    for (unsigned n = 0; n < g.N; ++n) {
      double sum = 0;
      for (unsigned k = 0; k < g.K; ++k) sum += double(A[m * g.K + k]) * B[k * g.N + n];
      equal += C[m * g.N + n] == sum;
    }
  std::printf("ran on %s in %u submits; C[3][1] = %g; %u of %u elements equal the host's\n", dev.value().path().c_str(),
              report.value().submits, C[3 * g.N + 1], equal, g.M * g.N);
  return equal == g.M * g.N ? 0 : 1;
}
