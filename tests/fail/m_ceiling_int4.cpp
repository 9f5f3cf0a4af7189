// int4 rows x K <= 16384: 32 rows at K = 512.
// EXPECT: regcmd rule m-ceiling-int4:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::int4, .out_dtype = precision::int16, .M = 33, .K = 512, .N = 64}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::int4, .out_dtype = precision::int16, .M = 32, .K = 512, .N = 64}>();
#endif
