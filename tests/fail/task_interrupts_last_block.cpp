// A task completes on the interrupt pair of the last block it enables: a matmul task ends in
// the DPU, so waiting for the PPU's pair (0xc00) would wait for an interrupt that never comes.
// EXPECT: regcmd rule task-interrupts:
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;
using namespace regcmd::reg;

inline constexpr GLOBAL_OPERATION_ENABLE blocks{.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1};

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t completion = 0xc00;  // PPU_0 | PPU_1
#else
inline constexpr std::uint32_t completion = dpu_done_interrupts;
#endif
inline constexpr auto program = checked_program<16, 1, [](program_writer& w) {
  w.begin_task();
  w.put(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
  w.end_task(blocks, completion);
}>();
