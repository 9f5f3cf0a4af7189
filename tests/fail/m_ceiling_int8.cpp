// int8 K = 1024 holds 320 rows: 64*floor(12/2 - 1).
// EXPECT: regcmd rule m-ceiling-int8:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 321, .K = 1024, .N = 64}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 320, .K = 1024, .N = 64}>();
#endif
