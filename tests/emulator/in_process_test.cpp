// The emulated device inside the test's own process, reached through its table of calls
// (emulator/in_process.hpp) with no LD_PRELOAD: both nodes open with their drivers'
// versions, a matmul runs through the session and its result is the host's, buffers of
// both nodes live side by side, and a file that is no node passes through to the C library.
#include <regcmd/testing/doctest.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/matmul.hpp>
#include <regcmd/runtime/session.hpp>

#include "in_process.hpp"

using namespace regcmd;

namespace {

// The quick start's matmul: A[m][k] = (m + 1) / 4, B[k][n] = (k + n) % 4 / 2, exact in fp16
// with sums exact in fp32.
constexpr auto mm = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 32}>();

std::vector<float> run_matmul(const runtime::device& dev) {
  const matmul_geometry& g = mm.geometry;
  std::vector<float> A(g.M * g.K), B(g.K * g.N), C(g.M * g.N);
  for (unsigned m = 0; m < g.M; ++m)
    for (unsigned k = 0; k < g.K; ++k) A[m * g.K + k] = float(m + 1) / 4;
  for (unsigned k = 0; k < g.K; ++k)
    for (unsigned n = 0; n < g.N; ++n) B[k * g.N + n] = float((k + n) % 4) / 2;
  auto a = runtime::buffer::create(dev, g.feature_bytes());
  auto b = runtime::buffer::create(dev, g.weight_bytes());
  auto c = runtime::buffer::create(dev, g.output_bytes());
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(c.ok());
  REQUIRE(matmul::pack_features<float>(g, A, a.value().bytes()).ok());
  REQUIRE(matmul::pack_weights<float>(g, B, b.value().bytes()).ok());
  runtime::session npu{dev};
  auto prepared = npu.prepare(mm.code.view());
  REQUIRE(prepared.ok());
  REQUIRE(npu.bind(prepared.value(), {.feature = &a.value(), .weight = &b.value(), .output = &c.value()}).ok());
  const auto report = npu.run(prepared.value());
  REQUIRE_MESSAGE(report.ok(), to_string(report.err()));
  REQUIRE(matmul::unpack_output<float>(g, c.value().bytes(), C).ok());
  return C;
}

}  // namespace

TEST_CASE("in process: the rknpu and rocket nodes open through the emulator's calls, with their drivers' versions") {
  const auto rknpu = runtime::device::open("/dev/dri/card1", 0, emulator::calls());
  REQUIRE_MESSAGE(rknpu.ok(), to_string(rknpu.err()));
  CHECK(rknpu.value().kind() == runtime::driver::rknpu);
  CHECK(rknpu.value().driver_version().rfind("rknpu 0.9.", 0) == 0);
  const auto rocket = runtime::device::open("/dev/accel/accel0", 0, emulator::calls());
  REQUIRE_MESSAGE(rocket.ok(), to_string(rocket.err()));
  CHECK(rocket.value().kind() == runtime::driver::rocket);
  CHECK(rocket.value().driver_version().rfind("rocket ", 0) == 0);
}

TEST_CASE("in process: a matmul runs on either node, each element the host's exact sum") {
  for (const char* node : {"/dev/dri/card1", "/dev/accel/accel0"}) {
    CAPTURE(node);
    const auto dev = runtime::device::open(node, 0, emulator::calls());
    REQUIRE(dev.ok());
    const std::vector<float> C = run_matmul(dev.value());
    // C[m][n] = (m + 1) / 4 · Σk ((k + n) % 4) / 2: each run of 4 k sums to (0+1+2+3)/2 = 3,
    // 16 runs make 48, so C[m][n] = 12 (m + 1) whatever n.
    for (unsigned m = 0; m < 4; ++m)
      for (unsigned n = 0; n < 32; ++n) CHECK(C[m * 32 + n] == 12.0f * float(m + 1));
  }
}

TEST_CASE("in process: a file that is no node is the C library's, opened and closed through the table") {
  const runtime::system_calls& calls = emulator::calls();
  const int fd = calls.open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  CHECK(::fcntl(fd, F_GETFD) >= 0);  // a real descriptor of this process
  CHECK(calls.close(fd) == 0);
  CHECK(::fcntl(fd, F_GETFD) == -1);
}
