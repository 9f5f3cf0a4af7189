#pragma once
// IEEE 754 binary16 <-> binary32, constexpr, round to nearest even: how fp16 operands are
// packed on the host and how the model reads them.

#include <bit>
#include <cstdint>

namespace regcmd {

constexpr float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f80'0000u | (mant << 13);  // inf / nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;  // signed zero
  } else {
    // subnormal: normalise
    std::uint32_t e = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mant & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

constexpr std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t exp = (x >> 23) & 0xffu;
  const std::uint32_t mant = x & 0x7f'ffffu;
  if (exp == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));  // inf / nan
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow -> inf
  std::uint32_t m;
  int shift;
  if (e <= 0) {
    if (e < -10) return sign;  // underflow -> signed zero
    m = mant | 0x80'0000u;     // subnormal half: shift the implicit bit in
    shift = 14 - e;
  } else {
    m = mant;
    shift = 13;
  }
  std::uint32_t half_mant = m >> shift;
  const std::uint32_t rest = m & ((1u << shift) - 1);
  const std::uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (half_mant & 1u))) ++half_mant;  // nearest even
  const std::uint32_t base = e <= 0 ? 0u : static_cast<std::uint32_t>(e) << 10;
  return static_cast<std::uint16_t>(sign | (base + half_mant));  // a carry rounds up the exponent
}

}  // namespace regcmd
