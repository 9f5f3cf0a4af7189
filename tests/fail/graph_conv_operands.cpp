// A conv with a bias in a graph: its bias packs with its weights, not yet a graph tensor.
// EXPECT: regcmd rule graph-conv-operands:
#include <regcmd/programs/graph.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr bool bias = true;
#else
inline constexpr bool bias = false;
#endif
inline constexpr auto program = graph<make_graph(graph_conv(
    "y", "x", "k", {.in = conv_data::int8, .out = precision::int8, .H = 8, .W = 8, .C = 16, .out_channels = 32, .bias = bias}))>();
