// Two fields of one register must not share a bit.
// EXPECT: two fields of this register overlap
#include <regcmd/core/layout.hpp>

namespace example {
using namespace regcmd;
#ifdef REGCMD_COMPILE_FAIL
REGCMD_REGISTER(cna, CNA_EXAMPLE, 0x1ff0, (LOW, uint_field<7, 0>), (HIGH, uint_field<15, 7>));
#else
REGCMD_REGISTER(cna, CNA_EXAMPLE, 0x1ff0, (LOW, uint_field<7, 0>), (HIGH, uint_field<15, 8>));
#endif
}  // namespace example
