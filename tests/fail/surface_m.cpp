// Implementation A's surface layout takes M = 1 or a multiple of 4.
// EXPECT: regcmd rule surface-m:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 6, .K = 64, .N = 64, .layout = operand_layout::surface}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 8, .K = 64, .N = 64, .layout = operand_layout::surface}>();
#endif
