// K = 10784 wedges the submit; 10752 is the raw cap.
// EXPECT: regcmd rule k-single-op-max:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 10784, .N = 64}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 10752, .N = 64}>();
#endif
