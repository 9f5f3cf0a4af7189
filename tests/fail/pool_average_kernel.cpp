// An average over 1 x 2 windows: fp16(2^16 / 1) does not exist for the height's reciprocal.
// EXPECT: regcmd rule pool-average-kernel:
#include <regcmd/programs/pooling/pooling.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t height = 1;
#else
inline constexpr std::uint32_t height = 2;
#endif
inline constexpr auto program = fixed<pool_spec{.op = pool_op::average, .H = 4, .W = 4, .C = 8, .kernel_h = height, .kernel_w = 2}>();
