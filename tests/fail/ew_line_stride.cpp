// The DPU_RDMA cannot read a strided view of the input.
// EXPECT: regcmd rule ew-line-stride:
#include <regcmd/programs/sdp/elementwise.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<ew_spec{.op = ew_op::add, .M = 8, .N = 16, .input_pitch = 64}>();
#else
inline constexpr auto program = fixed<ew_spec{.op = ew_op::add, .M = 8, .N = 16}>();
#endif
