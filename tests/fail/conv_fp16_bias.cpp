// A bias on an fp16 conv that also adds a residual: both would need the EW stage.
// EXPECT: regcmd rule conv-fp16-bias:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr bool bias = true;
#else
inline constexpr bool bias = false;
#endif
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 4, .W = 4, .C = 16, .out_channels = 16, .bias = bias, .residual_add = true}>();
