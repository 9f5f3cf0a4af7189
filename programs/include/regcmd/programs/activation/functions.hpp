#pragma once
// The smooth activation functions regcmd tabulates, as constexpr callables, each with the
// range its table covers by default. A range is chosen so that beyond it the held (or
// linear) tail stays within fp16's resolution of the function: sigmoid at ±8 is within
// 3.4e-4 of 0 and 1, tanh at ±5 within 9.1e-5 of ±1; SiLU, GELU, mish, ELU, SELU and
// softplus continue as x above their range and hold ~0 (ELU: -α) below it; exp covers
// softmax's inputs (x - max <= 0).

#include <regcmd/core/constexpr_math.hpp>
#include <regcmd/programs/activation/lut_table.hpp>

namespace regcmd::activations {

struct sigmoid_fn {
  constexpr double operator()(double x) const { return 1.0 / (1.0 + cmath::exp(-x)); }
};
struct tanh_fn {
  constexpr double operator()(double x) const { return cmath::tanh(x); }
};
struct silu_fn {
  constexpr double operator()(double x) const { return x * sigmoid_fn{}(x); }
};
// GELU's tanh approximation (PyTorch approximate="tanh"): 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))).
struct gelu_fn {
  constexpr double operator()(double x) const {
    constexpr double sqrt_2_over_pi = 0.7978845608028654;
    return 0.5 * x * (1.0 + cmath::tanh(sqrt_2_over_pi * (x + 0.044715 * x * x * x)));
  }
};
// GELU exactly: x Φ(x) = 0.5 x (1 + erf(x / √2)).
struct gelu_erf_fn {
  constexpr double operator()(double x) const { return 0.5 * x * (1.0 + cmath::erf(x * 0.7071067811865476)); }
};
// hardsigmoid = relu6(x + 3) / 6 and hardswish = x · hardsigmoid(x) (PyTorch's definitions).
struct hardsigmoid_fn {
  constexpr double operator()(double x) const { return (x <= -3 ? 0.0 : x >= 3 ? 6.0 : x + 3) / 6; }
};
struct hardswish_fn {
  constexpr double operator()(double x) const { return x * hardsigmoid_fn{}(x); }
};
struct exp_fn {
  constexpr double operator()(double x) const { return cmath::exp(x); }
};
// mish = x · tanh(softplus(x)), softplus = log(1 + e^x).
struct mish_fn {
  constexpr double operator()(double x) const { return x * cmath::tanh(cmath::log1p(cmath::exp(x))); }
};
// ELU: x above 0, α (e^x - 1) below (negatives saturate at -α); SELU is λ ELU_α with
// PyTorch's (and ONNX's default) constants.
struct elu_fn {
  double alpha = 1.0;
  constexpr double operator()(double x) const { return x > 0 ? x : alpha * (cmath::exp(x) - 1); }
};
inline constexpr double selu_alpha = 1.6732632423543772, selu_lambda = 1.0507009873554805;
struct selu_fn {
  constexpr double operator()(double x) const { return selu_lambda * elu_fn{selu_alpha}(x); }
};
struct softplus_fn {
  constexpr double operator()(double x) const { return cmath::log1p(cmath::exp(x)); }
};
// One band of 1/√y and of 1/y for the norms and softmax (regcmd/programs/norm/band.hpp):
// F(clamp(y, 1, 4)) - F(4), constant below the band, 0 above it. A row's sum scaled by powers
// of 4, one band each, and the bands' outputs weighted add up to F(sum) over the whole fp16
// range, while the table's entries are spaced for [1, 4] alone.
struct rsqrt_band_fn {
  constexpr double operator()(double y) const { return 1.0 / cmath::sqrt(y < 1 ? 1.0 : y > 4 ? 4.0 : y) - 0.5; }
};
struct reciprocal_band_fn {
  constexpr double operator()(double y) const { return 1.0 / (y < 1 ? 1.0 : y > 4 ? 4.0 : y) - 0.25; }
};

inline constexpr lut_range sigmoid_range{-8, 8};
inline constexpr lut_range tanh_range{-5, 5};
inline constexpr lut_range silu_range{-12, 12, lut_tail::hold, lut_tail::linear};
inline constexpr lut_range gelu_range{-6, 6, lut_tail::hold, lut_tail::linear};
inline constexpr lut_range hardsigmoid_range{-4, 4};
inline constexpr lut_range hardswish_range{-4, 4, lut_tail::hold, lut_tail::linear};
inline constexpr lut_range exp_range{-16, 0};
inline constexpr lut_range mish_range{-12, 12, lut_tail::hold, lut_tail::linear};
// e^-8 = 3.4e-4: ELU and SELU held within it of their floor below -8; softplus(-8) = 3.4e-4
// held, and above 8 all three continue along their secant (x itself, to 3.4e-4 for softplus).
inline constexpr lut_range elu_range{-8, 8, lut_tail::hold, lut_tail::linear};
inline constexpr lut_range softplus_range{-8, 8, lut_tail::hold, lut_tail::linear};
// [0, 4]: entries 1/128 apart over the band, whose interpolation strays by 6e-6 (1/√y) and
// 8e-6 (1/y) at most.
inline constexpr lut_range band_range{0, 4};

}  // namespace regcmd::activations
