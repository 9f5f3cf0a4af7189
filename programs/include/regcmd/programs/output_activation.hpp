#pragma once
// A ReLU-family activation fused into a conv's or a matmul's output stage: no extra task.
// It runs on the DPU's BN stage after the accumulator (and after the conv's bias):
//   relu        BN_RELU_BYPASS clear
//   relu6       ReLU, then ReLUX: min(x, DPU_BN_RELUX_CMP_VALUE)
//   leaky_relu  BN_MUL_PRELU: negatives times DPU_BN_MUL_CFG's operand over its shift
// (rknpu-uapi-and-register-map §4, DPU_BN_CFG / DPU_BN_MUL_CFG; values: docs/activation-values.md).

#include <cstdint>
#include <string_view>

#include <regcmd/core/error.hpp>
#include <regcmd/core/half.hpp>
#include <regcmd/task/task.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

enum class output_activation : std::uint8_t { none, relu, relu6, leaky_relu };

// The BN register values of an activation, in the accumulator's units: the clamp bound as
// DPU_BN_RELUX_CMP_VALUE compares it (an int32, or the fp32 bits for a fp16 op) and leaky
// ReLU's slope as the multiplier holds it (round(a · 2^15) over 15 for an integer
// accumulator, fp16(a) with no shift for a float one).
struct bn_activation {
  output_activation fn = output_activation::none;
  std::uint32_t clamp_max = 0;
  std::uint32_t multiplier = 0, shift = 0;
  friend constexpr bool operator==(const bn_activation&, const bn_activation&) = default;
};

// The fp32 bits of 6.0f: ReLU6's bound for a float accumulator.
inline constexpr std::uint32_t relu6_fp32_bits = 0x40c00000;

// Leaky ReLU's slope: below 1 (else it is not a leaky ReLU, and the integer multiplier's 15
// bits overflow), not negative, not NaN.
constexpr bool leaky_slope_valid(double a) { return a >= 0 && a < 1; }

// Integer slopes multiply by operand / 2^15 (BN_MUL_SHIFT_VALUE 15): a in [0, 1) fits.
inline constexpr std::uint32_t leaky_shift = 15;

// Leaky ReLU of a valid slope: fp16(a) for a float accumulator, round(a · 2^15) over a
// shift of 15 for an integer one.
constexpr bn_activation leaky_activation(double slope, bool float_accumulator) {
  if (float_accumulator)
    return {.fn = output_activation::leaky_relu, .multiplier = float_to_half(static_cast<float>(slope))};
  const double scaled = slope * double{1u << leaky_shift} + 0.5;
  return {.fn = output_activation::leaky_relu,
          .multiplier = static_cast<std::uint32_t>(scaled > 32767 ? 32767 : scaled),
          .shift = leaky_shift};
}

// The values for a float accumulator (a fp16 op: the DPU computes in fp32).
constexpr result<bn_activation> float_activation(output_activation fn, float leaky_slope, std::string_view where) {
  if (fn == output_activation::leaky_relu) {
    if (!leaky_slope_valid(leaky_slope)) return make_error(rules::act_leaky_slope, where, "leaky_slope");
    return leaky_activation(leaky_slope, true);
  }
  return bn_activation{.fn = fn, .clamp_max = fn == output_activation::relu6 ? relu6_fp32_bits : 0u};
}

// The BN stage that applies `a`; fully bypassed for none.
constexpr bn_stage bn_stage_of(const bn_activation& a) {
  switch (a.fn) {
    case output_activation::none:
      return {};
    case output_activation::leaky_relu:
      return {.cfg = {.BN_ALU_BYPASS = 1, .BN_MUL_PRELU = 1, .BN_RELU_BYPASS = 1},
              .mul = {.BN_MUL_SHIFT_VALUE = a.shift, .BN_MUL_OPERAND = a.multiplier}};
    default:
      return {.cfg = {.BN_ALU_BYPASS = 1,
                      .BN_MUL_BYPASS = 1,
                      .BN_RELU_BYPASS = 0,
                      .BN_RELUX_EN = a.fn == output_activation::relu6},
              .relux = {.BN_RELUX_CMP_DAT = a.clamp_max}};
  }
}

}  // namespace regcmd
