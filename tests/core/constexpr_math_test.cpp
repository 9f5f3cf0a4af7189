// The constexpr math functions: evaluated in constant expressions (values known exactly,
// the edges, whole tables in one evaluation), then swept at run time against <cmath>'s long
// double functions, with the largest relative error reported and held under 4e-15.
#include <regcmd/testing/doctest.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>

#include <regcmd/core/constexpr_math.hpp>

namespace cm = regcmd::cmath;

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr double quiet_nan = std::numeric_limits<double>::quiet_NaN();
constexpr double denorm_min = std::numeric_limits<double>::denorm_min();
constexpr double normal_min = std::numeric_limits<double>::min();
constexpr double max_relative_error = 4e-15;

// The distance in ulps between two finite doubles of the same sign.
constexpr std::uint64_t ulps_apart(double a, double b) {
  const auto x = std::bit_cast<std::uint64_t>(a), y = std::bit_cast<std::uint64_t>(b);
  return x > y ? x - y : y - x;
}

constexpr bool is_negative_zero(double x) { return x == 0 && std::bit_cast<std::uint64_t>(x) >> 63 != 0; }
constexpr bool is_positive_zero(double x) { return std::bit_cast<std::uint64_t>(x) == 0; }

}  // namespace

// Values known exactly, evaluated by the compiler.
static_assert(cm::exp(0.0) == 1.0);
static_assert(cm::expm1(0.0) == 0.0);
static_assert(cm::log(1.0) == 0.0);
static_assert(cm::log1p(0.0) == 0.0);
static_assert(cm::tanh(0.0) == 0.0);
static_assert(cm::erf(0.0) == 0.0);
static_assert(cm::sqrt(4.0) == 2.0);
static_assert(cm::sqrt(2.0) == 1.4142135623730951);  // correctly rounded
static_assert(ulps_apart(cm::exp(cm::log(2.0)), 2.0) <= 1);
static_assert(ulps_apart(cm::exp(1.0), 2.718281828459045) <= 1);
static_assert(ulps_apart(cm::log(10.0), 2.302585092994046) <= 1);
static_assert(cm::abs(-3.5) == 3.5 && is_positive_zero(cm::abs(-0.0)));
static_assert(cm::ldexp(1.0, 10) == 1024.0 && cm::ldexp(3.0, -2) == 0.75);

// The edges, also in constant expressions: infinities and NaNs are returned, never computed.
static_assert(cm::exp(1000.0) == infinity && cm::exp(-1000.0) == 0.0);
static_assert(cm::exp(infinity) == infinity && cm::exp(-infinity) == 0.0);
static_assert(cm::exp(-745.0) == denorm_min);  // exp(-745) = 4.9e-324: rounds to the smallest subnormal
static_assert(cm::expm1(-infinity) == -1.0 && cm::expm1(infinity) == infinity);
static_assert(cm::log(0.0) == -infinity && cm::log(-0.0) == -infinity && cm::log(infinity) == infinity);
static_assert(cm::isnan(cm::log(-1.0)) && cm::isnan(cm::log(-infinity)) && cm::isnan(cm::log(quiet_nan)));
static_assert(ulps_apart(cm::log(denorm_min), -744.4400719213812) <= 1);
static_assert(cm::log1p(-1.0) == -infinity && cm::isnan(cm::log1p(-2.0)) && cm::log1p(infinity) == infinity);
static_assert(cm::tanh(30.0) == 1.0 && cm::tanh(-infinity) == -1.0 && is_negative_zero(cm::tanh(-0.0)));
static_assert(cm::erf(7.0) == 1.0 && cm::erf(-infinity) == -1.0 && is_negative_zero(cm::erf(-0.0)));
static_assert(cm::isnan(cm::sqrt(-1.0)) && is_negative_zero(cm::sqrt(-0.0)) && cm::sqrt(infinity) == infinity);
static_assert(cm::sqrt(denorm_min) == 0x1p-537);
static_assert(cm::erf(denorm_min) == denorm_min && cm::erf(0x1p-1070) > 0x1p-1070);  // subnormal arithmetic
static_assert(cm::expm1(-denorm_min) == -denorm_min && cm::tanh(denorm_min) == denorm_min);
static_assert(cm::ldexp(1.0, -1074) == denorm_min && cm::ldexp(1.0, -1075) == 0.0 && cm::ldexp(1.0, 1024) == infinity);
static_assert(cm::ldexp(0x1.8p0, -1075) == denorm_min);  // 1.5 * 2^-1075 rounds up
static_assert(cm::isnan(cm::exp(quiet_nan)) && cm::isnan(cm::expm1(quiet_nan)) && cm::isnan(cm::log1p(quiet_nan)) &&
              cm::isnan(cm::tanh(quiet_nan)) && cm::isnan(cm::erf(quiet_nan)) && cm::isnan(cm::sqrt(quiet_nan)));
