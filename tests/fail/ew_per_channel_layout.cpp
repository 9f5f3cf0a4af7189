// A per-channel vector needs the surface layout.
// EXPECT: regcmd rule ew-per-channel-layout:
#include <regcmd/programs/sdp/elementwise.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program =
    fixed<ew_spec{.op = ew_op::mul, .M = 8, .N = 16, .operand = ew_operand::per_channel, .layout = operand_layout::row_major}>();
#else
inline constexpr auto program =
    fixed<ew_spec{.op = ew_op::mul, .M = 8, .N = 16, .operand = ew_operand::per_channel, .layout = operand_layout::surface}>();
#endif
