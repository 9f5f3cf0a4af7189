// RK3588 has symmetric MAC modes only: fp16 features with int8 weights are refused.
// EXPECT: regcmd rule precision-symmetric:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = {precision::fp16, precision::int8}, .out_dtype = precision::fp32, .M = 1, .K = 64, .N = 64}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 64, .N = 64}>();
#endif
