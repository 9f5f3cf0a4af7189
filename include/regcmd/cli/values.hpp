#pragma once
// The command-line language of specs, its values: numbers in a range, names of enumerators,
// pairs, paddings, scales, and the options given (each once). Each parser writes its field
// or returns the one line saying what the option takes. regcmd-gen, regcmd-run and graph
// files (cli/graph_file.hpp) read specs with them.

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <regcmd/core/enumeration.hpp>
#include <regcmd/core/soc.hpp>
#include <regcmd/decode/format.hpp>
#include <regcmd/programs/activation/lut_table.hpp>
#include <regcmd/programs/conv/spec.hpp>

namespace regcmd::cli {

// What is wrong with a command line, as its one stderr line; empty when nothing is.
using problem = std::string;

inline std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// "--in takes fp16 | int8 | int4, not 'fp64'": the line for a value an option refuses.
inline problem takes(std::string_view option, std::string_view accepted, std::string_view value) {
  return std::string(option) + " takes " + std::string(accepted) + ", not " + quoted(value);
}

// A decimal or 0x-prefixed hexadecimal number that fits 64 bits.
inline std::optional<std::uint64_t> parse_number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  unsigned base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  for (char c : s) {
    const int d = c >= '0' && c <= '9'                  ? c - '0'
                  : base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : base == 16 && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                       : -1;
    if (d < 0 || v > (UINT64_MAX - static_cast<unsigned>(d)) / base) return std::nullopt;
    v = v * base + static_cast<unsigned>(d);
  }
  return v;
}

// A number from `lo` to `hi` into `field`, or the line naming that range (in hex for
// addresses). Checked here so that nothing wraps into the field's type.
template <class T>
problem number_in(T& field, std::string_view option, std::string_view v, std::uint64_t lo, std::uint64_t hi,
                  bool in_hex = false) {
  const auto n = parse_number(v);
  if (!n || *n < lo || *n > hi) {
    const std::string range = in_hex ? regcmd::hex(lo, 1) + " to " + regcmd::hex(hi, 1) : std::to_string(lo) + " to " + std::to_string(hi);
    return takes(option, range, v);
  }
  field = static_cast<T>(*n);
  return {};
}

// A 32-bit operand address (fact sheet §1.5: address registers are 32 bits wide).
inline problem address_in(std::uint64_t& field, std::string_view option, std::string_view v) {
  return number_in(field, option, v, 0, soc::rk3588::max_iova, true);
}

// --soc: a member of the RK35xx family by its --soc name (core/soc.hpp).
inline problem soc_in(soc::soc_info& field, std::string_view option, std::string_view v) {
  if (const auto s = soc::soc_by_option(v)) {
    field = *s;
    return {};
  }
  std::string names;
  for (std::size_t i = 0; i < soc::family.size(); ++i)
    names += std::string(i == 0 ? "" : i + 1 == soc::family.size() ? " or " : ", ") + std::string(soc::family[i].option);
  return takes(option, names, v);
}

// Any enumerator of E by name, or the line listing them.
template <declared_enum E>
problem named(E& field, std::string_view option, std::string_view v) {
  if (const enumerator_info* e = info_of<E>().find(v)) {
    field = static_cast<E>(e->value);
    return {};
  }
  std::string names;
  for (const enumerator_info& e : info_of<E>().values) names += (names.empty() ? "" : " | ") + std::string(e.name);
  return takes(option, names, v);
}

// One of `choices` (name, value) by name, or the line listing them.
template <class T, std::size_t Count>
problem one_of(T& field, std::string_view option, std::string_view v, const std::pair<std::string_view, T> (&choices)[Count]) {
  std::string names;
  for (const auto& [name, value] : choices) {
    if (name == v) {
      field = value;
      return {};
    }
    names += (names.empty() ? "" : " | ") + std::string(name);
  }
  return takes(option, names, v);
}

// A finite number of magnitude at most `limit` into `field`, or the line saying `accepted`.
inline problem finite_in(float& field, std::string_view option, std::string_view v, double limit, std::string_view accepted) {
  const std::string text(v);
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(x) || std::abs(x) > limit) return takes(option, accepted, v);
  field = static_cast<float>(x);
  return {};
}

// The SDP's immediate: a finite number within fp16's range, as the SDP computes fp16
// (regcmd-isa-reference "0x4070 DPU_EW_CFG").
inline problem immediate_in(float& field, std::string_view option, std::string_view v) {
  return finite_in(field, option, v, 65504.0, "a number from -65504 to 65504 (fp16)");
}

