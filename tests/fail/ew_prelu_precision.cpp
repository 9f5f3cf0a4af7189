// PReLU on int8: its slopes are fractions, which an integer EW multiplier cannot hold.
// EXPECT: regcmd rule ew-prelu-precision:
#include <regcmd/programs/sdp/elementwise.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr precision dtype = precision::int8;
#else
inline constexpr precision dtype = precision::fp16;
#endif
inline constexpr auto program = fixed<ew_spec{.op = ew_op::prelu, .dtype = dtype, .M = 8, .N = 32, .operand = ew_operand::per_channel}>();
