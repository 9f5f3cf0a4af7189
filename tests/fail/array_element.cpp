// A register array has the elements mainline numbers, no more: CNA_CVT_CON1..4.
// EXPECT: regcmd rule array-element:
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;
using namespace regcmd::reg;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr unsigned number = 5;
#else
inline constexpr unsigned number = 4;
#endif

inline constexpr auto program = checked_program<16, 1, [](program_writer& w) {
  w.begin_task();
  w.put(CNA_CVT_CON{.CVT_SCALE = 1}, number);
  w.end_task(GLOBAL_OPERATION_ENABLE{.DPU_OP_EN = 1}, dpu_done_interrupts);
}>();
