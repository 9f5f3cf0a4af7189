// ReLU6 with an accumulator scale of 1e-12: 6e12 does not fit the int32 clamp.
// EXPECT: regcmd rule conv-activation-range:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr float scale = 1e-6f;
#else
inline constexpr float scale = 1e-3f;
#endif
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 4, .W = 4, .C = 16, .out_channels = 16, .input = {scale, 0}, .weights = {scale, 0}, .output = {scale, 0}, .activation = output_activation::relu6}>();
