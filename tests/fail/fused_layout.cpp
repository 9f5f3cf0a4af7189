// A fp16 matmul writes row-major only, so a fused chain's matmul is row-major.
// EXPECT: regcmd rule fused-layout:
#include <regcmd/programs/graph/fused.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<fused_spec{
    .matmul = {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 32, .layout = operand_layout::surface}}>();
#else
inline constexpr auto program = fixed<fused_spec{
    .matmul = {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 32, .layout = operand_layout::row_major}}>();
#endif
