// A fused ReLU on a plan that splits K: it would clamp each partial sum, not their total.
// EXPECT: regcmd rule plan-activation-k-split:
#include <regcmd/programs/matmul/plan.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t K = 16384;
#else
inline constexpr std::uint32_t K = 4096;
#endif
inline constexpr auto plan = fixed<plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = K,
                                                     .N = 64, .activation = output_activation::relu}}>();
