// regcmd-run: run a program on the NPU with seeded random data and check every output.
//
//   regcmd-run matmul --in fp16 --out fp32 -M 64 -K 512 -N 256 [options]
//   regcmd-run ew --op mul --dtype fp16 -M 64 -N 256 --operand per-channel
//   regcmd-run matmul --in fp16 --out fp16 -M 8 -K 128 -N 17 --then ew --op mul --operand per-channel
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
#include <regcmd/programs/elementwise.hpp>
#include <regcmd/programs/ew_packing.hpp>
#include <regcmd/programs/fused.hpp>
#include <regcmd/programs/packing.hpp>
#include <regcmd/programs/plan.hpp>
#include <regcmd/runtime/session.hpp>

#include "cli.hpp"

namespace {

constexpr const char* usage = R"(usage: regcmd-run matmul --in P --out P -M N -K N -N N [options] [--then ew ...]
       regcmd-run ew --op O --dtype P -M N -N N [--operand K] [options]

Builds the program (a matmul as a plan: K-split, N/M tiling when the shape needs them; an
SDP element-wise op; or a matmul fused with an SDP op), fills the operands with seeded
random data, runs it on the NPU, checks every output element against the host and prints
  max_abs_error=<x> max_rel_error=<y> submits=<n> us_per_submit=<t>

matmul options:
  --in P          fp16 | int8 | int4                        (default fp16)
  --out P         fp32 | fp16 | int32 | int16               (default fp32)
  -M N, -K N, -N N
  --layout L      row_major | surface                       (default row_major)
  --delta         delta tasks (later tasks carry only what changed)
  --k-slice N     K-split slice (multiple of 32, <= 2048)
  --then ew       fuse an SDP op on the fp16 result (with --op, --operand, --value)
ew options (and those of the fused op):
  --op O          add | mul | max | min                     (default add)
  --dtype P       fp16 | int8 | int16                       (default fp16)
  -M N, -N N
  --operand K     per-element | per-channel | immediate     (default per-element)
  --value X       the immediate operand                     (default 1.5)
  --layout L      surface | flat                            (default surface)
running:
  --cores C       1 (one core) | 3 (tasks split in three chains: rknpu the 3-core mask,
                  rocket one job each, the kernel picks the cores)
  --round-robin   with --cores 1: rotate the repeats over the three cores (rknpu)
  --device PATH   the NPU node: /dev/dri/card1 (rknpu, vendor kernels) or /dev/accel/accel0
                  (rocket, mainline 6.18+); default $REGCMD_DEVICE, else the first found
  --seed S        random data seed                          (default 1)
  --repeat R      submits to time after the first           (default 1)
  --nonblocking   submit with a fence and wait on it
  -h, --help      this text

Tolerances: a matmul's relative error is |C - ref| / sum_k |A B|, within (K + 2) * 2^-24
for fp32 accumulation plus 2^-11 for a fp16 output; an SDP op is exact for integers and
within one fp16 rounding (2^-11 relative) for fp16, on top of the matmul's in a chain.
Exit status: 0 within tolerance, 1 not, 2 an error (with its message).
)";

int fail(const std::string& message) {
  std::fprintf(stderr, "regcmd-run: %s\n", message.c_str());
  return 2;
}

// How the program runs: cores, repeats, blocking.
struct run_settings {
  std::string device_path;
  std::uint64_t seed = 1, repeat = 1;
  bool three_cores = false, round_robin = false, nonblocking = false;
};

struct run_outcome {
  unsigned submits = 0;
  double total_us = 0;
};

// Prepares, binds and runs the program `repeat` times (the first with its warm-up).
regcmd::result<run_outcome> run(regcmd::runtime::session& npu, const regcmd::program_view& program,
                                 const regcmd::runtime::operands& ops, const run_settings& settings) {
  using namespace regcmd;
  auto prepared = npu.prepare(program, {settings.three_cores ? runtime::cores::all : runtime::cores::one});
  if (!prepared) return prepared.err();
  if (status s = npu.bind(prepared.value(), ops); !s) return s.err();
  run_outcome out;
  for (std::uint64_t r = 0; r < settings.repeat; ++r) {
    const auto report = npu.run(prepared.value(), {.use = settings.round_robin ? runtime::cores::round_robin : runtime::cores::one,
                                                   .blocking = !settings.nonblocking});
    if (!report) return report.err();
    out.submits += report.value().submits;
    out.total_us += report.value().wall_us;
  }
  return out;
}

