// A leaky ReLU after a residual add: no stage can apply it there.
// EXPECT: regcmd rule conv-leaky-residual:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr bool residual = true;
#else
inline constexpr bool residual = false;
#endif
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 4, .W = 4, .C = 16,
    .out_channels = 16, .residual_add = residual, .activation = output_activation::leaky_relu, .leaky_slope = 0.1f}>();
