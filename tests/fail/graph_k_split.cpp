// K = 16384 needs K slices summed on the host: not between two ops of a graph.
// EXPECT: regcmd rule graph-k-split:
#include <regcmd/programs/graph.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t K = 16384;
#else
inline constexpr std::uint32_t K = 4096;
#endif
inline constexpr auto program =
    graph<make_graph(graph_matmul("y", "x", "w", {.in = precision::fp16, .out = precision::fp16, .M = 1, .K = K, .N = 64}))>();
