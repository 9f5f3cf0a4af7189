// Two ops write "y".
// EXPECT: regcmd rule graph-written-twice:
#include <regcmd/programs/graph/graph.hpp>

using namespace regcmd;

inline constexpr act_spec relu{.fn = activation::relu, .M = 4, .N = 16};
#ifdef REGCMD_COMPILE_FAIL
inline constexpr graph_name second = "y";
#else
inline constexpr graph_name second = "z";
#endif
inline constexpr auto program = fixed<make_graph(graph_act("y", "x", relu), graph_act(second, "x", relu))>();
