// A K-split slice above 2048 is refused: slices are summed on the host, at most 2048 each.
// EXPECT: regcmd rule k-slice-max:
#include <regcmd/programs/matmul/plan.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr plan_options options{.k_slice = 4096};
#else
inline constexpr plan_options options{.k_slice = 2048};
#endif
inline constexpr auto plan = fixed<plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 16384, .N = 64}, options}>();
