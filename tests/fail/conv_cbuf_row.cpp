// Three input rows of 2047 pixels x 512 channels do not fit 11 data banks.
// EXPECT: regcmd rule conv-cbuf-row:
#include <regcmd/programs/conv/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t width = 2047;
#else
inline constexpr std::uint32_t width = 16;
#endif
inline constexpr auto program = fixed<conv_spec{.dtype = conv_data::int8, .H = 8, .W = width, .C = 512, .out_channels = 16, .kernel_h = 3, .kernel_w = 3, .input = {0.1f, 0}, .weights = {0.1f, 0}, .output = {0.1f, 0}}>();
