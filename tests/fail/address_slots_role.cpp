// An address register's slot names the operand that register's DMA moves: the DPU writes its
// output through DPU_DST_BASE_ADDR, so a feature slot there would make the NPU write into
// the buffer it reads.
// EXPECT: regcmd rule address-slots:
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;
using namespace regcmd::reg;

inline constexpr GLOBAL_OPERATION_ENABLE blocks{.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1};

#ifdef REGCMD_COMPILE_FAIL
inline constexpr operand_role role = operand_role::feature;
#else
inline constexpr operand_role role = operand_role::output;
#endif
inline constexpr auto program = checked_program<16, 1, [](program_writer& w) {
  w.begin_task();
  w.put_slot<DPU_DST_BASE_ADDR>(role, 0, 64);
  w.end_task(blocks, dpu_done_interrupts);
}>();
