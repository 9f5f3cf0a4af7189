// clip(0, 200) on int8: 200 is beyond int8's range.
// EXPECT: regcmd rule act-clip-bounds:
#include <regcmd/programs/activation/activation.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr float hi = 200;
#else
inline constexpr float hi = 100;
#endif
inline constexpr auto program =
    fixed<act_spec{.fn = activation::clip, .dtype = precision::int8, .M = 1, .N = 16, .lo = 0, .hi = hi}>();
