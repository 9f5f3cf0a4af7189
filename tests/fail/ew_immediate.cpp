// A register-immediate operand is known for the fp16 ALU ops only, not for mul.
// EXPECT: regcmd rule ew-immediate:
#include <regcmd/programs/sdp/elementwise.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program =
    fixed<ew_spec{.op = ew_op::mul, .M = 8, .N = 16, .operand = ew_operand::immediate, .immediate = 2.0f}>();
#else
inline constexpr auto program =
    fixed<ew_spec{.op = ew_op::add, .M = 8, .N = 16, .operand = ew_operand::immediate, .immediate = 2.0f}>();
#endif
