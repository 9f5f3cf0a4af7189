// K = 16384 needs K slices; their sum on the device is fp16 SDP adds, so not a fp32 output.
// EXPECT: regcmd rule graph-k-split:
#include <regcmd/programs/graph/graph.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr precision out = precision::fp32;
#else
inline constexpr precision out = precision::fp16;
#endif
inline constexpr auto program =
    fixed<make_graph(graph_matmul("y", "x", "w", {.dtype = precision::fp16, .out_dtype = out, .M = 1, .K = 16384, .N = 64}))>();