// Buffers of the sizes given, or the first allocation error.
regcmd::result<std::vector<regcmd::runtime::buffer>> buffers(const regcmd::runtime::device& dev,
                                                              std::initializer_list<std::size_t> sizes) {
  std::vector<regcmd::runtime::buffer> out;
  for (std::size_t size : sizes) {
    auto b = regcmd::runtime::buffer::create(dev, std::max<std::size_t>(size, 16));
    if (!b) return b.err();
    out.push_back(std::move(b).value());
  }
  return out;
}

struct check {
  double max_abs = 0, max_rel = 0;
  bool within = true;
  // One output against its reference: |c - ref| <= tolerance * scale.
  void add(double c, double ref, double scale, double tolerance) {
    const double err = std::abs(c - ref);
    const double rel = err / std::max(scale, std::numeric_limits<double>::min());
    max_abs = std::max(max_abs, err);
    max_rel = std::max(max_rel, rel);
    within = within && (tolerance == 0 ? err == 0 : rel <= tolerance);
  }
  int report(const run_outcome& o) const {
    std::printf("max_abs_error=%.6g max_rel_error=%.6g submits=%u us_per_submit=%.1f\n", max_abs, max_rel, o.submits,
                o.total_us / std::max(1u, o.submits));
    return within ? 0 : 1;
  }
};

double apply(regcmd::ew_op op, double x, double y) {
  switch (op) {
    case regcmd::ew_op::add: return x + y;
    case regcmd::ew_op::mul: return x * y;
    case regcmd::ew_op::max: return std::max(x, y);
    case regcmd::ew_op::min: return std::min(x, y);
  }
  return 0;
}

float to_half(double v) { return regcmd::half_to_float(regcmd::float_to_half(static_cast<float>(v))); }

// A matmul, planned.
int run_matmul(const regcmd::runtime::device& dev, const regcmd::matmul_spec& spec, const regcmd::plan_options& options,
               const run_settings& settings) {
  using namespace regcmd;
  const auto built = build_plan(spec, options);
  if (!built) return fail(to_string(built.err()));
  const plan_shape& shape = built.value().geometry;
  const matmul_geometry& g = shape.whole;
  auto bufs = buffers(dev, {plan_feature_bytes(shape), shape.weight_bytes(), plan_output_bytes(shape)});
  if (!bufs) return fail(to_string(bufs.err()));
  runtime::buffer &feature = bufs.value()[0], &weight = bufs.value()[1], &output = bufs.value()[2];

  std::mt19937_64 rng(settings.seed);
  const std::size_t MK = std::size_t{spec.M} * spec.K, KN = std::size_t{spec.K} * spec.N, MN = std::size_t{spec.M} * spec.N;
  std::vector<double> a(MK), b(KN);
  status packed;
  if (g.in == precision::fp16) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> af(MK), bf(KN);
    for (std::size_t i = 0; i < MK; ++i) a[i] = af[i] = to_half(dist(rng));
    for (std::size_t i = 0; i < KN; ++i) b[i] = bf[i] = to_half(dist(rng));
    packed = pack_features<float>(g, af, feature.bytes());
    if (packed) packed = pack_weights<float>(shape, bf, weight.bytes());
  } else {
    std::uniform_int_distribution<int> dist(g.in == precision::int4 ? -8 : -128, g.in == precision::int4 ? 7 : 127);
    std::vector<std::int8_t> ai(MK), bi(KN);
    for (std::size_t i = 0; i < MK; ++i) a[i] = ai[i] = static_cast<std::int8_t>(dist(rng));
    for (std::size_t i = 0; i < KN; ++i) b[i] = bi[i] = static_cast<std::int8_t>(dist(rng));
    packed = pack_features<std::int8_t>(g, ai, feature.bytes());
    if (packed) packed = pack_weights<std::int8_t>(shape, bi, weight.bytes());
  }
  if (!packed) return fail(to_string(packed.err()));

  runtime::session npu{dev};
  const auto ran = run(npu, built.value().view(), {.feature = &feature, .weight = &weight, .output = &output}, settings);
  if (!ran) return fail(to_string(ran.err()));

  // Check against a host matmul (double; exact for the integer pairs).
  std::vector<double> c(MN);
  status finished;
  if (g.out == precision::fp32 || g.out == precision::fp16) {
    std::vector<float> cf(MN);
    finished = finish_plan<float>(shape, output.bytes(), cf);
    std::copy(cf.begin(), cf.end(), c.begin());
  } else {
    std::vector<std::int64_t> ci(MN);
    finished = finish_plan<std::int64_t>(shape, output.bytes(), ci);
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
  const double tolerance = exact ? 0.0 : (spec.K + 2.0) * std::ldexp(1.0, -24) + (g.out == precision::fp16 ? std::ldexp(1.0, -11) : 0.0);
  check result;
  for (std::size_t i = 0; i < MN; ++i) result.add(c[i], ref[i], scale[i], tolerance);
  return result.report(ran.value());
}

