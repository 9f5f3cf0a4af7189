// 16 rows of top padding: CNA_PAD_CON0.PAD_TOP has 4 bits.
// EXPECT: regcmd rule conv-padding:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 64, .W = 64, .C = 16, .out_channels = 16, .kernel_h = 31, .kernel_w = 31, .padding = conv_padding::explicit_sides, .pad = {.top = 16}}>();
#else
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 64, .W = 64, .C = 16, .out_channels = 16, .kernel_h = 31, .kernel_w = 31, .padding = conv_padding::explicit_sides, .pad = {.top = 15}}>();
#endif
