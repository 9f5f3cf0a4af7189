// No source gives an int4 surface layout.
// EXPECT: regcmd rule int4-surface:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::int4, .out_dtype = precision::int16, .M = 4, .K = 64, .N = 64, .layout = operand_layout::surface}>();
#else
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::int4, .out_dtype = precision::int16, .M = 4, .K = 64, .N = 64}>();
#endif
