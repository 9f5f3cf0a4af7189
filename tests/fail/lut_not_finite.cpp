// log(x) tabulated over [-2, 2]: NaN at the table's negative points.
// EXPECT: regcmd rule lut-not-finite:
#include <regcmd/core/constexpr_math.hpp>
#include <regcmd/programs/activation/activation.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr lut_range range{-2, 2};
#else
inline constexpr lut_range range{0.5, 2};
#endif
inline constexpr auto program = lut_activation<[](double x) { return cmath::log(x); }, range, act_spec{.M = 1, .N = 8}>();