// An SDP element-wise op.
template <class T>
int run_ew_typed(const regcmd::runtime::device& dev, const regcmd::ew_spec& spec, const run_settings& settings) {
  using namespace regcmd;
  const auto built = build_ew(spec);
  if (!built) return fail(to_string(built.err()));
  const ew_geometry& g = built.value().geometry;
  auto bufs = buffers(dev, {g.tensor_bytes(), g.operand_bytes(), g.tensor_bytes()});
  if (!bufs) return fail(to_string(bufs.err()));
  runtime::buffer &a_buf = bufs.value()[0], &b_buf = bufs.value()[1], &c_buf = bufs.value()[2];
  std::mt19937_64 rng(settings.seed);
  const std::size_t MN = std::size_t{spec.M} * spec.N;
  std::vector<T> a(MN), b(spec.operand == ew_operand::per_channel ? spec.N : MN), c(MN);
  for (T& v : a) {
    if constexpr (std::is_same_v<T, float>) v = to_half(std::uniform_real_distribution<float>(-4, 4)(rng));
    else v = static_cast<T>(std::uniform_int_distribution<int>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())(rng));
  }
  for (T& v : b) {
    if constexpr (std::is_same_v<T, float>) v = to_half(std::uniform_real_distribution<float>(-4, 4)(rng));
    else v = static_cast<T>(std::uniform_int_distribution<int>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())(rng));
  }
  status packed = pack_ew_tensor<T>(g, a, a_buf.bytes());
  if (packed && spec.operand == ew_operand::per_element) packed = pack_ew_tensor<T>(g, b, b_buf.bytes());
  if (packed && spec.operand == ew_operand::per_channel) packed = pack_ew_vector<T>(g, b, b_buf.bytes());
  if (!packed) return fail(to_string(packed.err()));
  runtime::session npu{dev};
  const auto ran = run(npu, built.value().view(), {.feature = &a_buf, .output = &c_buf, .ew_operand = &b_buf}, settings);
  if (!ran) return fail(to_string(ran.err()));
  if (status s = unpack_ew_tensor<T>(g, c_buf.bytes(), c); !s) return fail(to_string(s.err()));
  check result;
  const bool fp16 = std::is_same_v<T, float>;
  for (std::uint32_t m = 0; m < spec.M; ++m)
    for (std::uint32_t n = 0; n < spec.N; ++n) {
      const std::size_t i = std::size_t{m} * spec.N + n;
      const double y = spec.operand == ew_operand::per_channel ? b[n]
                       : spec.operand == ew_operand::immediate ? spec.immediate
                                                               : b[i];
      double ref = apply(spec.op, a[i], y);
      if (!fp16) ref = std::clamp<double>(ref, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
      result.add(c[i], ref, std::max(std::abs(ref), 1e-3), fp16 ? std::ldexp(1.0, -11) : 0.0);
    }
  return result.report(ran.value());
}

int run_ew(const regcmd::runtime::device& dev, const regcmd::ew_spec& spec, const run_settings& settings) {
  using regcmd::precision;
  if (spec.dtype == precision::int8) return run_ew_typed<std::int8_t>(dev, spec, settings);
  if (spec.dtype == precision::int16) return run_ew_typed<std::int16_t>(dev, spec, settings);
  return run_ew_typed<float>(dev, spec, settings);
}

