#pragma once
// Integer helpers every layer uses (sizes, alignments, tile counts).
//
// Rounding is where a 32-bit size wraps (2^32 - 1 rounded up to 64 is 0, and a tile count
// divided by it traps): every size a door takes is bounded before it is rounded, in 64 bits
// (`round_up`, which cannot wrap for a 32-bit size), and the 32-bit forms below, for the
// registers' 32-bit values, refuse a result that does not fit rather than wrap it.

#include <cstdint>
#include <cstdlib>

namespace regcmd {

constexpr bool is_pow2(std::uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

// a + b, saturated at 2^64 - 1: a count summed over a dump's tasks, whatever they claim.
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

// a * b, saturated at 2^64 - 1: a product of sizes that is only compared with a limit.
constexpr std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

// v rounded up to a multiple of a (a > 0), in 64 bits: exact for every 32-bit v.
constexpr std::uint64_t round_up(std::uint64_t v, std::uint32_t a) { return (v + a - 1) / a * a; }

namespace detail {
// Deliberately not constexpr: reaching it in a constant expression is the compile error. At
// run time it means a door let a size through unbounded: a bug, stopped here, never a
// wrapped size that a division traps on or a program silently built from.
[[noreturn]] inline void size_does_not_fit_32_bits_bound_it_at_the_door() { std::abort(); }
}  // namespace detail

// ceil(a / b) for b > 0, as the 32-bit count every register and tile count is.
constexpr std::uint32_t ceil_div(std::uint64_t a, std::uint64_t b) {
  if (b == 0 || a / b + (a % b != 0) > UINT32_MAX) detail::size_does_not_fit_32_bits_bound_it_at_the_door();
  return static_cast<std::uint32_t>(a / b + (a % b != 0));
}

// v rounded up to a multiple of a (a > 0), as a 32-bit size.
constexpr std::uint32_t align_up(std::uint32_t v, std::uint32_t a) {
  const std::uint64_t r = a == 0 ? ~std::uint64_t{0} : round_up(v, a);
  if (r > UINT32_MAX) detail::size_does_not_fit_32_bits_bound_it_at_the_door();
  return static_cast<std::uint32_t>(r);
}

}  // namespace regcmd
