#pragma once
// PPU_RDMA (the PPU's read DMA), target 0x8001, window 0x7000-0x7fff.
// Every register and field of the mainline map (fact sheet §4, from Mesa registers.xml =
// rocket_registers.h); fields are listed lowest bit first, reserved bits are not fields.


#include <regcmd/core/layout.hpp>
#include <regcmd/registers/control.hpp>

namespace regcmd::reg {

REGCMD_REGISTER(ppu_rdma, PPU_RDMA_RDMA_CUBE_IN_WIDTH, 0x700c, (CUBE_IN_WIDTH, uint_field<12, 0>));

REGCMD_REGISTER(ppu_rdma, PPU_RDMA_RDMA_CUBE_IN_HEIGHT, 0x7010, (CUBE_IN_HEIGHT, uint_field<12, 0>));

REGCMD_REGISTER(ppu_rdma, PPU_RDMA_RDMA_CUBE_IN_CHANNEL, 0x7014, (CUBE_IN_CHANNEL, uint_field<12, 0>));

REGCMD_REGISTER(ppu_rdma, PPU_RDMA_RDMA_SRC_BASE_ADDR, 0x701c, (SRC_BASE_ADDR, address_field<31, 0>));

REGCMD_REGISTER(ppu_rdma, PPU_RDMA_RDMA_SRC_LINE_STRIDE, 0x7024, (SRC_LINE_STRIDE, uint_field<31, 4>));

REGCMD_REGISTER(ppu_rdma, PPU_RDMA_RDMA_SRC_SURF_STRIDE, 0x7028, (SRC_SURF_STRIDE, uint_field<31, 4>));

REGCMD_REGISTER(ppu_rdma, PPU_RDMA_RDMA_DATA_FORMAT, 0x7030, (IN_PRECISION, uint_field<1, 0>));

using ppu_rdma_registers = register_list<
    PPU_RDMA_RDMA_S_STATUS, PPU_RDMA_RDMA_S_POINTER, PPU_RDMA_RDMA_OPERATION_ENABLE,
    PPU_RDMA_RDMA_CUBE_IN_WIDTH, PPU_RDMA_RDMA_CUBE_IN_HEIGHT, PPU_RDMA_RDMA_CUBE_IN_CHANNEL,
    PPU_RDMA_RDMA_SRC_BASE_ADDR, PPU_RDMA_RDMA_SRC_LINE_STRIDE, PPU_RDMA_RDMA_SRC_SURF_STRIDE,
    PPU_RDMA_RDMA_DATA_FORMAT>;

}  // namespace regcmd::reg
