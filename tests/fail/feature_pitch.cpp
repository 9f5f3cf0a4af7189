// LINE_STRIDE counts 16-byte units: a pitch of 100 bytes cannot be expressed.
// EXPECT: regcmd rule feature-pitch:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64, .feature_pitch = 100}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64, .feature_pitch = 256}>();
#endif
