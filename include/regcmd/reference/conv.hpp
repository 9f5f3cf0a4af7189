#pragma once
// The host reference of a convolution: NHWC input, OHWI weights (depthwise: [1][KH][KW][C]),
// NHWC output, each output a window's sum of products in double (exact for the integer
// types); padded positions add nothing (a quantized input's padding is its zero point).
// A quantized output as TFLite defines it.
#include <cmath>
#include <cstdint>
#include <span>

#include <regcmd/programs/conv/spec.hpp>
#include <regcmd/reference/activation.hpp>
#include <regcmd/reference/values.hpp>

namespace regcmd::reference {

struct conv_window {
  std::int64_t H = 0, W = 0, C = 0, OC = 0, KH = 1, KW = 1, SY = 1, SX = 1, DY = 1, DX = 1;
  std::int64_t top = 0, left = 0;  // padding before; after is whatever the output size leaves
  std::int64_t OH = 0, OW = 0;
  bool depthwise = false;

  // Σ (x − x0)(w − w0) over the window of output (oy, ox, o).
  template <class X, class Wt>
  products at(std::span<const X> x, double x0, std::span<const Wt> w, double w0, std::int64_t oy, std::int64_t ox,
               std::int64_t o) const {
    products p;
    for (std::int64_t ky = 0; ky < KH; ++ky)
      for (std::int64_t kx = 0; kx < KW; ++kx) {
        const std::int64_t y = oy * SY + ky * DY - top, xx = ox * SX + kx * DX - left;
        if (y < 0 || y >= H || xx < 0 || xx >= W) continue;
        for (std::int64_t c = depthwise ? o : 0; c < (depthwise ? o + 1 : C); ++c)
          p.add((static_cast<double>(x[index((y * W + xx) * C + c)]) - x0) *
                (static_cast<double>(w[index((((depthwise ? 0 : o) * KH + ky) * KW + kx) * C + c)]) - w0));
      }
    return p;
  }
  // The products one output sums.
  double taps() const { return double(KH) * double(KW) * double(depthwise ? 1 : C); }
  std::size_t out_index(std::int64_t oy, std::int64_t ox, std::int64_t o) const { return index((oy * OW + ox) * OC + o); }
  std::size_t input_count() const { return index(H * W * C); }
  std::size_t output_count() const { return index(OH * OW * OC); }
  static std::size_t index(std::int64_t i) { return static_cast<std::size_t>(i); }
};

// The window of a conv as built: its spec, the four padding sides and the output size.
inline conv_window window_of(const conv_geometry& g) {
  const conv_spec& s = g.spec;
  return {.H = s.H, .W = s.W, .C = s.C, .OC = s.out_channels, .KH = s.kernel_h, .KW = s.kernel_w,
          .SY = s.stride_y, .SX = s.stride_x, .DY = s.dilation_y, .DX = s.dilation_x, .top = g.pad.top,
          .left = g.pad.left, .OH = g.out_h, .OW = g.out_w, .depthwise = s.depthwise};
}

// A quantized conv's output (TFLite): the accumulator (bias + Σ (x − zx)(w − zw)) at scale
// sx·sw, plus the residual's real value, through the activation, rounded to the output's
// quantization and clamped to its type. `residual`: the stored residual, or nullptr.
inline double quantized_output(const conv_spec& s, double accumulator, const double* residual) {
  double real = accumulator * double(s.input.scale) * s.weights.scale;
  if (residual) real += double(s.residual.scale) * (*residual - s.residual.zero_point);
  real = activate(s.activation, s.leaky_slope, true, real);
  const double lo = s.dtype == conv_data::uint8 ? 0 : -128;
  return std::clamp(std::round(real / s.output.scale) + s.output.zero_point, lo, lo + 255);
}

}  // namespace regcmd::reference
