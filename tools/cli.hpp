#pragma once
// What the command-line tools share: option values (numbers, precisions, element-wise ops)
// and the request regcmd-gen and regcmd-run both parse (a matmul, a plan, an SDP op, a fused
// chain).

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include <regcmd/core/precision.hpp>
#include <regcmd/programs/elementwise.hpp>
#include <regcmd/programs/fused.hpp>
#include <regcmd/programs/plan.hpp>

namespace regcmd::cli {

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

// A number that fits 32 bits.
inline std::optional<std::uint32_t> parse_u32(std::string_view s) {
  const auto v = parse_number(s);
  if (!v || *v > 0xffff'ffffu) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

inline std::optional<float> parse_float(std::string_view s) {
  const std::string text(s);
  char* end = nullptr;
  const float v = std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0') return std::nullopt;
  return v;
}

inline std::optional<precision> parse_precision(std::string_view s) {
  if (const enumerator_info* e = info_of<precision>().find(s)) return static_cast<precision>(e->value);
  return std::nullopt;
}

inline std::optional<ew_op> parse_ew_op(std::string_view s) {
  if (s == "add") return ew_op::add;
  if (s == "mul") return ew_op::mul;
  if (s == "max") return ew_op::max;
  if (s == "min") return ew_op::min;
  return std::nullopt;
}

inline std::optional<ew_operand> parse_ew_operand(std::string_view s) {
  if (s == "per-element") return ew_operand::per_element;
  if (s == "per-channel") return ew_operand::per_channel;
  if (s == "immediate") return ew_operand::immediate;
  return std::nullopt;
}

inline std::optional<ew_layout> parse_ew_layout(std::string_view s) {
  if (s == "surface") return ew_layout::surface;
  if (s == "flat") return ew_layout::flat;
  return std::nullopt;
}

inline std::optional<operand_layout> parse_matmul_layout(std::string_view s) {
  if (s == "row_major") return operand_layout::row_major;
  if (s == "surface") return operand_layout::surface;
  return std::nullopt;
}

// Stores a parsed value into `field`; false (and `field` unchanged) when it did not parse.
template <class T, class U>
bool assign(T& field, const std::optional<U>& parsed) {
  if (parsed) field = static_cast<T>(*parsed);
  return parsed.has_value();
}

// The program a tool is asked for: `ew` (an SDP op), or `matmul` (planned, or with
// `--then ew` a fused chain).
struct request {
  bool elementwise = false;
  bool fused_ew = false;
  matmul_spec spec{};
  ew_spec ew{};
  plan_options options{};
  bool have_m = false, have_k = false, have_n = false;

  fused_spec fused() const { return {.matmul = spec, .op = ew.op, .operand = ew.operand, .immediate = ew.immediate}; }
  bool complete() const { return elementwise ? have_m && have_n : have_m && have_k && have_n; }
};

// Applies one valued option of the request: nullopt when `a` is not one, else whether `v`
// is a value it takes.
inline std::optional<bool> apply(request& r, std::string_view a, std::string_view v) {
  const bool matmul = !r.elementwise, ew_options = r.elementwise || r.fused_ew;
  if (a == "--then" && matmul) return r.fused_ew = v == "ew";
  if (a == "--op" && ew_options) return assign(r.ew.op, parse_ew_op(v));
  if (a == "--operand" && ew_options) return assign(r.ew.operand, parse_ew_operand(v));
  if (a == "--value" && ew_options) return assign(r.ew.immediate, parse_float(v));
  if (a == "--dtype" && r.elementwise) return assign(r.ew.dtype, parse_precision(v));
  if (a == "--in" && matmul) return assign(r.spec.in, parse_precision(v));
  if (a == "--out" && matmul) return assign(r.spec.out, parse_precision(v));
  if (a == "-M") return r.have_m = assign(r.elementwise ? r.ew.M : r.spec.M, parse_u32(v));
  if (a == "-K" && matmul) return r.have_k = assign(r.spec.K, parse_u32(v));
  if (a == "-N") return r.have_n = assign(r.elementwise ? r.ew.N : r.spec.N, parse_u32(v));
  if (a == "--k-slice" && matmul) return assign(r.options.k_slice, parse_u32(v));
  if (a == "--layout") return r.elementwise ? assign(r.ew.layout, parse_ew_layout(v)) : assign(r.spec.layout, parse_matmul_layout(v));
  return std::nullopt;
}

}  // namespace regcmd::cli
