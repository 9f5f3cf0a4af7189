// int16 pooling: the PPU pools fp16 or int8.
// EXPECT: regcmd rule pool-precision:
#include <regcmd/programs/pooling/pooling.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr precision dtype = precision::int16;
#else
inline constexpr precision dtype = precision::int8;
#endif
inline constexpr auto program = fixed<pool_spec{.dtype = dtype, .H = 4, .W = 4, .C = 16}>();
