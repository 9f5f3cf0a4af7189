// A matmul whose weights are another op's result: the CNA reads weights from the weight buffer.
// EXPECT: regcmd rule graph-weight-source:
#include <regcmd/programs/graph/graph.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr graph_name weights = "s";
#else
inline constexpr graph_name weights = "w";
#endif
inline constexpr auto program =
    fixed<make_graph(graph_act("s", "a", {.fn = activation::relu, .M = 4, .N = 64}),
                     graph_matmul("y", "x", weights, {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 16}))>();
