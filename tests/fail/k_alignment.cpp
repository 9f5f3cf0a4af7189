// With tile_padding::none, K must be a multiple of 32.
// EXPECT: regcmd rule k-alignment:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 40, .N = 64, .tile_pad = tile_padding::none}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 64, .N = 64, .tile_pad = tile_padding::none}>();
#endif
