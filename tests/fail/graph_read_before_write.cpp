// The activation reads "t" before the op that writes it has run.
// EXPECT: regcmd rule graph-read-before-write:
#include <regcmd/programs/graph/graph.hpp>

using namespace regcmd;

inline constexpr act_spec relu{.fn = activation::relu, .M = 4, .N = 16};
inline constexpr graph_op first = graph_act("t", "x", relu);
inline constexpr graph_op second = graph_act("y", "t", relu);
#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<make_graph(second, first)>();
#else
inline constexpr auto program = fixed<make_graph(first, second)>();
#endif
