// fp16 at K = 128 is correct only up to M = 256.
// EXPECT: regcmd rule fp16-k128-cap:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 320, .K = 128, .N = 64}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 256, .K = 128, .N = 64}>();
#endif
