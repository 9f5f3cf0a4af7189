// The kernel only completes a task whose interrupt mask is pair-complete.
// EXPECT: regcmd rule task-interrupts:
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;
using namespace regcmd::reg;

inline constexpr GLOBAL_OPERATION_ENABLE blocks{.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1};

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = checked_program<16, 1, [](program_writer& w) {
  w.begin_task();
  w.put(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
  w.end_task(blocks, 0x100);
}>();
#else
inline constexpr auto program = checked_program<16, 1, [](program_writer& w) {
  w.begin_task();
  w.put(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
  w.end_task(blocks, dpu_done_interrupts);
}>();
#endif
