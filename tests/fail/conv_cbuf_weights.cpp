// 32 kernels of 3x3x4096 int8 (1179648 bytes) do not fit the CBUF.
// EXPECT: regcmd rule conv-cbuf-weights:
#include <regcmd/programs/conv/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t channels = 4096;
#else
inline constexpr std::uint32_t channels = 64;
#endif
inline constexpr auto program = fixed<conv_spec{.dtype = conv_data::int8, .H = 8, .W = 8, .C = channels, .out_channels = 32, .kernel_h = 3, .kernel_w = 3, .input = {0.1f, 0}, .weights = {0.1f, 0}, .output = {0.1f, 0}}>();
