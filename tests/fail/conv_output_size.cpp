// Padding that widens a 2047-wide image to 2049 outputs: CNA_DATA_SIZE2 has 11 bits.
// EXPECT: regcmd rule conv-output-size:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 3, .W = 2047, .C = 16, .out_channels = 16, .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::explicit_sides, .pad = {.left = 2, .right = 2}}>();
#else
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 3, .W = 2047, .C = 16, .out_channels = 16, .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::explicit_sides, .pad = {.left = 1, .right = 1}}>();
#endif
