// regcmd-run: run a matmul on the NPU with seeded random data and check every output.
//
//   regcmd-run matmul --in fp16 --out fp32 -M 64 -K 512 -N 256 [options]
//
// Prints one line: max_abs_error=<x> max_rel_error=<y> submits=<n> us_per_submit=<t>
// Exit status: 0 every output within tolerance, 1 some output is not, 2 an error.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/packing.hpp>
#include <regcmd/programs/plan.hpp>
#include <regcmd/runtime/session.hpp>

namespace {

constexpr const char* usage = R"(usage: regcmd-run matmul --in P --out P -M N -K N -N N [options]

Builds the matmul (as a plan: K-split, N/M tiling when the shape needs them), fills the
operands with seeded random data, runs it on the NPU, checks every output element against
a host matmul and prints
  max_abs_error=<x> max_rel_error=<y> submits=<n> us_per_submit=<t>

options:
  --in P          fp16 | int8 | int4                        (default fp16)
  --out P         fp32 | fp16 | int32 | int16               (default fp32)
  -M N, -K N, -N N
  --layout L      row_major | surface                       (default row_major)
  --cores C       1 (one core) | 3 (the 3-core mask, tasks split in three chains)
  --round-robin   with --cores 1: rotate the repeats over the three cores
  --device PATH   the NPU node (default $REGCMD_DEVICE, else /dev/dri/card1)
  --seed S        random data seed                          (default 1)
  --repeat R      submits to time after the first           (default 1)
  --delta         delta tasks (later tasks carry only what changed)
  --k-slice N     K-split slice (multiple of 32, <= 2048)
  --nonblocking   submit with a fence and wait on it
  -h, --help      this text

The relative error is |C - ref| / sum_k |A B|; the tolerance is (K + 2) * 2^-24 of it for
fp32 accumulation, plus 2^-11 for a fp16 output; integers must be exact.
Exit status: 0 within tolerance, 1 not, 2 an error (with its message).
)";

int fail(const std::string& message) {
  std::fprintf(stderr, "regcmd-run: %s\n", message.c_str());
  return 2;
}

