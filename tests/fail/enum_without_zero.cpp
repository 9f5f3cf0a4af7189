// An enum field's enum must declare 0: a field not named in a write encodes as 0.
// EXPECT: an enum field's type must declare the value 0
#include <regcmd/core/layout.hpp>

namespace example {
using namespace regcmd;
#ifdef REGCMD_COMPILE_FAIL
REGCMD_ENUM(mode, (first, 1), (second, 2))
#else
REGCMD_ENUM(mode, (none, 0), (first, 1), (second, 2))
#endif
REGCMD_REGISTER(dpu, DPU_EXAMPLE, 0x4ff0, (MODE, enum_field<mode, 1, 0>));
}  // namespace example
