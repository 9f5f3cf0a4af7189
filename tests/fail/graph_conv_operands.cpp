// A conv that adds a residual must name the residual tensor.
// EXPECT: regcmd rule graph-conv-operands:
#include <regcmd/programs/graph/graph.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr graph_name residual{};
#else
inline constexpr graph_name residual{"r"};
#endif
inline constexpr auto program = fixed<make_graph(graph_conv(
    "y", "x", "k",
    {.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 8, .W = 8, .C = 16, .out_channels = 16, .residual_add = true},
    residual))>();
