// A LLaMA-style feed-forward block as one graph, one submit: gate = x·Wg and up = x·Wu
// (hidden D -> intermediate F), h = SiLU(gate)·up, y = h·Wd (F -> D), all fp16. At decode
// (M = 1) and prefill (M rows); LLaMA-7B's blocks (4096, 11008) at decode and at a prefill
// of 64 rows are built at compile time (clang needs -fconstexpr-steps above its default for
// the prefill's 161 tasks: examples/CMakeLists.txt), every other one at run time by the
// same functions. The down projection's
// K = 11008 is beyond one op (10752): its slices' partials are summed by SDP adds in the
// same submit (docs/graph.md). Every output row checked, or a sample of rows for prefill,
// against the host's FFN computed as the NPU rounds (fp16 intermediates).
//
//   regcmd-ffn [--hidden D] [--intermediate F] [--prefill M]   (default 4096, 11008, 64)
//
// Exit status: 0 checked, 1 a wrong result, 2 an error, 3 no NPU device here.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/graph/blocks.hpp>
#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/runtime/graph_buffers.hpp>
#include <regcmd/runtime/session.hpp>

#include "example_device.hpp"

using namespace regcmd;

namespace {

// LLaMA-7B's blocks, checked and emitted by the compiler.
constexpr auto llama_decode = fixed<llama_ffn(1, 4096, 11008)>();
constexpr auto llama_prefill = fixed<llama_ffn(64, 4096, 11008)>();

// The SiLU table's largest error (bench/README.md's accuracy table), with margin.
constexpr double silu_error = 3e-3;

double fp16(double v) { return half_to_float(float_to_half(static_cast<float>(v))); }

struct weights {
  std::vector<float> x, gate, up, down;
};

// Runs one block: packs x and the weights, one run to warm the fresh buffers, one run
// measured, then checks rows `check` of y. Returns the exit status.
int run_block(const runtime::device& dev, const char* name, const graph_geometry& g, const program_view& program,
              std::uint32_t M, std::uint32_t D, std::uint32_t F, const weights& w, const std::vector<std::uint32_t>& check) {
  const auto fail = [](const error& e) {
    std::fprintf(stderr, "ffn: %s\n", to_string(e).c_str());
    return 2;
  };
  auto io = runtime::graph_buffers::create(dev, g);
  if (!io) return fail(io.err());
  const std::vector<float> x(w.x.begin(), w.x.begin() + std::ptrdiff_t{M} * D);
  for (const auto& [tensor, host] :
       {std::pair{"x", &x}, std::pair{"w_gate", &w.gate}, std::pair{"w_up", &w.up}, std::pair{"w_down", &w.down}})
    if (status s = io.value().pack<float>(tensor, *host); !s) return fail(s.err());

  runtime::session npu{dev};
  auto prepared = npu.prepare(program);
  if (!prepared) return fail(prepared.err());
  if (status s = npu.bind(prepared.value(), io.value().operands()); !s) return fail(s.err());
  auto warm = npu.run(prepared.value());
  if (!warm) return fail(warm.err());
  auto report = npu.run(prepared.value());
  if (!report) return fail(report.err());
  std::vector<float> y(std::size_t{M} * D);
  if (status s = io.value().unpack<float>("y", y); !s) return fail(s.err());

  // The host: gate and up rounded to fp16 as the NPU stores them, SiLU exact, h rounded;
  // the bound: the table's error and h's rounding, through Wd, then y's rounding.
  double worst = 0, worst_allowed = 0;
  bool within = true;
  for (std::uint32_t m : check) {
    std::vector<double> h(F), bound(F);
    for (std::uint32_t f = 0; f < F; ++f) {
      double gate = 0, up = 0;
      for (std::uint32_t k = 0; k < D; ++k) {
        gate += double(x[std::size_t{m} * D + k]) * w.gate[std::size_t{k} * F + f];
        up += double(x[std::size_t{m} * D + k]) * w.up[std::size_t{k} * F + f];
      }
      gate = fp16(gate);
      up = fp16(up);
      h[f] = fp16(fp16(gate / (1 + std::exp(-gate))) * up);
      bound[f] = silu_error * std::abs(up) + std::abs(h[f]) * std::ldexp(1.0, -10);
    }
    // y as the NPU sums it: the down projection's K slices (one when K fits one op), each
    // rounded to fp16, added in order with each sum rounded (docs/graph.md)
    const plan_shape& down = g.steps[4].matmul;
    for (std::uint32_t n = 0; n < D; ++n) {
      double want = 0, allowed = 0, magnitude = 0, table_walk = 0;
      for (std::uint32_t slice = 0; slice < down.slices; ++slice) {
        double partial = 0;
        for (std::uint32_t f = slice * down.k_slice; f < std::min(F, (slice + 1) * down.k_slice); ++f) {
          const double wf = w.down[std::size_t{f} * D + n];
          partial += h[f] * wf;
          table_walk += bound[f] * bound[f] * wf * wf;
          magnitude += std::abs(h[f] * wf);
        }
        want = slice == 0 ? fp16(partial) : fp16(want + fp16(partial));
        // a rounding may go the other way where SiLU's error moved the value: one ulp each
        allowed += (std::abs(partial) + std::abs(want)) * std::ldexp(1.0, -11);
      }
      allowed += magnitude * F * std::ldexp(1.0, -24);  // the NPU's fp32 accumulation
      // The table's errors through Wd: Wd is random, zero-mean and independent of them, so
      // they add as a random walk; six of its standard deviations (a worst case that
      // adds every bound with one sign would allow about as much as y itself).
      allowed += 6 * std::sqrt(table_walk);
      const double error = std::abs(y[std::size_t{m} * D + n] - want);
      within = within && error <= allowed;
      if (error > worst) {
        worst = error;
        worst_allowed = allowed;
      }
    }
  }
  std::printf("%-8s M=%-3u %u -> %u -> %u: %3zu tasks, %u submit%s a run, arena %u of %u intermediate bytes, "
              "%zu rows checked: max error %.2e (allowed %.2e): %s\n",
              name, M, D, F, D, program.tasks.size(), report.value().submits, report.value().submits == 1 ? "" : "s",
              g.arena_bytes(), g.intermediates_total, check.size(), worst, worst_allowed, within ? "PASS" : "FAIL");
  return within ? 0 : 1;
}

bool number(std::string_view text, std::uint32_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && out > 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint32_t D = 4096, F = 11008, rows = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    std::uint32_t* target = a == "--hidden" ? &D : a == "--intermediate" ? &F : a == "--prefill" ? &rows : nullptr;
    if (!target || i + 1 == argc || !number(argv[++i], *target)) {
      std::fprintf(stderr, "usage: regcmd-ffn [--hidden D] [--intermediate F] [--prefill M] (numbers from 1)\n");
      return 2;
    }
  }
  int exit_status = 0;
  std::optional<runtime::device> device = example::open_device("ffn", exit_status);
  if (!device) return exit_status;
  std::printf("device %s: %s\n", device.value().path().c_str(), device.value().driver_version().c_str());

