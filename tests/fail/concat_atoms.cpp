// A concatenation whose first part ends inside a 16-byte atom (12 fp16 channels).
// EXPECT: regcmd rule concat-atoms:
#include <regcmd/programs/graph/graph.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t first = 12;
#else
inline constexpr std::uint32_t first = 16;
#endif
inline constexpr conv_spec part{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 4, .W = 4, .C = 16, .out_channels = first};
inline constexpr auto program = fixed<make_graph(graph_conv("a", "x", "k1", part), graph_conv("b", "x", "k2", part),
                                                 graph_concat("y", "a", "b", {.pixels = 16, .channels_a = first, .channels_b = first}))>();
