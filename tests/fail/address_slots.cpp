// An address register holds an IOVA patched at bind time, never a literal.
// EXPECT: regcmd rule address-slots:
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;
using namespace regcmd::reg;

inline constexpr GLOBAL_OPERATION_ENABLE blocks{.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1};

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = checked_program<16, 1, [](program_writer& w) {
  w.begin_task();
  w.put(CNA_FEATURE_DATA_ADDR{.FEATURE_BASE_ADDR = 0x10000000});
  w.end_task(blocks, dpu_done_interrupts);
}>();
#else
inline constexpr auto program = checked_program<16, 1, [](program_writer& w) {
  w.begin_task();
  w.put_slot<CNA_FEATURE_DATA_ADDR>(operand_role::feature, 0, 64);
  w.end_task(blocks, dpu_done_interrupts);
}>();
#endif
