// No source gives RK3576's CBUF or limits: no program is built for it.
// EXPECT: regcmd rule soc-value-unknown:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
using chip = soc::rk3576;
#else
using chip = soc::rk3588;
#endif
inline constexpr auto program = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64}, chip>();
