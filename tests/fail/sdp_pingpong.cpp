// A program with an SDP task runs with ping-pong off.
// EXPECT: regcmd rule sdp-pingpong:
#include <regcmd/programs/sdp/elementwise.hpp>

using namespace regcmd;

inline constexpr ew_geometry g = resolve_ew({.op = ew_op::add, .M = 8, .N = 16}).value();
#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = checked_program<64, 1, [](program_writer& w) { sdp::emit(w, g); }, true>();
#else
inline constexpr auto program = checked_program<64, 1, [](program_writer& w) { sdp::emit(w, g); }, false>();
#endif
