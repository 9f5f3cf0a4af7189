#pragma once
// Lookup-table activations: the DPU's two tables computed from a function, at compile time
// (in a constant expression) or at run time with the same code.
//
// How the hardware reads them (ops-reference §6.2; docs/activation-values.md):
//   v = x * index_scale                  the BN stage's multiplier (a fp16 operand)
//   LE table, 513 entries: v in [-16384, 0]    LO table, 513 entries: v in [0, 16384]
//   32 v-units per entry (LUT_INFO index select 5), linear interpolation between entries;
//   below -16384 the LE underflow slope, above 16384 the LO overflow slope.
// regcmd's choices, where the public tables fix them otherwise:
//   index_scale  the largest fp16 with 16384 / index_scale >= the range's larger bound, so
//                the tables span exactly the asked range (the public ones use one scale for
//                several functions);
//   entries      f(x) * 2^e rounded, e the largest exponent that keeps every entry within a
//                signed 16-bit entry, and DPU_OUT_CVT_SHIFT.MINUS_EXP = e turns them back into
//                f (the public sigmoid does so with e = 15; the public SiLU leaves its scale
//                5664.8 for the host to divide out);
//   tails        beyond the range the output holds the last entry (slope 0), or follows f's
//                secant over [end, 2 * end] (lut_tail::linear: SiLU, GELU, mish).

#include <array>
#include <cstdint>

#include <regcmd/core/constexpr_math.hpp>
#include <regcmd/core/error.hpp>
#include <regcmd/core/half.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

enum class lut_tail : std::uint8_t { hold, linear };

// The inputs a table is built for; points of the table outside [lo, hi] take f at the
// nearer bound.
struct lut_range {
  double lo = 0;
  double hi = 0;
  lut_tail below = lut_tail::hold;
  lut_tail above = lut_tail::hold;
  friend constexpr bool operator==(const lut_range&, const lut_range&) = default;
};

inline constexpr std::uint32_t lut_table_entries = 513;  // per table (ops-reference §6.2)
inline constexpr std::int32_t lut_span = 16384;          // v covered by each table
inline constexpr std::uint32_t lut_index_select = 5;     // 2^5 v-units per entry
inline constexpr std::int32_t lut_entry_max = 32767;
inline constexpr std::uint32_t lut_max_exponent = 30;
inline constexpr std::uint32_t lut_max_slope_shift = 31;  // LUT_*_SLOPE_*_SHIFT: 5 bits

// A tail slope as the registers hold it: scale * 2^-shift output units per v-unit.
struct lut_slope {
  std::int32_t scale = 0;  // a signed 16-bit value
  std::uint32_t shift = 0;
  friend constexpr bool operator==(const lut_slope&, const lut_slope&) = default;
};

struct lut_table {
  std::array<std::int16_t, lut_table_entries> le{};  // LE[i] = f(-(512 - i) * step) * 2^e
  std::array<std::int16_t, lut_table_entries> lo{};  // LO[i] = f(i * step) * 2^e
  std::uint16_t index_scale = 0;                     // fp16 bits
  std::uint32_t exponent = 0;                        // e
  lut_slope underflow{}, overflow{};
  friend constexpr bool operator==(const lut_table&, const lut_table&) = default;

  constexpr double scale() const { return static_cast<double>(half_to_float(index_scale)); }
  // The input covered on each side of 0, and between two entries.
  constexpr double end() const { return lut_span / scale(); }
  constexpr double step() const { return double{1u << lut_index_select} / scale(); }
};

namespace detail {
// The largest binary16 value <= s (s in [0.25, 65504]) as bits.
constexpr std::uint16_t fp16_at_most(double s) {
  int exponent = 15;
  while (cmath::ldexp(1.0, exponent) > s) --exponent;
  const auto mantissa = static_cast<std::uint32_t>((s / cmath::ldexp(1.0, exponent) - 1.0) * 1024.0);
  return static_cast<std::uint16_t>(static_cast<std::uint32_t>(exponent + 15) << 10 | (mantissa > 1023 ? 1023 : mantissa));
}

// Rounded half away from zero (as the public tables' lround); |v| < 2^62 here.
constexpr double round_half_away(double v) {
  return v < 0 ? -static_cast<double>(static_cast<std::int64_t>(-v + 0.5)) : static_cast<double>(static_cast<std::int64_t>(v + 0.5));
}

// Output units per v-unit as the slope registers hold it, with the most precise shift;
// `fits` is false when even shift 0 leaves the scale beyond 16 bits.
constexpr lut_slope encode_slope(double per_v, bool& fits) {
  fits = true;
  if (per_v == 0) return {};
  for (std::uint32_t shift = lut_max_slope_shift + 1; shift-- > 0;) {
    const double scaled = cmath::ldexp(per_v, static_cast<int>(shift));
    if (cmath::abs(scaled) < lut_entry_max + 0.5) return {static_cast<std::int32_t>(round_half_away(scaled)), shift};
  }
  fits = false;
  return {};
}
}  // namespace detail

