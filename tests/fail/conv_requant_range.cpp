// A requantization multiplier of 100000 (1000 * 100 / 1).
// EXPECT: regcmd rule conv-requant-range:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 8, .W = 8, .C = 16, .out_channels = 16, .kernel_h = 3, .kernel_w = 3, .input = {.scale = 1000.0f}, .weights = {.scale = 100.0f}, .output = {.scale = 1.0f}}>();
#else
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 8, .W = 8, .C = 16, .out_channels = 16, .kernel_h = 3, .kernel_w = 3, .input = {.scale = 1000.0f}, .weights = {.scale = 100.0f}, .output = {.scale = 4.0f}}>();
#endif
