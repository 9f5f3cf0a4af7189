// A SiLU over 4 x 80 of a matmul's 4 x 96 fp16 output: not the tensor the matmul wrote.
// EXPECT: regcmd rule graph-tensor-format:
#include <regcmd/programs/graph/graph.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t N = 80;
#else
inline constexpr std::uint32_t N = 96;
#endif
inline constexpr auto program =
    fixed<make_graph(graph_matmul("c", "x", "w", {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 96}),
                     graph_act("y", "c", {.fn = activation::silu, .M = 4, .N = N}))>();
