// A 3 x 3 window padded by 3 on top: as wide as the kernel, outputs of padding alone.
// EXPECT: regcmd rule pool-padding:
#include <regcmd/programs/pooling/pooling.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t top = 3;
#else
inline constexpr std::uint32_t top = 2;
#endif
inline constexpr auto program = fixed<pool_spec{.H = 9, .W = 9, .C = 8, .kernel_h = 3, .kernel_w = 3,
                                               .padding = conv_padding::explicit_sides, .pad = {top, 0, 0, 0}}>();
