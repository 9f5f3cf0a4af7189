// regcmd-run: run a program on the NPU with seeded random data and check every output.
//
//   regcmd-run matmul --in fp16 --out fp32 -M 64 -K 512 -N 256 [options]
//   regcmd-run ew --op mul --dtype fp16 -M 64 -N 256 --operand per-channel
//   regcmd-run matmul --in fp16 --out fp16 -M 8 -K 128 -N 17 --then ew --op mul --operand per-channel
//   regcmd-run conv --in uint8 -H 20 -W 20 -C 80 --out-channels 40 --kernel 3 --pad same --bias
//   regcmd-run act --fn sigmoid --dtype fp16 -M 64 -N 256
//   regcmd-run pool --op avg --dtype fp16 -H 20 -W 20 -C 24 --kernel 3 --stride 1 --pad same
//   regcmd-run graph examples/graphs/cnn.graph
//
// Prints one line: max_abs_error=<x> max_rel_error=<y> submits=<n> us_per_submit=<t>, the
// worst over every repeat (each repeat's output is checked), and for a repeat out of
// tolerance one line on stderr naming it and its worst element.
// Exit status: 0 every output within tolerance, 1 some output is not, 2 bad usage or an
// error (one line on stderr).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/activation/functions.hpp>
#include <regcmd/programs/conv/emit.hpp>
#include <regcmd/programs/conv/packing.hpp>
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/sdp/packing.hpp>
#include <regcmd/programs/graph/fused.hpp>
#include <regcmd/programs/matmul/packing.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/programs/pooling/pooling.hpp>
#include <regcmd/reference.hpp>
#include <regcmd/runtime/graph_buffers.hpp>
#include <regcmd/runtime/session.hpp>

#include "cli.hpp"
#include <regcmd/cli/graph_file.hpp>
#include "io.hpp"

