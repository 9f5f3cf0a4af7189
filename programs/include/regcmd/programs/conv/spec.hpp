#pragma once
// What a convolution is asked to compute, and the geometry it resolves to.
//
//   out[oh][ow][oc] = sum over kh, kw, c of in[oh·sy + kh·dy − top][ow·sx + kw·dx − left][c]
//                                          · w[oc][kh][kw][c]   (+ bias, then the output stage)
//
// As for matmuls, `conv_spec` is a structural type: a template argument for a shape known at
// compile time, a plain value for one known at run time, and `resolve_conv` applies every
// rule of the request in one place. Depthwise convolutions (channel multiplier 1) take
// `.depthwise = true` and out_channels = C; a pointwise convolution is the 1×1 case.
// Register fields and the values chosen where sources disagree: docs/conv-values.md.

#include <algorithm>
#include <cstdint>

#include <regcmd/core/error.hpp>
#include <regcmd/core/half.hpp>
#include <regcmd/core/math.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/programs/vocabulary.hpp>
#include <regcmd/programs/output_activation.hpp>
#include <regcmd/registers/cna.hpp>
#include <regcmd/registers/dpu.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

// The element type of the input and the weights. uint8 is TFLite's per-tensor asymmetric
// quantization, which the NPU computes as int8 after a shift by −0x80 (Mesa's rocket driver,
// ops-reference §2.3); int8 carries its own zero points; fp16 is not quantized.
enum class conv_data : std::uint8_t { uint8, int8, fp16 };

// A per-tensor quantization: real = scale · (q − zero_point).
struct quantization {
  float scale = 1.0f;
  std::int32_t zero_point = 0;
  friend constexpr bool operator==(const quantization&, const quantization&) = default;
};


// The fused output stage (output_activation.hpp): a clamp after the bias (ReLU: at 0,
// ReLU6: to [0, 6] in real values), or leaky ReLU (negatives times leaky_slope, the BN
// multiplier); a residual add of a second tensor of the output's shape comes before a clamp.

struct conv_spec {
  conv_data dtype = conv_data::int8;        // the input's and the weights'
  precision out_dtype = precision::int8;  // int8 for a quantized conv; fp16 or fp32 for fp16
  std::uint32_t H = 0, W = 0, C = 0;
  std::uint32_t out_channels = 0;
  std::uint32_t kernel_h = 1, kernel_w = 1;
  std::uint32_t stride_y = 1, stride_x = 1;
  std::uint32_t dilation_y = 1, dilation_x = 1;
  conv_padding padding = conv_padding::valid;
  padding_sides pad{};  // conv_padding::explicit_sides only
  bool depthwise = false;
  quantization input{}, weights{}, output{};  // uint8 and int8 only
  bool bias = false;                         // per output channel: int32 (quantized) or fp16
  bool residual_add = false;
  quantization residual{};  // the residual's quantization (uint8, int8); its shape is the output's
  output_activation activation = output_activation::none;
  float leaky_slope = 0.01f;  // output_activation::leaky_relu, in [0, 1)
  friend constexpr bool operator==(const conv_spec&, const conv_spec&) = default;
};

// The DPU's requantization of the accumulator to the output: value · scale / 2^shift +
// offset, the multiplier input·weight/output scale held as a 15-bit scale over a right
// shift (DPU_OUT_CVT_SCALE, DPU_OUT_CVT_SHIFT, DPU_OUT_CVT_OFFSET; ops-reference §2.1).
struct requantization {
  std::uint32_t scale = 1;
  std::uint32_t shift = 0;
  std::int32_t offset = 0;
  friend constexpr bool operator==(const requantization&, const requantization&) = default;
};

