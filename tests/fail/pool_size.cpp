// A row of 8193 pixels: beyond the PPU's 13-bit cube width.
// EXPECT: regcmd rule pool-size:
#include <regcmd/programs/pooling/pooling.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t width = 8193;
#else
inline constexpr std::uint32_t width = 4096;
#endif
inline constexpr auto program = fixed<pool_spec{.H = 2, .W = width, .C = 8}>();
