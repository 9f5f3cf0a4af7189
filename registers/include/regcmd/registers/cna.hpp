#pragma once
// CNA (convolution / feature and weight input), target 0x0201, window 0x1000-0x1fff.
// Every register and field of the mainline map (fact sheet §4, from Mesa registers.xml =
// rocket_registers.h); fields are listed lowest bit first, reserved bits are not fields.


#include <regcmd/core/layout.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/registers/enums.hpp>
#include <regcmd/registers/control.hpp>

namespace regcmd::reg {

// PROC_PRECISION[9:7] / IN_PRECISION[6:4] carry the precision enum (reference "The
// precision enum": 0x120 = fp16/fp16, 0x360 = int4/int4). Matmul uses CONV_MODE direct.
REGCMD_REGISTER(cna, CNA_CONV_CON1, 0x100c, (CONV_MODE, enum_field<conv_mode, 3, 0>),
                (IN_PRECISION, enum_field<precision, 6, 4>), (PROC_PRECISION, enum_field<precision, 9, 7>),
                (ARGB_IN, uint_field<15, 12>), (DECONV, bool_field<16>), (GROUP_LINE_OFF, bool_field<29>),
                (NONALIGN_DMA, bool_field<30>));

// FEATURE_GRAINS: feature rows buffered before the conv starts; the matmul M-tile
// scheduler writes 16 * min(M + 1, R) here, i.e. FEATURE_GRAINS = min(M + 1, R)
// (reference "The M-tiling scheduler").
REGCMD_REGISTER(cna, CNA_CONV_CON2, 0x1010, (CMD_FIFO_SRST, bool_field<0>), (CSC_DO_EN, bool_field<1>),
                (CSC_WO_EN, bool_field<2>), (FEATURE_GRAINS, uint_field<13, 4>), (KERNEL_GROUP, uint_field<23, 16>));

REGCMD_REGISTER(cna, CNA_CONV_CON3, 0x1014, (CONV_X_STRIDE, uint_field<2, 0>), (CONV_Y_STRIDE, uint_field<5, 3>),
                (DECONV_X_STRIDE, uint_field<10, 8>), (DECONV_Y_STRIDE, uint_field<13, 11>),
                (ATROUS_X_DILATION, uint_field<20, 16>), (ATROUS_Y_DILATION, uint_field<25, 21>),
                (NN_MODE, uint_field<30, 28>));

// Matmul maps M to DATAIN_HEIGHT (width 1) (reference "rocket_registers.h cross-reference").
REGCMD_REGISTER(cna, CNA_DATA_SIZE0, 0x1020, (DATAIN_HEIGHT, uint_field<10, 0>), (DATAIN_WIDTH, uint_field<26, 16>));

// Matmul: DATAIN_CHANNEL = K, DATAIN_CHANNEL_REAL = K - 1 (reference "Key registers": 0x1024).
REGCMD_REGISTER(cna, CNA_DATA_SIZE1, 0x1024, (DATAIN_CHANNEL, uint_field<15, 0>),
                (DATAIN_CHANNEL_REAL, uint_field<29, 16>));

REGCMD_REGISTER(cna, CNA_DATA_SIZE2, 0x1028, (DATAOUT_WIDTH, uint_field<10, 0>));

REGCMD_REGISTER(cna, CNA_DATA_SIZE3, 0x102c, (DATAOUT_ATOMICS, uint_field<21, 0>), (SURF_MODE, uint_field<23, 22>));

// Weight bytes: K*N*2 fp16, K*N int8 (reference "Key registers": 0x1030).
REGCMD_REGISTER(cna, CNA_WEIGHT_SIZE0, 0x1030, (WEIGHT_BYTES, uint_field<31, 0>));

// Weight bytes per kernel: K*2 fp16, K int8 (reference "Key registers": 0x1034).
REGCMD_REGISTER(cna, CNA_WEIGHT_SIZE1, 0x1034, (WEIGHT_BYTES_PER_KERNEL, uint_field<18, 0>));

REGCMD_REGISTER(cna, CNA_WEIGHT_SIZE2, 0x1038, (WEIGHT_KERNELS, uint_field<13, 0>),
                (WEIGHT_HEIGHT, uint_field<20, 16>), (WEIGHT_WIDTH, uint_field<28, 24>));

// CBUF bank split: DATA_BANK banks hold features, WEIGHT_BANK banks hold weights, with
// DATA_BANK + WEIGHT_BANK = 12 and DATA_BANK <= 11 (reference "The M-tiling scheduler":
// the 0x1040 "schedule" is this split; 0xb1 = DATA_BANK 1, WEIGHT_BANK 11). A template may
// write it more than once; the NPU uses the later copy.
REGCMD_REGISTER(cna, CNA_CBUF_CON0, 0x1040, (DATA_BANK, uint_field<3, 0>), (WEIGHT_BANK, uint_field<7, 4>),
                (FC_DATA_BANK, uint_field<10, 8>), (DATA_REUSE, bool_field<12>), (WEIGHT_REUSE, bool_field<13>));

// CBUF data entries (reference: 0x1044 = K/32 fp16, ceil(K/64) int8).
REGCMD_REGISTER(cna, CNA_CBUF_CON1, 0x1044, (DATA_ENTRIES, uint_field<13, 0>));

REGCMD_REGISTER(cna, CNA_CVT_CON0, 0x104c, (CVT_BYPASS, bool_field<0>), (CVT_TYPE, bool_field<1>),
                (ROUND_TYPE, bool_field<2>), (DATA_SIGN, bool_field<3>), (CVT_TRUNCATE_0, uint_field<9, 4>),
                (CVT_TRUNCATE_1, uint_field<15, 10>), (CVT_TRUNCATE_2, uint_field<21, 16>),
                (CVT_TRUNCATE_3, uint_field<27, 22>));

// CVT_SCALEn / CVT_OFFSETn of the input conversion, one register per group (scale 1: the
// conversion is an identity, matmul-recipe §1.1).
REGCMD_REGISTER_ARRAY(cna, CNA_CVT_CON, 0x1050, 4, 1, "", (CVT_OFFSET, uint_field<15, 0>),
                      (CVT_SCALE, uint_field<31, 16>));

REGCMD_REGISTER(cna, CNA_FC_CON0, 0x1060, (FC_SKIP_EN, bool_field<0>), (FC_SKIP_DATA, uint_field<31, 16>));

REGCMD_REGISTER(cna, CNA_FC_CON1, 0x1064, (DATA_OFFSET, uint_field<16, 0>));

// The reference found int8 row offset behaviour at this offset ("0x1068"): a value v
// shifts every output row by v.
REGCMD_REGISTER(cna, CNA_PAD_CON0, 0x1068, (PAD_TOP, uint_field<3, 0>), (PAD_LEFT, uint_field<7, 4>));

// Feature (A) IOVA: an address slot of every matmul program.
REGCMD_REGISTER(cna, CNA_FEATURE_DATA_ADDR, 0x1070, (FEATURE_BASE_ADDR, address_field<31, 0>));

REGCMD_REGISTER(cna, CNA_FC_CON2, 0x1074, (WEIGHT_OFFSET, uint_field<16, 0>));

// Burst lengths (3 -> 4, 7 -> 8, 15 -> 16 beats; TRM).
REGCMD_REGISTER(cna, CNA_DMA_CON0, 0x1078, (DATA_BURST_LEN, uint_field<3, 0>), (WEIGHT_BURST_LEN, uint_field<19, 16>),
                (OV4K_BYPASS, bool_field<31>));

// Input line stride in 16-byte units: one row of a row-major [M][K] feature is K/8
// (fp16) or K/16 (int8); a larger value reads rows at a pitch (reference "0x107c").
REGCMD_REGISTER(cna, CNA_DMA_CON1, 0x107c, (LINE_STRIDE, uint_field<27, 0>));

// Input surface stride (reference: "input surface stride (8-byte units)").
REGCMD_REGISTER(cna, CNA_DMA_CON2, 0x1080, (SURF_STRIDE, uint_field<27, 0>));

REGCMD_REGISTER(cna, CNA_FC_DATA_SIZE0, 0x1084, (DMA_HEIGHT, uint_field<10, 0>), (DMA_WIDTH, uint_field<29, 16>));

// Matmul: DMA_CHANNEL = K (reference "Key registers": 0x1088).
REGCMD_REGISTER(cna, CNA_FC_DATA_SIZE1, 0x1088, (DMA_CHANNEL, uint_field<15, 0>));

REGCMD_REGISTER(cna, CNA_CLK_GATE, 0x1090, (CNA_FEATURE_DISABLE_CLKGATE, bool_field<0>),
                (CNA_WEIGHT_DISABLE_CLKGATE, bool_field<1>), (CSC_DISABLE_CLKGATE, bool_field<2>),
                (CBUF_CS_DISABLE_CLKGATE, bool_field<4>));

REGCMD_REGISTER(cna, CNA_DCOMP_CTRL, 0x1100, (DECOMP_CONTROL, uint_field<2, 0>), (WT_DEC_BYPASS, bool_field<3>));

REGCMD_REGISTER(cna, CNA_DCOMP_REGNUM, 0x1104, (DCOMP_REGNUM, uint_field<31, 0>));

// Weight (B) IOVA: an address slot of every matmul program.
REGCMD_REGISTER(cna, CNA_DCOMP_ADDR0, 0x1110, (DECOMPRESS_ADDR0, address_field<31, 0>));

// Weight decompression amounts; 0 in every program (no compressed weights).
REGCMD_REGISTER_ARRAY(cna, CNA_DCOMP_AMOUNT, 0x1140, 16, 0, "", (DCOMP_AMOUNT, uint_field<31, 0>));

REGCMD_REGISTER(cna, CNA_CVT_CON5, 0x1180, (PER_CHANNEL_CVT_EN, uint_field<31, 0>));

REGCMD_REGISTER(cna, CNA_PAD_CON1, 0x1184, (PAD_VALUE, uint_field<31, 0>));

using cna_registers = register_list<
    CNA_S_STATUS, CNA_S_POINTER, CNA_OPERATION_ENABLE,
    CNA_CONV_CON1, CNA_CONV_CON2, CNA_CONV_CON3,
    CNA_DATA_SIZE0, CNA_DATA_SIZE1, CNA_DATA_SIZE2,
    CNA_DATA_SIZE3, CNA_WEIGHT_SIZE0, CNA_WEIGHT_SIZE1,
    CNA_WEIGHT_SIZE2, CNA_CBUF_CON0, CNA_CBUF_CON1,
    CNA_CVT_CON0, CNA_CVT_CON, CNA_FC_CON0,
    CNA_FC_CON1, CNA_PAD_CON0, CNA_FEATURE_DATA_ADDR,
    CNA_FC_CON2, CNA_DMA_CON0, CNA_DMA_CON1,
    CNA_DMA_CON2, CNA_FC_DATA_SIZE0, CNA_FC_DATA_SIZE1,
    CNA_CLK_GATE, CNA_DCOMP_CTRL, CNA_DCOMP_REGNUM,
    CNA_DCOMP_ADDR0, CNA_DCOMP_AMOUNT, CNA_CVT_CON5,
    CNA_PAD_CON1>;

}  // namespace regcmd::reg
