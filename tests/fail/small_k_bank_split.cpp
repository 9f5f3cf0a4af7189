// A bank split below K = 96 (fp16) makes the MACs emit zeros.
// EXPECT: regcmd rule small-k-bank-split:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 512, .K = 64, .N = 64, .sched = schedule::bank_split}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 256, .K = 64, .N = 64, .sched = schedule::template_split}>();
#endif
