#pragma once
// DPU_RDMA (the DPU's read DMAs: main feature, BS/BN/EW operands), target 0x2001, window
// 0x5000-0x5fff. The reference calls this block "CDMA". Mainline names its registers
// with a second RDMA_ prefix, kept here so names grep to rocket_registers.h.
// Every register and field of the mainline map (fact sheet §4, from Mesa registers.xml =
// rocket_registers.h); fields are listed lowest bit first, reserved bits are not fields.


#include <regcmd/core/layout.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/registers/enums.hpp>
#include <regcmd/registers/control.hpp>

namespace regcmd::reg {

// RDMA input dims are decoupled from the DPU output dims (reference "OVER-FETCH").
REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_DATA_CUBE_WIDTH, 0x500c, (WIDTH, uint_field<12, 0>));

REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_DATA_CUBE_HEIGHT, 0x5010, (HEIGHT, uint_field<12, 0>),
                (EW_LINE_NOTCH_ADDR, uint_field<28, 16>));

REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_DATA_CUBE_CHANNEL, 0x5014, (CHANNEL, uint_field<12, 0>));

// Main feature (MRDMA, flying mode) IOVA: an address slot of SDP programs.
REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_SRC_BASE_ADDR, 0x5018, (SRC_BASE_ADDR, address_field<31, 0>));

// RK3588 keeps only BRDMA_DATA_USE here (reference "0x4040 DPU_BS_CFG").
REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_BRDMA_CFG, 0x501c, (BRDMA_DATA_USE, uint_field<4, 1>));

REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_BS_BASE_ADDR, 0x5020, (BS_BASE_ADDR, address_field<31, 0>));

REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_NRDMA_CFG, 0x5028, (NRDMA_DATA_USE, uint_field<4, 1>));

REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_BN_BASE_ADDR, 0x502c, (BN_BASE_ADDR, address_field<31, 0>));

// Second-operand (EW) read: ERDMA_DATA_MODE[31:30], ERDMA_DATA_SIZE[3:2],
// ERDMA_DISABLE for a 1-input SDP (reference "0x5034 DPU_RDMA_RDMA_ERDMA_CFG").
REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_ERDMA_CFG, 0x5034, (ERDMA_DISABLE, bool_field<0>),
                (OV4K_BYPASS, bool_field<1>), (ERDMA_DATA_SIZE, enum_field<data_size, 3, 2>),
                (ERDMA_NONALIGN, bool_field<28>), (ERDMA_SURF_MODE, bool_field<29>),
                (ERDMA_DATA_MODE, enum_field<ew_data_mode, 31, 30>));

// Element-wise operand IOVA: an address slot of SDP programs.
REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_EW_BASE_ADDR, 0x5038, (EW_BASE_ADDR, address_field<31, 0>));

REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_EW_SURF_STRIDE, 0x5040, (EW_SURF_STRIDE, uint_field<31, 4>));

// IN_PRECISION[17:15] / PROC_PRECISION[7:5]: the precision enum. The MRDMA does
// not read int32 features (reference "int16/narrow-output ... loopback").
REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_FEATURE_MODE_CFG, 0x5044, (FLYING_MODE, bool_field<0>),
                (CONV_MODE, enum_field<conv_mode, 2, 1>), (MRDMA_FP16TOFP32_EN, bool_field<3>),
                (MRDMA_DISABLE, bool_field<4>), (PROC_PRECISION, enum_field<precision, 7, 5>),
                (COMB_USE, uint_field<10, 8>), (BURST_LEN, uint_field<14, 11>),
                (IN_PRECISION, enum_field<precision, 17, 15>));

// LINE_NOTCH_ADDR = N - 8 for an 8-channel tile of a contiguous buffer; the DPU_RDMA has
// no source line stride (reference "0x107c ... strided activations").
REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_SRC_DMA_CFG, 0x5048, (KERNEL_WIDTH, uint_field<2, 0>),
                (KERNEL_HEIGHT, uint_field<5, 3>), (KERNEL_STRIDE_WIDTH, uint_field<8, 6>),
                (KERNEL_STRIDE_HEIGHT, uint_field<11, 9>), (UNPOOLING_EN, bool_field<12>),
                (POOLING_METHOD, bool_field<13>), (LINE_NOTCH_ADDR, uint_field<31, 19>));

REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_SURF_NOTCH, 0x504c, (SURF_NOTCH_ADDR, uint_field<31, 4>));

REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_PAD_CFG, 0x5064, (PAD_LEFT, uint_field<2, 0>), (PAD_TOP, uint_field<6, 4>),
                (PAD_VALUE, uint_field<31, 16>));

REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_WEIGHT, 0x5068, (M_WEIGHT, uint_field<7, 0>), (B_WEIGHT, uint_field<15, 8>),
                (N_WEIGHT, uint_field<23, 16>), (E_WEIGHT, uint_field<31, 24>));

REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_EW_SURF_NOTCH, 0x506c, (EW_SURF_NOTCH, uint_field<31, 4>));

using dpu_rdma_registers = register_list<
    DPU_RDMA_RDMA_S_STATUS, DPU_RDMA_RDMA_S_POINTER, DPU_RDMA_RDMA_OPERATION_ENABLE,
    DPU_RDMA_RDMA_DATA_CUBE_WIDTH, DPU_RDMA_RDMA_DATA_CUBE_HEIGHT, DPU_RDMA_RDMA_DATA_CUBE_CHANNEL,
    DPU_RDMA_RDMA_SRC_BASE_ADDR, DPU_RDMA_RDMA_BRDMA_CFG, DPU_RDMA_RDMA_BS_BASE_ADDR,
    DPU_RDMA_RDMA_NRDMA_CFG, DPU_RDMA_RDMA_BN_BASE_ADDR, DPU_RDMA_RDMA_ERDMA_CFG,
    DPU_RDMA_RDMA_EW_BASE_ADDR, DPU_RDMA_RDMA_EW_SURF_STRIDE, DPU_RDMA_RDMA_FEATURE_MODE_CFG,
    DPU_RDMA_RDMA_SRC_DMA_CFG, DPU_RDMA_RDMA_SURF_NOTCH, DPU_RDMA_RDMA_PAD_CFG,
    DPU_RDMA_RDMA_WEIGHT, DPU_RDMA_RDMA_EW_SURF_NOTCH>;

}  // namespace regcmd::reg
