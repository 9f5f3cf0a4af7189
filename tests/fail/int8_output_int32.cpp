// An int8 matmul writing a requantized int8 output never completes (ETIMEDOUT).
// EXPECT: regcmd rule int8-output-int32:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::int8, .out_dtype = precision::int8, .M = 1, .K = 64, .N = 64}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 1, .K = 64, .N = 64}>();
#endif
