// A rotary embedding of heads of an odd dimension.
// EXPECT: regcmd rule rope-shape:
#include <regcmd/programs/norm/rope.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t dimension = 31;
#else
inline constexpr std::uint32_t dimension = 32;
#endif
inline constexpr auto program = fixed<rope({.M = 1, .heads = 2, .head_dim = dimension})>();
