// With tile_padding::none, fp16 N must be a multiple of 16.
// EXPECT: regcmd rule n-alignment:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 64, .N = 40, .tile_pad = tile_padding::none}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 64, .N = 48, .tile_pad = tile_padding::none}>();
#endif
