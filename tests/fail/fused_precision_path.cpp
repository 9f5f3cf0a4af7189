// A chained 2-input SDP reads what the matmul wrote, and computes fp16: the matmul writes fp16.
// EXPECT: regcmd rule fused-precision-path:
#include <regcmd/programs/graph/fused.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program =
    fixed<fused_spec{.matmul = {.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 32}}>();
#else
inline constexpr auto program =
    fixed<fused_spec{.matmul = {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 32}}>();
#endif
