// No bank split is known for int4.
// EXPECT: regcmd rule int4-bank-split:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.in = precision::int4, .out = precision::int16, .M = 1, .K = 64, .N = 64, .sched = schedule::bank_split}>();
#else
inline constexpr auto program = fixed<matmul_spec{.in = precision::int4, .out = precision::int16, .M = 1, .K = 64, .N = 64}>();
#endif
