// An RMSNorm over rows longer than its sums' weights reach.
// EXPECT: regcmd rule norm-shape:
#include <regcmd/programs/norm/rms_norm.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t row = 16385;
#else
inline constexpr std::uint32_t row = 4096;
#endif
inline constexpr auto program = fixed<rms_norm({.M = 1, .D = row})>();
