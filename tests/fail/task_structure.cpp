// A task must be begun before it is ended.
// EXPECT: regcmd rule task-structure:
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;
using namespace regcmd::reg;

inline constexpr GLOBAL_OPERATION_ENABLE blocks{.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1};

inline constexpr auto program = checked_program<16, 1, [](program_writer& w) {
#ifndef REGCMD_COMPILE_FAIL
  w.begin_task();
#endif
  w.end_task(blocks, dpu_done_interrupts);
}>();
