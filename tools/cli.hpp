#pragma once
// What the command-line tools share: the exit-status convention, option values (numbers
// in a range, precisions, element-wise ops), the options given (each once), the request
// regcmd-gen and regcmd-run both parse (a matmul, a plan, an SDP op, a fused chain), and
// library errors as one line.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <regcmd/core/precision.hpp>
#include <regcmd/core/soc.hpp>
#include <regcmd/decode/format.hpp>
#include <regcmd/programs/elementwise.hpp>
#include <regcmd/programs/fused.hpp>
#include <regcmd/programs/plan.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd::cli {

// Every tool's exit status (each --help says so): 0 success, 1 a check failed (an output
// differs from its reference), 2 bad usage, bad input or any other error, with one line
// on stderr.
inline constexpr int exit_success = 0, exit_check_failed = 1, exit_error = 2;

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

inline std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

// A number from `lo` to `hi` into `field`, or the line naming that range (in hex for
// addresses). Checked here so that nothing wraps into the field's type.
template <class T>
problem number_in(T& field, std::string_view option, std::string_view v, std::uint64_t lo, std::uint64_t hi,
                  bool in_hex = false) {
  const auto n = parse_number(v);
  if (!n || *n < lo || *n > hi) {
    const std::string range = in_hex ? hex(lo) + " to " + hex(hi) : std::to_string(lo) + " to " + std::to_string(hi);
    return takes(option, range, v);
  }
  field = static_cast<T>(*n);
  return {};
}

