// A feature view of 4 rows at a 1.5 GiB pitch ends past 4 GiB: no 32-bit address reaches it.
// EXPECT: regcmd rule operand-size:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64, .feature_pitch = 0x6000'0000}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64, .feature_pitch = 0x4000'0000}>();
#endif
