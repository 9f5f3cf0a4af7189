// exp over [-4, 12]: e^12 = 162755 overflows the signed 16-bit entries at any exponent.
// EXPECT: regcmd rule lut-entry-range:
#include <regcmd/programs/activation/activation.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr double top = 12;
#else
inline constexpr double top = 8;
#endif
inline constexpr auto program = fixed<act_spec{.fn = activation::exp, .M = 1, .N = 8, .range = {-4, top}}>();
