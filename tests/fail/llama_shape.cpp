// A decoder layer whose dimension does not split over its heads.
// EXPECT: regcmd rule llama-shape:
#include <regcmd/programs/llm/decoder_layer.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t heads = 3;
#else
inline constexpr std::uint32_t heads = 2;
#endif
inline constexpr auto program = fixed<llama_layer_inputs({.M = 1, .dim = 64, .heads = heads, .kv_heads = 1, .ffn = 64,
                                                          .context = 32, .vocab = 64})>();
