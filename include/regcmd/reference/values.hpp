#pragma once
// The host reference: every op computed in double from host tensors in their logical
// orders (row-major matrices, NHWC images, OHWI weights), rounded only where the op stores
// its output type. It is what programs are checked against, so it shares nothing with the
// emitters and packers of programs/ nor with the model: it reads the specs (what an op
// is), never how a program computes it. regcmd-run, the tests and the fuzzers all use it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include <regcmd/core/half.hpp>
#include <regcmd/core/precision.hpp>

namespace regcmd::reference {

// v as an fp16 output holds it: the device's fp32 result rounded to fp16 (nearest, ties to
// even), so v goes through fp32 first. A float holds every fp16 value exactly.
inline float to_fp16(double v) { return half_to_float(float_to_half(static_cast<float>(v))); }

// v as an int8 or int16 output holds it: clamped to the type's range (the DPU saturates
// them). Other types are returned unchanged (an int32 sum is exact).
inline double saturate(precision p, double v) {
  switch (p) {
    case precision::int8: return std::clamp(v, -128.0, 127.0);
    case precision::int16: return std::clamp(v, -32768.0, 32767.0);
    default: return v;
  }
}

// v clamped to the range of host type T (std::uint8_t, std::int8_t, std::int16_t, ...).
template <class T>
double saturate_to(double v) {
  return std::clamp(v, double{std::numeric_limits<T>::min()}, double{std::numeric_limits<T>::max()});
}

// A sum of products (a dot product, a convolution window) and the sum of their magnitudes:
// a float accumulation's error is relative to the second.
struct products {
  double sum = 0, magnitude = 0;
  void add(double p) {
    sum += p;
    magnitude += std::abs(p);
  }
};

}  // namespace regcmd::reference
