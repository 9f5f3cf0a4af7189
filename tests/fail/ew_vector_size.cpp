// The per-channel operand has one value per channel.
// EXPECT: regcmd rule ew-vector-size:
#include <array>
#include <cstdint>

#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/sdp/packing.hpp>

using namespace regcmd;

inline constexpr ew_geometry g =
    resolve_ew({.op = ew_op::mul, .M = 4, .N = 16, .operand = ew_operand::per_channel}).value();
#ifdef REGCMD_COMPILE_FAIL
inline constexpr status packed = [] {
  std::array<float, 15> v{};
  std::array<std::uint8_t, 32> out{};
  return sdp::pack_vector<float>(g, v, out);
}();
#else
inline constexpr status packed = [] {
  std::array<float, 16> v{};
  std::array<std::uint8_t, 32> out{};
  return sdp::pack_vector<float>(g, v, out);
}();
#endif
static_assert(report<violated_rule(packed)>());
