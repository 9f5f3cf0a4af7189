// A softmax over rows its pooling cannot take to 32 partial maxima in two passes.
// EXPECT: regcmd rule softmax-shape:
#include <regcmd/programs/norm/softmax.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t row = 544;  // 17 windows of 32
#else
inline constexpr std::uint32_t row = 576;
#endif
inline constexpr auto program = fixed<softmax({.M = 1, .N = row})>();
