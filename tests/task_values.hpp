#pragma once
// What one task of a program writes, for the encoded-byte tests: the value of a register it
// writes exactly once, and how often it writes one.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>

#include <regcmd/program/program.hpp>

namespace regcmd::testing {

inline std::uint32_t count_of(const program_view& p, std::uint16_t target, std::uint16_t offset, std::size_t t = 0) {
  std::uint32_t seen = 0;
  const task& k = p.tasks[t];
  for (std::uint32_t i = k.first; i < k.first + k.count; ++i)
    seen += p.entries[i].target() == target && p.entries[i].offset() == offset;
  return seen;
}

// The value task `t` writes to (target, offset), which it must write exactly once.
inline std::uint32_t value_at(const program_view& p, std::uint16_t target, std::uint16_t offset, std::size_t t = 0) {
  REQUIRE(count_of(p, target, offset, t) == 1);
  const task& k = p.tasks[t];
  for (std::uint32_t i = k.first; i < k.first + k.count; ++i)
    if (p.entries[i].target() == target && p.entries[i].offset() == offset) return p.entries[i].value();
  return 0;
}

}  // namespace regcmd::testing
