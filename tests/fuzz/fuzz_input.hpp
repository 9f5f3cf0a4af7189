// The fuzzer's bytes read as numbers, big-endian, zeros once they run out: every target
// reads its input this way, so an input shrinks without changing what its prefix means.
#pragma once

#include <cstddef>
#include <cstdint>

namespace regcmd::fuzzing {

struct reader {
  const std::uint8_t* data;
  std::size_t size;
  std::uint32_t take(unsigned bytes) {
    std::uint32_t v = 0;
    for (unsigned i = 0; i < bytes; ++i) {
      v = v << 8 | (size ? *data : 0u);
      if (size) ++data, --size;
    }
    return v;
  }
  // One of n choices (0 when there are none).
  std::size_t pick(std::size_t n) { return n ? take(2) % n : 0; }
  // A small signed step, -128 to 127.
  std::int32_t small() { return static_cast<std::int8_t>(take(1)); }
};

}  // namespace regcmd::fuzzing