namespace {

constexpr const char* usage = R"(usage: regcmd-run matmul --in P --out P -M N -K N -N N [options] [--then ew ...]
       regcmd-run ew --op O --dtype P -M N -N N [--operand K] [options]
       regcmd-run conv --in P -H N -W N -C N --out-channels N [options]
       regcmd-run act --fn F --dtype P (-M N -N N | --elements N) [options]
       regcmd-run pool --op O --dtype P -H N -W N -C N [options]
       regcmd-run graph FILE [--cores C] [--device PATH] [--soc S] [--seed S] [--repeat R]

Builds the program (a matmul as a plan: K-split, N/M tiling when the shape needs them; an
SDP element-wise op; a matmul fused with an SDP op; a convolution in the tasks its CBUF
plan needs; an activation; or a pooling in its row tasks), fills the operands with seeded random data, runs it on the
NPU, checks every output element against the host and prints
  max_abs_error=<x> max_rel_error=<y> submits=<n> us_per_submit=<t>

matmul options:
  --in P          fp16 | int8 | int4                        (default fp16)
  --out P         fp32 | fp16 | int32 | int16               (default fp32)
  -M N, -K N, -N N
  --layout L      row_major | surface                       (default row_major)
  --delta         delta tasks (later tasks carry only what changed; not with --then)
  --k-slice N     K-split slice, a multiple of 32 from 32 to 2048 (not with --then)
  --then ew       fuse an SDP op on the fp16 result (with --op, --operand, --value)
  --relu, --relu6, --leaky A   as the conv's (below), on a fp16 output, in the same task
ew options (and those of the fused op):
  --op O          add | mul | max | min | prelu             (default add)
  --dtype P       fp16 | int8 | int16                       (default fp16)
  -M N, -N N
  --operand K     per-element | per-channel | immediate     (default per-element)
  --value X       with --operand immediate: the operand, -65504 to 65504 (default 1.5)
  --layout L      surface | flat                            (default surface)
  --no-pad        refuse an N that does not fill whole 16-byte atoms (ew and act only)
conv options (host tensors NHWC, weights OHWI; an output element out[h * W' + w][c]):
  --in P          uint8 | int8 | fp16                       (default int8)
  --out P         int8 (uint8, int8) | fp16 | fp32 (fp16)   (default int8, fp16 for fp16)
  -H N, -W N, -C N, --out-channels N (with --depthwise, --out-channels is C)
  --kernel K|KHxKW, --stride S|SYxSX, --dilation D|DYxDX    (default 1 each)
  --pad P         valid | same | T,B,L,R                    (default valid)
  --depthwise     one kernel per channel
  --bias          a random bias per output channel (int32 quantized, fp16 in [-1, 1])
  --relu, --relu6 clamp at 0, or to [0, 6]
  --leaky A       leaky ReLU, negatives times A (0 <= A < 1, not with --add); one of the three
  --add           a random residual added before the clamp
  --input-zero-point Z, --weight-zero-point Z, --output-zero-point Z, --add-zero-point Z
                  (quantized only; default 0 for int8, 128 for uint8)
  --input-scale S (default 0.05), --weight-scale S (default 0.02), --output-scale S
                  (default input * weight * 128 * sqrt(KH * KW * C), C 1 for depthwise),
                  --add-scale S (default the output's); quantized only, --add-* with --add
act options (regcmd-gen --help has the details):
  --fn F          relu | relu6 | clip | leaky | sigmoid | tanh | silu | gelu | gelu-erf |
                  hardswish | hardsigmoid | exp | mish | elu | selu | softplus (required)
  --dtype P       fp16 | int8 | int16 (the table functions: fp16)  (default fp16)
  -M N, -N N, or --elements N (-M 1 -N N, flat)
  --layout L      flat | surface (not with --elements)      (default flat)
  --lo X, --hi X  clip only (default 0 and 6); --slope A leaky only (default 0.01);
                  --alpha A elu only (default 1)
  --range LO,HI   table functions only: the inputs the table follows f over (default the
                  function's own); outside it f is held at the nearer bound, and beyond
                  the table's end (max(|LO|, |HI|) a side) held or, with a linear tail
                  (silu, gelu, hardswish, mish, elu, selu, softplus above), continued
                  along f's secant: what
                  the check expects there. A range whose entries lie too far apart for
                  the function's tolerance inside it is refused (regcmd-gen warns)
  inputs: int8 and int16 uniform over the type; fp16 uniform, rounded to fp16, over
  [-8, 8] (relu, leaky), [lo - (hi - lo) / 4, hi + (hi - lo) / 4] (relu6: lo 0, hi 6;
  clip), or the table's range with each bound moved out by a quarter of its magnitude
  (the table functions, so their tails are checked: sigmoid's -8..8 gives -10..10)
pool options (regcmd-gen --help has the details; an output element out[h * W' + w][c]):
  --op O          max | avg | global-max | global-avg (required)
  --dtype P       fp16 | int8 (avg and global-avg: fp16)   (default fp16)
  -H N, -W N, -C N
  --kernel K|KHxKW (default 2), --stride S|SYxSX (default the kernel), --pad P (valid |
                  same | T,B,L,R; default valid): not for the global ops
  inputs: fp16 uniform in [-4, 4], rounded to fp16; int8 uniform over the type
graph FILE: the ops of a graph file ('-': standard input), one program, one submit a run
  (docs/graph.md, "Graph files"); the running options below but --round-robin and
  --nonblocking. Inputs: fp16 features uniform in [-1, 1], fp16 weights in +-1/sqrt(fan-in),
  int8, uint8 and int16 over the type, int4 in [-8, 7], a quantized conv's bias in
  [-1000, 1000]; every op's output checked (a failure names its tensor)
running:
  --cores C       1 (one core) | 3 (tasks split in three chains: rknpu the 3-core mask,
                  rocket one job each, the kernel picks the cores) | 3,1 (the leading
                  tasks that hand nothing to each other in three chains, then the rest
                  on one core: two submits; a graph's independent branches)
  --round-robin   rknpu, with --cores 1: rotate the repeats over the three cores
  --device PATH   the NPU node: /dev/dri/card1 (rknpu, vendor kernels) or /dev/accel/accel0
                  (rocket, mainline 6.18+); default $REGCMD_DEVICE, else the first found
  --soc S         rk3588 | rk3576 | rk3568 | rk3566 | rk3562: the SoC the device is used as
                  when its node's device tree names none (an emulated device); a node
                  that names one must agree. Default: the node's, else rk3588. On a SoC
                  without the numbers programs need, prepare refuses every program
                  (soc-value-unknown)
  --seed S        random data seed, 0 to 18446744073709551615 (default 1)
  --repeat R      runs of the program, 1 to 1000000, every one's output checked
                  (default 1; the first run may add a warm-up submit)
  --nonblocking   rknpu: submit with a fence and wait on it (rocket always does)
  -h, --help      this text
  --version       print the version

Tolerances: a matmul's relative error is |C - ref| / sum_k |A B|, within (K + 2) * 2^-24
for fp32 accumulation plus 2^-11 for a fp16 output; an SDP op is exact for integers and
within one fp16 rounding (2^-11 relative) for fp16, on top of the matmul's in a chain. A
quantized conv's output is within 1 of the host's (in output units, the error printed
both as absolute and relative: the requantization scale is 15 bits and its rounding is not
documented); an fp16 conv's relative error is |out - ref| / (sum |x w| + |residual|),
within (KH KW C + 2) * 2^-24 plus 2^-11 for an fp16 output plus 2^-11 with --add. An
activation is checked against the exact function in double rounded to the output's type:
the ReLU family exactly, with the leaky slope the program holds (fp16(a) for fp16;
round(a * 2^15) / 2^15 for integers, the product rounded half up); a table function within
max(its absolute tolerance, 2^-10 |expected|): sigmoid, tanh, hardsigmoid, exp, elu,
selu and softplus 2e-3; silu, gelu, gelu-erf, hardswish and mish 1e-2. A pooling is checked against the host's,
padded taps -inf for max and 0 counted in the average (PyTorch's count_include_pad=True):
max exactly; average, the mean in double of the fp16 inputs rounded to fp16, within 2^-9
relative plus 2^-24 absolute, as the PPU multiplies the sum by fp16 reciprocals of the
kernel's width and height (fp16(65536 / 3) is inexact) and rounds to fp16. A graph is
built with every intermediate in bytes of its own, and every op's output, intermediates
too, is checked against the host's value of that op computed from the NPU's own inputs,
within that op's bound; then the program regcmd-gen writes (its arena bytes shared by
tensors that do not live together) runs on the same inputs and its outputs must equal
those bit for bit (its submits are not counted in the summary). An op's bound: its fp32
accumulation, one fp16 ulp (2^-10 relative) at an fp16 store, a table function's
tolerance, a quantized conv's one output step; an integer matmul and an integer SDP op
(saturating) exactly, a leaky one within one. An fp16 output is right when it is the fp16
rounding of a value within its bound (so an overflow to +-inf can be right); a NaN never
is. Before every run the outputs are filled with 0xff bytes, so a run that never reached
the device fails.

Each option is given once, and only where it applies. Each error is one line on standard
error.
Exit status: 0 every repeat's output within tolerance; 1 some output is not (stderr names
the first such repeat and its worst element); 2 bad usage, a shape that breaks a rule, or
a device or runtime error.
)";

int fail(const std::string& message) {
  std::fprintf(stderr, "regcmd-run: %s\n", message.c_str());
  return regcmd::cli::exit_error;
}
int fail(const regcmd::error& e) { return fail(regcmd::cli::describe(e)); }

// How the program runs: cores, repeats, blocking.
struct run_settings {
  std::string device_path;
  std::optional<regcmd::soc::soc_info> soc;  // --soc
  std::uint64_t seed = 1, repeat = 1;
  regcmd::runtime::cores split = regcmd::runtime::cores::one;  // --cores: one, all, all_then_one
  bool round_robin = false, nonblocking = false;
};

// The valued running options (--cores, --device, --seed, --repeat): nullopt when `a` is not
// one, else the problem with `v` (empty when it applied).
std::optional<regcmd::cli::problem> apply_running(run_settings& settings, std::string_view a, std::string_view v) {
  namespace cli = regcmd::cli;
  using regcmd::runtime::cores;
  static constexpr std::pair<std::string_view, cores> core_counts[] = {
      {"1", cores::one}, {"3", cores::all}, {"3,1", cores::all_then_one}};
  if (a == "--cores") return cli::one_of(settings.split, a, v, core_counts);
  if (a == "--device") {
    settings.device_path = v;
    return v.empty() ? cli::takes(a, "a device node", v) : cli::problem{};
  }
  if (a == "--soc") {
    regcmd::soc::soc_info s{};
    if (cli::problem p = cli::soc_in(s, a, v); !p.empty()) return p;
    settings.soc = s;
    return cli::problem{};
  }
  if (a == "--seed") return cli::number_in(settings.seed, a, v, 0, UINT64_MAX);
  if (a == "--repeat") return cli::number_in(settings.repeat, a, v, 1, 1'000'000);
  return std::nullopt;
}
bool is_running_option(std::string_view a) {
  return a == "--cores" || a == "--device" || a == "--soc" || a == "--seed" || a == "--repeat";
}

// The host reference of every op (regcmd/reference.hpp).
using regcmd::reference::activate;
using regcmd::reference::apply;
using regcmd::reference::to_fp16;

// The larger error, a NaN the largest: no NaN drops out of a maximum.
double worse(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::max(a, b); }

// One output against its reference, element by element: the largest errors, and the
// element furthest out of tolerance (a NaN is as far out as can be).
struct check {
  double max_abs = 0, max_rel = 0;
  bool within = true;
  std::size_t worst = 0;  // with !within: the element furthest out
  double worst_c = 0, worst_ref = 0, worst_err = 0, worst_allowed = 0, worst_excess = -1;

  // |c - ref| <= tolerance * scale (exact when the tolerance is 0), the relative error
  // against scale; `fp16`: c is an fp16 output (judged below).
  void add(std::size_t i, double c, double ref, double scale, double tolerance, bool fp16 = false) {
    judge(i, c, ref, tolerance * scale, std::max(scale, std::numeric_limits<double>::min()), fp16);
  }

  // |c - ref| <= allowed, an absolute bound (exact when 0); the relative error against
  // max(|ref|, 1e-3), as an SDP op's.
  void add_absolute(std::size_t i, double c, double ref, double allowed, bool fp16 = false) {
    judge(i, c, ref, allowed, std::max(std::abs(ref), 1e-3), fp16);
  }

 private:
  // Equal values differ by 0, equal infinities too; a NaN on either side is an error of NaN,
  // out of every tolerance and carried into the maxima. An fp16 output is right when it is
  // the fp16 rounding of a value within `allowed` of ref (so an overflow to +-inf is right
  // where the bound reaches past the largest finite half), and its error is shown against
  // ref rounded to fp16 (the value it should read).
  void judge(std::size_t i, double c, double ref, double allowed, double rel_scale, bool fp16) {
    const double shown = fp16 ? double(to_fp16(ref)) : ref;
    const double err = c == shown ? 0.0 : std::abs(c - shown);
    max_abs = worse(max_abs, err);
    max_rel = worse(max_rel, err / rel_scale);
    const bool ok = std::isnan(err) ? false
                    : fp16           ? double(to_fp16(ref - allowed)) <= c && c <= double(to_fp16(ref + allowed))
                                     : err <= allowed;
    if (ok) return;
    within = false;
    const double excess = std::isnan(err) || std::isinf(err) ? std::numeric_limits<double>::infinity() : err - allowed;
    if (excess > worst_excess) {
      worst = i;
      worst_c = c;
      worst_ref = shown;
      worst_err = err;
      worst_allowed = allowed;
      worst_excess = excess;
    }
  }
};

// Every repeat's check: the largest errors over all, and the first repeat out of tolerance.
struct run_outcome {
  unsigned submits = 0;
  double total_us = 0;
  check all;
  std::uint64_t repeats = 0, wrong = 0, first_wrong = 0;  // first_wrong: 1-based
  check first;

  void add(const check& c) {
    ++repeats;
    all.max_abs = worse(all.max_abs, c.max_abs);
    all.max_rel = worse(all.max_rel, c.max_rel);
    if (c.within) return;
    all.within = false;
    if (wrong++ == 0) {
      first_wrong = repeats;
      first = c;
    }
  }

  // The summary line on stdout and, when a repeat was out of tolerance, one line on stderr
  // naming it (a corruption in any repeat fails the run, not only one in the last).
  // `base`: where the output named starts among the elements checked.
  int report(const char* output, std::uint32_t N, std::size_t base = 0) const {
    std::printf("max_abs_error=%.6g max_rel_error=%.6g submits=%u us_per_submit=%.1f\n", all.max_abs, all.max_rel, submits,
                total_us / std::max(1u, submits));
    if (all.within) return regcmd::cli::exit_success;
    char others[64] = "";
    if (repeats > 1)
      std::snprintf(others, sizeof others, "; %llu of %llu repeats out of tolerance", static_cast<unsigned long long>(wrong),
                    static_cast<unsigned long long>(repeats));
    std::fprintf(stderr, "regcmd-run: repeat %llu of %llu is out of tolerance: %s[%zu][%zu] = %.9g, expected %.9g (off by %.3g, allowed %.3g)%s\n",
                 static_cast<unsigned long long>(first_wrong), static_cast<unsigned long long>(repeats), output,
                 (first.worst - base) / N, (first.worst - base) % N, first.worst_c, first.worst_ref, first.worst_err, first.worst_allowed, others);
    return regcmd::cli::exit_check_failed;
  }
};

// Prepares, binds and runs the program `repeat` times (the first with its warm-up),
// checking each run's output with `verify` before the next run overwrites it. Before each
// run every buffer the NPU writes is filled with 0xff bytes (NaN in fp16 and fp32, -1 in
// the integers) and synced to the device with the run's operands: a run that never reached
// the device, or an element it left unwritten, reads as wrong, not as the previous output.
template <class Verify>
regcmd::result<run_outcome> run(regcmd::runtime::session& npu, const regcmd::program_view& program,
                                const regcmd::runtime::operands& ops, const run_settings& settings, Verify&& verify) {
  using namespace regcmd;
  auto prepared = npu.prepare(program, {settings.split});
  if (!prepared) return prepared.err();
  if (status s = npu.bind(prepared.value(), ops); !s) return s.err();
  run_outcome out;
  for (std::uint64_t r = 0; r < settings.repeat; ++r) {
    for (const runtime::buffer* written : {ops.output, ops.intermediate})
      if (written) std::fill(written->bytes().begin(), written->bytes().end(), std::uint8_t{0xff});
    const auto report = npu.run(prepared.value(), {.use = settings.round_robin ? runtime::cores::round_robin : runtime::cores::one,
                                                   .blocking = !settings.nonblocking});
    if (!report) return report.err();
    out.submits += report.value().submits;
    out.total_us += report.value().wall_us;
    const result<check> checked = verify();
    if (!checked) return checked.err();
    out.add(checked.value());
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

// A matmul, planned: T the host type of its operands (float for fp16, std::int8_t for int8
// and int4). The check streams the output a row at a time, the reference row computed from
// the host operands as it goes: memory for A and B, never for M x N (a 262144 x 2048 int32
// output is 2 GiB on the NPU, and was four times that again on the host).
template <class T>
int run_matmul_typed(const regcmd::runtime::device& dev, const regcmd::matmul_spec& spec, const regcmd::plan_options& options,
                     const run_settings& settings) {
  using namespace regcmd;
  const auto built = build(plan_request{spec, options});
  if (!built) return fail(built.err());
  const plan_shape& shape = built.value().geometry;
  const matmul_geometry& g = shape.whole;
  auto bufs = buffers(dev, {matmul::plan_feature_bytes(shape), shape.weight_bytes(), matmul::plan_output_bytes(shape)});
  if (!bufs) return fail(bufs.err());
  runtime::buffer &feature = bufs.value()[0], &weight = bufs.value()[1], &output = bufs.value()[2];

  std::mt19937_64 rng(settings.seed);
  const std::uint32_t M = spec.M, K = spec.K, N = spec.N;
  std::vector<T> a(std::size_t{M} * K), b(std::size_t{K} * N);
  if constexpr (std::is_same_v<T, float>) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (T& v : a) v = to_fp16(dist(rng));
    for (T& v : b) v = to_fp16(dist(rng));
  } else {
    std::uniform_int_distribution<int> dist(g.in == precision::int4 ? -8 : -128, g.in == precision::int4 ? 7 : 127);
    for (T& v : a) v = static_cast<T>(dist(rng));
    for (T& v : b) v = static_cast<T>(dist(rng));
  }
  status packed = matmul::pack_features<T>(g, a, feature.bytes());
  if (packed) packed = matmul::pack_weights<T>(shape, b, weight.bytes());
  if (!packed) return fail(packed.err());

  const bool exact = g.out == precision::int32 || g.out == precision::int16;
  const double tolerance = exact ? 0.0 : (K + 2.0) * std::ldexp(1.0, -24) + (g.out == precision::fp16 ? std::ldexp(1.0, -11) : 0.0);
  using out_type = std::conditional_t<std::is_same_v<T, float>, float, std::int64_t>;
  std::vector<out_type> c(N);
  std::vector<reference::products> row(N);
  auto verify = [&]() -> result<check> {
    check result;
    for (std::uint32_t m = 0; m < M; ++m) {
      if (status s = matmul::finish_plan_rows<out_type>(shape, output.bytes(), m, c); !s) return s.err();
      reference::matmul_row<T, T>(a, b, K, N, m, row);
      for (std::uint32_t n = 0; n < N; ++n) {
        const double want = activate(spec.activation, spec.leaky_slope, false, reference::saturate(g.out, row[n].sum));
        result.add(std::size_t{m} * N + n, double(c[n]), want, row[n].magnitude, tolerance, g.out == precision::fp16);
      }
    }
    return result;
  };
  runtime::session npu{dev};
  const auto ran = run(npu, built.value().view(), {.feature = &feature, .weight = &weight, .output = &output}, settings, verify);
  if (!ran) return fail(ran.err());
  return ran.value().report("C", spec.N);
}

int run_matmul(const regcmd::runtime::device& dev, const regcmd::matmul_spec& spec, const regcmd::plan_options& options,
               const run_settings& settings) {
  if (spec.dtype.features == regcmd::precision::fp16) return run_matmul_typed<float>(dev, spec, options, settings);
  return run_matmul_typed<std::int8_t>(dev, spec, options, settings);
}

// An SDP element-wise op.
template <class T>
int run_ew_typed(const regcmd::runtime::device& dev, const regcmd::ew_spec& spec, const run_settings& settings) {
  using namespace regcmd;
  const auto built = build(spec);
  if (!built) return fail(built.err());
  const ew_geometry& g = built.value().geometry;
  auto bufs = buffers(dev, {g.tensor_bytes(), g.operand_bytes(), g.tensor_bytes()});
  if (!bufs) return fail(bufs.err());
  runtime::buffer &a_buf = bufs.value()[0], &b_buf = bufs.value()[1], &c_buf = bufs.value()[2];
  std::mt19937_64 rng(settings.seed);
  const std::size_t MN = std::size_t{spec.M} * spec.N;
  std::vector<T> a(MN), b(spec.operand == ew_operand::per_channel ? spec.N : MN), c(MN);
  for (T& v : a) {
    if constexpr (std::is_same_v<T, float>) v = to_fp16(std::uniform_real_distribution<float>(-4, 4)(rng));
    else v = static_cast<T>(std::uniform_int_distribution<int>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())(rng));
  }
  for (T& v : b) {
    if constexpr (std::is_same_v<T, float>) v = to_fp16(std::uniform_real_distribution<float>(-4, 4)(rng));
    else v = static_cast<T>(std::uniform_int_distribution<int>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())(rng));
  }
  status packed = sdp::pack_tensor<T>(g, a, a_buf.bytes());
  if (packed && spec.operand == ew_operand::per_element) packed = sdp::pack_tensor<T>(g, b, b_buf.bytes());
  if (packed && spec.operand == ew_operand::per_channel) packed = sdp::pack_vector<T>(g, b, b_buf.bytes());
  if (!packed) return fail(packed.err());
  const bool fp16 = std::is_same_v<T, float>;
  auto verify = [&]() -> result<check> {
    if (status s = sdp::unpack_tensor<T>(g, c_buf.bytes(), c); !s) return s.err();
    check result;
    for (std::uint32_t m = 0; m < spec.M; ++m)
      for (std::uint32_t n = 0; n < spec.N; ++n) {
        const std::size_t i = std::size_t{m} * spec.N + n;
        const double y = spec.operand == ew_operand::per_channel ? b[n]
                         : spec.operand == ew_operand::immediate ? spec.immediate
                                                                 : b[i];
        double ref = apply(spec.op, double(a[i]), y);
        if (!fp16) ref = reference::saturate_to<T>(ref);
        result.add(i, c[i], ref, std::max(std::abs(ref), 1e-3), fp16 ? std::ldexp(1.0, -11) : 0.0, fp16);
      }
    return result;
  };
  runtime::session npu{dev};
  const auto ran = run(npu, built.value().view(), {.feature = &a_buf, .output = &c_buf, .ew_operand = &b_buf}, settings, verify);
  if (!ran) return fail(ran.err());
  return ran.value().report("out", spec.N);
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
  const auto built = build(spec);
  if (!built) return fail(built.err());
  const fused_geometry& g = built.value().geometry;
  auto bufs = buffers(dev, {g.mm.feature_bytes(), g.mm.weight_bytes(), fused_intermediate_bytes(g),
                            fused_operand_bytes(g), fused_output_bytes(g)});
  if (!bufs) return fail(bufs.err());
  auto& v = bufs.value();
  const std::uint32_t M = spec.matmul.M, K = spec.matmul.K, N = spec.matmul.N;
  std::mt19937_64 rng(settings.seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(std::size_t{M} * K), w(std::size_t{K} * N);
  std::vector<float> b(spec.operand == ew_operand::per_channel ? N : std::size_t{M} * N), c(std::size_t{M} * N);
  for (float& x : a) x = to_fp16(dist(rng));
  for (float& x : w) x = to_fp16(dist(rng));
  for (float& x : b) x = to_fp16(2 * dist(rng));
  status packed = matmul::pack_features<float>(g.mm, a, v[0].bytes());
  if (packed) packed = matmul::pack_weights<float>(g.mm, w, v[1].bytes());
  if (packed && spec.operand != ew_operand::immediate) packed = pack_fused_operand<float>(g, b, v[3].bytes());
  if (!packed) return fail(packed.err());
  // C = A . B to fp16 (the matmul's fp32 accumulation, (K + 2) 2^-24 of sum |A B|), then
  // the op and its fp16 rounding: the bound scales both by |y|. Once for every repeat.
  std::vector<double> ref(std::size_t{M} * N), bound(std::size_t{M} * N);
  const std::vector<reference::products> product = reference::matmul<float, float>(a, w, M, K, N);
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t n = 0; n < N; ++n) {
      double mm = product[std::size_t{m} * N + n].sum;
      const double scale = product[std::size_t{m} * N + n].magnitude;
      const double y = spec.operand == ew_operand::per_channel ? b[n]
                       : spec.operand == ew_operand::immediate ? spec.immediate
                                                               : b[std::size_t{m} * N + n];
      const std::size_t i = std::size_t{m} * N + n;
      mm = activate(spec.matmul.activation, spec.matmul.leaky_slope, false, mm);
      ref[i] = apply(spec.op, mm, y);
      bound[i] = std::max((scale * (K + 2.0) * std::ldexp(1.0, -24) + std::abs(mm) * std::ldexp(1.0, -11)) *
                                  std::max(1.0, spec.op == ew_op::mul || spec.op == ew_op::prelu ? std::abs(y) : 1.0) +
                              std::abs(ref[i]) * std::ldexp(1.0, -11),
                          1e-30);
    }
  auto verify = [&]() -> result<check> {
    if (status s = unpack_fused_output<float>(g, v[4].bytes(), c); !s) return s.err();
    check result;
    for (std::size_t i = 0; i < c.size(); ++i) result.add(i, c[i], ref[i], bound[i], 1.0, true);
    return result;
  };
  runtime::session npu{dev};
  const auto ran = run(npu, built.value().view(),
                       {.feature = &v[0], .weight = &v[1], .output = &v[4], .ew_operand = &v[3], .intermediate = &v[2]},
                       settings, verify);
  if (!ran) return fail(ran.err());
  return ran.value().report("out", N);
}

// A convolution: T the input's host type (std::uint8_t uint8, std::int8_t int8, float
// fp16), O the output's (the same for a quantized conv, float for fp16).
template <class T, class O>
int run_conv_typed(const regcmd::runtime::device& dev, const regcmd::conv_spec& spec, const run_settings& settings) {
  using namespace regcmd;
  const auto built = build(spec);
  if (!built) return fail(built.err());
  const conv_geometry& g = built.value().geometry.conv;
  const bool quantized = g.quantized(), add = spec.residual_add, depthwise = spec.depthwise;
  auto bufs = buffers(dev, {conv::feature_bytes(g), conv::weight_bytes(g), conv::output_bytes(g),
                            quantized || spec.bias ? conv::bias_bytes(g) : 0, add ? conv::residual_bytes(g) : 0});
  if (!bufs) return fail(bufs.err());
  runtime::buffer &feature = bufs.value()[0], &weight = bufs.value()[1], &output = bufs.value()[2];
  runtime::buffer &bias_buf = bufs.value()[3], &residual_buf = bufs.value()[4];

  const std::uint32_t H = spec.H, W = spec.W, C = spec.C, OC = spec.out_channels, KH = spec.kernel_h, KW = spec.kernel_w;
  const std::uint32_t OH = g.out_h, OW = g.out_w;
  const std::size_t kernels = depthwise ? 1 : OC, out_count = std::size_t{OH} * OW * OC;
  std::mt19937_64 rng(settings.seed);
  // quantized: uniform over the type's range; fp16: uniform in [-1, 1], rounded to fp16
  auto draw = [&]() -> T {
    if constexpr (std::is_same_v<T, float>) return to_fp16(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng));
    else return static_cast<T>(std::uniform_int_distribution<int>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())(rng));
  };
  std::vector<T> x(std::size_t{H} * W * C), w(kernels * KH * KW * C), r(add ? out_count : 0);
  std::vector<std::int32_t> bias(spec.bias && quantized ? OC : 0);
  std::vector<float> fp16_bias(spec.bias && !quantized ? OC : 0);  // in [-1, 1], fp16 values
  for (T& v : x) v = draw();
  for (T& v : w) v = draw();
  for (std::int32_t& v : bias) v = std::uniform_int_distribution<std::int32_t>(-5000, 5000)(rng);
  for (float& v : fp16_bias) v = to_fp16(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng));
  for (T& v : r) v = draw();
  status packed = conv::pack_features<T>(g, x, tensor_order::nhwc, feature.bytes());
  if (packed) packed = conv::pack_weights<T>(g, w, conv_weight_order::ohwi, weight.bytes());
  if constexpr (!std::is_same_v<T, float>)  // the operand carries the zero points' correction, bias or not
    if (packed) packed = conv::pack_bias<T>(g, bias, w, conv_weight_order::ohwi, bias_buf.bytes());
  if (packed && !fp16_bias.empty()) packed = conv::pack_fp16_bias(g, fp16_bias, bias_buf.bytes());
  if (packed && add) packed = conv::pack_residual<T>(g, r, tensor_order::nhwc, residual_buf.bytes());
  if (!packed) return fail(packed.err());

  // The host convolution, once for every repeat (padded positions hold the input's zero point:
  // they add nothing).
  const reference::conv_window window = reference::window_of(g);
  const double zx = quantized ? spec.input.zero_point : 0, zw = quantized ? spec.weights.zero_point : 0;
  std::vector<double> ref(out_count), scale(out_count, 1.0);
  for (std::uint32_t oh = 0; oh < OH; ++oh)
    for (std::uint32_t ow = 0; ow < OW; ++ow)
      for (std::uint32_t oc = 0; oc < OC; ++oc) {
        const reference::products p = window.at<T, T>(x, zx, w, zw, oh, ow, oc);
        const std::size_t i = window.out_index(oh, ow, oc);
        if (quantized) {
          const double residual = add ? double(r[i]) : 0;
          ref[i] = reference::quantized_output(spec, p.sum + (spec.bias ? bias[oc] : 0), add ? &residual : nullptr);
        } else {
          const double added = add ? double(r[i]) : spec.bias ? double(fp16_bias[oc]) : 0.0;  // one of them (conv-fp16-bias)
          ref[i] = activate(spec.activation, spec.leaky_slope, false, p.sum + added);
          scale[i] = std::max(p.magnitude + std::abs(added), std::numeric_limits<double>::min());
        }
      }
  // quantized: within 1 in output units; fp16: the matmul's bound over KH KW C products, an
  // fp16 rounding of the output and one of the sum with the residual or the bias
  const double products = double(KH) * KW * (depthwise ? 1.0 : double(C)), fp16_rounding = std::ldexp(1.0, -11);
  const double tolerance = quantized ? 1.0
                                     : (products + 2.0) * std::ldexp(1.0, -24) + (spec.out_dtype == precision::fp16 ? fp16_rounding : 0.0) +
                                           (add || spec.bias ? fp16_rounding : 0.0);

  std::vector<O> out(out_count);
  auto verify = [&]() -> result<check> {
    if (status s = conv::unpack_output<O>(g, output.bytes(), tensor_order::nhwc, out); !s) return s.err();
    check result;
    for (std::size_t i = 0; i < out_count; ++i)
      result.add(i, double(out[i]), ref[i], scale[i], tolerance, !quantized && spec.out_dtype == precision::fp16);
    return result;
  };
  runtime::session npu{dev};
  const auto ran = run(npu, built.value().view(),
                       {.feature = &feature, .weight = &weight, .output = &output,
                        .bias = quantized || spec.bias ? &bias_buf : nullptr,
                        .residual = add ? &residual_buf : nullptr},
                       settings, verify);
  if (!ran) return fail(ran.err());
  return ran.value().report("out", OC);
}

int run_conv(const regcmd::runtime::device& dev, const regcmd::conv_spec& spec, const run_settings& settings) {
  using regcmd::conv_data;
  if (spec.dtype == conv_data::uint8) return run_conv_typed<std::uint8_t, std::uint8_t>(dev, spec, settings);
  if (spec.dtype == conv_data::int8) return run_conv_typed<std::int8_t, std::int8_t>(dev, spec, settings);
  return run_conv_typed<float, float>(dev, spec, settings);
}

// The fp16 inputs' range: the ReLU family's kinks with room on both sides, a table's range
// (the --range given, else the function's own) with each bound moved out by a quarter of its
// magnitude to reach the tails (-8..8 -> -10..10; exp's -16..0 -> -20..0, softmax's inputs
// staying <= 0). Within fp16's finite values.
std::pair<double, double> fp16_inputs(const regcmd::act_spec& s) {
  using regcmd::activation;
  double lo = -8, hi = 8;
  if (s.fn == activation::relu6 || s.fn == activation::clip) {
    const double a = s.fn == activation::clip ? s.lo : 0, b = s.fn == activation::clip ? s.hi : 6;
    lo = a - (b - a) / 4;
    hi = b + (b - a) / 4;
  } else if (regcmd::uses_lut(s.fn)) {
    const regcmd::lut_range r = regcmd::reference::range_of(s);
    lo = r.lo - std::abs(r.lo) / 4;
    hi = r.hi + std::abs(r.hi) / 4;
  }
  return {std::clamp(lo, -65504.0, 65504.0), std::clamp(hi, -65504.0, 65504.0)};
}

// An activation: T the host type (float for fp16, std::int8_t, std::int16_t).
template <class T>
int run_act_typed(const regcmd::runtime::device& dev, const regcmd::act_spec& spec, const run_settings& settings) {
  using namespace regcmd;
  const auto built = build(spec);
  if (!built) return fail(built.err());
  const act_geometry& g = built.value().geometry;
  const bool table = uses_lut(spec.fn);
  if (table)  // a range too wide for the table's step: no check could pass
    if (const std::string problem = cli::table_accuracy_problem(spec, g.table); !problem.empty()) return fail(problem);
  auto bufs = buffers(dev, {g.tensor_bytes(), g.tensor_bytes()});
  if (!bufs) return fail(bufs.err());
  runtime::buffer &x_buf = bufs.value()[0], &out_buf = bufs.value()[1];
  const std::size_t MN = std::size_t{spec.M} * spec.N;
  constexpr bool fp16 = std::is_same_v<T, float>;
  std::mt19937_64 rng(settings.seed);
  const auto [lo, hi] = fp16_inputs(spec);
  std::vector<T> x(MN), out(MN);
  for (T& v : x) {
    if constexpr (fp16) v = to_fp16(std::uniform_real_distribution<double>(lo, hi)(rng));
    else v = static_cast<T>(std::uniform_int_distribution<int>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())(rng));
  }
  if (status s = sdp::pack_tensor<T>(g, x, x_buf.bytes()); !s) return fail(s.err());
  // What the program computes by design (a table function: f inside its range, its tails
  // outside), rounded to the output's type, and the error allowed, once for every repeat.
  const double absolute = cli::absolute_tolerance(spec.fn);
  std::vector<double> ref(MN), allowed(MN, 0.0);
  for (std::size_t i = 0; i < MN; ++i) {
    const double y = table ? reference::designed_value(spec, g.table, x[i]) : reference::relu_family(spec, x[i]);
    if constexpr (fp16) ref[i] = to_fp16(y);
    else ref[i] = std::clamp<double>(y, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    if (table) allowed[i] = std::max(absolute, std::ldexp(std::abs(ref[i]), -10));
  }
  auto verify = [&]() -> result<check> {
    if (status s = sdp::unpack_tensor<T>(g, out_buf.bytes(), out); !s) return s.err();
    check result;
    for (std::size_t i = 0; i < MN; ++i) result.add_absolute(i, double(out[i]), ref[i], allowed[i], fp16);
    return result;
  };
  runtime::session npu{dev};
  const auto ran = run(npu, built.value().view(), {.feature = &x_buf, .output = &out_buf}, settings, verify);
  if (!ran) return fail(ran.err());
  return ran.value().report("out", spec.N);
}

int run_act(const regcmd::runtime::device& dev, const regcmd::act_spec& spec, const run_settings& settings) {
  using regcmd::precision;
  if (spec.dtype == precision::int8) return run_act_typed<std::int8_t>(dev, spec, settings);
  if (spec.dtype == precision::int16) return run_act_typed<std::int16_t>(dev, spec, settings);
  return run_act_typed<float>(dev, spec, settings);
}

// The byte of element (y, x, c) in a pooling's NC1HWC2 cube of h x w pixels:
//   (c / C2) · h · w · 16 + (y · w + x) · 16 + (c % C2) · bytes,   C2 = 16 / bytes
// the channels padded to whole atoms (the PPU pools the padding lanes too; they are not
// read back).
std::size_t pool_at(const regcmd::pool_geometry& g, std::uint32_t h, std::uint32_t w, std::uint32_t y, std::uint32_t x,
                    std::uint32_t c) {
  return (std::size_t{c / g.atom} * h * w + std::size_t{y} * w + x) * 16 + std::size_t{c % g.atom} * g.element_bytes();
}

// A pooling: T the host type (float for fp16, std::int8_t); the host image HWC.
template <class T>
int run_pool_typed(const regcmd::runtime::device& dev, const regcmd::pool_spec& spec, const run_settings& settings) {
  using namespace regcmd;
  const auto built = build(spec);
  if (!built) return fail(built.err());
  const pool_geometry& g = built.value().geometry;
  auto bufs = buffers(dev, {g.input_bytes(), g.output_bytes()});
  if (!bufs) return fail(bufs.err());
  runtime::buffer &x_buf = bufs.value()[0], &out_buf = bufs.value()[1];
  constexpr bool fp16 = std::is_same_v<T, float>;
  const std::uint32_t H = g.H, W = g.W, C = g.C, OH = g.out_h, OW = g.out_w;
  std::mt19937_64 rng(settings.seed);
  std::vector<T> x(std::size_t{H} * W * C);
  for (T& v : x) {
    if constexpr (fp16) v = to_fp16(std::uniform_real_distribution<float>(-4, 4)(rng));
    else v = static_cast<T>(std::uniform_int_distribution<int>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())(rng));
  }
  const std::span<std::uint8_t> in = x_buf.bytes();
  std::fill(in.begin(), in.end(), std::uint8_t{0});  // the padding channels
  for (std::uint32_t y = 0; y < H; ++y)
    for (std::uint32_t xx = 0; xx < W; ++xx)
      for (std::uint32_t c = 0; c < C; ++c) {
        const T v = x[(std::size_t{y} * W + xx) * C + c];
        const std::size_t at = pool_at(g, H, W, y, xx, c);
        if constexpr (fp16) {
          const std::uint16_t bits = float_to_half(v);
          in[at] = static_cast<std::uint8_t>(bits & 0xff);
          in[at + 1] = static_cast<std::uint8_t>(bits >> 8);
        } else {
          in[at] = static_cast<std::uint8_t>(v);
        }
      }
  // The host pooling of each output as the check reaches it (no array of M x N references).
  const bool average = g.averages();
  const reference::pool_window window = reference::window_of(g);
  auto expected = [&](std::uint32_t oy, std::uint32_t ox, std::uint32_t c) {
    const double v = window.value(window.at<T>(x, oy, ox, c), average);
    return average ? double(to_fp16(v)) : v;
  };
  auto verify = [&]() -> result<check> {
    const std::span<const std::uint8_t> bytes = out_buf.bytes();
    check result;
    for (std::uint32_t oy = 0; oy < OH; ++oy)
      for (std::uint32_t ox = 0; ox < OW; ++ox)
        for (std::uint32_t c = 0; c < C; ++c) {
          const std::size_t at = pool_at(g, OH, OW, oy, ox, c), i = (std::size_t{oy} * OW + ox) * C + c;
          double v = 0;
          if constexpr (fp16) v = half_to_float(static_cast<std::uint16_t>(bytes[at] | bytes[at + 1] << 8));
          else v = static_cast<std::int8_t>(bytes[at]);
          const double want = expected(oy, ox, c);
          result.add_absolute(i, v, want, average ? std::ldexp(std::abs(want), -9) + std::ldexp(1.0, -24) : 0.0, fp16);
        }
    return result;
  };
  runtime::session npu{dev};
  const auto ran = run(npu, built.value().view(), {.feature = &x_buf, .output = &out_buf}, settings, verify);
  if (!ran) return fail(ran.err());
  return ran.value().report("out", C);
}

int run_pool(const regcmd::runtime::device& dev, const regcmd::pool_spec& spec, const run_settings& settings) {
  if (spec.dtype == regcmd::precision::int8) return run_pool_typed<std::int8_t>(dev, spec, settings);
  return run_pool_typed<float>(dev, spec, settings);
}

// A node that does not open reads like any file that does not, "cannot open 'PATH':
// reason", then the rule that says what to do.
std::string describe_open(const regcmd::error& e);

// Opens the device of --device and uses it as the SoC its node names, else the one of --soc,
// else RK3588; prints which. A --soc the node contradicts is an error.
regcmd::result<regcmd::runtime::device> open_device(const run_settings& settings) {
  auto dev = regcmd::runtime::device::open(settings.device_path);
  if (!dev) return dev.err();
  regcmd::runtime::device d = std::move(dev).value();
  if (settings.soc && d.soc_detected() && settings.soc->id != d.soc().id)
    return regcmd::make_error(regcmd::rules::device_open, "device")
        .with_note("--soc " + std::string(settings.soc->option) + ", but its node is " + std::string(d.soc().name));
  if (settings.soc) d = d.for_soc(*settings.soc);
  const std::string how = d.soc_detected()           ? ""
                          : settings.soc               ? " (--soc)"
                          : d.compatible().empty()     ? " (assumed: its node names no SoC)"
                                                       : " (assumed: its node is '" + d.compatible() +
                                                   "', no SoC of the family; --soc names one)";
  std::printf("device %s: %s, %s%s\n", d.path().c_str(), d.driver_version().c_str(), std::string(d.soc().name).c_str(),
              how.c_str());
  return d;
}

std::string describe_open(const regcmd::error& e) {
  if (e.os_errno == 0 || e.note().empty()) return regcmd::cli::describe(e);
  return "cannot open '" + std::string(e.note()) + "': " + std::strerror(e.os_errno) + " (" +
         regcmd::to_string(regcmd::make_error(*e.violated)) + ")";
}

// A graph file, run: every input drawn at random, every output checked against the host's
// graph. The host computes each op in double from the values the NPU holds (each fp16
// tensor rounded where it is stored) and carries for every element a bound on how far the
// NPU's value may be from the host's: the op's inputs' bounds through the op, its fp32
// accumulation, and at every fp16 store a rounding on the other side of a tie (one ulp,
// 2^-10 relative; the table functions: their tolerance). A worst case, every error with one
// sign. Integer matmuls are exact; a quantized conv's value is its quantized output, within
// one step of TFLite's rounding (the DPU's 15-bit requantization) on top of its inputs'
// bounds through its weights; integer SDP ops saturate exactly (a leaky product within one
// step). The inputs' host values are in the logical orders of regcmd/programs/graph/packing.hpp.
struct host_tensor {
  std::vector<double> value, bound;
};

double store_bound(double v) { return std::ldexp(std::abs(v), -10) + std::ldexp(1.0, -24); }

// Element i of an op's second operand: per element, per channel (N of them) or immediate.
double operand_of(const regcmd::ew_spec& s, const host_tensor* b, std::size_t i, double& bound) {
  bound = 0;
  if (s.operand == regcmd::ew_operand::immediate) return to_fp16(s.immediate);
  const std::size_t at = s.operand == regcmd::ew_operand::per_channel ? i % s.N : i;
  bound = b->bound[at];
  return b->value[at];
}

// A quantized conv (reference::quantized_output), values in quantized units; each output's
// bound its inputs' bounds through |w - zw| at the output's scale, plus one step.
host_tensor quantized_conv(const regcmd::conv_geometry& g, const host_tensor& x, const host_tensor& w,
                           const std::vector<double>& bias, const host_tensor* residual) {
  using namespace regcmd;
  const conv_spec& s = g.spec;
  const double to_out = double(s.input.scale) * s.weights.scale / s.output.scale;
  const reference::conv_window window = reference::window_of(g);
  const double zx = s.input.zero_point, zw = s.weights.zero_point;
  host_tensor out;
  for (std::uint32_t oy = 0; oy < g.out_h; ++oy)
    for (std::uint32_t ox = 0; ox < g.out_w; ++ox)
      for (std::uint32_t o = 0; o < s.out_channels; ++o) {
        const double acc = window.at<double, double>(x.value, zx, w.value, zw, oy, ox, o).sum + (s.bias ? bias[o] : 0);
        double carried = window.at<double, double>(x.bound, 0, w.value, zw, oy, ox, o).magnitude * to_out;
        const std::size_t i = window.out_index(oy, ox, o);
        if (residual) carried += residual->bound[i] * s.residual.scale / s.output.scale;
        out.value.push_back(reference::quantized_output(s, acc, residual ? &residual->value[i] : nullptr));
        out.bound.push_back(carried + 1);
      }
  return out;
}

// The op's output on the host, from its operands' host values (a conv's bias: a quantized
// conv's int32 values or an fp16 conv's fp16 ones, empty without one).
host_tensor host_op(const regcmd::graph_op& op, const regcmd::graph_step& step, const host_tensor& a, const host_tensor* b,
                    const std::vector<double>& bias, const host_tensor* residual) {
  using namespace regcmd;
  host_tensor out;
  auto store = [&](double v, double carried, bool fp16) {
    out.value.push_back(fp16 ? double(to_fp16(v)) : v);
    out.bound.push_back(carried + (fp16 ? store_bound(v) : 0.0));
  };
  switch (op.kind) {
    case graph_op_kind::matmul: {
      const matmul_spec& s = op.matmul;
      const bool integer = s.dtype.features != precision::fp16;
      const double slices = step.matmul.slices;
      // the products, and the operands' bounds through them: sum |a bound . b| + |a . b bound|
      const std::vector<reference::products> c = reference::matmul<double, double>(a.value, b->value, s.M, s.K, s.N);
      const std::vector<reference::products> ca = reference::matmul<double, double>(a.bound, b->value, s.M, s.K, s.N);
      const std::vector<reference::products> cb = reference::matmul<double, double>(a.value, b->bound, s.M, s.K, s.N);
      for (std::size_t i = 0; i < c.size(); ++i) {
        const double sum = c[i].sum, magnitude = c[i].magnitude;
        double carried = ca[i].magnitude + cb[i].magnitude;
        if (integer) {
          store(sum, 0, false);
          continue;
        }
        // fp32 accumulation; a split K's partials and running sums each stored as fp16
        carried += magnitude * (s.K + 2) * std::ldexp(1.0, -24);
        if (slices > 1) carried += 2 * slices * store_bound(magnitude);
        store(activate(s.activation, s.leaky_slope, false, sum), carried, s.out_dtype == precision::fp16);
      }
      return out;
    }
    case graph_op_kind::ew: {
      const ew_spec& s = op.ew;
      for (std::size_t i = 0; i < a.value.size(); ++i) {
        double by = 0;
        const double x = a.value[i], bx = a.bound[i], y = operand_of(s, b, i, by);
        const double product = std::abs(y) * bx + std::abs(x) * by + bx * by;
        const double carried = s.op == ew_op::add                          ? bx + by
                               : s.op == ew_op::max || s.op == ew_op::min ? std::max(bx, by)
                               : s.op == ew_op::prelu                     ? std::max(bx, product)
                                                                          : product;
        if (s.dtype == precision::fp16) store(apply(s.op, x, y), carried, true);
        else store(reference::saturate(s.dtype, apply(s.op, x, y)), carried, false);  // exact, saturating
      }
      return out;
    }
    case graph_op_kind::act: {
      const act_spec& s = op.act;
      const bool table = uses_lut(s.fn);
      for (std::size_t i = 0; i < a.value.size(); ++i) {
        const double x = a.value[i], bx = a.bound[i];
        auto f = [&](double v) { return table ? reference::designed_value(s, step.act.table, v) : reference::relu_family(s, v); };
        const double y = f(x);
        // the input's bound through f: its largest change over [x - bx, x + bx], sampled
        double moved = 0;
        for (int k = -4; k <= 4; ++k) moved = std::max(moved, std::abs(f(x + bx * k / 4) - y));
        if (s.dtype != precision::fp16) {  // the ReLU family, its leaky product rounded: one step
          store(reference::saturate(s.dtype, y), moved + (s.fn == activation::leaky_relu ? 1 : 0), false);
          continue;
        }
        const double own = table ? std::max(cli::absolute_tolerance(s.fn), std::ldexp(std::abs(y), -10)) : 0.0;
        store(y, moved + own, true);
      }
      return out;
    }
    case graph_op_kind::conv: {
      const conv_geometry& g = step.conv.conv;
      const conv_spec& s = g.spec;
      const std::uint32_t O = s.out_channels;
      if (g.quantized()) return quantized_conv(g, a, *b, bias, residual);
      const reference::conv_window window = reference::window_of(g);
      for (std::uint32_t oy = 0; oy < g.out_h; ++oy)
        for (std::uint32_t ox = 0; ox < g.out_w; ++ox)
          for (std::uint32_t o = 0; o < O; ++o) {
            const reference::products p = window.at<double, double>(a.value, 0, b->value, 0, oy, ox, o);
            double sum = p.sum;
            double carried = window.at<double, double>(a.bound, 0, b->value, 0, oy, ox, o).magnitude +
                             window.at<double, double>(a.value, 0, b->bound, 0, oy, ox, o).magnitude +
                             p.magnitude * (window.taps() + 2) * std::ldexp(1.0, -24);
            if (residual) {  // added before the activation, the sum rounded once more
              const std::size_t i = window.out_index(oy, ox, o);
              sum += residual->value[i];
              carried += residual->bound[i] + store_bound(sum);
            } else if (s.bias) {  // the EW stage's add, the same way
              sum += bias[o];
              carried += store_bound(sum);
            }
            store(activate(s.activation, s.leaky_slope, false, sum), carried, s.out_dtype == precision::fp16);
          }
      return out;
    }
    case graph_op_kind::pool: {
      const pool_geometry& g = step.pool;
      const reference::pool_window window = reference::window_of(g);
      for (std::uint32_t oy = 0; oy < g.out_h; ++oy)
        for (std::uint32_t ox = 0; ox < g.out_w; ++ox)
          for (std::uint32_t c = 0; c < g.C; ++c) {
            // the bounds pooled like values: their sum carries into an average, their largest into a max
            const reference::pool_taps t = window.at<double>(a.value, oy, ox, c), tb = window.at<double>(a.bound, oy, ox, c);
            // the average: the window's sum times fp16 reciprocals of the kernel's sides
            // (inexact for other than powers of two: 2^-9 of the result, regcmd-run pool's)
            if (g.averages())
              store(window.value(t, true), tb.sum / window.taps() + std::ldexp(t.magnitude / window.taps(), -9), true);
            else
              store(t.max, std::max(tb.max, 0.0), false);  // the max of values each within its bound
          }
      return out;
    }
    case graph_op_kind::concat: {  // each pixel's channels of a, then of b: exact
      const std::size_t ca = op.concat.channels_a, cb = op.concat.channels_b;
      for (std::size_t p = 0; p < op.concat.pixels; ++p) {
        for (std::size_t c = 0; c < ca; ++c) store(a.value[p * ca + c], a.bound[p * ca + c], false);
        for (std::size_t c = 0; c < cb; ++c) store(b->value[p * cb + c], b->bound[p * cb + c], false);
      }
      return out;
    }
  }
  return out;
}

// The element count an op reads from operand `which` (0: a, 1: b, 2: a conv's residual), in
// its logical order.
std::size_t elements_read(const regcmd::graph_op& op, const regcmd::graph_step& step, int which) {
  using namespace regcmd;
  switch (op.kind) {
    case graph_op_kind::matmul:
      return which == 0 ? std::size_t{op.matmul.M} * op.matmul.K : std::size_t{op.matmul.K} * op.matmul.N;
    case graph_op_kind::ew:
      return which == 1 && op.ew.operand == ew_operand::per_channel ? op.ew.N : std::size_t{op.ew.M} * op.ew.N;
    case graph_op_kind::act: return std::size_t{op.act.M} * op.act.N;
    case graph_op_kind::conv: {
      const conv_geometry& g = step.conv.conv;
      const conv_spec& s = g.spec;
      if (which == 2) return std::size_t{g.out_h} * g.out_w * s.out_channels;
      return which == 0 ? std::size_t{s.H} * s.W * s.C
                        : std::size_t{s.depthwise ? 1 : s.out_channels} * s.kernel_h * s.kernel_w * s.C;
    }
    case graph_op_kind::pool: return std::size_t{step.pool.H} * step.pool.W * step.pool.C;
    case graph_op_kind::concat: return std::size_t{op.concat.pixels} * (which == 0 ? op.concat.channels_a : op.concat.channels_b);
  }
  return 0;
}

// Random host values for an input or weight tensor as its first reader reads it: fp16
// features in [-1, 1], fp16 weights in +-1/sqrt(fan-in) (values stay near 1 through every
// layer), int8 and uint8 over their ranges, int4 in [-8, 7].
host_tensor random_input(const regcmd::graph_op& op, const regcmd::graph_step& step, int which, std::size_t count,
                         const regcmd::tensor_format& format, std::mt19937_64& rng) {
  using namespace regcmd;
  const precision type = format.type;
  host_tensor t{std::vector<double>(count), std::vector<double>(count, 0.0)};
  if (type == precision::int8 || type == precision::int4 || type == precision::int16) {
    const int lo = format.is_unsigned ? 0 : type == precision::int8 ? -128 : type == precision::int16 ? -32768 : -8;
    std::uniform_int_distribution<int> d(lo, format.is_unsigned            ? 255
                                             : type == precision::int8  ? 127
                                             : type == precision::int16 ? 32767
                                                                        : 7);
    for (double& v : t.value) v = d(rng);
    return t;
  }
  double scale = 1;
  if (which == 1 && op.kind == graph_op_kind::matmul) scale = 1 / std::sqrt(double(op.matmul.K));
  if (which == 1 && op.kind == graph_op_kind::conv) {
    const conv_spec& s = step.conv.conv.spec;
    scale = 1 / std::sqrt(double(s.kernel_h) * s.kernel_w * (s.depthwise ? 1 : s.C));
  }
  std::uniform_real_distribution<double> d(-scale, scale);
  for (double& v : t.value) v = to_fp16(d(rng));
  return t;
}

// The length of a row of an op's output in its logical order (N, or a conv's or pooling's
// channels): how a failing element is named.
std::uint32_t row_length(const regcmd::graph_op& op, const regcmd::graph_step& step) {
  using namespace regcmd;
  switch (op.kind) {
    case graph_op_kind::matmul: return op.matmul.N;
    case graph_op_kind::ew: return op.ew.N;
    case graph_op_kind::act: return op.act.N;
    case graph_op_kind::conv: return op.conv.out_channels;
    case graph_op_kind::pool: return step.pool.C;
    case graph_op_kind::concat: return step.concat.N;
  }
  return 1;
}

// The element count an op writes, in its logical order.
std::size_t elements_written(const regcmd::graph_op& op, const regcmd::graph_step& step) {
  using namespace regcmd;
  switch (op.kind) {
    case graph_op_kind::matmul: return std::size_t{op.matmul.M} * op.matmul.N;
    case graph_op_kind::ew: return std::size_t{op.ew.M} * op.ew.N;
    case graph_op_kind::act: return std::size_t{op.act.M} * op.act.N;
    case graph_op_kind::conv: return std::size_t{step.conv.conv.out_h} * step.conv.conv.out_w * op.conv.out_channels;
    case graph_op_kind::pool: return std::size_t{step.pool.out_h} * step.pool.out_w * step.pool.C;
    case graph_op_kind::concat: return std::size_t{op.concat.pixels} * step.concat.N;
  }
  return 0;
}

// A tensor the NPU wrote, read back in its logical order as doubles.
regcmd::result<std::vector<double>> read_tensor(const regcmd::runtime::graph_buffers& io, const regcmd::graph_tensor& x,
                                                 std::size_t count) {
  using namespace regcmd;
  std::vector<double> got(count);
  auto unpack = [&](auto element) -> status {
    std::vector<decltype(element)> v(count);
    if (status s = io.unpack<decltype(element)>(x.name.view(), v); !s) return s;
    std::copy(v.begin(), v.end(), got.begin());
    return {};
  };
  const status read = x.format.type == precision::int32   ? unpack(std::int32_t{})
                      : x.format.type == precision::int16 ? unpack(std::int16_t{})
                      : x.format.type != precision::int8  ? unpack(float{})
                      : x.format.is_unsigned             ? unpack(std::uint8_t{})
                                                         : unpack(std::int8_t{});
  if (!read) return read.err();
  return got;
}

// A graph, run and checked op by op. It is built with every intermediate in bytes of its own
// (graph_spec::keep_intermediates), so every tensor the NPU writes is read back after the
// run, and every op's output is checked against the host's value of that op on the NPU's own
// inputs (its inputs and weights as drawn, its other operands as the NPU wrote them) within
// that op's bound: a wrong intermediate is that op's failure, whatever the ops after it do.
// Then the program regcmd-gen writes (its arena shared by tensors that do not live
// together) runs on the same inputs, and its outputs must equal the checked ones bit for bit.
int run_graph(const regcmd::runtime::device& dev, const regcmd::large_graph_spec& spec,
              const std::vector<regcmd::cli::graph_preset>& presets, const run_settings& settings) {
  using namespace regcmd;
  const auto written = build(spec);
  if (!written) return fail(written.err());
  large_graph_spec kept_spec = spec;
  kept_spec.keep_intermediates = true;
  const auto built = build(kept_spec);
  if (!built) {
    if (built.err().breaks(rules::operand_size))
      return fail("with every intermediate in bytes of its own, to read each back, the graph's arena would be " +
                  std::to_string(written.value().geometry.intermediates_total) +
                  " bytes: regcmd-run cannot check every op of it (" + cli::describe(built.err()) + ")");
    return fail(built.err());
  }
  const large_graph_geometry& g = built.value().geometry;
  const large_graph_geometry& gw = written.value().geometry;
  auto io = runtime::graph_buffers::create(dev, g);
  if (!io) return fail(io.err());
  auto io_written = runtime::graph_buffers::create(dev, gw);
  if (!io_written) return fail(io_written.err());

  // Inputs drawn and packed into both programs' buffers; every op reads whole tensors. The
  // norm family's constants are theirs, from γ in [0.5, 1.5] and β in [-0.5, 0.5] drawn.
  std::mt19937_64 rng(settings.seed);
  std::vector<host_tensor> host(g.tensor_count);
  for (const cli::graph_preset& p : presets) {
    std::uniform_real_distribution<float> around(-0.5f, 0.5f);
    std::vector<float> gamma(p.gamma.empty() ? 0 : p.norm.D), beta(p.beta.empty() ? 0 : p.norm.D);
    for (float& v : gamma) v = to_fp16(1.0f + around(rng));
    for (float& v : beta) v = to_fp16(around(rng));
    const auto constants = cli::constants_of(p, gamma, beta);
    if (!constants) return fail(constants.err());
    for (const norm_constant& c : constants.value())
      if (const std::uint32_t t = detail::index_of(g, c.name); t != no_op)
        host[t] = {std::vector<double>(c.values.begin(), c.values.end()), std::vector<double>(c.values.size(), 0.0)};
  }
  std::vector<bool> packed(g.tensor_count, false);
  std::vector<std::vector<double>> biases(spec.count);  // the convs' biases: int32 quantized, fp16 values
  for (std::uint32_t i = 0; i < spec.count; ++i) {
    const graph_op& op = spec.ops[i];
    const graph_step& step = g.steps[i];
    for (int which = 0; which < 3; ++which) {
      const std::uint32_t t = which == 0 ? step.a : which == 1 ? step.b : step.c;
      if (t == no_op) continue;
      const graph_tensor& x = g.tensors[t];
      const std::size_t count = elements_read(op, step, which);
      // a conv's weights pack with its bias (drawn here: a quantized conv's +-1000 at the
      // accumulator's scale, an fp16 conv's in [-1, 1]), each conv's; every other input once, alone
      const bool with_bias = which == 1 && step.bias != no_op;
      const bool fp16_bias = with_bias && !step.conv.conv.quantized();
      if (x.writer == no_op && (!packed[t] || with_bias)) {
        packed[t] = true;
        if (host[t].value.empty()) host[t] = random_input(op, step, which, count, x.format, rng);
        if (with_bias) {
          biases[i].resize(op.conv.bias ? op.conv.out_channels : 0);
          for (double& v : biases[i])
            v = fp16_bias ? double(to_fp16(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng)))
                          : double(std::uniform_int_distribution<std::int32_t>(-1000, 1000)(rng));
        }
        const std::string_view name = with_bias ? op.out.view() : x.name.view();
        std::vector<std::int32_t> int32_bias;
        std::vector<float> fp16_values;
        for (double v : biases[i])
          if (fp16_bias) fp16_values.push_back(static_cast<float>(v));
          else int32_bias.push_back(static_cast<std::int32_t>(v));
        auto pack = [&](auto element) -> status {
          using T = decltype(element);
          const std::vector<T> v(host[t].value.begin(), host[t].value.end());
          for (runtime::graph_buffers* into : {&io.value(), &io_written.value()}) {
            status s = with_bias ? into->pack_conv<T>(name, v, int32_bias) : into->pack<T>(name, v);
            if (s && fp16_bias) s = into->pack_fp16_conv_bias(name, fp16_values);
            if (!s) return s;
          }
          return {};
        };
        const status packed = x.format.type == precision::fp16    ? pack(float{})
                              : x.format.type == precision::int16 ? pack(std::int16_t{})
                              : x.format.is_unsigned             ? pack(std::uint8_t{})
                                                                 : pack(std::int8_t{});
        if (!packed) return fail(packed.err());
      }
      const std::size_t holds = x.writer == no_op ? host[t].value.size() : elements_written(spec.ops[x.writer], g.steps[x.writer]);
      if (holds != count)
        return fail("op '" + std::string(op.out.view()) + "' reads " + std::to_string(count) + " elements of '" +
                    std::string(x.name.view()) + "', which holds " + std::to_string(holds) +
                    ": regcmd-run's host checks ops that read whole tensors (regcmd-gen graph builds this one)");
    }
  }

  // The checked elements one after another: every op's output, then the outputs of
  // regcmd-gen's program. Where each op's starts.
  std::vector<std::size_t> starts(spec.count + 1, 0);
  for (std::uint32_t i = 0; i < spec.count; ++i) starts[i + 1] = starts[i] + elements_written(spec.ops[i], g.steps[i]);
  runtime::session npu_session{dev};
  auto as_written = npu_session.prepare(written.value().view(), {settings.split});
  if (!as_written) return fail(as_written.err());
  if (status s = npu_session.bind(as_written.value(), io_written.value().operands()); !s) return fail(s.err());
  std::vector<host_tensor> npu(g.tensor_count);  // what the NPU wrote, exact (bound 0)
  auto verify = [&]() -> result<check> {
    if (status s = io.value().read_back(operand_role::intermediate); !s) return s.err();
    check result;
    for (std::uint32_t i = 0; i < spec.count; ++i) {
      const graph_op& op = spec.ops[i];
      const graph_step& step = g.steps[i];
      const graph_tensor& x = g.tensors[step.out];
      regcmd::result<std::vector<double>> got = read_tensor(io.value(), x, elements_written(op, step));
      if (!got) return got.err();
      npu[step.out] = {std::move(got).value(), std::vector<double>(elements_written(op, step), 0.0)};
      auto operand = [&](std::uint32_t t) -> const host_tensor* {
        return t == no_op ? nullptr : g.tensors[t].writer == no_op ? &host[t] : &npu[t];
      };
      const host_tensor want = host_op(op, step, *operand(step.a), operand(step.b), biases[i], operand(step.c));
      const bool fp16 = x.format.type == precision::fp16;
      const std::vector<double>& value = npu[step.out].value;
      for (std::size_t k = 0; k < value.size(); ++k)
        result.add_absolute(starts[i] + k, value[k], want.value[k], want.bound[k], fp16);
    }
    // regcmd-gen's program, its outputs filled as the checked one's were
    for (const runtime::buffer* b : {io_written.value().operands().output, io_written.value().operands().intermediate})
      if (b) std::fill(b->bytes().begin(), b->bytes().end(), std::uint8_t{0xff});
    if (auto r = npu_session.run(as_written.value(), {.blocking = !settings.nonblocking}); !r) return r.err();
    std::size_t at = starts[spec.count];
    for (std::uint32_t i = 0; i < spec.count; ++i) {
      const graph_tensor& x = g.tensors[g.steps[i].out];
      if (x.kind != tensor_kind::output) continue;
      const regcmd::result<std::vector<double>> same = read_tensor(io_written.value(), x, npu[g.steps[i].out].value.size());
      if (!same) return same.err();
      for (std::size_t k = 0; k < same.value().size(); ++k) result.add_absolute(at + k, same.value()[k], npu[g.steps[i].out].value[k], 0);
      at += same.value().size();
    }
    return result;
  };
  const auto ran = run(npu_session, built.value().view(), io.value().operands(), settings, verify);
  if (!ran) return fail(ran.err());
  // An element is named by the op's output tensor and its index there; past every op's, by
  // an output of regcmd-gen's program.
  const std::size_t worst = ran.value().first.worst;
  std::size_t base = starts[spec.count];
  for (std::uint32_t i = 0; i < spec.count && worst >= starts[spec.count]; ++i) {
    const graph_tensor& x = g.tensors[g.steps[i].out];
    if (x.kind != tensor_kind::output) continue;
    const std::size_t size = starts[i + 1] - starts[i];
    if (worst < base + size) {
      const std::string name = std::string(x.name.view()) + " of regcmd-gen's program";
      return ran.value().report(name.c_str(), row_length(spec.ops[i], g.steps[i]), base);
    }
    base += size;
  }
  std::uint32_t op = 0;
  while (op + 1 < spec.count && starts[op + 1] <= worst) ++op;
  const graph_tensor& x = g.tensors[g.steps[op].out];
  return ran.value().report(std::string(x.name.view()).c_str(), row_length(spec.ops[op], g.steps[op]), starts[op]);
}

// regcmd-run graph FILE [--device D] [--seed S] [--repeat R] [--cores 1|3].
int run_graph_file(int argc, char** argv) {
  using namespace regcmd;
  if (cli::problem p = cli::graph_file_argument(argc, argv); !p.empty()) return fail(p);
  const std::string path = argv[2];
  run_settings settings;
  cli::given_options given;
  for (int i = 3; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (const int done = cli::help_or_version(a, usage, "regcmd-run"); done >= 0) return done;
    if (cli::problem twice = given.add(a); !twice.empty()) return fail(twice);
    if (!is_running_option(a))
      return fail("option '" + std::string(a) + "' does not apply to graph (its ops' options are in the file)");
    if (i + 1 >= argc) return fail(std::string(a) + " needs a value");
    if (const cli::problem bad = *apply_running(settings, a, argv[++i]); !bad.empty()) return fail(bad);
  }
  // The graph's rules first: a graph that breaks one needs no device.
  const cli::loaded_graph file = cli::load_graph_file(path);
  if (!file.problem.empty()) return fail(file.problem);
  auto dev = open_device(settings);
  if (!dev) return fail(describe_open(dev.err()));
  return run_graph(dev.value(), file.spec, file.presets, settings);
}

// The tool, under guarded_main.
int tool_main(int argc, char** argv) {
  using namespace regcmd;
  if (argc < 2) {
    std::fputs(usage, stderr);
    return cli::exit_error;
  }
  const std::string_view program = argv[1];
  if (program == "-h" || program == "--help") {
    std::fputs(usage, stdout);
    return cli::exit_success;
  }
  if (program == "--version") return cli::print_version("regcmd-run");
  if (program == "graph") return run_graph_file(argc, argv);
  cli::request r{.elementwise = program == "ew", .convolution = program == "conv", .activation = program == "act",
                 .pooling = program == "pool", .ew = {.immediate = 1.5f}};
  if (program != "matmul" && !r.elementwise && !r.convolution && !r.activation && !r.pooling)
    return fail("unknown program '" + std::string(program) + "': matmul, ew, conv, act, pool or graph");

  run_settings settings;
  cli::given_options given;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (const int done = cli::help_or_version(a, usage, "regcmd-run"); done >= 0) return done;
    if (cli::problem twice = given.add(a); !twice.empty()) return fail(twice);
    if (a == "--round-robin") { settings.round_robin = true; continue; }
    if (a == "--nonblocking") { settings.nonblocking = true; continue; }
    if (cli::apply_flag(r, a)) continue;
    const bool known = cli::is_request_option(a) || is_running_option(a);
    if (!known) return fail("unknown option '" + std::string(a) + "' (regcmd-run --help lists them)");
    if (i + 1 >= argc) return fail(std::string(a) + " needs a value");
    const std::string_view v = argv[++i];
    cli::problem bad;
    if (const std::optional<cli::problem> applied = cli::apply(r, a, v)) bad = *applied;
    else bad = *apply_running(settings, a, v);
    if (!bad.empty()) return fail(bad);
  }
  if (cli::problem p = cli::check_request(r, given); !p.empty()) return fail(p);
  cli::complete_request(r, given);
  // regcmd-run runs a matmul with its tiles padded (its usage: --no-pad for ew and act only)
  if (cli::program_of(r) == cli::request_program::matmul)
    if (cli::problem p = given.refuse_any({"--no-pad"}, "to matmul in regcmd-run (ew and act only)"); !p.empty())
      return fail(p);
  if (r.convolution)
    if (cli::problem p = cli::complete_conv(r, given); !p.empty()) return fail(p);
  // run-options: a program split over the cores takes no round-robin (every run already
  // uses all three), whether or not this shape has tasks enough to split.
  if (settings.split != runtime::cores::one && settings.round_robin)
    return fail("--round-robin does not apply with --cores 3 or 3,1 (a split program runs on all three cores at once)");

