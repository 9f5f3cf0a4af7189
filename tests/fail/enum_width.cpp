// Every enumerator of a field's enum must fit the field: alu_algo goes up to CEIL = 8.
// EXPECT: an enumerator of this enum does not fit the field it is declared for
#include <regcmd/core/layout.hpp>
#include <regcmd/registers/enums.hpp>

namespace example {
using namespace regcmd;
using regcmd::reg::alu_algo;
#ifdef REGCMD_COMPILE_FAIL
REGCMD_REGISTER(dpu, DPU_EXAMPLE, 0x4ff0, (ALGO, enum_field<alu_algo, 2, 0>));
#else
REGCMD_REGISTER(dpu, DPU_EXAMPLE, 0x4ff0, (ALGO, enum_field<alu_algo, 3, 0>));
#endif
}  // namespace example
