// A graph that reads back one of its inputs.
// EXPECT: regcmd rule graph-read-back:
#include <regcmd/programs/graph/blocks.hpp>
#include <regcmd/programs/graph/graph.hpp>

using namespace regcmd;

constexpr graph_spec ffn_reading_back(graph_name tensor) {
  graph_spec g = llama_ffn(1, 64, 96);
  g.read_back[0] = tensor;
  return g;
}
#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<ffn_reading_back("x")>();
#else
inline constexpr auto program = fixed<ffn_reading_back("gate")>();
#endif
