// A depthwise conv with a channel multiplier of 2.
// EXPECT: regcmd rule conv-depthwise:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 8, .W = 8, .C = 16, .out_channels = 32, .kernel_h = 3, .kernel_w = 3, .depthwise = true}>();
#else
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 8, .W = 8, .C = 16, .out_channels = 16, .kernel_h = 3, .kernel_w = 3, .depthwise = true}>();
#endif
