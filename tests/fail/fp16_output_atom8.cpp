// The atom-8 write-out (BS_OW_CFG 0x2) of a fp16 matmul hangs the CNA->DPU path.
// EXPECT: regcmd rule fp16-output-atom8:
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;
using namespace regcmd::reg;

inline constexpr GLOBAL_OPERATION_ENABLE blocks{.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1};

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto program = checked_program<16, 1, [](program_writer& w) {
  w.begin_task();
  w.put(CNA_CONV_CON1{.IN_PRECISION = precision::fp16, .PROC_PRECISION = precision::fp16}); w.put(DPU_DATA_FORMAT{.PROC_PRECISION = precision::fp16, .IN_PRECISION = precision::fp16, .OUT_PRECISION = precision::fp16}); w.put(DPU_BS_CFG{.BS_BYPASS = 1, .BS_ALU_BYPASS = 1, .BS_MUL_BYPASS = 1, .BS_RELU_BYPASS = 1}); w.put(DPU_BS_OW_CFG{.OD_BYPASS = 1}); w.put(DPU_OUT_CVT_SCALE{.OUT_CVT_SCALE = 1, .FP32TOFP16_EN = 1});
  w.end_task(blocks, dpu_done_interrupts);
}>();
#else
inline constexpr auto program = checked_program<16, 1, [](program_writer& w) {
  w.begin_task();
  w.put(CNA_CONV_CON1{.IN_PRECISION = precision::fp16, .PROC_PRECISION = precision::fp16}); w.put(DPU_DATA_FORMAT{.PROC_PRECISION = precision::fp16, .IN_PRECISION = precision::fp16, .OUT_PRECISION = precision::fp16}); w.put(DPU_BS_CFG{.BS_BYPASS = 1, .BS_ALU_BYPASS = 1, .BS_MUL_BYPASS = 1, .BS_RELU_BYPASS = 1}); w.put(DPU_BS_OW_CFG{.OD_BYPASS = 1, .SIZE_E_0 = 1, .SIZE_E_1 = 1, .SIZE_E_2 = 1}); w.put(DPU_OUT_CVT_SCALE{.OUT_CVT_SCALE = 1, .FP32TOFP16_EN = 1});
  w.end_task(blocks, dpu_done_interrupts);
}>();
#endif