static_assert(cm::isfinite(1.0) && !cm::isfinite(infinity) && !cm::isfinite(-infinity) && !cm::isfinite(quiet_nan));

namespace {

// 1024 points over [-12, 12) of each activation the lookup tables use, each table in one
// constant evaluation, as the tables are built.
constexpr std::size_t table_size = 1024;
constexpr double table_x(std::size_t i) {
  return -12.0 + 24.0 * static_cast<double>(i) / static_cast<double>(table_size);
}

template <class F>
constexpr std::array<double, table_size> table_of(F f) {
  std::array<double, table_size> t{};
  for (std::size_t i = 0; i < table_size; ++i) t[i] = f(table_x(i));
  return t;
}

constexpr auto sigmoid = [](double x) { return 1.0 / (1.0 + cm::exp(-x)); };
constexpr auto gelu_tanh = [](double x) {
  return 0.5 * x * (1.0 + cm::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
};
constexpr auto gelu_erf = [](double x) { return 0.5 * x * (1.0 + cm::erf(x * 0.7071067811865476)); };
constexpr auto mish = [](double x) { return x * cm::tanh(cm::log1p(cm::exp(x))); };
constexpr auto expm1_of = [](double x) { return cm::expm1(x); };
constexpr auto root_of = [](double x) { return cm::sqrt(cm::abs(x)); };

constexpr auto sigmoid_table = table_of(sigmoid);
constexpr auto gelu_tanh_table = table_of(gelu_tanh);
constexpr auto gelu_erf_table = table_of(gelu_erf);
constexpr auto mish_table = table_of(mish);
constexpr auto expm1_table = table_of(expm1_of);
constexpr auto sqrt_table = table_of(root_of);

// The largest relative error of a function over a set of points, and where.
struct error_report {
  long double largest = 0;
  double at = 0;
  std::size_t measured = 0;

  void add(double x, double ours, long double exact) {
    const long double error = std::fabs((static_cast<long double>(ours) - exact) / exact);
    ++measured;
    if (!(error <= largest)) {  // a NaN is recorded as the worst
      largest = error;
      at = x;
    }
  }
};

// Compares `ours` with `exact` (long double) at x: relatively where the exact result is a
// normal double; where it rounds to a subnormal or to zero, within one subnormal step of
// it; where it overflows, infinite.
template <class Ours, class Exact>
void compare_at(double x, Ours ours, Exact exact, error_report& report) {
  const double got = ours(x);
  const long double want = exact(static_cast<long double>(x));
  const auto rounded = static_cast<double>(want);
  if (std::isinf(rounded)) {
    CHECK_MESSAGE(got == rounded, "x = ", x);
  } else if (std::fabs(rounded) < normal_min) {
    CHECK_MESSAGE(std::fabs(static_cast<long double>(got) - want) <= denorm_min, "x = ", x);
  } else {
    report.add(x, got, want);
  }
}

template <class Ours, class Exact>
error_report sweep_linear(double lo, double hi, std::size_t points, Ours ours, Exact exact) {
  error_report report;
  for (std::size_t i = 0; i <= points; ++i)
    compare_at(lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(points), ours, exact, report);
  return report;
}

// Points spaced evenly in log |x| over [lo, hi] (0 < lo < hi), with the sign given.
template <class Ours, class Exact>
error_report sweep_logarithmic(double lo, double hi, double sign, std::size_t points, Ours ours, Exact exact) {
  error_report report;
  const double log_lo = std::log(lo), log_hi = std::log(hi);
  for (std::size_t i = 0; i <= points; ++i) {
    const double t = static_cast<double>(i) / static_cast<double>(points);
    const double magnitude = i == points ? hi : std::exp(log_lo + (log_hi - log_lo) * t);
    compare_at(sign * magnitude, ours, exact, report);
  }
  return report;
}

void check_report(const char* what, const error_report& report) {
  MESSAGE(doctest::String(what), ": max relative error ", static_cast<double>(report.largest), " at x = ", report.at,
          " (", report.measured, " points)");
  CHECK(report.measured > 0);
  CHECK(report.largest <= max_relative_error);
}

constexpr std::size_t dense = 100000;

}  // namespace

TEST_CASE("constexpr math: tables built in one constant evaluation match cmath") {
  error_report sigmoid_report, mish_report, expm1_report, sqrt_report;
  long double gelu_tanh_error = 0, gelu_erf_error = 0;
  for (std::size_t i = 0; i < table_size; ++i) {
    const double x = table_x(i);
    const long double xl = x;
    sigmoid_report.add(x, sigmoid_table[i], 1.0L / (1.0L + std::exp(-xl)));
    // GELU is 0.5 x (1 + f(u)) with f -> -1 for x -> -inf: the sum cancels, so it is
    // held to an error absolute in x rather than relative
    const long double gelu_tanh_exact =
        0.5L * xl * (1.0L + std::tanh(0.7978845608028654L * (xl + 0.044715L * xl * xl * xl)));
    const long double gelu_erf_exact = 0.5L * xl * (1.0L + std::erf(xl * 0.7071067811865476L));
    const long double scale = 1.0L + std::fabs(xl);
    gelu_tanh_error = std::fmax(gelu_tanh_error, std::fabs(gelu_tanh_table[i] - gelu_tanh_exact) / scale);
    gelu_erf_error = std::fmax(gelu_erf_error, std::fabs(gelu_erf_table[i] - gelu_erf_exact) / scale);
    if (x != 0) {
      mish_report.add(x, mish_table[i], xl * std::tanh(std::log1p(std::exp(xl))));
      expm1_report.add(x, expm1_table[i], std::expm1(xl));
      sqrt_report.add(x, sqrt_table[i], std::sqrt(std::fabs(xl)));
    }
  }
  MESSAGE("tables: sigmoid max relative error ", static_cast<double>(sigmoid_report.largest), ", mish ",
          static_cast<double>(mish_report.largest), ", expm1 ", static_cast<double>(expm1_report.largest), ", sqrt ",
          static_cast<double>(sqrt_report.largest), "; GELU max error / (1 + |x|): tanh form ",
          static_cast<double>(gelu_tanh_error), ", erf form ", static_cast<double>(gelu_erf_error));
  // the compositions add their own roundings to the functions' errors
  CHECK(sigmoid_report.largest <= 1e-14);
  CHECK(mish_report.largest <= 1e-14);
  CHECK(expm1_report.largest <= max_relative_error);
  CHECK(sqrt_report.largest <= 0x1p-53);  // correctly rounded: half an ulp
  CHECK(gelu_tanh_error <= 1e-15L);
  CHECK(gelu_erf_error <= 1e-15L);
}

TEST_CASE("constexpr math: exp against cmath") {
  auto ours = [](double x) { return cm::exp(x); };
  auto exact = [](long double x) { return std::exp(x); };
  // the whole domain: overflow above 709.78, subnormal results below -708.4
  check_report("exp over [-750, 710]", sweep_linear(-750.0, 710.0, dense, ours, exact));
  check_report("exp over [-1, 1]", sweep_linear(-1.0, 1.0, dense, ours, exact));
  check_report("exp near 0", sweep_logarithmic(1e-300, 1e-5, 1.0, dense, ours, exact));
  check_report("exp near -0", sweep_logarithmic(1e-300, 1e-5, -1.0, dense, ours, exact));
  CHECK(cm::exp(709.78) < infinity);
  CHECK(cm::exp(std::nextafter(709.782712893384, 0.0)) < infinity);  // just below ln(DBL_MAX)
  CHECK(cm::exp(709.782712893384) == infinity);
  CHECK(cm::exp(-745.14) == 0.0);
}

TEST_CASE("constexpr math: expm1 against cmath") {
  auto ours = [](double x) { return cm::expm1(x); };
  auto exact = [](long double x) { return std::expm1(x); };
  check_report("expm1 over [-50, 50]", sweep_linear(-50.0, 50.0, dense, ours, exact));
  check_report("expm1 over [-2, 2]", sweep_linear(-2.0, 2.0, dense, ours, exact));
  check_report("expm1 over [40, 710]", sweep_linear(40.0, 710.0, dense, ours, exact));
  // no cancellation near 0
  check_report("expm1 for 0 < x < 1e-5", sweep_logarithmic(1e-320, 1e-5, 1.0, dense, ours, exact));
  check_report("expm1 for -1e-5 < x < 0", sweep_logarithmic(1e-320, 1e-5, -1.0, dense, ours, exact));
}

TEST_CASE("constexpr math: log against cmath") {
  auto ours = [](double x) { return cm::log(x); };
  auto exact = [](long double x) { return std::log(x); };
  check_report("log over [1e-300, 1e300]", sweep_logarithmic(1e-300, 1e300, 1.0, dense, ours, exact));
  check_report("log over the subnormals", sweep_logarithmic(denorm_min, normal_min, 1.0, dense, ours, exact));
  check_report("log over [0.5, 2]", sweep_linear(0.5, 2.0, dense, ours, exact));
  // next to 1, where log(x) ~ x - 1 is small: no cancellation
  error_report near_one;
  double above = 1.0, below = 1.0;
  for (int i = 0; i < 1000; ++i) {
    above = std::nextafter(above, 2.0);
    below = std::nextafter(below, 0.0);
    compare_at(above, ours, exact, near_one);
    compare_at(below, ours, exact, near_one);
  }
  check_report("log within 1000 ulps of 1", near_one);
  CHECK(ulps_apart(cm::log(std::numeric_limits<double>::max()), 709.782712893384) <= 1);
}

TEST_CASE("constexpr math: log1p against cmath") {
  auto ours = [](double x) { return cm::log1p(x); };
  auto exact = [](long double x) { return std::log1p(x); };
  check_report("log1p over [-0.999, 10]", sweep_linear(-0.999, 10.0, dense, ours, exact));
  check_report("log1p over [1e-300, 1e300]", sweep_logarithmic(1e-300, 1e300, 1.0, dense, ours, exact));
  // towards -1, where 1 + x loses x's low bits
  check_report("log1p over (-1, -1e-300]", sweep_logarithmic(1e-300, 1.0 - 0x1p-53, -1.0, dense, ours, exact));
  check_report("log1p for 0 < x < 1e-5", sweep_logarithmic(1e-320, 1e-5, 1.0, dense, ours, exact));
  check_report("log1p for -1e-5 < x < 0", sweep_logarithmic(1e-320, 1e-5, -1.0, dense, ours, exact));
}

TEST_CASE("constexpr math: tanh against cmath") {
  auto ours = [](double x) { return cm::tanh(x); };
  auto exact = [](long double x) { return std::tanh(x); };
  check_report("tanh over [-40, 40]", sweep_linear(-40.0, 40.0, dense, ours, exact));
  check_report("tanh over [-2, 2]", sweep_linear(-2.0, 2.0, dense, ours, exact));
  check_report("tanh for 0 < x < 1e-5", sweep_logarithmic(1e-320, 1e-5, 1.0, dense, ours, exact));
  check_report("tanh for -1e-5 < x < 0", sweep_logarithmic(1e-320, 1e-5, -1.0, dense, ours, exact));
}

TEST_CASE("constexpr math: erf against cmath") {
  auto ours = [](double x) { return cm::erf(x); };
  auto exact = [](long double x) { return std::erf(x); };
  check_report("erf over [-40, 40]", sweep_linear(-40.0, 40.0, dense, ours, exact));
  check_report("erf over [-7, 7]", sweep_linear(-7.0, 7.0, dense, ours, exact));
  check_report("erf for 0 < x < 1e-5", sweep_logarithmic(1e-320, 1e-5, 1.0, dense, ours, exact));
  check_report("erf for -1e-5 < x < 0", sweep_logarithmic(1e-320, 1e-5, -1.0, dense, ours, exact));
}

TEST_CASE("constexpr math: sqrt is correctly rounded") {
  std::mt19937_64 bits(42);
  std::size_t differing = 0;
  for (std::size_t i = 0; i < dense; ++i) {
    // positive finite doubles with uniformly random bits: every binade, subnormals included
    const double x = std::bit_cast<double>(bits() >> 1);
    if (!std::isfinite(x)) continue;
    differing += std::bit_cast<std::uint64_t>(cm::sqrt(x)) != std::bit_cast<std::uint64_t>(std::sqrt(x));
  }
  for (double x = 0.25; x <= 4.0; x += 0x1p-14) differing += cm::sqrt(x) != std::sqrt(x);
  CHECK(differing == 0);
  for (double n = 1; n < 1e6; n = n * 1.5 + 1) CHECK(cm::sqrt(std::floor(n) * std::floor(n)) == std::floor(n));
}

TEST_CASE("constexpr math: ldexp matches cmath, subnormal and overflowing results included") {
  std::mt19937_64 bits(7);
  std::size_t differing = 0;
  for (std::size_t i = 0; i < dense; ++i) {
    const double x = std::bit_cast<double>(bits());
    if (!std::isfinite(x)) continue;
    const int n = static_cast<int>(bits() % 4400) - 2200;
    differing += std::bit_cast<std::uint64_t>(cm::ldexp(x, n)) != std::bit_cast<std::uint64_t>(std::ldexp(x, n));
  }
  CHECK(differing == 0);
  CHECK(cm::ldexp(1.0, std::numeric_limits<int>::max()) == infinity);
  CHECK(cm::ldexp(-1.0, std::numeric_limits<int>::min()) == 0.0);
  CHECK(is_negative_zero(cm::ldexp(-1.0, std::numeric_limits<int>::min())));
}

TEST_CASE("constexpr math: infinities, NaN, signed zeros and subnormals at run time") {
  const double neg_zero = -0.0;
  const double denorm = denorm_min * 12345;
  // NaN in, NaN out
  for (double (*f)(double) :
       {+[](double x) { return cm::exp(x); }, +[](double x) { return cm::expm1(x); },
        +[](double x) { return cm::log(x); }, +[](double x) { return cm::log1p(x); },
        +[](double x) { return cm::tanh(x); }, +[](double x) { return cm::erf(x); },
        +[](double x) { return cm::sqrt(x); }, +[](double x) { return cm::abs(x); }}) {
    CHECK(std::isnan(f(quiet_nan)));
    CHECK(std::isnan(f(-quiet_nan)));
  }
  CHECK(std::isnan(cm::ldexp(quiet_nan, 3)));

  CHECK(cm::exp(infinity) == infinity);
  CHECK(is_positive_zero(cm::exp(-infinity)));
  CHECK(cm::exp(0.0) == 1.0);
  CHECK(cm::exp(neg_zero) == 1.0);
  CHECK(cm::exp(denorm) == 1.0);

  CHECK(cm::expm1(infinity) == infinity);
  CHECK(cm::expm1(-infinity) == -1.0);
  CHECK(is_positive_zero(cm::expm1(0.0)));
  CHECK(is_negative_zero(cm::expm1(neg_zero)));
  CHECK(cm::expm1(denorm) == denorm);
  CHECK(cm::expm1(-denorm) == -denorm);

  CHECK(cm::log(infinity) == infinity);
  CHECK(std::isnan(cm::log(-infinity)));
  CHECK(cm::log(0.0) == -infinity);
  CHECK(cm::log(neg_zero) == -infinity);
  CHECK(std::isnan(cm::log(-denorm)));
  CHECK(cm::log(denorm) == std::log(denorm));
  CHECK(is_positive_zero(cm::log(1.0)));

  CHECK(cm::log1p(infinity) == infinity);
  CHECK(std::isnan(cm::log1p(-infinity)));
  CHECK(cm::log1p(-1.0) == -infinity);
  CHECK(std::isnan(cm::log1p(std::nextafter(-1.0, -2.0))));
  CHECK(is_positive_zero(cm::log1p(0.0)));
  CHECK(is_negative_zero(cm::log1p(neg_zero)));
  CHECK(cm::log1p(denorm) == denorm);
  CHECK(cm::log1p(-denorm) == -denorm);
  CHECK(cm::log1p(std::numeric_limits<double>::max()) == std::log1p(std::numeric_limits<double>::max()));

  CHECK(cm::tanh(infinity) == 1.0);
  CHECK(cm::tanh(-infinity) == -1.0);
  CHECK(cm::tanh(1e300) == 1.0);
  CHECK(cm::tanh(-1e300) == -1.0);
  CHECK(is_positive_zero(cm::tanh(0.0)));
  CHECK(is_negative_zero(cm::tanh(neg_zero)));
  CHECK(cm::tanh(denorm) == denorm);
  CHECK(cm::tanh(-denorm) == -denorm);

  CHECK(cm::erf(infinity) == 1.0);
  CHECK(cm::erf(-infinity) == -1.0);
  CHECK(cm::erf(6.0) == 1.0);
  CHECK(cm::erf(-1e300) == -1.0);
  CHECK(is_positive_zero(cm::erf(0.0)));
  CHECK(is_negative_zero(cm::erf(neg_zero)));
  CHECK(std::fabs(cm::erf(denorm) - std::erf(denorm)) <= denorm_min);
  CHECK(std::fabs(cm::erf(-denorm) - std::erf(-denorm)) <= denorm_min);
  CHECK(cm::erf(normal_min) == std::erf(normal_min));

  CHECK(cm::sqrt(infinity) == infinity);
  CHECK(std::isnan(cm::sqrt(-infinity)));
  CHECK(std::isnan(cm::sqrt(-denorm)));
  CHECK(is_positive_zero(cm::sqrt(0.0)));
  CHECK(is_negative_zero(cm::sqrt(neg_zero)));
  CHECK(cm::sqrt(denorm) == std::sqrt(denorm));
  CHECK(cm::sqrt(std::numeric_limits<double>::max()) == std::sqrt(std::numeric_limits<double>::max()));

  CHECK(cm::abs(-infinity) == infinity);
  CHECK(is_positive_zero(cm::abs(neg_zero)));
  CHECK(cm::abs(-denorm) == denorm);
  CHECK(cm::ldexp(infinity, -5000) == infinity);
  CHECK(is_negative_zero(cm::ldexp(neg_zero, 100)));
  CHECK(cm::ldexp(denorm, 1074) == std::ldexp(denorm, 1074));

  CHECK(cm::isnan(quiet_nan));
  CHECK_FALSE(cm::isnan(infinity));
  CHECK_FALSE(cm::isnan(denorm));
  CHECK(cm::isfinite(denorm));
  CHECK(cm::isfinite(std::numeric_limits<double>::max()));
  CHECK_FALSE(cm::isfinite(-infinity));
  CHECK_FALSE(cm::isfinite(quiet_nan));
}
