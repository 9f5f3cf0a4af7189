#pragma once
// Integer helpers every layer uses (sizes, alignments, tile counts).

#include <cstdint>

namespace regcmd {

constexpr bool is_pow2(std::uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

// ceil(a / b) for b > 0, as the 32-bit count every register and tile count is.
constexpr std::uint32_t ceil_div(std::uint64_t a, std::uint64_t b) { return static_cast<std::uint32_t>((a + b - 1) / b); }

constexpr std::uint32_t align_up(std::uint32_t v, std::uint32_t a) { return ceil_div(v, a) * a; }

}  // namespace regcmd
