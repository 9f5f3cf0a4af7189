// The surface layout always uses A's bank split.
// EXPECT: regcmd rule surface-schedule:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64, .layout = operand_layout::surface, .sched = schedule::template_split}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64, .layout = operand_layout::surface}>();
#endif
