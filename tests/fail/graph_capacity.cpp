// Seventeen ops in one graph: a graph holds 1 to 16.
// EXPECT: regcmd rule graph-capacity:
#include <regcmd/programs/graph/graph.hpp>

using namespace regcmd;

inline constexpr graph_op relu = graph_act("y", "x", act_spec{.fn = activation::relu, .M = 4, .N = 16});
#ifdef REGCMD_COMPILE_FAIL
inline constexpr graph_spec spec = make_graph(relu, relu, relu, relu, relu, relu, relu, relu, relu, relu, relu, relu,
                                              relu, relu, relu, relu, relu);
#else
inline constexpr graph_spec spec = make_graph(relu, relu, relu, relu, relu, relu, relu, relu, relu, relu, relu, relu,
                                              relu, relu, relu, relu);
#endif
