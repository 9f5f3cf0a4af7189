// A bias the input zero point's correction pushes past int32: kernel 1's weights sum 80 above
// their zero point, times (100 − 128), add 2240 to INT32_MAX − 2000.
// EXPECT: regcmd rule conv-bias-range:
#include <array>
#include <cstdint>

#include <regcmd/programs/conv/packing.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::int32_t second_bias = 2147483647 - 2000;
#else
inline constexpr std::int32_t second_bias = 2147483647 - 3000;
#endif
inline constexpr status packed = [] {
  const auto g = resolve_conv({.dtype = conv_data::uint8, .H = 2, .W = 2, .C = 2, .out_channels = 2,
                               .input = {0.5f, 100}, .weights = {0.5f, 120}, .output = {0.5f, 0}, .bias = true})
                     .value();
  const std::array<std::uint8_t, 4> w{130, 110, 120, 200};
  const std::array<std::int32_t, 2> bias{1000, second_bias};
  std::array<std::uint8_t, 128> out{};  // an int32 for each of the 32 computed channels
  return conv::pack_bias<std::uint8_t>(g, bias, w, conv_weight_order::ohwi, out);
}();
static_assert(report<violated_rule(packed)>());
