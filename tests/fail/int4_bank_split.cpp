// No bank split is known for int4.
// EXPECT: regcmd rule int4-bank-split:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::int4, .out_dtype = precision::int16, .M = 1, .K = 64, .N = 64, .sched = schedule::bank_split}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::int4, .out_dtype = precision::int16, .M = 1, .K = 64, .N = 64}>();
#endif