// A matmul fused with an SDP op on its fp16 result.
int run_fused(const regcmd::runtime::device& dev, const regcmd::fused_spec& spec, const run_settings& settings) {
  using namespace regcmd;
  const auto built = build_fused(spec);
  if (!built) return fail(to_string(built.err()));
  const fused_geometry& g = built.value().geometry;
  auto bufs = buffers(dev, {g.mm.feature_bytes(), g.mm.weight_bytes(), fused_intermediate_bytes(g),
                            fused_operand_bytes(g), fused_output_bytes(g)});
  if (!bufs) return fail(to_string(bufs.err()));
  auto& v = bufs.value();
  const std::uint32_t M = spec.matmul.M, K = spec.matmul.K, N = spec.matmul.N;
  std::mt19937_64 rng(settings.seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(std::size_t{M} * K), w(std::size_t{K} * N);
  std::vector<float> b(spec.operand == ew_operand::per_channel ? N : std::size_t{M} * N), c(std::size_t{M} * N);
  for (float& x : a) x = to_half(dist(rng));
  for (float& x : w) x = to_half(dist(rng));
  for (float& x : b) x = to_half(2 * dist(rng));
  status packed = pack_features<float>(g.mm, a, v[0].bytes());
  if (packed) packed = pack_weights<float>(g.mm, w, v[1].bytes());
  if (packed && spec.operand != ew_operand::immediate) packed = pack_fused_operand<float>(g, b, v[3].bytes());
  if (!packed) return fail(to_string(packed.err()));
  runtime::session npu{dev};
  const auto ran = run(npu, built.value().view(),
                       {.feature = &v[0], .weight = &v[1], .output = &v[4], .ew_operand = &v[3], .intermediate = &v[2]},
                       settings);
  if (!ran) return fail(to_string(ran.err()));
  if (status s = unpack_fused_output<float>(g, v[4].bytes(), c); !s) return fail(to_string(s.err()));
  // C = A . B to fp16 (the matmul's fp32 accumulation, (K + 2) 2^-24 of sum |A B|), then
  // the op and its fp16 rounding: the bound scales both by |y|.
  check result;
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t n = 0; n < N; ++n) {
      double mm = 0, scale = 0;
      for (std::uint32_t k = 0; k < K; ++k) {
        mm += double(a[std::size_t{m} * K + k]) * w[std::size_t{k} * N + n];
        scale += std::abs(double(a[std::size_t{m} * K + k]) * w[std::size_t{k} * N + n]);
      }
      const double y = spec.operand == ew_operand::per_channel ? b[n]
                       : spec.operand == ew_operand::immediate ? spec.immediate
                                                               : b[std::size_t{m} * N + n];
      const double ref = apply(spec.op, mm, y);
      const double bound = (scale * (K + 2.0) * std::ldexp(1.0, -24) + std::abs(mm) * std::ldexp(1.0, -11)) *
                               std::max(1.0, spec.op == ew_op::mul ? std::abs(y) : 1.0) +
                           std::abs(ref) * std::ldexp(1.0, -11);
      result.add(c[std::size_t{m} * N + n], ref, std::max(bound, 1e-30), 1.0);
    }
  return result.report(ran.value());
}

}  // namespace

int main(int argc, char** argv) {
  using namespace regcmd;
  const std::string_view program = argc >= 2 ? argv[1] : "";
  if (program == "-h" || program == "--help") {
    std::fputs(usage, stdout);
    return 0;
  }
  cli::request r{.elementwise = program == "ew", .ew = {.immediate = 1.5f}};
  if (program != "matmul" && !r.elementwise) return fail("the first argument is the program: matmul or ew (see --help)");

  run_settings settings;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--delta" && !r.elementwise) { r.options.delta_tasks = true; continue; }
    if (a == "--round-robin") { settings.round_robin = true; continue; }
    if (a == "--nonblocking") { settings.nonblocking = true; continue; }
    if (a == "-h" || a == "--help") { std::fputs(usage, stdout); return 0; }
    if (i + 1 >= argc) return fail("option '" + std::string(a) + "' needs a value");
    const std::string_view v = argv[++i];
    using namespace cli;
    const auto n = parse_number(v);
    bool ok = true;
    if (const std::optional<bool> applied = apply(r, a, v)) ok = *applied;
    else if (a == "--cores") {
      ok = v == "1" || v == "3";
      settings.three_cores = v == "3";
    } else if (a == "--device") settings.device_path = v;
    else if (a == "--seed") ok = assign(settings.seed, n);
    else if (a == "--repeat") ok = n && *n >= 1 && assign(settings.repeat, n);
    else return fail("unknown option '" + std::string(a) + "' for " + std::string(program) + " (see --help)");
    if (!ok) return fail("bad value '" + std::string(v) + "' for " + std::string(a));
  }

  // The program's rules first: a shape that breaks one needs no device.
  if (r.elementwise) {
    if (const auto g = resolve_ew(r.ew); !g) return fail(to_string(g.err()));
  } else if (r.fused_ew) {
    if (const auto g = resolve_fused(r.fused()); !g) return fail(to_string(g.err()));
  } else if (const auto p = plan(r.spec, r.options); !p) {
    return fail(to_string(p.err()));
  }
  auto dev = runtime::device::open(settings.device_path);
  if (!dev) return fail(to_string(dev.err()));
  std::printf("device %s: %s\n", dev.value().path().c_str(), dev.value().driver_version().c_str());
  if (r.elementwise) return run_ew(dev.value(), r.ew, settings);
  if (r.fused_ew) return run_fused(dev.value(), r.fused(), settings);
  return run_matmul(dev.value(), r.spec, r.options, settings);
}
