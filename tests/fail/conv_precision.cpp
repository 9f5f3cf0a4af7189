// A quantized conv asked for its int32 accumulator.
// EXPECT: regcmd rule conv-precision:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .out_dtype = precision::int32, .H = 8, .W = 8, .C = 16, .out_channels = 16, .kernel_h = 3, .kernel_w = 3}>();
#else
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 8, .W = 8, .C = 16, .out_channels = 16, .kernel_h = 3, .kernel_w = 3}>();
#endif
