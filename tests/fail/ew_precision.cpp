// The SDP's main read DMA does not take int32 features.
// EXPECT: regcmd rule ew-precision:
#include <regcmd/programs/sdp/elementwise.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<ew_spec{.op = ew_op::add, .dtype = precision::int32, .M = 8, .N = 16}>();
#else
inline constexpr auto program = fixed<ew_spec{.op = ew_op::add, .dtype = precision::int16, .M = 8, .N = 16}>();
#endif