  // Operands scaled so that gate and up stay within a few units (SiLU's interesting range).
  std::mt19937 rng(2026);
  auto draw = [&](std::size_t n, float scale) {
    std::uniform_real_distribution<float> d(-scale, scale);
    std::vector<float> v(n);
    for (float& e : v) e = half_to_float(float_to_half(d(rng)));
    return v;
  };
  const float s = 2.0f / std::sqrt(static_cast<float>(D));
  const weights w{draw(std::size_t{rows} * D, 1.0f), draw(std::size_t{D} * F, s), draw(std::size_t{D} * F, s),
                  draw(std::size_t{F} * D, 2.0f / std::sqrt(static_cast<float>(F)))};

  int status = 0;
  // decode: the compile-time graph at LLaMA-7B's sizes, else the run-time one
  if (D == 4096 && F == 11008) {
    status = std::max(status, run_block(device.value(), "decode", llama_decode.geometry, llama_decode.view(), 1, D, F, w, {0}));
  } else {
    const auto decode = build(llama_ffn(1, D, F));
    if (!decode) return std::fprintf(stderr, "ffn: %s\n", to_string(decode.err()).c_str()), 2;
    status = std::max(status, run_block(device.value(), "decode", decode.value().geometry, decode.value().view(), 1, D, F, w, {0}));
  }
  // prefill: the compile-time graph at LLaMA-7B's sizes and 64 rows, else the run-time one
  const std::vector<std::uint32_t> sample{0, rows / 3, 2 * rows / 3, rows - 1};
  if (D == 4096 && F == 11008 && rows == 64)
    return std::max(status, run_block(device.value(), "prefill", llama_prefill.geometry, llama_prefill.view(), rows, D, F,
                                      w, sample));
  const auto prefill = build(llama_ffn(rows, D, F));
  if (!prefill) return std::fprintf(stderr, "ffn: %s\n", to_string(prefill.err()).c_str()), 2;
  return std::max(status, run_block(device.value(), "prefill", prefill.value().geometry, prefill.value().view(), rows, D,
                                    F, w, sample));
}