// The table of f over `range`: every rule a table must meet, then the entries.
template <class F>
constexpr result<lut_table> make_lut_table(const F& f, const lut_range& range) {
  const double bound = cmath::abs(range.lo) > cmath::abs(range.hi) ? cmath::abs(range.lo) : cmath::abs(range.hi);
  if (!cmath::isfinite(range.lo) || !cmath::isfinite(range.hi) || !(range.lo < range.hi) || lut_span / bound > 65504.0 ||
      bound > 65504.0)
    return make_error(rules::lut_range, "lut");
  lut_table t;
  t.index_scale = detail::fp16_at_most(lut_span / bound);
  const double step = t.step();
  auto at = [&](double x) { return static_cast<double>(f(x < range.lo ? range.lo : x > range.hi ? range.hi : x)); };

  // Every point's value first: the exponent depends on the largest.
  std::array<double, 2 * lut_table_entries> values{};
  double largest = 0;
  for (std::uint32_t i = 0; i < lut_table_entries; ++i) {
    values[i] = at(-static_cast<double>(lut_table_entries - 1 - i) * step);
    values[lut_table_entries + i] = at(static_cast<double>(i) * step);
  }
  for (double v : values) {
    if (!cmath::isfinite(v)) return make_error(rules::lut_not_finite, "lut");
    largest = cmath::abs(v) > largest ? cmath::abs(v) : largest;
  }
  if (largest >= lut_entry_max + 0.5) return make_error(rules::lut_entry_range, "lut");
  t.exponent = lut_max_exponent;
  while (t.exponent > 0 && detail::round_half_away(cmath::ldexp(largest, static_cast<int>(t.exponent))) > lut_entry_max)
    --t.exponent;
  for (std::uint32_t i = 0; i < lut_table_entries; ++i) {
    t.le[i] = static_cast<std::int16_t>(detail::round_half_away(cmath::ldexp(values[i], static_cast<int>(t.exponent))));
    t.lo[i] = static_cast<std::int16_t>(
        detail::round_half_away(cmath::ldexp(values[lut_table_entries + i], static_cast<int>(t.exponent))));
  }

  // Tails: f's secant over one more span beyond each end, per v-unit of output units.
  const double end = t.end(), per_x_to_per_v = cmath::ldexp(1.0, static_cast<int>(t.exponent)) / t.scale();
  bool fits = true;
  if (range.below == lut_tail::linear) {
    const double secant = (static_cast<double>(f(-end)) - static_cast<double>(f(-2 * end))) / end;
    if (!cmath::isfinite(secant)) return make_error(rules::lut_not_finite, "lut", "below");
    t.underflow = detail::encode_slope(secant * per_x_to_per_v, fits);
    if (!fits) return make_error(rules::lut_slope_range, "lut", "below");
  }
  if (range.above == lut_tail::linear) {
    const double secant = (static_cast<double>(f(2 * end)) - static_cast<double>(f(end))) / end;
    if (!cmath::isfinite(secant)) return make_error(rules::lut_not_finite, "lut", "above");
    t.overflow = detail::encode_slope(secant * per_x_to_per_v, fits);
    if (!fits) return make_error(rules::lut_slope_range, "lut", "above");
  }
  return t;
}

// The table's value at x as the hardware interpolates its entries (scaled back to f's
// units): LO entries at i * step, LE at -(512 - i) * step; beyond either end, the end entry
// (the tails are lut_range's business).
constexpr double lut_value(const lut_table& t, double x) {
  const double unit = cmath::ldexp(1.0, -static_cast<int>(t.exponent)), at = x / t.step();
  const bool lo = x >= 0;
  const auto& e = lo ? t.lo : t.le;
  const double p = lo ? at : at + (lut_table_entries - 1);
  if (p <= 0) return e[0] * unit;
  if (p >= lut_table_entries - 1) return e[lut_table_entries - 1] * unit;
  const auto i = static_cast<std::uint32_t>(p);
  const double frac = p - i;
  return (e[i] + (e[i + 1] - e[i]) * frac) * unit;
}

// The most the table's values stray from f inside [lo, hi], each error in units of
// allowed(f(x)) (1: absolute): at each entry, halfway between two (where interpolation is
// furthest from a smooth f), and at the bounds and a quarter entry inside them (an entry
// past a bound holds f there, so the cell holding the bound bends toward it, furthest at
// the bound). Entries 32 v-units apart are 32 / index_scale apart in x: a range too wide
// for the accuracy wanted shows here (sigmoid over +-1000: entries 1.95 apart, 0.04 off),
// as do large values' coarse entries (exp over [-1, 8]: units of 2^-12). Run time only
// (twice the table's evaluations of f).
template <class F, class Allowed>
constexpr double lut_error(const F& f, const lut_range& range, const lut_table& t, const Allowed& allowed) {
  const double step = t.step();
  double worst = 0;
  auto at = [&](double x) {
    if (x < range.lo || x > range.hi) return;
    const double y = static_cast<double>(f(x)), e = cmath::abs(lut_value(t, x) - y) / allowed(y);
    worst = e > worst ? e : worst;
  };
  for (std::uint32_t i = 0; i < lut_table_entries; ++i)
    for (const double x : {static_cast<double>(i) * step, -static_cast<double>(lut_table_entries - 1 - i) * step})
      for (const double d : {0.0, step / 2}) at(x + d);
  for (const double x : {range.lo, range.lo + step / 4, range.hi, range.hi - step / 4}) at(x);
  return worst;
}

}  // namespace regcmd