// A 32-bit operand address (fact sheet §1.5: address registers are 32 bits wide).
inline problem address_in(std::uint64_t& field, std::string_view option, std::string_view v) {
  return number_in(field, option, v, 0, soc::rk3588::max_iova, true);
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

// The SDP's immediate: a finite number within fp16's range, as the SDP computes fp16
// (regcmd-isa-reference "0x4070 DPU_EW_CFG").
inline problem immediate_in(float& field, std::string_view option, std::string_view v) {
  const std::string text(v);
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(x) || std::abs(x) > 65504.0)
    return takes(option, "a number from -65504 to 65504 (fp16)", v);
  field = static_cast<float>(x);
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

// The program a tool is asked for: `ew` (an SDP op), or `matmul` (planned, or with
// `--then ew` a fused chain).
struct request {
  bool elementwise = false;
  bool fused_ew = false;
  matmul_spec spec{};
  ew_spec ew{};
  plan_options options{};

  fused_spec fused() const { return {.matmul = spec, .op = ew.op, .operand = ew.operand, .immediate = ew.immediate}; }
};

// The valued options apply() takes.
inline bool is_request_option(std::string_view a) {
  for (std::string_view o : {"--then", "--op", "--operand", "--value", "--dtype", "--in", "--out", "-M", "-K", "-N", "--k-slice", "--layout"})
    if (a == o) return true;
  return false;
}

// Applies one valued option of the request: nullopt when `a` is not one, else the
// problem with `v` (empty when it applied). Which options fit the program is checked
// once all are known (check_request), so their order does not matter.
inline std::optional<problem> apply(request& r, std::string_view a, std::string_view v) {
  constexpr std::uint64_t u32_max = 0xffff'ffffu;
  static constexpr std::pair<std::string_view, ew_op> ops[] = {{"add", ew_op::add}, {"mul", ew_op::mul}, {"max", ew_op::max}, {"min", ew_op::min}};
  static constexpr std::pair<std::string_view, ew_operand> operands[] = {
      {"per-element", ew_operand::per_element}, {"per-channel", ew_operand::per_channel}, {"immediate", ew_operand::immediate}};
  static constexpr std::pair<std::string_view, ew_layout> ew_layouts[] = {{"surface", ew_layout::surface}, {"flat", ew_layout::flat}};
  static constexpr std::pair<std::string_view, operand_layout> matmul_layouts[] = {{"row_major", operand_layout::row_major},
                                                                                  {"surface", operand_layout::surface}};
  static constexpr std::pair<std::string_view, bool> then[] = {{"ew", true}};
  if (a == "--then") return one_of(r.fused_ew, a, v, then);
  if (a == "--op") return one_of(r.ew.op, a, v, ops);
  if (a == "--operand") return one_of(r.ew.operand, a, v, operands);
  if (a == "--value") return immediate_in(r.ew.immediate, a, v);
  if (a == "--dtype") return named(r.ew.dtype, a, v);
  if (a == "--in") {
    precision p{};
    problem bad = named(p, a, v);
    if (bad.empty()) r.spec.in = p;
    return bad;
  }
  if (a == "--out") return named(r.spec.out, a, v);
  // The shape fields are 32 bits; the programs' rules give the real limits.
  if (a == "-M") return number_in(r.elementwise ? r.ew.M : r.spec.M, a, v, 1, u32_max);
  if (a == "-K") return number_in(r.spec.K, a, v, 1, u32_max);
  if (a == "-N") return number_in(r.elementwise ? r.ew.N : r.spec.N, a, v, 1, u32_max);
  if (a == "--k-slice") {
    // k-slice-max and the weight tile's K of 32 (regcmd-isa-reference "Limits & tiling
    // (RK3588)", "Operand tile layouts"); 0 would silently mean "choose".
    const auto k = parse_number(v);
    if (!k || *k < 32 || *k > soc::rk3588::max_k_slice || *k % 32 != 0)
      return takes(a, "a multiple of 32 from 32 to " + std::to_string(soc::rk3588::max_k_slice), v);
    r.options.k_slice = static_cast<std::uint32_t>(*k);
    return problem{};
  }
  if (a == "--layout") return r.elementwise ? one_of(r.ew.layout, a, v, ew_layouts) : one_of(r.spec.layout, a, v, matmul_layouts);
  return std::nullopt;
}

// The request's options that do not fit its program (given once all are known), and the
// shape options it needs.
inline problem check_request(const request& r, const given_options& given) {
  problem p;
  if (r.elementwise) {
    p = given.refuse_any({"--in", "--out", "-K", "--then", "--k-slice", "--delta"}, "to ew (a matmul option)");
    if (p.empty() && !(given.has("-M") && given.has("-N"))) p = "ew needs -M and -N";
  } else {
    if (!r.fused_ew) p = given.refuse_any({"--op", "--operand", "--value"}, "to a matmul without --then ew");
    if (p.empty()) p = given.refuse_any({"--dtype"}, r.fused_ew ? "after --then ew (the fused op computes fp16)" : "to matmul (--in and --out)");
    if (p.empty() && r.fused_ew)
      p = given.refuse_any({"--k-slice", "--delta"}, "with --then ew (the fused chain's matmul is one task, not a plan)");
    if (p.empty() && !(given.has("-M") && given.has("-K") && given.has("-N"))) p = "matmul needs -M, -K and -N";
  }
  if (p.empty() && given.has("--value") && r.ew.operand != ew_operand::immediate)
    p = "--value does not apply without --operand immediate";
  return p;
}

// A library error as one line, a precision by its name and an address in hex: the doors
// report the request's precision fields as numbers ("ew.dtype = 5" is fp32).
inline std::string describe(const error& e) {
  const bool precision_field = e.detail == "dtype" || e.detail == "in" || e.detail == "out" || e.detail == "matmul.in" ||
                               e.detail == "matmul.out";
  const std::string_view name = info_of<precision>().name_of(static_cast<std::uint32_t>(e.value));
  std::string value;
  if (e.has_value && e.breaks(rules::iova_32bit)) value = hex(e.value);
  else if (e.has_value && precision_field && e.value <= 0xffff'ffffu && !name.empty()) value = name;
  if (value.empty()) return to_string(e);
  error named = e;
  const std::string detail = std::string(e.detail) + " = " + value;
  named.detail = detail;
  named.has_value = false;
  return to_string(named);
}

}  // namespace regcmd::cli
