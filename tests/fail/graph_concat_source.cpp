// A concatenation of a graph input: no op writes it in place.
// EXPECT: regcmd rule graph-concat-source:
#include <regcmd/programs/graph/graph.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr graph_name second{"x"};
#else
inline constexpr graph_name second{"b"};
#endif
inline constexpr conv_spec part{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 4, .W = 4, .C = 16, .out_channels = 16};
inline constexpr auto program = fixed<make_graph(graph_conv("a", "x", "k1", part), graph_conv("b", "x", "k2", part),
                                                 graph_concat("y", "a", second, {.pixels = 16, .channels_a = 16, .channels_b = 16}))>();
