// A stride of 8: CNA_CONV_CON3 holds 3 bits.
// EXPECT: regcmd rule conv-stride:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 64, .W = 64, .C = 16, .out_channels = 16, .stride_y = 8, .stride_x = 8}>();
#else
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 64, .W = 64, .C = 16, .out_channels = 16, .stride_y = 7, .stride_x = 7}>();
#endif
