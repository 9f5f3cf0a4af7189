// Row pitches apply to the row-major layout only.
// EXPECT: regcmd rule pitch-row-major:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64, .layout = operand_layout::surface, .feature_pitch = 256}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64, .feature_pitch = 256}>();
#endif
