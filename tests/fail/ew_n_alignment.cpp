// Without padding, N must fill whole 16-byte atoms (8 fp16 channels).
// EXPECT: regcmd rule ew-n-alignment:
#include <regcmd/programs/sdp/elementwise.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<ew_spec{.op = ew_op::max, .M = 8, .N = 12, .tile_pad = tile_padding::none}>();
#else
inline constexpr auto program = fixed<ew_spec{.op = ew_op::max, .M = 8, .N = 16, .tile_pad = tile_padding::none}>();
#endif
