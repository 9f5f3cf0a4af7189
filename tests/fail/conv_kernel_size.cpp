// A 32x32 kernel: CNA_WEIGHT_SIZE2 holds 5 bits a side.
// EXPECT: regcmd rule conv-kernel-size:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 64, .W = 64, .C = 16, .out_channels = 16, .kernel_h = 32, .kernel_w = 32}>();
#else
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 64, .W = 64, .C = 16, .out_channels = 16, .kernel_h = 31, .kernel_w = 31}>();
#endif
