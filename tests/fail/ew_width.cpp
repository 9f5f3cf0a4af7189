// One surface-layout SDP task takes at most 8192 rows (DATA_CUBE_WIDTH, 13 bits).
// EXPECT: regcmd rule ew-width:
#include <regcmd/programs/sdp/elementwise.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<ew_spec{.op = ew_op::add, .M = 8193, .N = 8}>();
#else
inline constexpr auto program = fixed<ew_spec{.op = ew_op::add, .M = 8192, .N = 8}>();
#endif
