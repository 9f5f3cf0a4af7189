// A row maximum over padding that no mask hides.
// EXPECT: regcmd rule reduce-shape:
#include <regcmd/programs/norm/reduce.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr bool masked = false;
#else
inline constexpr bool masked = true;
#endif
inline constexpr auto program = fixed<row_reduce({.op = row_reduce_op::max, .M = 2, .N = 64, .count = 40, .mask = masked})>();