std::optional<std::uint64_t> number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9' || v > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace regcmd;
  if (argc >= 2 && (std::string_view(argv[1]) == "-h" || std::string_view(argv[1]) == "--help")) {
    std::fputs(usage, stdout);
    return 0;
  }
  if (argc < 2 || std::string_view(argv[1]) != "matmul") return fail("the first argument is the program: matmul (see --help)");

  matmul_spec spec{};
  plan_options options{};
  std::string device_path;
  std::uint64_t seed = 1, repeat = 1;
  bool three_cores = false, round_robin = false, nonblocking = false;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--delta") { options.delta_tasks = true; continue; }
    if (a == "--round-robin") { round_robin = true; continue; }
    if (a == "--nonblocking") { nonblocking = true; continue; }
    if (a == "-h" || a == "--help") { std::fputs(usage, stdout); return 0; }
    if (i + 1 >= argc) return fail("option '" + std::string(a) + "' needs a value");
    const std::string_view v = argv[++i];
    const auto n = number(v);
    const auto p = info_of<precision>().find(v);
    bool ok = true;
    if (a == "--in") ok = p && (spec.in = static_cast<precision>(p->value), true);
    else if (a == "--out") ok = p && (spec.out = static_cast<precision>(p->value), true);
    else if (a == "-M") ok = n && *n <= 0xffff'ffffu && (spec.M = static_cast<std::uint32_t>(*n), true);
    else if (a == "-K") ok = n && *n <= 0xffff'ffffu && (spec.K = static_cast<std::uint32_t>(*n), true);
    else if (a == "-N") ok = n && *n <= 0xffff'ffffu && (spec.N = static_cast<std::uint32_t>(*n), true);
    else if (a == "--k-slice") ok = n && *n <= 0xffff'ffffu && (options.k_slice = static_cast<std::uint32_t>(*n), true);
    else if (a == "--layout") {
      ok = v == "row_major" || v == "surface";
      spec.layout = v == "surface" ? operand_layout::surface : operand_layout::row_major;
    } else if (a == "--cores") {
      ok = v == "1" || v == "3";
      three_cores = v == "3";
    } else if (a == "--device") device_path = v;
    else if (a == "--seed") ok = n && (seed = *n, true);
    else if (a == "--repeat") ok = n && *n >= 1 && (repeat = *n, true);
    else return fail("unknown option '" + std::string(a) + "' (see --help)");
    if (!ok) return fail("bad value '" + std::string(v) + "' for " + std::string(a));
  }

  // The program.
  const result<plan_program> built = build_plan(spec, options);
  if (!built) return fail(to_string(built.err()));
  const plan_shape& shape = built.value().shape;
  const matmul_geometry& g = shape.whole;
  const program_view program = built.value().view();

  // The device and the operands.
  auto dev = runtime::device::open(device_path);
  if (!dev) return fail(to_string(dev.err()));
  runtime::session npu{dev.value()};
  auto feature = runtime::buffer::create(dev.value(), plan_feature_bytes(shape));
  auto weight = runtime::buffer::create(dev.value(), shape.weight_bytes());
  auto output = runtime::buffer::create(dev.value(), plan_output_bytes(shape));
  for (const auto* b : {&feature, &weight, &output})
    if (!*b) return fail(to_string(b->err()));

  std::mt19937_64 rng(seed);
  const std::size_t MK = std::size_t{spec.M} * spec.K, KN = std::size_t{spec.K} * spec.N, MN = std::size_t{spec.M} * spec.N;
  std::vector<double> a(MK), b(KN);
  status packed;
  if (g.in == precision::fp16) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> af(MK), bf(KN);
    for (std::size_t i = 0; i < MK; ++i) a[i] = af[i] = half_to_float(float_to_half(dist(rng)));
    for (std::size_t i = 0; i < KN; ++i) b[i] = bf[i] = half_to_float(float_to_half(dist(rng)));
    packed = pack_features<float>(g, af, feature.value().bytes());
    if (packed) packed = pack_weights<float>(shape, bf, weight.value().bytes());
  } else {
    std::uniform_int_distribution<int> dist(g.in == precision::int4 ? -8 : -128, g.in == precision::int4 ? 7 : 127);
    std::vector<std::int8_t> ai(MK), bi(KN);
    for (std::size_t i = 0; i < MK; ++i) a[i] = ai[i] = static_cast<std::int8_t>(dist(rng));
    for (std::size_t i = 0; i < KN; ++i) b[i] = bi[i] = static_cast<std::int8_t>(dist(rng));
    packed = pack_features<std::int8_t>(g, ai, feature.value().bytes());
    if (packed) packed = pack_weights<std::int8_t>(shape, bi, weight.value().bytes());
  }
  if (!packed) return fail(to_string(packed.err()));

  // Run: the first run (with its warm-up) then `repeat - 1` more, timed.
  auto prepared = npu.prepare(program, {three_cores ? runtime::cores::all : runtime::cores::one});
  if (!prepared) return fail(to_string(prepared.err()));
  if (status s = npu.bind(prepared.value(), {.feature = &feature.value(), .weight = &weight.value(), .output = &output.value()}); !s)
    return fail(to_string(s.err()));
  unsigned submits = 0;
  double total_us = 0;
  for (std::uint64_t r = 0; r < repeat; ++r) {
    const auto report = npu.run(prepared.value(), {.use = round_robin ? runtime::cores::round_robin : runtime::cores::one,
                                                   .blocking = !nonblocking});
    if (!report) return fail(to_string(report.err()));
    submits += report.value().submits;
    total_us += report.value().wall_us;
  }

  // Check against a host matmul (double; exact for the integer pairs).
  std::vector<double> c(MN);
  status finished;
  if (g.out == precision::fp32 || g.out == precision::fp16) {
    std::vector<float> cf(MN);
    finished = finish_plan<float>(shape, output.value().bytes(), cf);
    std::copy(cf.begin(), cf.end(), c.begin());
  } else {
    std::vector<std::int64_t> ci(MN);
    finished = finish_plan<std::int64_t>(shape, output.value().bytes(), ci);
    std::copy(ci.begin(), ci.end(), c.begin());
  }
  if (!finished) return fail(to_string(finished.err()));
  std::vector<double> ref(MN, 0.0), scale(MN, 0.0);
  for (std::uint32_t m = 0; m < spec.M; ++m)
    for (std::uint32_t k = 0; k < spec.K; ++k) {
      const double am = a[std::size_t{m} * spec.K + k];
      const double* bk = &b[std::size_t{k} * spec.N];
      double* rm = &ref[std::size_t{m} * spec.N];
      double* sm = &scale[std::size_t{m} * spec.N];
      for (std::uint32_t n = 0; n < spec.N; ++n) {
        rm[n] += am * bk[n];
        sm[n] += std::abs(am * bk[n]);
      }
    }
  if (g.out == precision::int16)
    for (double& v : ref) v = std::clamp(v, -32768.0, 32767.0);  // the int16 accumulator saturates
  const bool exact = g.out == precision::int32 || g.out == precision::int16;
  const double rel_tol = exact ? 0.0 : (spec.K + 2.0) * std::ldexp(1.0, -24) + (g.out == precision::fp16 ? std::ldexp(1.0, -11) : 0.0);
  double max_abs = 0, max_rel = 0;
  bool within = true;
  for (std::size_t i = 0; i < MN; ++i) {
    const double err = std::abs(c[i] - ref[i]);
    const double rel = err / std::max(scale[i], std::numeric_limits<double>::min());
    max_abs = std::max(max_abs, err);
    max_rel = std::max(max_rel, rel);
    within = within && (exact ? err == 0 : rel <= rel_tol);
  }
  std::printf("max_abs_error=%.6g max_rel_error=%.6g submits=%u us_per_submit=%.1f\n", max_abs, max_rel, submits,
              total_us / std::max(1u, submits));
  return within ? 0 : 1;
}
