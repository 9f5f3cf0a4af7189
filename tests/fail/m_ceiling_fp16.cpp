// fp16 K = 512 with the bank split holds 352 rows (11 banks).
// EXPECT: regcmd rule m-ceiling-fp16:
// The first thing the compiler says after the includes: the rule and the offending M.
// EXPECT: In instantiation of [^s]*struct regcmd::broken_rule<\(& regcmd::rules::m_ceiling_fp16\), 353, void>
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 353, .K = 512, .N = 64}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 352, .K = 512, .N = 64}>();
#endif
