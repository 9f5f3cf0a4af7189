// A conv of no input channels.
// EXPECT: regcmd rule conv-shape-nonzero:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 8, .W = 8, .C = 0, .out_channels = 16}>();
#else
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 8, .W = 8, .C = 16, .out_channels = 16}>();
#endif
