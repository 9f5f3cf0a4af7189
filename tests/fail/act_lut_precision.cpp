// A sigmoid on int8 data: lookup tables run on fp16 only.
// EXPECT: regcmd rule act-lut-precision:
#include <regcmd/programs/activation/activation.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr precision dtype = precision::int8;
#else
inline constexpr precision dtype = precision::fp16;
#endif
inline constexpr auto program = fixed<act_spec{.fn = activation::sigmoid, .dtype = dtype, .M = 1, .N = 16}>();
