// Global pooling of a 20 x 20 image: its kernel exceeds POOLING_KERNEL_CFG's 4-bit 16.
// EXPECT: regcmd rule pool-kernel:
#include <regcmd/programs/pooling/pooling.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t side = 20;
#else
inline constexpr std::uint32_t side = 16;
#endif
inline constexpr auto program = fixed<pool_spec{.op = pool_op::global_average, .H = side, .W = side, .C = 8}>();
