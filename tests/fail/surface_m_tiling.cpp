// An M tile of a surface tensor is not contiguous: M = 1100 needs M tiles (10-bit FEATURE_GRAINS).
// EXPECT: regcmd rule surface-m-tiling:
#include <regcmd/programs/matmul/plan.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr operand_layout layout = operand_layout::surface;
#else
inline constexpr operand_layout layout = operand_layout::row_major;
#endif
inline constexpr auto plan = fixed<plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1100, .K = 64, .N = 64, .layout = layout}}>();
