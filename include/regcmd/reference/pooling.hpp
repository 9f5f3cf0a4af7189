#pragma once
// The host reference of a pooling over an NHWC image: the max of the taps inside the image
// (a padded tap never wins: a window holds at least one input), or the average over the
// whole window with padded taps counted as 0 (PyTorch's count_include_pad=True).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include <regcmd/programs/pooling/pooling.hpp>

namespace regcmd::reference {

struct pool_taps {
  double sum = 0, magnitude = 0, max = -std::numeric_limits<double>::infinity();
};

struct pool_window {
  std::int64_t H = 0, W = 0, C = 0, KH = 1, KW = 1, SY = 1, SX = 1, top = 0, left = 0;

  // The taps inside the image of output (oy, ox, c), and their sum, magnitude and max.
  template <class X>
  pool_taps at(std::span<const X> x, std::int64_t oy, std::int64_t ox, std::int64_t c) const {
    pool_taps t;
    for (std::int64_t ky = 0; ky < KH; ++ky)
      for (std::int64_t kx = 0; kx < KW; ++kx) {
        const std::int64_t y = oy * SY + ky - top, xx = ox * SX + kx - left;
        if (y < 0 || y >= H || xx < 0 || xx >= W) continue;
        const double v = double(x[static_cast<std::size_t>((y * W + xx) * C + c)]);
        t.sum += v;
        t.magnitude += std::abs(v);
        t.max = std::max(t.max, v);
      }
    return t;
  }
  double taps() const { return double(KH) * double(KW); }
  // The output in double: the max, or the sum over the whole window (the caller rounds).
  double value(const pool_taps& t, bool average) const { return average ? t.sum / taps() : t.max; }
};

inline pool_window window_of(const pool_geometry& g) {
  return {.H = g.H, .W = g.W, .C = g.C, .KH = g.kernel_h, .KW = g.kernel_w, .SY = g.stride_y, .SX = g.stride_x,
          .top = g.pad.top, .left = g.pad.left};
}

}  // namespace regcmd::reference
