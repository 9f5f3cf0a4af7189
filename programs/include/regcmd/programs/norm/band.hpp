#pragma once
// A function of a row's sum without a divide or a square root: bands.
//
// The DPU's tables interpolate linearly between evenly spaced entries (ops-reference §6.2),
// so one table of 1/√s or 1/s over fp16's range would be useless near 0. Instead the CNA
// sums the row into 32 columns at once, column j scaled by u_j = ρ · 4^(j - center):
//
//   y_j = s · u_j            S[k][j] = 4^(j - center) / 2^shift, a power of two
//   g_j = band(y_j)          one table: F(clamp(y, 1, 4)) - F(4), F = 1/√y or 1/y
//   F(s) = Σ_j c_j g_j        the next matmul: c_j = F(1/u_j)^-1 = √u_j or u_j
//
// Below its band g_j is F(1) - F(4), above it 0, so the sum telescopes to F(s) - c_first F(4)
// for every s whose band has weights; column 17 has none (y = 0, g = F(1) - F(4)) and adds
// c_first F(4) back. 17 bands cover s · ρ over 4^-(17 - center) .. 4^(center + 1). A weight
// fp16 cannot hold (below its least subnormal 2^-24, above 2^15) is 0 and its band gone.

#include <cmath>
#include <cstdint>

namespace regcmd::norm {

enum class band_function : std::uint8_t { rsqrt, reciprocal };

inline constexpr std::uint32_t band_count = 17;     // columns 0..16
inline constexpr std::uint32_t band_constant = 17;  // no weights: carries c_first F(4)
inline constexpr std::uint32_t band_columns = 32;   // two weight tiles of N; 18..31 unused

constexpr int ceil_log2(std::uint32_t D) {
  int p = 0;
  while ((std::uint64_t{1} << p) < D) ++p;
  return p;
}

// Which sums a decomposition covers: u_j = ρ 4^(j - center), where a mean over D elements
// weighs each by 2^-⌈log2 D⌉ (exact) and leaves ρ = D / 2^⌈log2 D⌉ in (1/2, 1] to the
// coefficients; a plain sum has D = 1.
struct band_set {
  band_function f = band_function::rsqrt;
  int center = 7;
  std::uint32_t D = 1;

  int shift() const { return ceil_log2(D); }
  double rho() const { return std::ldexp(static_cast<double>(D), -shift()); }
  double factor(std::uint32_t j) const { return rho() * std::ldexp(1.0, 2 * (static_cast<int>(j) - center)); }
  // S[k][j]: 0 where fp16 cannot hold it and outside the bands.
  double sum_weight(std::uint32_t j) const {
    const int e = 2 * (static_cast<int>(j) - center) - shift();
    return j < band_count && e >= -24 && e <= 15 ? std::ldexp(1.0, e) : 0;
  }
  // F(4) and F(1) - F(4): the table's value above and below its band.
  double above() const { return f == band_function::rsqrt ? 0.5 : 0.25; }
  double below() const { return 1 - above(); }
  // The next matmul's coefficient of column j.
  double coefficient(std::uint32_t j) const {
    auto c = [&](std::uint32_t b) { return f == band_function::rsqrt ? std::sqrt(factor(b)) : factor(b); };
    if (j < band_count) return sum_weight(j) != 0 ? c(j) : 0;
    if (j != band_constant) return 0;
    std::uint32_t first = 0;
    while (sum_weight(first) == 0) ++first;
    return c(first) * above() / below();
  }
};

}  // namespace regcmd::norm
