// Attention whose query heads do not share key/value heads evenly.
// EXPECT: regcmd rule attention-shape:
#include <regcmd/programs/llm/attention.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t kv_heads = 3;
#else
inline constexpr std::uint32_t kv_heads = 2;
#endif
inline constexpr auto program = fixed<attention({.M = 1, .heads = 4, .kv_heads = kv_heads, .head_dim = 32, .context = 32})>();
