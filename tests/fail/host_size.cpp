// A packer refuses a host array of the wrong size.
// EXPECT: regcmd rule host-size:
#include <array>
#include <cstdint>

#include <regcmd/programs/matmul/packing.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr status packed = [] {
  const auto g = resolve(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 16}).value();
  std::array<float, 4 * 63> a{};
  std::array<std::uint8_t, 512> out{};
  return matmul::pack_features<float>(g, a, out);
}();
#else
inline constexpr status packed = [] {
  const auto g = resolve(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 16}).value();
  std::array<float, 4 * 64> a{};
  std::array<std::uint8_t, 512> out{};
  return matmul::pack_features<float>(g, a, out);
}();
#endif
static_assert(report<violated_rule(packed)>());