struct conv_geometry {
  conv_spec spec{};         // as asked, with the padding resolved to its four sides
  padding_sides pad{};
  std::uint32_t out_h = 0, out_w = 0;
  requantization requant{};  // quantized convs only
  // A quantized residual in accumulator units: (stored + offset) · scale / 2^shift
  // (DPU_EW_CVT_OFFSET_VALUE, DPU_EW_CVT_SCALE_VALUE).
  requantization residual_cvt{};
  // The activation's register values in accumulator units (input.scale · weights.scale for
  // a quantized conv); ReLU6's bound is also the EW clamp's after a residual add.
  bn_activation activation{};
  constexpr bool quantized() const { return spec.dtype != conv_data::fp16; }
  constexpr bool pointwise() const { return spec.kernel_h == 1 && spec.kernel_w == 1; }
  // An fp16 conv's bias: the EW stage's per-channel operand, the activation after it.
  constexpr bool ew_bias() const { return !quantized() && spec.bias; }
  // The channels the DPU computes and writes for `real` output channels
  // (DPU_DATA_CUBE_CHANNEL.CHANNEL + 1): int8 aligned to 32, depthwise to 64 (Mesa,
  // ops-reference §2.1, §3), fp16 to 16 (the second fp16 implementation, §4.1).
  constexpr std::uint32_t dpu_channels(std::uint32_t real) const {
    const std::uint32_t a = !quantized() ? 16 : spec.depthwise ? 64 : 32;
    return align_up(std::max(real, a), a);  // real is at most 2^14 (conv-channels)
  }
  constexpr std::uint32_t computed_channels() const { return dpu_channels(spec.out_channels); }
  friend constexpr bool operator==(const conv_geometry&, const conv_geometry&) = default;
};

namespace detail {


constexpr bool valid_scale(float s) { return s > 0.0f && s <= 3.4028234663852886e38f; }  // not NaN, 0, < 0 or inf

constexpr bool zero_point_fits(conv_data d, std::int32_t z) {
  return d == conv_data::uint8 ? z >= 0 && z <= 255 : z >= -128 && z <= 127;
}

// The multiplier as scale / 2^shift with the scale in [2^14, 2^15) (rounded to nearest, a
// carry into 2^15 halving it), or as large a scale as 15 bits hold at shift 0, or, at the
// largest shift the field holds, the scale that is left (at least 1).
constexpr bool requantize(double multiplier, requantization& r, std::uint32_t max_shift) {
  std::uint32_t shift = 0;
  double v = multiplier;
  while (v < 16384.0 && shift < max_shift) {
    v *= 2.0;
    ++shift;
  }
  auto scale = static_cast<std::uint64_t>(v + 0.5);
  if (scale == 32768 && shift > 0) {
    scale = 16384;
    --shift;
  }
  if (scale > 32767 || scale == 0) return false;
  r.scale = static_cast<std::uint32_t>(scale);
  r.shift = shift;
  return true;
}

}  // namespace detail

