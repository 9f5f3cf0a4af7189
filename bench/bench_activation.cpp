// Lookup-table activations: the accuracy of each built-in table as the functional model
// executes it (the hardware's reading: index, interpolation, tails, MINUS_EXP), against the
// exact function over every fp16 input of a sweep, and the public tables of the fact sheet
// (ops-reference §6.3) run the same way where their programs write fp16 (sigmoid, SiLU; the
// others write fp32, which regcmd's programs do not). Then the entries of a LUT program.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <regcmd/core/half.hpp>
#include <regcmd/model/npu.hpp>
#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/sdp/packing.hpp>

#include "harness.hpp"

using namespace regcmd;

namespace {

struct accuracy {
  double absolute = 0, relative = 0;  // relative where |f| >= 1/16
};

// Runs `p` on the model over x; out decoded as (raw - offset) / scale.
std::vector<double> run(const runtime_program<act_geometry>& p, const std::vector<float>& x, double offset = 0,
                        double scale = 1) {
  const act_geometry& g = p.geometry;
  std::vector<std::uint8_t> code(p.view().entries.size() * 8), in(g.tensor_bytes()), out(g.tensor_bytes());
  std::vector<entry> entries(p.view().entries.begin(), p.view().entries.end());
  operand_addresses at{};
  at[static_cast<std::size_t>(operand_role::regcmd)] = 0x1000'0000;
  at[static_cast<std::size_t>(operand_role::feature)] = 0x2000'0000;
  at[static_cast<std::size_t>(operand_role::output)] = 0x3000'0000;
  if (!patch_slots(entries, p.view().slots, at).ok() || !sdp::pack_tensor<float>(g, x, in).ok()) std::abort();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto bytes = entries[i].to_bytes();
    std::copy(bytes.begin(), bytes.end(), code.begin() + static_cast<std::ptrdiff_t>(i * 8));
  }
  model::iova_space memory;
  memory.add(0x1000'0000, code);
  memory.add(0x2000'0000, in);
  memory.add(0x3000'0000, out);
  model::npu npu;
  npu.behaviour = {false, false};
  const task& first = p.view().tasks[0];
  const auto r = npu.run(memory, 0x1000'0000 + std::uint64_t{first.first} * 8, pc_fetch_amount(first.count),
                         static_cast<std::uint32_t>(p.view().tasks.size()), false);
  if (!r.faults.empty()) {
    std::fprintf(stderr, "bench_activation: the model reports: %s\n", r.faults.front().what.c_str());
    std::exit(1);
  }
  std::vector<float> y(x.size());
  if (!sdp::unpack_tensor<float>(g, out, y).ok()) std::abort();
  std::vector<double> decoded(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) decoded[i] = (y[i] - offset) / scale;
  return decoded;
}

std::vector<float> fp16_inputs(double lo, double hi) {
  std::vector<float> x;
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float v = half_to_float(static_cast<std::uint16_t>(h));
    if (v >= lo && v <= hi) x.push_back(v);
  }
  return x;
}

template <class F>
accuracy measure_error(const std::vector<float>& x, const std::vector<double>& y, const F& exact) {
  accuracy a;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = exact(double{x[i]}), err = std::abs(y[i] - want);
    a.absolute = std::max(a.absolute, err);
    if (std::abs(want) >= 0.0625) a.relative = std::max(a.relative, err / std::abs(want));
  }
  return a;
}

std::string sci(double v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2e", v);
  return s;
}

// A public table (ops-reference §6.3) in regcmd's program: its index scale, its entries
// q(x), its tails; exponent 0 (its own output scale is divided out on the host) or 15.
template <class Q>
lut_table public_table(float index_scale, const Q& q, std::uint32_t exponent, lut_slope under, lut_slope over) {
  lut_table t;
  t.index_scale = float_to_half(index_scale);
  const double step = 32.0 / index_scale;
  for (std::uint32_t i = 0; i < lut_table_entries; ++i) {
    t.le[i] = static_cast<std::int16_t>(q(-(512.0 - i) * step));
    t.lo[i] = static_cast<std::int16_t>(q(i * step));
  }
  t.exponent = exponent;
  t.underflow = under;
  t.overflow = over;
  return t;
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

}  // namespace

int main() {
  struct row {
    const char* name;
    activation fn;
    double (*exact)(double);
    double lo, hi;
  };
  const row rows[] = {
      {"sigmoid", activation::sigmoid, sigmoid, -10, 10},
      {"tanh", activation::tanh, [](double x) { return std::tanh(x); }, -6.25, 6.25},
      {"silu", activation::silu, [](double x) { return x * sigmoid(x); }, -15, 15},
      {"gelu", activation::gelu,
       [](double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }, -7.5, 7.5},
      {"gelu-erf", activation::gelu_erf, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, -7.5, 7.5},
      {"hardswish", activation::hardswish, [](double x) { return x * std::clamp(x + 3, 0.0, 6.0) / 6; }, -5, 5},
      {"hardsigmoid", activation::hardsigmoid, [](double x) { return std::clamp(x + 3, 0.0, 6.0) / 6; }, -5, 5},
      {"exp", activation::exp, [](double x) { return std::exp(x); }, -20, 0},
      {"mish", activation::mish, [](double x) { return x * std::tanh(std::log1p(std::exp(x))); }, -15, 15},
      {"elu", activation::elu, [](double x) { return x > 0 ? x : std::expm1(x); }, -10, 10},
      {"selu", activation::selu,
       [](double x) { return 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * std::expm1(x)); }, -10, 10},
      {"softplus", activation::softplus, [](double x) { return std::log1p(std::exp(x)); }, -10, 10},
  };
  std::printf("%-12s %-16s %10s %10s %10s\n", "function", "sweep (fp16)", "inputs", "max abs", "max rel");
  for (const row& r : rows) {
    const std::vector<float> x = fp16_inputs(r.lo, r.hi);
    const auto p = build(act_spec{.fn = r.fn, .M = 1, .N = static_cast<std::uint32_t>(x.size())}).value();
    const accuracy a = measure_error(x, run(p, x), r.exact);
    char sweep[32];
    std::snprintf(sweep, sizeof sweep, "[%g, %g]", r.lo, r.hi);
    std::printf("%-12s %-16s %10zu %10.2e %10.2e\n", r.name, sweep, x.size(), a.absolute, a.relative);
    bench::row("lut accuracy (model, fp16 sweep)", std::string(r.name) + " " + sweep + ": max abs / rel error",
               sci(a.absolute) + " / " + sci(a.relative));
  }

