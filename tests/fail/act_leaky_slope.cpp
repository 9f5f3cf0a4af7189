// A leaky ReLU of slope 1.5: the multiplier takes slopes in [0, 1).
// EXPECT: regcmd rule act-leaky-slope:
#include <regcmd/programs/activation/activation.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr float slope = 1.5f;
#else
inline constexpr float slope = 0.2f;
#endif
inline constexpr auto program = fixed<act_spec{.fn = activation::leaky_relu, .M = 1, .N = 8, .slope = slope}>();
