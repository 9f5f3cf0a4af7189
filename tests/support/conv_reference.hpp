#pragma once
// A host convolution, written plainly: NHWC input, OHWI weights (depthwise [1][KH][KW][C]),
// NHWC output, in double. The tests compare the model's execution of conv programs with it;
// it shares nothing with programs/ or model/.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace regcmd::testing {

struct host_conv {
  int H = 0, W = 0, C = 0, OC = 0, KH = 1, KW = 1, SY = 1, SX = 1, DY = 1, DX = 1;
  int top = 0, left = 0;  // padding before; after is whatever the output size leaves
  int OH = 0, OW = 0;
  bool depthwise = false;

  // Σ (x − x0)(w − w0) over the window of output (oy, ox, o); padded positions add 0.
  // `scale` gets Σ |(x − x0)(w − w0)| (the size a float sum's error is relative to).
  double window(const std::vector<double>& x, double x0, const std::vector<double>& w, double w0, int oy, int ox, int o,
                double* scale = nullptr) const {
    double sum = 0, size = 0;
    for (int ky = 0; ky < KH; ++ky)
      for (int kx = 0; kx < KW; ++kx) {
        const int y = oy * SY + ky * DY - top, xx = ox * SX + kx * DX - left;
        if (y < 0 || y >= H || xx < 0 || xx >= W) continue;
        for (int c = depthwise ? o : 0; c < (depthwise ? o + 1 : C); ++c) {
          const double a = x[at((long{y} * W + xx) * C + c)] - x0;
          const double b = w[at(((long{depthwise ? 0 : o} * KH + ky) * KW + kx) * C + c)] - w0;
          sum += a * b;
          size += std::abs(a * b);
        }
      }
    if (scale) *scale = size;
    return sum;
  }
  std::size_t out_index(int oy, int ox, int o) const { return at((long{oy} * OW + ox) * OC + o); }
  static std::size_t at(long i) { return static_cast<std::size_t>(i); }
};

}  // namespace regcmd::testing
