#pragma once
// The host reference of the activations: the fused output stage of a matmul or conv, the
// ReLU family as a program of its own, and the lookup-table functions written plainly in
// double (std::exp and friends: independent of the constexpr math the tables are computed
// with), with the value a table program is designed to give outside its range.
#include <algorithm>
#include <cmath>
#include <limits>

#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/activation/functions.hpp>
#include <regcmd/reference/values.hpp>

namespace regcmd::reference {

// The leaky slope a program holds (output_activation.hpp): fp16(a) for a float accumulator;
// round(a · 2^15), at most 2^15 − 1, over 2^15 for an integer one.
inline double leaky_slope_held(float slope, bool integer_accumulator) {
  if (!integer_accumulator) return to_fp16(slope);
  return std::min(std::floor(double{slope} * 32768 + 0.5), 32767.0) / 32768;
}

// A fused output activation of a real value (before any rounding to the output type).
inline double activate(output_activation fn, float slope, bool integer_accumulator, double v) {
  switch (fn) {
    case output_activation::relu: return std::max(v, 0.0);
    case output_activation::relu6: return std::clamp(v, 0.0, 6.0);
    case output_activation::leaky_relu: return v < 0 ? v * leaky_slope_held(slope, integer_accumulator) : v;
    case output_activation::none: break;
  }
  return v;
}

// The ReLU family as an activation program computes it: clip and ReLU exact; leaky's
// product exact for fp16 (an fp16 x times fp16(a) fits a double), and for the integer types
// x · round(a · 2^15) / 2^15 rounded half up (the BN stage's 15-bit shift). The caller
// rounds to fp16 or saturates.
inline double relu_family(const act_spec& s, double x) {
  switch (s.fn) {
    case activation::relu: return std::max(x, 0.0);
    case activation::relu6: return std::clamp(x, 0.0, 6.0);
    case activation::clip: return std::clamp(x, double{s.lo}, double{s.hi});
    default: break;
  }
  if (x >= 0) return x;
  const bool integer = s.dtype != precision::fp16;
  const double product = x * leaky_slope_held(s.slope, integer);
  return integer ? std::floor(product + 0.5) : product;
}

// A table function in double, by its definition (PyTorch's for gelu, tanh-approximated,
// and gelu_erf). NaN for a function that is not one of them.
inline double function(activation f, double x, double alpha = 1.0) {
  switch (f) {
    case activation::sigmoid: return 1 / (1 + std::exp(-x));
    case activation::tanh: return std::tanh(x);
    case activation::silu: return x / (1 + std::exp(-x));
    case activation::gelu: return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case activation::gelu_erf: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case activation::hardswish: return x * std::clamp(x + 3, 0.0, 6.0) / 6;
    case activation::hardsigmoid: return std::clamp(x + 3, 0.0, 6.0) / 6;
    case activation::exp: return std::exp(x);
    case activation::mish: return x * std::tanh(std::log1p(std::exp(x)));
    case activation::elu: return x > 0 ? x : alpha * std::expm1(x);
    case activation::selu: return 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * std::expm1(x));
    case activation::softplus: return std::log1p(std::exp(x));
    case activation::rsqrt_band: return 1 / std::sqrt(std::clamp(x, 1.0, 4.0)) - 0.5;
    case activation::reciprocal_band: return 1 / std::clamp(x, 1.0, 4.0) - 0.25;
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

// A table function's own range (regcmd/programs/activation/functions.hpp), tails included:
// a spec's range moves the bounds and keeps the tails.
inline lut_range default_range(activation f) {
  namespace a = activations;
  switch (f) {
    case activation::sigmoid: return a::sigmoid_range;
    case activation::tanh: return a::tanh_range;
    case activation::silu: return a::silu_range;
    case activation::gelu:
    case activation::gelu_erf: return a::gelu_range;
    case activation::hardswish: return a::hardswish_range;
    case activation::hardsigmoid: return a::hardsigmoid_range;
    case activation::exp: return a::exp_range;
    case activation::mish: return a::mish_range;
    case activation::elu:
    case activation::selu: return a::elu_range;
    case activation::softplus: return a::softplus_range;
    case activation::rsqrt_band:
    case activation::reciprocal_band: return a::band_range;
    default: return {};
  }
}

// The range a table activation's program covers: the spec's, or the function's own.
inline lut_range range_of(const act_spec& s) { return s.range == lut_range{} ? default_range(s.fn) : s.range; }

// What a table activation's program computes by design (docs/activation-values.md): f inside
// its range; outside, f at the nearer bound (the entries there hold it) out to the table's
// end, max(|lo|, |hi|) a side, and beyond the end that value held, or with a linear tail
// continued along f's secant over one more span ([end, 2 end]).
inline double designed_value(const act_spec& s, const lut_table& t, double x) {
  const lut_range r = range_of(s);
  const double end = t.end();
  auto f = [&](double v) { return function(s.fn, v, s.alpha); };
  if (x > r.hi) {
    const double held = f(r.hi);
    return x <= end || r.above == lut_tail::hold ? held : held + (f(2 * end) - f(end)) / end * (x - end);
  }
  if (x < r.lo) {
    const double held = f(r.lo);
    return x >= -end || r.below == lut_tail::hold ? held : held + (f(-end) - f(-2 * end)) / end * (x + end);
  }
  return f(x);
}

}  // namespace regcmd::reference
