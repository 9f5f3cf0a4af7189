// A linear tail of slope 1e9 per input unit: beyond the slope registers' 16 bits.
// EXPECT: regcmd rule lut-slope-range:
#include <regcmd/programs/activation/activation.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr double steepness = 1e9;
#else
inline constexpr double steepness = 1;
#endif
inline constexpr auto program = lut_activation<[](double x) { return x <= 1 ? x : steepness * x; },
                                               lut_range{-1, 1, lut_tail::hold, lut_tail::linear}, act_spec{.M = 1, .N = 8}>();
