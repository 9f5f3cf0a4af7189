// A register offset must be 4-byte aligned.
// EXPECT: a register offset must be 4-byte aligned
#include <regcmd/core/layout.hpp>

namespace example {
using namespace regcmd;
#ifdef REGCMD_COMPILE_FAIL
REGCMD_REGISTER(cna, CNA_EXAMPLE, 0x1042, (VALUE, uint_field<31, 0>));
#else
REGCMD_REGISTER(cna, CNA_EXAMPLE, 0x1ff0, (VALUE, uint_field<31, 0>));
#endif
}  // namespace example
