// A uint8 zero point of 256.
// EXPECT: regcmd rule conv-zero-point:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::uint8, .H = 8, .W = 8, .C = 16, .out_channels = 16, .input = {.scale = 0.5f, .zero_point = 256}}>();
#else
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::uint8, .H = 8, .W = 8, .C = 16, .out_channels = 16, .input = {.scale = 0.5f, .zero_point = 255}}>();
#endif
