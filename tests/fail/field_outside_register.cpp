// A field must lie inside the 32-bit register value.
// EXPECT: a field must lie inside the 32-bit register value
#include <regcmd/core/layout.hpp>

namespace example {
using namespace regcmd;
#ifdef REGCMD_COMPILE_FAIL
REGCMD_REGISTER(cna, CNA_EXAMPLE, 0x1ff0, (VALUE, uint_field<32, 1>));
#else
REGCMD_REGISTER(cna, CNA_EXAMPLE, 0x1ff0, (VALUE, uint_field<31, 1>));
#endif
}  // namespace example