  // The program's rules first: a shape that breaks one needs no device.
  if (r.convolution) {
    if (const auto p = conv_kind::resolve<soc::rk3588>(r.conv); !p) return fail(p.err());
  } else if (r.activation) {
    if (const auto g = resolve_act(r.act); !g) return fail(g.err());
  } else if (r.pooling) {
    if (const auto g = resolve_pool(r.pool); !g) return fail(g.err());
  } else if (r.elementwise) {
    if (const auto g = resolve_ew(r.ew); !g) return fail(g.err());
  } else if (r.fused_ew) {
    if (const auto g = resolve_fused(r.fused()); !g) return fail(g.err());
  } else if (const auto p = plan(r.spec, r.options); !p) {
    return fail(p.err());
  }
  auto dev = open_device(settings);
  if (!dev) return fail(describe_open(dev.err()));
  // rocket's kernel picks each job's core and always signals a fence (fact sheet §3).
  if (dev.value().kind() == runtime::driver::rocket)
    if (cli::problem p = given.refuse_any({"--round-robin", "--nonblocking"}, "to the rocket node (its kernel picks the core and always fences)");
        !p.empty())
      return fail(p);
  if (r.convolution) return run_conv(dev.value(), r.conv, settings);
  if (r.activation) return run_act(dev.value(), r.act, settings);
  // The rocket node refuses pooling when the program is prepared (rule rocket-interrupt).
  if (r.pooling) return run_pool(dev.value(), r.pool, settings);
  if (r.elementwise) return run_ew(dev.value(), r.ew, settings);
  if (r.fused_ew) return run_fused(dev.value(), r.fused(), settings);
  return run_matmul(dev.value(), r.spec, r.options, settings);
}

}  // namespace

int main(int argc, char** argv) { return regcmd::cli::guarded_main("regcmd-run", argc, argv, tool_main); }