// Every rule of a convolution request, in the order a user would fix them.
constexpr result<conv_geometry> resolve_conv(const conv_spec& s) {
  using namespace reg;
  if (s.H == 0 || s.W == 0 || s.C == 0 || s.out_channels == 0 || s.kernel_h == 0 || s.kernel_w == 0 ||
      s.stride_y == 0 || s.stride_x == 0 || s.dilation_y == 0 || s.dilation_x == 0)
    return make_error(rules::conv_shape_nonzero, "conv");
  const bool quantized = s.dtype != conv_data::fp16;
  if (quantized ? s.out_dtype != precision::int8 : s.out_dtype != precision::fp16 && s.out_dtype != precision::fp32)
    return make_error(rules::conv_precision, "conv", "out_dtype");
  if (s.depthwise && s.out_channels != s.C) return make_error(rules::conv_depthwise, "conv", "out_channels", s.out_channels);
  if (!detail::fits_field<decltype(CNA_DATA_SIZE0::DATAIN_WIDTH)>(s.W)) return make_error(rules::conv_input_size, "conv", "W", s.W);
  if (!detail::fits_field<decltype(CNA_DATA_SIZE0::DATAIN_HEIGHT)>(s.H)) return make_error(rules::conv_input_size, "conv", "H", s.H);
  if (!detail::fits_field<decltype(CNA_DATA_SIZE1::DATAIN_CHANNEL_REAL)>(s.C - 1))
    return make_error(rules::conv_channels, "conv", "C", s.C);
  if (!detail::fits_field<decltype(CNA_WEIGHT_SIZE2::WEIGHT_KERNELS)>(s.out_channels))
    return make_error(rules::conv_channels, "conv", "out_channels", s.out_channels);
  if (!detail::fits_field<decltype(CNA_WEIGHT_SIZE2::WEIGHT_HEIGHT)>(s.kernel_h))
    return make_error(rules::conv_kernel_size, "conv", "kernel_h", s.kernel_h);
  if (!detail::fits_field<decltype(CNA_WEIGHT_SIZE2::WEIGHT_WIDTH)>(s.kernel_w))
    return make_error(rules::conv_kernel_size, "conv", "kernel_w", s.kernel_w);
  if (!detail::fits_field<decltype(CNA_CONV_CON3::CONV_Y_STRIDE)>(s.stride_y))
    return make_error(rules::conv_stride, "conv", "stride_y", s.stride_y);
  if (!detail::fits_field<decltype(CNA_CONV_CON3::CONV_X_STRIDE)>(s.stride_x))
    return make_error(rules::conv_stride, "conv", "stride_x", s.stride_x);
  // the dilation field holds dilation − 1 (docs/conv-values.md)
  if (!detail::fits_field<decltype(CNA_CONV_CON3::ATROUS_Y_DILATION)>(s.dilation_y - 1))
    return make_error(rules::conv_dilation, "conv", "dilation_y", s.dilation_y);
  if (!detail::fits_field<decltype(CNA_CONV_CON3::ATROUS_X_DILATION)>(s.dilation_x - 1))
    return make_error(rules::conv_dilation, "conv", "dilation_x", s.dilation_x);

  conv_geometry g;
  g.spec = s;
  if (s.padding == conv_padding::same) {
    detail::same_sides(s.H, s.kernel_h, s.stride_y, s.dilation_y, g.pad.top, g.pad.bottom);
    detail::same_sides(s.W, s.kernel_w, s.stride_x, s.dilation_x, g.pad.left, g.pad.right);
  } else if (s.padding == conv_padding::explicit_sides) {
    g.pad = s.pad;
  }
  // Top and left are register fields; bottom and right only shorten the output, and a side
  // wider than the kernel would make outputs of padding alone.
  if (!detail::fits_field<decltype(CNA_PAD_CON0::PAD_TOP)>(g.pad.top)) return make_error(rules::conv_padding, "conv", "top", g.pad.top);
  if (!detail::fits_field<decltype(CNA_PAD_CON0::PAD_LEFT)>(g.pad.left))
    return make_error(rules::conv_padding, "conv", "left", g.pad.left);
  const std::uint64_t span_y = detail::dilated_extent(s.kernel_h, s.dilation_y);
  const std::uint64_t span_x = detail::dilated_extent(s.kernel_w, s.dilation_x);
  if (g.pad.top >= span_y || g.pad.bottom >= span_y) return make_error(rules::conv_padding, "conv", "top/bottom", std::max(g.pad.top, g.pad.bottom));
  if (g.pad.left >= span_x || g.pad.right >= span_x) return make_error(rules::conv_padding, "conv", "left/right", std::max(g.pad.left, g.pad.right));

  const std::uint64_t padded_h = std::uint64_t{s.H} + g.pad.top + g.pad.bottom;
  const std::uint64_t padded_w = std::uint64_t{s.W} + g.pad.left + g.pad.right;
  if (span_y > padded_h) return make_error(rules::conv_kernel_larger, "conv", "kernel_h", span_y);
  if (span_x > padded_w) return make_error(rules::conv_kernel_larger, "conv", "kernel_w", span_x);
  g.out_h = static_cast<std::uint32_t>((padded_h - span_y) / s.stride_y + 1);
  g.out_w = static_cast<std::uint32_t>((padded_w - span_x) / s.stride_x + 1);
  if (!detail::fits_field<decltype(CNA_DATA_SIZE2::DATAOUT_WIDTH)>(g.out_w))
    return make_error(rules::conv_output_size, "conv", "output width", g.out_w);
  if (!detail::fits_field<decltype(CNA_DATA_SIZE3::DATAOUT_ATOMICS)>(std::uint64_t{g.out_w} * g.out_h))
    return make_error(rules::conv_output_size, "conv", "output pixels", std::uint64_t{g.out_w} * g.out_h);

  if (quantized) {
    if (!detail::valid_scale(s.input.scale)) return make_error(rules::conv_scale, "conv", "input.scale");
    if (!detail::valid_scale(s.weights.scale)) return make_error(rules::conv_scale, "conv", "weights.scale");
    if (!detail::valid_scale(s.output.scale)) return make_error(rules::conv_scale, "conv", "output.scale");
    if (!detail::zero_point_fits(s.dtype, s.input.zero_point))
      return make_error(rules::conv_zero_point, "conv", "input.zero_point");
    if (!detail::zero_point_fits(s.dtype, s.weights.zero_point))
      return make_error(rules::conv_zero_point, "conv", "weights.zero_point");
    if (!detail::zero_point_fits(s.dtype, s.output.zero_point))
      return make_error(rules::conv_zero_point, "conv", "output.zero_point");
    const double multiplier = double{s.input.scale} * double{s.weights.scale} / double{s.output.scale};
    constexpr std::uint32_t out_shift_max = decltype(DPU_OUT_CVT_SHIFT::OUT_CVT_SHIFT)::shape.max_value();
    if (!detail::requantize(multiplier, g.requant, out_shift_max))
      return make_error(rules::conv_requant_range, "conv", "output.scale");
    // uint8 runs as int8 shifted by −0x80, its output zero point with it
    const std::int32_t shift = s.dtype == conv_data::uint8 ? 0x80 : 0;
    g.requant.offset = s.output.zero_point - shift;
    const double accumulator_scale = double{s.input.scale} * double{s.weights.scale};
    if (s.residual_add) {
      if (!detail::valid_scale(s.residual.scale)) return make_error(rules::conv_scale, "conv", "residual.scale");
      if (!detail::zero_point_fits(s.dtype, s.residual.zero_point))
        return make_error(rules::conv_zero_point, "conv", "residual.zero_point");
      constexpr std::uint32_t ew_shift_max = decltype(DPU_EW_CVT_SCALE_VALUE::EW_OP_CVT_SHIFT)::shape.max_value();
      if (!detail::requantize(double{s.residual.scale} / accumulator_scale, g.residual_cvt, ew_shift_max))
        return make_error(rules::conv_residual_scale, "conv", "residual.scale");
      g.residual_cvt.offset = shift - s.residual.zero_point;  // stored + offset = r − zero point
    }
    if (s.activation == output_activation::relu6) {
      const double bound = 6.0 / accumulator_scale + 0.5;
      if (bound >= 2147483648.0) return make_error(rules::conv_activation_range, "conv", "input.scale * weights.scale");
      g.activation.clamp_max = static_cast<std::uint32_t>(bound);
    }
  } else if (s.bias && (s.residual_add || s.activation == output_activation::leaky_relu)) {
    // the bias takes the EW stage, which a residual needs and a leaky ReLU's BN stage precedes
    return make_error(rules::conv_fp16_bias, "conv", s.residual_add ? "residual_add" : "activation");
  }
  // The EW stage's multiplier would read the residual, not a slope: no stage after the add.
  if (s.activation == output_activation::leaky_relu && s.residual_add) return make_error(rules::conv_leaky_residual, "conv");
  if (!g.quantized()) {
    const result<bn_activation> a = float_activation(s.activation, s.leaky_slope, "conv");
    if (!a) return a.err();
    g.activation = a.value();
  } else if (s.activation == output_activation::leaky_relu) {
    if (!leaky_slope_valid(s.leaky_slope)) return make_error(rules::act_leaky_slope, "conv", "leaky_slope");
    g.activation = leaky_activation(s.leaky_slope, false);
  } else {
    g.activation.fn = s.activation;  // ReLU6's bound set above, in accumulator units
  }
  return g;
}

// The compile-time face: a violated rule fails the compilation with its message.
template <conv_spec Spec>
constexpr conv_geometry conv_geometry_of() {
  constexpr result<conv_geometry> g = resolve_conv(Spec);
  static_assert(report<violated_rule(g)>());
  if constexpr (g.ok()) return g.value();
  else return {};  // not reached: the report above failed
}

}  // namespace regcmd
