// A matmul without its weights' name.
// EXPECT: regcmd rule graph-operands:
#include <regcmd/programs/graph/graph.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr graph_name weights = "";
#else
inline constexpr graph_name weights = "w";
#endif
inline constexpr auto program =
    fixed<make_graph(graph_matmul("y", "x", weights, {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 32}))>();
