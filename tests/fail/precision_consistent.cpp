// CNA and DPU must agree on the input precision.
// EXPECT: regcmd rule precision-consistent:
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;
using namespace regcmd::reg;

inline constexpr GLOBAL_OPERATION_ENABLE blocks{.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1};

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = checked_program<16, 1, [](program_writer& w) {
  w.begin_task();
  w.put(CNA_CONV_CON1{.IN_PRECISION = precision::fp16, .PROC_PRECISION = precision::fp16}); w.put(DPU_DATA_FORMAT::zeroed());  // int8 throughout
  w.end_task(blocks, dpu_done_interrupts);
}>();
#else
inline constexpr auto program = checked_program<16, 1, [](program_writer& w) {
  w.begin_task();
  w.put(CNA_CONV_CON1{.IN_PRECISION = precision::fp16, .PROC_PRECISION = precision::fp16}); w.put(DPU_DATA_FORMAT{.PROC_PRECISION = precision::fp16, .IN_PRECISION = precision::fp16, .OUT_PRECISION = precision::fp32});
  w.end_task(blocks, dpu_done_interrupts);
}>();
#endif
