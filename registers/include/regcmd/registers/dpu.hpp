#pragma once
// DPU (output stage: BS, BN, EW, conversion, write DMA), target 0x1001, window
// 0x4000-0x4fff. The reference calls this block "PPU / core output".
// Every register and field of the mainline map (fact sheet §4, from Mesa registers.xml =
// rocket_registers.h); fields are listed lowest bit first, reserved bits are not fields.


#include <regcmd/core/layout.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/registers/enums.hpp>
#include <regcmd/registers/control.hpp>

namespace regcmd::reg {

// OUTPUT_MODE bit 1 = write to memory; matmul 0x1e4 (both recipes).
REGCMD_REGISTER(dpu, DPU_FEATURE_MODE_CFG, 0x400c, (FLYING_MODE, bool_field<0>), (OUTPUT_MODE, uint_field<2, 1>),
                (CONV_MODE, enum_field<conv_mode, 4, 3>), (BURST_LEN, uint_field<8, 5>),
                (SURF_LEN, uint_field<24, 9>), (NONALIGN, bool_field<25>), (RGP_TYPE, uint_field<29, 26>),
                (TP_EN, bool_field<30>), (COMB_USE, bool_field<31>));

// OUT_PRECISION[31:29] / IN_PRECISION[28:26] / PROC_PRECISION[2:0]: the precision
// enum. 0xa8000002 fp16->fp32, 0x48000002 fp16->fp16, 0x80000000 int8->int32,
// 0x38000006 int4->int16 (reference "The precision enum", "DPU output stages").
REGCMD_REGISTER(dpu, DPU_DATA_FORMAT, 0x4010, (PROC_PRECISION, enum_field<precision, 2, 0>),
                (MC_SURF_OUT, bool_field<3>), (BS_MUL_SHIFT_VALUE_NEG, uint_field<9, 4>),
                (BN_MUL_SHIFT_VALUE_NEG, uint_field<15, 10>), (EW_TRUNCATE_NEG, uint_field<25, 16>),
                (IN_PRECISION, enum_field<precision, 28, 26>), (OUT_PRECISION, enum_field<precision, 31, 29>));

REGCMD_REGISTER(dpu, DPU_OFFSET_PEND, 0x4014, (OFFSET_PEND, uint_field<15, 0>));

// Output (C) IOVA: an address slot of every matmul program.
REGCMD_REGISTER(dpu, DPU_DST_BASE_ADDR, 0x4020, (DST_BASE_ADDR, address_field<31, 0>));

// DST_SURF_STRIDE is the output surface stride in 16-byte units.
REGCMD_REGISTER(dpu, DPU_DST_SURF_STRIDE, 0x4024, (DST_SURF_STRIDE, uint_field<31, 4>));

REGCMD_REGISTER(dpu, DPU_DATA_CUBE_WIDTH, 0x4030, (WIDTH, uint_field<12, 0>));

REGCMD_REGISTER(dpu, DPU_DATA_CUBE_HEIGHT, 0x4034, (HEIGHT, uint_field<12, 0>), (MINMAX_CTL, uint_field<24, 22>));

REGCMD_REGISTER(dpu, DPU_DATA_CUBE_NOTCH_ADDR, 0x4038, (NOTCH_ADDR_0, uint_field<12, 0>),
                (NOTCH_ADDR_1, uint_field<28, 16>));

REGCMD_REGISTER(dpu, DPU_DATA_CUBE_CHANNEL, 0x403c, (CHANNEL, uint_field<12, 0>), (ORIG_CHANNEL, uint_field<28, 16>));

// The bias/scale (BS) and batch-norm (BN) stages are the same hardware twice: four registers
// with the same fields, prefixed BS_ or BN_ (fact sheet §4): DPU_<S>_CFG, DPU_<S>_ALU_CFG,
// DPU_<S>_MUL_CFG and DPU_<S>_RELUX_CMP_VALUE at 0x4040 (BS) and 0x4060 (BN). Fully bypassed
// = 0x53 (S_BYPASS | S_ALU_BYPASS | S_MUL_BYPASS | S_RELU_BYPASS, `bypass::bs` below); a
// matmul must bypass BS fully, the conv's 0x20150 hangs the fp16 matmul (reference "0x4040
// DPU_BS_CFG", "0x4060 DPU_BN_CFG", "fp16 matmul -> fp16 output stage").
#define REGCMD_DPU_ALU_MUL_STAGE(S, OFFSET)                                                                          \
  REGCMD_REGISTER(dpu, DPU_##S##_CFG, OFFSET, (S##_BYPASS, bool_field<0>), (S##_ALU_BYPASS, bool_field<1>),          \
                  (S##_MUL_BYPASS, bool_field<4>), (S##_MUL_PRELU, bool_field<5>), (S##_RELU_BYPASS, bool_field<6>), \
                  (S##_RELUX_EN, bool_field<7>), (S##_ALU_SRC, enum_field<operand_source, 8, 8>),                    \
                  (S##_ALU_ALGO, enum_field<alu_algo, 19, 16>));                                                     \
  REGCMD_REGISTER(dpu, DPU_##S##_ALU_CFG, OFFSET + 0x4, (S##_ALU_OPERAND, uint_field<31, 0>));                       \
  REGCMD_REGISTER(dpu, DPU_##S##_MUL_CFG, OFFSET + 0x8, (S##_MUL_SRC, enum_field<operand_source, 0, 0>),             \
                  (S##_TRUNCATE_SRC, bool_field<1>), (S##_MUL_SHIFT_VALUE, uint_field<13, 8>),                       \
                  (S##_MUL_OPERAND, uint_field<31, 16>));                                                            \
  REGCMD_REGISTER(dpu, DPU_##S##_RELUX_CMP_VALUE, OFFSET + 0xc, (S##_RELUX_CMP_DAT, uint_field<31, 0>))

REGCMD_DPU_ALU_MUL_STAGE(BS, 0x4040);

// SIZE_E_*: 8-channel groups per row minus one. int8->int32 matmul output needs the
// int32 pair (0x7fc or 0x7fe) (reference "int16/narrow-output MATMUL does NOT self-complete").
REGCMD_REGISTER(dpu, DPU_BS_OW_CFG, 0x4050, (OW_SRC, bool_field<0>), (OD_BYPASS, bool_field<1>),
                (SIZE_E_0, uint_field<4, 2>), (SIZE_E_1, uint_field<7, 5>), (SIZE_E_2, uint_field<10, 8>),
                (TP_ORG_EN, bool_field<27>), (RGP_CNTER, uint_field<31, 28>));

REGCMD_REGISTER(dpu, DPU_BS_OW_OP, 0x4054, (OW_OP, uint_field<15, 0>));

REGCMD_REGISTER(dpu, DPU_WDMA_SIZE_0, 0x4058, (CHANNEL_WDMA, uint_field<12, 0>), (SIZE_C_WDMA, uint_field<26, 16>),
                (TP_PRECISION, bool_field<27>));

REGCMD_REGISTER(dpu, DPU_WDMA_SIZE_1, 0x405c, (WIDTH_WDMA, uint_field<12, 0>), (HEIGHT_WDMA, uint_field<28, 16>));

REGCMD_DPU_ALU_MUL_STAGE(BN, 0x4060);

// Element-wise stage (reference "0x4070 DPU_EW_CFG"): EW_ALU_ALGO, EW_OP_TYPE (ALU or
// multiplier), EW_OP_SRC (immediate or memory via ERDMA), EW_DATA_MODE and EDATA_SIZE of the
// second operand; 0x383 = everything bypassed (both recipes).
REGCMD_REGISTER(dpu, DPU_EW_CFG, 0x4070, (EW_BYPASS, bool_field<0>), (EW_OP_BYPASS, bool_field<1>),
                (EW_OP_TYPE, enum_field<ew_op_type, 2, 2>), (EW_MUL_PRELU, bool_field<5>),
                (EW_OP_SRC, enum_field<operand_source, 6, 6>), (EW_LUT_BYPASS, bool_field<7>),
                (EW_OP_CVT_BYPASS, bool_field<8>), (EW_RELU_BYPASS, bool_field<9>), (EW_RELUX_EN, bool_field<10>),
                (EW_ALU_ALGO, enum_field<alu_algo, 19, 16>), (EW_BINARY_EN, bool_field<20>),
                (EW_EQUAL_EN, bool_field<21>), (EDATA_SIZE, enum_field<data_size, 23, 22>),
                (EW_DATA_MODE, enum_field<ew_data_mode, 29, 28>), (EW_CVT_ROUND, bool_field<30>),
                (EW_CVT_TYPE, bool_field<31>));

REGCMD_REGISTER(dpu, DPU_EW_CVT_OFFSET_VALUE, 0x4074, (EW_OP_CVT_OFFSET, uint_field<31, 0>));

REGCMD_REGISTER(dpu, DPU_EW_CVT_SCALE_VALUE, 0x4078, (EW_OP_CVT_SCALE, uint_field<15, 0>),
                (EW_OP_CVT_SHIFT, uint_field<21, 16>), (EW_TRUNCATE, uint_field<31, 22>));

REGCMD_REGISTER(dpu, DPU_EW_RELUX_CMP_VALUE, 0x407c, (EW_RELUX_CMP_DAT, uint_field<31, 0>));

REGCMD_REGISTER(dpu, DPU_OUT_CVT_OFFSET, 0x4080, (OUT_CVT_OFFSET, uint_field<31, 0>));

// FP32TOFP16_EN (bit 16) enables the fp32 -> fp16 write-out of a fp16 matmul; without
// it a fp16-output matmul writes zeros (reference "fp16 matmul -> fp16 output stage").
REGCMD_REGISTER(dpu, DPU_OUT_CVT_SCALE, 0x4084, (OUT_CVT_SCALE, uint_field<15, 0>), (FP32TOFP16_EN, bool_field<16>));

REGCMD_REGISTER(dpu, DPU_OUT_CVT_SHIFT, 0x4088, (OUT_CVT_SHIFT, uint_field<11, 0>), (MINUS_EXP, uint_field<19, 12>),
                (CVT_ROUND, bool_field<30>), (CVT_TYPE, bool_field<31>));

// The EW stage's register operands, one per operand group (an immediate second operand).
REGCMD_REGISTER_ARRAY(dpu, DPU_EW_OP_VALUE, 0x4090, 8, 0, "_", (EW_OPERAND, uint_field<31, 0>));

// SURF_ADD: surfaces per row (TRM). Both hardware-run recipes write an element/surface
// count here, e.g. (M*4)<<4 for fp32 output; the reference once calls it an IOVA.
REGCMD_REGISTER(dpu, DPU_SURFACE_ADD, 0x40c0, (SURF_ADD, uint_field<31, 4>));

REGCMD_REGISTER(dpu, DPU_LUT_ACCESS_CFG, 0x4100, (LUT_ADDR, uint_field<9, 0>), (LUT_TABLE_ID, bool_field<16>),
                (LUT_ACCESS_TYPE, bool_field<17>));

REGCMD_REGISTER(dpu, DPU_LUT_ACCESS_DATA, 0x4104, (LUT_ACCESS_DATA, uint_field<15, 0>));

REGCMD_REGISTER(dpu, DPU_LUT_CFG, 0x4108, (LUT_ROAD_SEL, bool_field<0>), (LUT_EXPAND_EN, bool_field<1>),
                (LUT_LO_LE_MUX, uint_field<3, 2>), (LUT_UFLOW_PRIORITY, bool_field<4>),
                (LUT_OFLOW_PRIORITY, bool_field<5>), (LUT_HYBRID_PRIORITY, bool_field<6>),
                (LUT_CAL_SEL, bool_field<7>));

REGCMD_REGISTER(dpu, DPU_LUT_INFO, 0x410c, (LUT_LE_INDEX_SELECT, uint_field<15, 8>),
                (LUT_LO_INDEX_SELECT, uint_field<23, 16>));

REGCMD_REGISTER(dpu, DPU_LUT_LE_START, 0x4110, (LUT_LE_START, uint_field<31, 0>));

REGCMD_REGISTER(dpu, DPU_LUT_LE_END, 0x4114, (LUT_LE_END, uint_field<31, 0>));

REGCMD_REGISTER(dpu, DPU_LUT_LO_START, 0x4118, (LUT_LO_START, uint_field<31, 0>));

REGCMD_REGISTER(dpu, DPU_LUT_LO_END, 0x411c, (LUT_LO_END, uint_field<31, 0>));

REGCMD_REGISTER(dpu, DPU_LUT_LE_SLOPE_SCALE, 0x4120, (LUT_LE_SLOPE_UFLOW_SCALE, uint_field<15, 0>),
                (LUT_LE_SLOPE_OFLOW_SCALE, uint_field<31, 16>));

REGCMD_REGISTER(dpu, DPU_LUT_LE_SLOPE_SHIFT, 0x4124, (LUT_LE_SLOPE_UFLOW_SHIFT, uint_field<4, 0>),
                (LUT_LE_SLOPE_OFLOW_SHIFT, uint_field<9, 5>));

REGCMD_REGISTER(dpu, DPU_LUT_LO_SLOPE_SCALE, 0x4128, (LUT_LO_SLOPE_UFLOW_SCALE, uint_field<15, 0>),
                (LUT_LO_SLOPE_OFLOW_SCALE, uint_field<31, 16>));

REGCMD_REGISTER(dpu, DPU_LUT_LO_SLOPE_SHIFT, 0x412c, (LUT_LO_SLOPE_UFLOW_SHIFT, uint_field<4, 0>),
                (LUT_LO_SLOPE_OFLOW_SHIFT, uint_field<9, 5>));

// Written as 0 by both hardware-run recipes and by Mesa; absent from mainline and the TRM
// (fact sheet §4, matmul-recipe §0.2).
REGCMD_REGISTER_BEYOND_MAINLINE(dpu, DPU_UNNAMED_40C4, 0x40c4, (VALUE, uint_field<31, 0>));

// The fully bypassed BS, BN and EW stages (0x53, 0x53, 0x383), as every hardware-run program
// writes them where the stage is unused (matmul-recipe §1.1, §2.2; Mesa; the vendor captures).
// The matmul needs BS fully bypassed: the conv's 0x20150 hangs it (reference "0x4040 DPU_BS_CFG").
namespace bypass {
inline constexpr DPU_BS_CFG bs{.BS_BYPASS = 1, .BS_ALU_BYPASS = 1, .BS_MUL_BYPASS = 1, .BS_RELU_BYPASS = 1};
inline constexpr DPU_BN_CFG bn{.BN_BYPASS = 1, .BN_ALU_BYPASS = 1, .BN_MUL_BYPASS = 1, .BN_RELU_BYPASS = 1};
inline constexpr DPU_EW_CFG ew{.EW_BYPASS = 1, .EW_OP_BYPASS = 1, .EW_LUT_BYPASS = 1, .EW_OP_CVT_BYPASS = 1,
                               .EW_RELU_BYPASS = 1};
}  // namespace bypass

using dpu_registers = register_list<
    DPU_S_STATUS, DPU_S_POINTER, DPU_OPERATION_ENABLE,
    DPU_FEATURE_MODE_CFG, DPU_DATA_FORMAT, DPU_OFFSET_PEND,
    DPU_DST_BASE_ADDR, DPU_DST_SURF_STRIDE, DPU_DATA_CUBE_WIDTH,
    DPU_DATA_CUBE_HEIGHT, DPU_DATA_CUBE_NOTCH_ADDR, DPU_DATA_CUBE_CHANNEL,
    DPU_BS_CFG, DPU_BS_ALU_CFG, DPU_BS_MUL_CFG,
    DPU_BS_RELUX_CMP_VALUE, DPU_BS_OW_CFG, DPU_BS_OW_OP,
    DPU_WDMA_SIZE_0, DPU_WDMA_SIZE_1, DPU_BN_CFG,
    DPU_BN_ALU_CFG, DPU_BN_MUL_CFG, DPU_BN_RELUX_CMP_VALUE,
    DPU_EW_CFG, DPU_EW_CVT_OFFSET_VALUE, DPU_EW_CVT_SCALE_VALUE,
    DPU_EW_RELUX_CMP_VALUE, DPU_OUT_CVT_OFFSET, DPU_OUT_CVT_SCALE,
    DPU_OUT_CVT_SHIFT, DPU_EW_OP_VALUE, DPU_SURFACE_ADD,
    DPU_LUT_ACCESS_CFG, DPU_LUT_ACCESS_DATA, DPU_LUT_CFG, DPU_LUT_INFO, DPU_LUT_LE_START,
    DPU_LUT_LE_END, DPU_LUT_LO_START, DPU_LUT_LO_END,
    DPU_LUT_LE_SLOPE_SCALE, DPU_LUT_LE_SLOPE_SHIFT, DPU_LUT_LO_SLOPE_SCALE,
    DPU_LUT_LO_SLOPE_SHIFT, DPU_UNNAMED_40C4>;

}  // namespace regcmd::reg
