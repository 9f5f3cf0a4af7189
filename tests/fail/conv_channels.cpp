// 16384 output channels: CNA_WEIGHT_SIZE2.WEIGHT_KERNELS has 14 bits.
// EXPECT: regcmd rule conv-channels:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 4, .W = 4, .C = 16, .out_channels = 16384}>();
#else
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 4, .W = 4, .C = 16, .out_channels = 16383}>();
#endif
