// A dilation of 33: CNA_CONV_CON3 holds dilation - 1 in 5 bits.
// EXPECT: regcmd rule conv-dilation:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 80, .W = 80, .C = 16, .out_channels = 16, .kernel_h = 3, .kernel_w = 3, .dilation_y = 33, .dilation_x = 33}>();
#else
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 80, .W = 80, .C = 16, .out_channels = 16, .kernel_h = 3, .kernel_w = 3, .dilation_y = 32, .dilation_x = 32}>();
#endif
