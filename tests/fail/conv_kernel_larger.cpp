// A 3x3 kernel over a 2x2 image without padding.
// EXPECT: regcmd rule conv-kernel-larger:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 2, .W = 2, .C = 16, .out_channels = 16, .kernel_h = 3, .kernel_w = 3}>();
#else
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 3, .W = 3, .C = 16, .out_channels = 16, .kernel_h = 3, .kernel_w = 3}>();
#endif
