// A register must lie in its block's window: 0x4040 is DPU's, not CNA's (0x1000-0x1fff).
// EXPECT: a register offset must lie in its block's 4 KiB window
#include <regcmd/core/layout.hpp>

namespace example {
using namespace regcmd;
#ifdef REGCMD_COMPILE_FAIL
REGCMD_REGISTER(cna, CNA_EXAMPLE, 0x4040, (VALUE, uint_field<31, 0>));
#else
REGCMD_REGISTER(dpu, DPU_EXAMPLE, 0x4ff0, (VALUE, uint_field<31, 0>));
#endif
}  // namespace example
