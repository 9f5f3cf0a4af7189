#pragma once
// PPU (planar processing: pooling), target 0x4001, window 0x6000-0x6fff. The reference
// calls this block "PDP".
// Every register and field of the mainline map (fact sheet §4, from Mesa registers.xml =
// rocket_registers.h); fields are listed lowest bit first, reserved bits are not fields.


#include <regcmd/core/layout.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/registers/control.hpp>

namespace regcmd::reg {

REGCMD_REGISTER(ppu, PPU_DATA_CUBE_IN_WIDTH, 0x600c, (CUBE_IN_WIDTH, uint_field<12, 0>));

REGCMD_REGISTER(ppu, PPU_DATA_CUBE_IN_HEIGHT, 0x6010, (CUBE_IN_HEIGHT, uint_field<12, 0>));

REGCMD_REGISTER(ppu, PPU_DATA_CUBE_IN_CHANNEL, 0x6014, (CUBE_IN_CHANNEL, uint_field<12, 0>));

REGCMD_REGISTER(ppu, PPU_DATA_CUBE_OUT_WIDTH, 0x6018, (CUBE_OUT_WIDTH, uint_field<12, 0>));

REGCMD_REGISTER(ppu, PPU_DATA_CUBE_OUT_HEIGHT, 0x601c, (CUBE_OUT_HEIGHT, uint_field<12, 0>));

REGCMD_REGISTER(ppu, PPU_DATA_CUBE_OUT_CHANNEL, 0x6020, (CUBE_OUT_CHANNEL, uint_field<12, 0>));

REGCMD_REGISTER(ppu, PPU_OPERATION_MODE_CFG, 0x6024, (POOLING_METHOD, uint_field<1, 0>), (FLYING_MODE, bool_field<4>),
                (USE_CNT, uint_field<7, 5>), (NOTCH_ADDR, uint_field<28, 16>), (INDEX_EN, bool_field<30>));

REGCMD_REGISTER(ppu, PPU_POOLING_KERNEL_CFG, 0x6034, (KERNEL_WIDTH, uint_field<3, 0>),
                (KERNEL_HEIGHT, uint_field<11, 8>), (KERNEL_STRIDE_WIDTH, uint_field<19, 16>),
                (KERNEL_STRIDE_HEIGHT, uint_field<23, 20>));

REGCMD_REGISTER(ppu, PPU_RECIP_KERNEL_WIDTH, 0x6038, (RECIP_KERNEL_WIDTH, uint_field<16, 0>));

REGCMD_REGISTER(ppu, PPU_RECIP_KERNEL_HEIGHT, 0x603c, (RECIP_KERNEL_HEIGHT, uint_field<16, 0>));

REGCMD_REGISTER(ppu, PPU_POOLING_PADDING_CFG, 0x6040, (PAD_LEFT, uint_field<2, 0>), (PAD_TOP, uint_field<6, 4>),
                (PAD_RIGHT, uint_field<10, 8>), (PAD_BOTTOM, uint_field<14, 12>));

REGCMD_REGISTER(ppu, PPU_PADDING_VALUE_1_CFG, 0x6044, (PAD_VALUE_0, uint_field<31, 0>));

REGCMD_REGISTER(ppu, PPU_PADDING_VALUE_2_CFG, 0x6048, (PAD_VALUE_1, uint_field<2, 0>));

REGCMD_REGISTER(ppu, PPU_DST_BASE_ADDR, 0x6070, (DST_BASE_ADDR, address_field<31, 4>));

REGCMD_REGISTER(ppu, PPU_DST_SURF_STRIDE, 0x607c, (DST_SURF_STRIDE, uint_field<31, 4>));

REGCMD_REGISTER(ppu, PPU_DATA_FORMAT, 0x6084, (PROC_PRECISION, enum_field<precision, 2, 0>),
                (DPU_FLYIN, bool_field<3>), (INDEX_ADD, uint_field<31, 4>));

REGCMD_REGISTER(ppu, PPU_MISC_CTRL, 0x60dc, (BURST_LEN, uint_field<3, 0>), (NONALIGN, bool_field<7>),
                (MC_SURF_OUT, bool_field<8>), (SURF_LEN, uint_field<31, 16>));

using ppu_registers = register_list<
    PPU_S_STATUS, PPU_S_POINTER, PPU_OPERATION_ENABLE,
    PPU_DATA_CUBE_IN_WIDTH, PPU_DATA_CUBE_IN_HEIGHT, PPU_DATA_CUBE_IN_CHANNEL,
    PPU_DATA_CUBE_OUT_WIDTH, PPU_DATA_CUBE_OUT_HEIGHT, PPU_DATA_CUBE_OUT_CHANNEL,
    PPU_OPERATION_MODE_CFG, PPU_POOLING_KERNEL_CFG, PPU_RECIP_KERNEL_WIDTH,
    PPU_RECIP_KERNEL_HEIGHT, PPU_POOLING_PADDING_CFG, PPU_PADDING_VALUE_1_CFG,
    PPU_PADDING_VALUE_2_CFG, PPU_DST_BASE_ADDR, PPU_DST_SURF_STRIDE,
    PPU_DATA_FORMAT, PPU_MISC_CTRL>;

}  // namespace regcmd::reg
