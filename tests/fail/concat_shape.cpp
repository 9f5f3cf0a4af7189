// A concatenation of a part without channels.
// EXPECT: regcmd rule concat-shape:
#include <regcmd/programs/graph/graph.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t second = 0;
#else
inline constexpr std::uint32_t second = 16;
#endif
inline constexpr conv_spec part{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 4, .W = 4, .C = 16, .out_channels = 16};
inline constexpr auto program = fixed<make_graph(graph_conv("a", "x", "k1", part), graph_conv("b", "x", "k2", part),
                                                 graph_concat("y", "a", "b", {.pixels = 16, .channels_a = 16, .channels_b = second}))>();
