#pragma once
// Enumerations of register fields (besides `precision`, which lives in core/precision.hpp
// because programs and rules use it too). Values from the TRM as quoted in fact sheet §4.1
// and from the reference where it measured them on silicon.

#include <regcmd/core/enumeration.hpp>

namespace regcmd::reg {

// CNA_CONV_CON1.CONV_MODE, DPU_FEATURE_MODE_CFG.CONV_MODE, DPU_RDMA FEATURE_MODE_CFG.CONV_MODE:
// 0 direct convolution (matmul uses it), 3 depthwise; 1 and 2 are reserved (TRM).
REGCMD_ENUM(conv_mode, (direct, 0), (depthwise, 3))

// ALU function of the BS, BN and EW stages (EW_ALU_ALGO, BS_ALU_ALGO, BN_ALU_ALGO).
// MAX=0 MIN=1 SUM=2 follow NVDLA's order and were validated on silicon (reference "0x4070
// DPU_EW_CFG"); 3 is EQL in the reference's NVDLA reading and "div" in the TRM, unverified
// either way; 4..8 are the TRM's minus, abs, neg, floor, ceil.
REGCMD_ENUM(alu_algo, (MAX, 0), (MIN, 1), (SUM, 2), (EQL, 3), (MINUS, 4), (ABS, 5), (NEG, 6),
            (FLOOR, 7), (CEIL, 8))

// Where a BS/BN/EW operand comes from: a register immediate or memory via the DPU_RDMA
// (EW_OP_SRC, BS_ALU_SRC, BS_MUL_SRC, BN_ALU_SRC, BN_MUL_SRC; TRM).
REGCMD_ENUM(operand_source, (immediate, 0), (memory, 1))

// DPU_EW_CFG.EW_OP_TYPE: the ALU (add/max/min/...) or the multiplier (TRM; reference "SDP").
REGCMD_ENUM(ew_op_type, (alu, 0), (mul, 1))

// EW_DATA_MODE / ERDMA_DATA_MODE: how the second element-wise operand is laid out.
// 0 per channel: a length-N vector broadcast over rows, contiguous (reference "SDP").
// 1 per pixel (TRM): Mesa's add of a full tensor; the reference's "per-element = 1".
// 2 per channel by pixel (TRM): the vendor's per-element fp16 mul capture (EW_CFG
//   0x20800384, ERDMA_CFG 0x8000000a; reference "EW_CFG + ERDMA_CFG data-mode fields").
REGCMD_ENUM(ew_data_mode, (per_channel, 0), (per_pixel, 1), (per_channel_by_pixel, 2))

// EDATA_SIZE / ERDMA_DATA_SIZE: element size of the second operand (TRM; the reference
// uses 1 = int8 and 2 = fp16/int16).
REGCMD_ENUM(data_size, (four_bit, 0), (one_byte, 1), (two_byte, 2), (four_byte, 3))

}  // namespace regcmd::reg
