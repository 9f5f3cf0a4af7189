#pragma once
// Double-precision elementary functions usable in constant expressions, for building the
// activation lookup tables at compile time (std::exp and friends are not constexpr in
// g++ 12 or clang 14). Each is a range reduction and a short series: relative error within
// a few ulp wherever the result is a normal double, and the IEEE results at the edges
// (overflow to +inf, log(0) = -inf, NaN for a negative log or sqrt, NaN in -> NaN out).
//
// Constant evaluation refuses arithmetic that overflows (g++) or produces a NaN (clang), so
// every infinity and NaN returned here comes from numeric_limits or from the argument,
// never from an operation. Scaling by powers of two is done on the bits.

#include <array>
#include <bit>
#include <cstdint>
#include <limits>

namespace regcmd::cmath {

namespace detail {

inline constexpr std::uint64_t sign_mask = 0x8000'0000'0000'0000u;
inline constexpr std::uint64_t exponent_mask = 0x7ff0'0000'0000'0000u;
inline constexpr std::uint64_t fraction_mask = 0x000f'ffff'ffff'ffffu;
inline constexpr std::uint64_t implicit_bit = 0x0010'0000'0000'0000u;
inline constexpr int fraction_bits = 52;
inline constexpr int exponent_bias = 1023;

inline constexpr double infinity = std::numeric_limits<double>::infinity();
inline constexpr double quiet_nan = std::numeric_limits<double>::quiet_NaN();

constexpr std::uint64_t bits_of(double x) { return std::bit_cast<std::uint64_t>(x); }
constexpr double from_bits(std::uint64_t bits) { return std::bit_cast<double>(bits); }

// A positive finite non-zero x as significand * 2^exponent with the significand an integer
// in [2^52, 2^53): subnormals normalised.
struct integer_significand {
  std::uint64_t significand;
  int exponent;
};
constexpr integer_significand split_integer(double x) {
  const std::uint64_t bits = bits_of(x);
  const auto biased = static_cast<int>((bits & exponent_mask) >> fraction_bits);
  std::uint64_t significand = bits & fraction_mask;
  if (biased != 0) return {significand | implicit_bit, biased - exponent_bias - fraction_bits};
  const int shift = std::countl_zero(significand) - 11;  // brings the top bit to bit 52
  significand <<= shift;
  return {significand, 1 - exponent_bias - fraction_bits - shift};
}

// ln 2 in two parts: the high part has 32 significant bits, so k * ln2_hi is exact for
// every |k| < 2^21 and x - k * ln2_hi is exact in the reductions below.
inline constexpr double ln2_hi = 0x1.62e42fee00000p-1;
inline constexpr double ln2_lo = 0x1.a39ef35793c76p-33;
inline constexpr double inv_ln2 = 0x1.71547652b82fep+0;

// Horner evaluation of c[0] + c[1] x + ... + c[N-1] x^(N-1).
template <std::size_t N>
constexpr double polynomial(double x, const std::array<double, N>& c) {
  double sum = c[N - 1];
  for (std::size_t i = N - 1; i-- > 0;) sum = c[i] + x * sum;
  return sum;
}

// 1/(n+2)! for n = 0..12: exp(r) - 1 = r + r^2 (1/2! + r/3! + ...), whose truncation
// after r^14/14! is below 2^-61 relative for |r| <= ln2/2.
inline constexpr auto expm1_coefficients = [] {
  std::array<double, 13> c{};
  double factorial = 1.0;  // exact: 14! < 2^53
  for (std::size_t n = 0; n < c.size(); ++n) {
    factorial *= static_cast<double>(n + 2);
    c[n] = 1.0 / factorial;
  }
  return c;
}();

// exp(r) - 1 for |r| <= ln2/2 (a little more is harmless).
constexpr double expm1_reduced(double r) { return r + r * r * polynomial(r, expm1_coefficients); }

// exp(x) = 2^k exp(r) with k = round(x / ln 2), r = x - k ln 2 in [-ln2/2, ln2/2], for x
// within the finite, non-underflowing range. Returned as k and exp(r) - 1 so that expm1
// keeps small values without cancellation.
struct reduced_exp {
  int k;
  double expm1_r;
};
constexpr reduced_exp reduce_exp(double x) {
  const double scaled = x * inv_ln2;
  const int k = static_cast<int>(scaled < 0 ? scaled - 0.5 : scaled + 0.5);
  const double kd = static_cast<double>(k);
  const double r_hi = x - kd * ln2_hi;  // exact (Sterbenz, k * ln2_hi exact)
  const double r_lo = -kd * ln2_lo;
  // r = r_hi + r_lo with its rounding error kept (two-sum) and applied to first order
  const double r = r_hi + r_lo;
  const double r_hi_part = r - r_lo;
  const double error = (r_hi - r_hi_part) + (r_lo - (r - r_hi_part));
  const double p = expm1_reduced(r);
  return {k, p + error * (1.0 + p)};
}

// 2 atanh(s) - 2s = 2s^3/3 + 2s^5/5 + ... as R(z) * s with z = s^2: R(z) = sum 2 z^n/(2n+1),
// n = 1..12, truncated below 2^-60 relative for |s| <= 0.1716 (z <= 0.0295).
inline constexpr auto log_coefficients = [] {
  std::array<double, 12> c{};
  for (std::size_t n = 0; n < c.size(); ++n) c[n] = 2.0 / static_cast<double>(2 * n + 3);
  return c;
}();

// k ln 2 + log(1 + f) + correction, for f in [sqrt(2)/2 - 1, sqrt(2) - 1] exact and a small
// correction. With s = f / (2 + f), log(1 + f) = 2 atanh(s) = f - (f^2/2 - s (f^2/2 + R)),
// the form in which f, exact, dominates and the rounding lands on the small terms.
constexpr double log_reduced(int k, double f, double correction) {
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double r = z * polynomial(z, log_coefficients);
  const double half_f_squared = 0.5 * f * f;
  const double kd = static_cast<double>(k);
  return kd * ln2_hi + (f - (half_f_squared - (s * (half_f_squared + r) + (kd * ln2_lo + correction))));
}

inline constexpr double sqrt_half = 0.70710678118654752440;  // sqrt(2)/2

// A positive finite x as 2^k * (1 + f) with 1 + f in [sqrt(2)/2, sqrt(2)): f exact.
struct log_split {
  int k;
  double f;
};
constexpr log_split split_for_log(double x) {
  const integer_significand parts = split_integer(x);
  // 1 + f = significand / 2^52 in [1, 2), halved when above sqrt(2).
  constexpr std::uint64_t exponent_of_one = std::uint64_t{exponent_bias} << fraction_bits;
  double m = from_bits((parts.significand & fraction_mask) | exponent_of_one);
  int k = parts.exponent + fraction_bits;
  if (m > 2.0 * sqrt_half) {
    m *= 0.5;
    ++k;
  }
  return {k, m - 1.0};  // exact: m within a factor 2 of 1
}

}  // namespace detail

constexpr bool isnan(double x) { return x != x; }
constexpr bool isfinite(double x) {
  return x == x && x != detail::infinity && x != -detail::infinity;
}

// |x|, clearing the sign bit (so abs(-0.0) is +0.0 and a NaN stays a NaN).
constexpr double abs(double x) { return detail::from_bits(detail::bits_of(x) & ~detail::sign_mask); }

// x * 2^n on the bits, rounded to nearest even when the result is subnormal, ±inf when it
// overflows; ±0, ±inf and NaN unchanged.
constexpr double ldexp(double x, int n) {
  using namespace detail;
  if (x == 0 || !isfinite(x)) return x;
  const std::uint64_t sign = bits_of(x) & sign_mask;
  const integer_significand parts = split_integer(abs(x));
  // the exponent of the result's leading bit, biased; n clamped so nothing overflows an int
  const int clamped = n < -4000 ? -4000 : n > 4000 ? 4000 : n;
  const int biased = parts.exponent + fraction_bits + exponent_bias + clamped;
  if (biased >= 0x7ff) return from_bits(sign | bits_of(infinity));
  if (biased >= 1)
    return from_bits(sign | static_cast<std::uint64_t>(biased) << fraction_bits | (parts.significand & fraction_mask));
  // subnormal: the significand shifted right by 1 - biased, rounded to nearest even (a
  // carry into bit 52 gives the smallest normal, which is the right encoding)
  const int shift = 1 - biased;
  if (shift > fraction_bits + 1) return from_bits(sign);  // below half the smallest subnormal
  const std::uint64_t kept = parts.significand >> shift;
  const std::uint64_t dropped = parts.significand & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  const bool round_up = dropped > half || (dropped == half && (kept & 1) != 0);
  return from_bits(sign | (kept + (round_up ? 1 : 0)));
}

constexpr double exp(double x) {
  if (isnan(x)) return x;
  // exp overflows from the double above ln(DBL_MAX) = 709.78271289338397 (the result rounds
  // to +inf), and rounds to 0 below ln(2^-1075) = -745.133
  if (x >= 0x1.62e42fefa39efp+9) return detail::infinity;
  if (x < -745.2) return 0.0;
  const detail::reduced_exp e = detail::reduce_exp(x);
  return ldexp(1.0 + e.expm1_r, e.k);
}

// exp(x) - 1, accurate near 0.
constexpr double expm1(double x) {
  if (isnan(x)) return x;
  if (x > 40.0) return exp(x);  // the -1 is below half an ulp of exp(x) > 2^57
  if (x < -40.0) return -1.0;   // exp(-40) = 4e-18 is below half an ulp of 1
  if (abs(x) < 0x1p-54) return x;  // x^2/2 is below half an ulp of x; keeps -0
  if (abs(x) <= 0.5 * 0x1.62e42fefa39efp-1) return detail::expm1_reduced(x);  // |x| <= ln2/2
  // 2^k exp(r) - 1 = 2^k (exp(r) - 1) + (2^k - 1): for |x| > ln2/2 these do not cancel
  const detail::reduced_exp e = detail::reduce_exp(x);
  return ldexp(e.expm1_r, e.k) + (ldexp(1.0, e.k) - 1.0);
}

constexpr double log(double x) {
  if (isnan(x)) return x;
  if (x < 0) return detail::quiet_nan;
  if (x == 0) return -detail::infinity;
  if (x == detail::infinity) return x;
  const detail::log_split parts = detail::split_for_log(x);
  return detail::log_reduced(parts.k, parts.f, 0.0);
}

// log(1 + x), accurate near 0.
constexpr double log1p(double x) {
  if (isnan(x)) return x;
  if (x < -1.0) return detail::quiet_nan;
  if (x == -1.0) return -detail::infinity;
  if (x == detail::infinity) return x;
  if (abs(x) < 0x1p-54) return x;  // x^2/2 is below half an ulp of x; keeps -0
  // 1 + x in [sqrt(2)/2, sqrt(2)): x itself is the reduced argument, exactly
  if (x >= detail::sqrt_half - 1.0 && x < 2.0 * detail::sqrt_half - 1.0) return detail::log_reduced(0, x, 0.0);
  // Otherwise log(u) for u = 1 + x rounded, plus the rounding error over u (first order).
  const double u = 1.0 + x;
  const double rounding = x > 1.0 ? 1.0 - (u - x) : x - (u - 1.0);  // fast two-sum, exact
  const detail::log_split parts = detail::split_for_log(u);
  return detail::log_reduced(parts.k, parts.f, rounding / u);
}

constexpr double tanh(double x) {
  if (isnan(x)) return x;
  const double a = abs(x);
  if (a < 0x1p-28) return x;  // tanh(x) = x - x^3/3: the cube is below half an ulp; keeps -0
  if (a > 22.0) return x > 0 ? 1.0 : -1.0;  // 1 - tanh(22) = 1.6e-19, below half an ulp of 1
  // tanh(a) = -t / (t + 2) with t = expm1(-2a): no cancellation for small a; for a >= 1,
  // 1 - 2 / (expm1(2a) + 2), the form fdlibm uses.
  double result;
  if (a < 1.0) {
    const double t = expm1(-2.0 * a);
    result = -t / (t + 2.0);
  } else {
    result = 1.0 - 2.0 / (expm1(2.0 * a) + 2.0);
  }
  return x < 0 ? -result : result;
}

namespace detail {

inline constexpr double two_over_sqrt_pi = 1.1283791670955126;
inline constexpr double two_over_sqrt_pi_minus_1 = 0.1283791670955126;  // rounded on its own: 3 bits more
inline constexpr double inv_sqrt_pi = 0.5641895835477563;

// erf(x) = 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)) = x + x (2/sqrt(pi) - 1 + z Q(z)),
// z = x^2; the coefficients of Q are those of n = 1..28, truncated below 2^-70 for
// |x| < 1.5. The alternating terms cancel at most a factor 4.7 there (erfi(1.5) / erf(1.5)),
// which costs about 2 ulps at the end of the range.
inline constexpr auto erf_maclaurin_coefficients = [] {
  std::array<double, 28> c{};
  double factorial = 1.0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const auto n = static_cast<double>(i + 1);
    factorial *= n;
    c[i] = (i % 2 == 0 ? -two_over_sqrt_pi : two_over_sqrt_pi) / (factorial * (2.0 * n + 1.0));
  }
  return c;
}();

// erfc(a) for a >= 1.5 from Laplace's continued fraction
//   erfc(a) = exp(-a^2) / sqrt(pi) / (a + (1/2) / (a + 1 / (a + (3/2) / (a + ...)))),
// evaluated from a fixed depth back (all terms positive: stable). As erf = 1 - erfc, erfc's
// relative error reaches erf scaled by erfc/erf (at most 0.035, at a = 1.5); the depth
// 200/a^2 + 10 keeps the truncation below 1e-17 of erf (that needs 90 at a = 1.5, 50 at 2,
// 30 at 2.5) for at most 98 steps.
constexpr double erfc_continued_fraction(double a) {
  const int depth = static_cast<int>(200.0 / (a * a)) + 10;
  double denominator = a;
  for (int k = depth; k >= 1; --k) denominator = a + 0.5 * static_cast<double>(k) / denominator;
  return exp(-a * a) * inv_sqrt_pi / denominator;
}

}  // namespace detail

