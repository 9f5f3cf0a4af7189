// The output pitch must hold a whole row (64 fp32 = 256 bytes).
// EXPECT: regcmd rule output-pitch:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64, .output_pitch = 128}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64, .output_pitch = 512}>();
#endif