  // The public sigmoid (AB-OPS: index 2596, Q0.15 clamped, MINUS_EXP 15, underflow
  // 23107 / 2^22) and SiLU (AB-SILU: index 2824, x 5664.8 raw fp16 out, overflow 16434 / 2^13).
  auto round = [](double v) { return std::floor(v + 0.5); };
  const lut_table public_sigmoid = public_table(
      2596, [&](double x) { return std::clamp(round(32768 * sigmoid(x)), 0.0, 32767.0); }, 15, {23107, 22}, {});
  const lut_table public_silu = public_table(
      2824, [&](double x) { return std::clamp(round(5664.8 * x * sigmoid(x)), -32768.0, 32767.0); }, 0, {}, {16434, 13});
  struct versus {
    const char* name;
    activation fn;
    lut_table table;
    double scale;
    double (*exact)(double);
    double lo, hi;
  };
  // Each over the public table's own range (16384 / index scale) and over regcmd's wider sweep.
  auto silu = [](double x) { return x * sigmoid(x); };
  const versus pairs[] = {{"sigmoid", activation::sigmoid, public_sigmoid, 1, sigmoid, -6.31, 6.31},
                          {"sigmoid", activation::sigmoid, public_sigmoid, 1, sigmoid, -10, 10},
                          {"silu", activation::silu, public_silu, 5664.8, silu, -5.8, 5.8},
                          {"silu", activation::silu, public_silu, 5664.8, silu, -15, 15}};
  std::printf("\n%-12s %-16s %14s %14s\n", "vs public", "sweep", "public abs", "regcmd abs");
  for (const versus& v : pairs) {
    const std::vector<float> x = fp16_inputs(v.lo, v.hi);
    const act_spec shape{.M = 1, .N = static_cast<std::uint32_t>(x.size())};
    const auto ours = build(act_spec{.fn = v.fn, .M = shape.M, .N = shape.N}).value();
    const auto theirs = build_kind<table_act_kind>(table_act_spec{shape, v.table}).value();
    const accuracy a = measure_error(x, run(ours, x), v.exact), b = measure_error(x, run(theirs, x, 0, v.scale), v.exact);
    char sweep[32];
    std::snprintf(sweep, sizeof sweep, "[%g, %g]", v.lo, v.hi);
    std::printf("%-12s %-16s %14.2e %14.2e\n", v.name, sweep, b.absolute, a.absolute);
    bench::row("lut accuracy (model, fp16 sweep)",
               std::string(v.name) + " " + sweep + ": public table / regcmd's, max abs error",
               sci(b.absolute) + " / " + sci(a.absolute), "regcmd <= public", a.absolute <= b.absolute);
  }

  // Entries: the upload (2 x 514) in every task.
  const auto one = build(act_spec{.fn = activation::sigmoid, .M = 1, .N = 8}).value();
  const auto four = build(act_spec{.fn = activation::sigmoid, .M = 1000, .N = 200}).value();
  bench::row("lut program size", "entries, lone LUT task (upload + 62 writes + tail)", std::to_string(one.view().tasks[0].count));
  bench::row("lut program size", "entries per chained LUT task after the first (AB-SILU's, reusing the tables: 36)",
             std::to_string(four.view().tasks[1].count));
  bench::row("lut program size", "entries, 4-task program (25000 pixels)", std::to_string(four.view().entries.size()));
  return 0;
}
