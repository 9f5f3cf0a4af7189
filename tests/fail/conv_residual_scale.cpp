// A residual whose scale over the accumulator's (1.0 / 1e-6) is beyond 15 bits.
// EXPECT: regcmd rule conv-residual-scale:
#include <regcmd/programs/conv/spec.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr float residual_scale = 1.0f;
#else
inline constexpr float residual_scale = 0.001f;
#endif
inline constexpr auto geometry = conv_geometry_of<conv_spec{.dtype = conv_data::int8, .H = 4, .W = 4, .C = 16, .out_channels = 16, .input = {0.001f, 0}, .weights = {0.001f, 0}, .output = {0.1f, 0}, .residual_add = true, .residual = {residual_scale, 0}}>();
