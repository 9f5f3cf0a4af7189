// A fused ReLU on an int8 matmul: its int32 accumulator is the only output that completes.
// EXPECT: regcmd rule matmul-activation-precision:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 4, .K = 64,
                                                   .N = 64, .activation = output_activation::relu}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64,
                                                   .N = 64, .activation = output_activation::relu}>();
#endif
