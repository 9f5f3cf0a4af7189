// int4 values lie in [-8, 7].
// EXPECT: regcmd rule int4-range:
#include <array>
#include <cstdint>

#include <regcmd/programs/matmul/packing.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr status packed = [] {
  const auto g = resolve(matmul_spec{.dtype = precision::int4, .out_dtype = precision::int16, .M = 1, .K = 64, .N = 32}).value();
  std::array<std::int8_t, 64> a{};
  a[5] = 8;
  std::array<std::uint8_t, 64> out{};
  return matmul::pack_features<std::int8_t>(g, a, out);
}();
#else
inline constexpr status packed = [] {
  const auto g = resolve(matmul_spec{.dtype = precision::int4, .out_dtype = precision::int16, .M = 1, .K = 64, .N = 32}).value();
  std::array<std::int8_t, 64> a{};
  a[5] = 7;
  std::array<std::uint8_t, 64> out{};
  return matmul::pack_features<std::int8_t>(g, a, out);
}();
#endif
static_assert(report<violated_rule(packed)>());
