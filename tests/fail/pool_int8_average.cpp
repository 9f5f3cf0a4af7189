// Average pooling of int8 data: no source states the PPU's int8 average.
// EXPECT: regcmd rule pool-int8-average:
#include <regcmd/programs/pooling/pooling.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr precision dtype = precision::int8;
#else
inline constexpr precision dtype = precision::fp16;
#endif
inline constexpr auto program = fixed<pool_spec{.op = pool_op::average, .dtype = dtype, .H = 4, .W = 4, .C = 16}>();
