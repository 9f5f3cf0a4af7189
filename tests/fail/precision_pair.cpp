// fp16 inputs cannot produce an int32 output.
// EXPECT: regcmd rule precision-pair:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.in = precision::fp16, .out = precision::int32, .M = 1, .K = 64, .N = 64}>();
#else
inline constexpr auto program = fixed<matmul_spec{.in = precision::fp16, .out = precision::fp32, .M = 1, .K = 64, .N = 64}>();
#endif