// A signed 32-bit number (decimal or 0x-hexadecimal after an optional '-'): a zero point,
// which the conv's rules narrow to its type's range.
inline problem signed_in(std::int32_t& field, std::string_view option, std::string_view v) {
  const bool negative = !v.empty() && v[0] == '-';
  const auto n = parse_number(negative ? v.substr(1) : v);
  if (!n || *n > (negative ? 0x8000'0000u : 0x7fff'ffffu)) return takes(option, "-2147483648 to 2147483647", v);
  field = static_cast<std::int32_t>(negative ? -static_cast<std::int64_t>(*n) : static_cast<std::int64_t>(*n));
  return {};
}

// LO,HI: a table's range, two finite numbers with LO < HI (the lut-range rule narrows them;
// 0,0 would silently mean the function's own range).
inline problem range_in(lut_range& field, std::string_view option, std::string_view v) {
  const std::size_t comma = v.find(',');
  const std::string lo(v.substr(0, comma)), hi(comma == std::string_view::npos ? "" : v.substr(comma + 1));
  char* lo_end = nullptr;
  char* hi_end = nullptr;
  const double a = std::strtod(lo.c_str(), &lo_end), b = std::strtod(hi.c_str(), &hi_end);
  if (lo.empty() || hi.empty() || *lo_end != '\0' || *hi_end != '\0' || !std::isfinite(a) || !std::isfinite(b) || !(a < b))
    return takes(option, "LO,HI (two finite numbers, LO < HI)", v);
  field.lo = a;
  field.hi = b;
  return {};
}

// A scale: any finite number a float holds (0 and negative ones are the conv-scale rule's).
inline problem scale_in(float& field, std::string_view option, std::string_view v) {
  return finite_in(field, option, v, 3.4028234663852886e38, "a finite number");
}

// N or AxB (each 1 to 2^32 - 1): a kernel, stride or dilation, the same along both axes or
// y then x.
inline problem pair_in(std::uint32_t& y, std::uint32_t& x, std::string_view option, std::string_view v,
                       std::string_view forms) {
  // the 'x' between the two, not a 0x prefix's
  const std::size_t cross = v.find('x', v.size() > 1 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') ? 2 : 0);
  const auto a = parse_number(v.substr(0, cross));
  const auto b = cross == std::string_view::npos ? a : parse_number(v.substr(cross + 1));
  if (!a || !b || *a < 1 || *b < 1 || *a > 0xffff'ffffu || *b > 0xffff'ffffu)
    return takes(option, std::string(forms) + " (each 1 to 4294967295)", v);
  y = static_cast<std::uint32_t>(*a);
  x = static_cast<std::uint32_t>(*b);
  return {};
}

// same | valid | T,B,L,R (each 0 to 2^32 - 1).
inline problem conv_padding_in(conv_spec& s, std::string_view option, std::string_view v) {
  if (v == "same" || v == "valid") {
    s.padding = v == "same" ? conv_padding::same : conv_padding::valid;
    return {};
  }
  std::uint32_t sides[4]{};
  std::string_view rest = v;
  for (std::size_t i = 0; i < 4; ++i) {
    const std::size_t comma = i < 3 ? rest.find(',') : std::string_view::npos;
    if (i < 3 && comma == std::string_view::npos) return takes(option, "same | valid | T,B,L,R (each 0 to 4294967295)", v);
    const auto n = parse_number(rest.substr(0, comma));
    if (!n || *n > 0xffff'ffffu) return takes(option, "same | valid | T,B,L,R (each 0 to 4294967295)", v);
    sides[i] = static_cast<std::uint32_t>(*n);
    if (i < 3) rest.remove_prefix(comma + 1);
  }
  s.padding = conv_padding::explicit_sides;
  s.pad = {.top = sides[0], .bottom = sides[1], .left = sides[2], .right = sides[3]};
  return {};
}

// The options given so far: each at most once, as a repeated one would silently
// override the first.
class given_options {
 public:
  problem add(std::string_view option) {
    if (has(option)) return std::string(option) + " is given twice: give it once";
    names_.push_back(option);
    return {};
  }
  bool has(std::string_view option) const {
    for (std::string_view n : names_)
      if (n == option) return true;
    return false;
  }
  // The line for the first of `options` given, saying why it does not apply.
  problem refuse_any(std::initializer_list<std::string_view> options, std::string_view why) const {
    for (std::string_view o : options)
      if (has(o)) return std::string(o) + " does not apply " + std::string(why);
    return {};
  }

 private:
  std::vector<std::string_view> names_;  // views of argv, which outlives the parse
};

}  // namespace regcmd::cli