constexpr double erf(double x) {
  if (isnan(x)) return x;
  const double a = abs(x);
  if (a >= 6.0) return x > 0 ? 1.0 : -1.0;  // erfc(6) = 2.2e-17, below half an ulp of 1
  if (a < 1.5) {
    const double z = x * x;
    return x + x * (detail::two_over_sqrt_pi_minus_1 + z * detail::polynomial(z, detail::erf_maclaurin_coefficients));
  }
  const double result = 1.0 - detail::erfc_continued_fraction(a);
  return x < 0 ? -result : result;
}

// sqrt(x), correctly rounded: the root of the integer significand digit by digit (two
// radicand bits per result bit, in integers, so no rounding until the last bit), 54 bits of
// which the last rounds to nearest.
constexpr double sqrt(double x) {
  using namespace detail;
  if (isnan(x) || x == 0) return x;  // sqrt(-0) = -0
  if (x < 0) return quiet_nan;
  if (x == infinity) return x;
  integer_significand parts = split_integer(x);  // x = m 2^e, m in [2^52, 2^53)
  if (parts.exponent % 2 != 0) {                  // make e even: m in [2^52, 2^54)
    parts.significand <<= 1;
    --parts.exponent;
  }
  // root = floor(sqrt(m 2^54)) in [2^53, 2^54): the radicand's top 54 bits are m's (as
  // 27 pairs), the next 54 are zeros
  std::uint64_t root = 0, remainder = 0;
  for (int i = 0; i < 54; ++i) {
    const std::uint64_t pair = i < 27 ? (parts.significand >> (52 - 2 * i)) & 3 : 0;
    remainder = remainder << 2 | pair;
    const std::uint64_t trial = root << 2 | 1;
    root <<= 1;
    if (remainder >= trial) {
      remainder -= trial;
      root |= 1;
    }
  }
  // the last bit rounds (an exact half cannot occur: sqrt of a double is never a midpoint)
  std::uint64_t significand = root >> 1;
  if ((root & 1) != 0) ++significand;
  int exponent = parts.exponent / 2 - 26;  // sqrt(x) = root 2^(e/2 - 27) = significand 2^(e/2 - 26)
  if (significand == std::uint64_t{1} << 53) {
    significand >>= 1;
    ++exponent;
  }
  return from_bits(static_cast<std::uint64_t>(exponent + exponent_bias + fraction_bits) << fraction_bits |
                   (significand & fraction_mask));
}

}  // namespace regcmd::cmath
