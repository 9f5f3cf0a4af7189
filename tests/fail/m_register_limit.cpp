// FEATURE_GRAINS = min(M + 1, R) must fit its 10 bits.
// EXPECT: regcmd rule m-register-limit:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 1023, .K = 32, .N = 64}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 1022, .K = 32, .N = 64}>();
#endif
