#pragma once
// What the command-line tools share beyond the spec language (regcmd/cli/request.hpp): the
// exit-status convention and the accuracy regcmd-run checks a table activation to.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <regcmd/cli/request.hpp>
#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/reference/activation.hpp>

namespace regcmd::cli {

// Every tool's exit status (each --help says so): 0 success, 1 a check failed (an output
// differs from its reference), 2 bad usage, bad input or any other error, with one line
// on stderr.
inline constexpr int exit_success = 0, exit_check_failed = 1, exit_error = 2;

// The accuracy regcmd-run checks a table function to (absolute; an fp16 result may also be
// off by its own rounding: max(absolute, 2^-10 |expected|)): the table's interpolation
// between its 16-bit entries over the function's own range.
struct act_tolerance {
  activation fn;
  double absolute;
};
inline constexpr act_tolerance act_tolerances[] = {
    {activation::sigmoid, 2e-3}, {activation::tanh, 2e-3},      {activation::silu, 1e-2},
    {activation::gelu, 1e-2},    {activation::gelu_erf, 1e-2},  {activation::hardswish, 1e-2},
    {activation::hardsigmoid, 2e-3}, {activation::exp, 2e-3},  {activation::mish, 1e-2},
    {activation::elu, 2e-3},     {activation::selu, 2e-3},      {activation::softplus, 2e-3},
    {activation::rsqrt_band, 2e-3}, {activation::reciprocal_band, 2e-3}};

inline double absolute_tolerance(activation f) {
  for (const act_tolerance& t : act_tolerances)
    if (t.fn == f) return t.absolute;
  return 0;
}

// Empty when a table activation's program is within the accuracy regcmd-run checks it to
// inside its range, else the line saying why not (entries too far apart for the range).
inline std::string table_accuracy_problem(const act_spec& s, const lut_table& t) {
  const lut_range r = reference::range_of(s);
  const double tolerance = absolute_tolerance(s.fn);
  auto f = [&](double x) { return reference::function(s.fn, x, s.alpha); };
  const double times = lut_error(f, r, t, [&](double y) { return std::max(tolerance, std::ldexp(std::abs(y), -10)); });
  if (times <= 1) return {};
  char line[320];
  std::snprintf(line, sizeof line,
                "%s over %g,%g: the table (entries %.3g apart, in units of 2^-%u) is up to %.3g times the error "
                "regcmd-run allows (max(%g, 2^-10 |%s|)) from %s inside the range: narrow --range, or end it on an "
                "entry (a multiple of %.3g)",
                std::string(name_of(s.fn)).c_str(), r.lo, r.hi, t.step(), t.exponent, times, tolerance,
                std::string(name_of(s.fn)).c_str(), std::string(name_of(s.fn)).c_str(), t.step());
  return line;
}

}  // namespace regcmd::cli
