// An image 2048 wide: CNA_DATA_SIZE0.DATAIN_WIDTH has 11 bits.
// EXPECT: regcmd rule conv-input-size:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 8, .W = 2048, .C = 16, .out_channels = 16}>();
#else
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 8, .W = 2047, .C = 16, .out_channels = 16}>();
#endif
