// A sigmoid table over [-0.1, 0.1]: the index scale 16384 / 0.1 exceeds fp16's 65504.
// EXPECT: regcmd rule lut-range:
#include <regcmd/programs/activation/activation.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr double bound = 0.1;
#else
inline constexpr double bound = 0.5;
#endif
inline constexpr auto program = fixed<act_spec{.fn = activation::sigmoid, .M = 1, .N = 8, .range = {-bound, bound}}>();
