// fp16 inputs cannot produce an int32 output.
// EXPECT: regcmd rule precision-pair:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::int32, .M = 1, .K = 64, .N = 64}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 64, .N = 64}>();
#endif
