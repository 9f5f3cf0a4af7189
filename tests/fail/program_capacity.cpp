// A program that does not fit its storage is refused, not truncated.
// EXPECT: regcmd rule program-capacity:
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;
using namespace regcmd::reg;

inline constexpr GLOBAL_OPERATION_ENABLE blocks{.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1};

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = checked_program<4, 1, [](program_writer& w) {
  w.begin_task();
  w.put(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
  w.end_task(blocks, dpu_done_interrupts);
}>();
#else
inline constexpr auto program = checked_program<16, 1, [](program_writer& w) {
  w.begin_task();
  w.put(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
  w.end_task(blocks, dpu_done_interrupts);
}>();
#endif
