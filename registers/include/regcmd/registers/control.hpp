#pragma once
// The control registers every block but PC begins its window with, the same three in each
// block with the same fields (fact sheet §4):
//   S_STATUS          the status of the two ping-pong register groups
//   S_POINTER         which group the CPU writes and the block executes; POINTER_PP_EN |
//                     EXECUTER_PP_EN | POINTER_PP_MODE (0xe) is the ping-pong pointer mode
//                     every program writes
//   OPERATION_ENABLE  written through the task tail's op-enable entry, not directly

#include <regcmd/core/layout.hpp>

#define REGCMD_S_STATUS_FIELDS (STATUS_0, uint_field<1, 0>), (STATUS_1, uint_field<17, 16>)

#define REGCMD_S_POINTER_FIELDS                                                                    \
  (POINTER, bool_field<0>), (POINTER_PP_EN, bool_field<1>), (EXECUTER_PP_EN, bool_field<2>),       \
      (POINTER_PP_MODE, bool_field<3>), (POINTER_PP_CLEAR, bool_field<4>),                         \
      (EXECUTER_PP_CLEAR, bool_field<5>), (EXECUTER, bool_field<16>)

#define REGCMD_OPERATION_ENABLE_FIELDS (OP_EN, bool_field<0>)

namespace regcmd::reg {

REGCMD_REGISTER(cna, CNA_S_STATUS, 0x1000, REGCMD_S_STATUS_FIELDS);
REGCMD_REGISTER(cna, CNA_S_POINTER, 0x1004, REGCMD_S_POINTER_FIELDS);
REGCMD_REGISTER(cna, CNA_OPERATION_ENABLE, 0x1008, REGCMD_OPERATION_ENABLE_FIELDS);

REGCMD_REGISTER(core, CORE_S_STATUS, 0x3000, REGCMD_S_STATUS_FIELDS);
REGCMD_REGISTER(core, CORE_S_POINTER, 0x3004, REGCMD_S_POINTER_FIELDS);
REGCMD_REGISTER(core, CORE_OPERATION_ENABLE, 0x3008, REGCMD_OPERATION_ENABLE_FIELDS);

REGCMD_REGISTER(dpu, DPU_S_STATUS, 0x4000, REGCMD_S_STATUS_FIELDS);
REGCMD_REGISTER(dpu, DPU_S_POINTER, 0x4004, REGCMD_S_POINTER_FIELDS);
REGCMD_REGISTER(dpu, DPU_OPERATION_ENABLE, 0x4008, REGCMD_OPERATION_ENABLE_FIELDS);

REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_S_STATUS, 0x5000, REGCMD_S_STATUS_FIELDS);
REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_S_POINTER, 0x5004, REGCMD_S_POINTER_FIELDS);
REGCMD_REGISTER(dpu_rdma, DPU_RDMA_RDMA_OPERATION_ENABLE, 0x5008, REGCMD_OPERATION_ENABLE_FIELDS);

REGCMD_REGISTER(ppu, PPU_S_STATUS, 0x6000, REGCMD_S_STATUS_FIELDS);
REGCMD_REGISTER(ppu, PPU_S_POINTER, 0x6004, REGCMD_S_POINTER_FIELDS);
REGCMD_REGISTER(ppu, PPU_OPERATION_ENABLE, 0x6008, REGCMD_OPERATION_ENABLE_FIELDS);

REGCMD_REGISTER(ppu_rdma, PPU_RDMA_RDMA_S_STATUS, 0x7000, REGCMD_S_STATUS_FIELDS);
REGCMD_REGISTER(ppu_rdma, PPU_RDMA_RDMA_S_POINTER, 0x7004, REGCMD_S_POINTER_FIELDS);
REGCMD_REGISTER(ppu_rdma, PPU_RDMA_RDMA_OPERATION_ENABLE, 0x7008, REGCMD_OPERATION_ENABLE_FIELDS);

// The ping-pong pointer mode (0xe) of any block's S_POINTER (matmul-recipe §1.1, §2.2; Mesa;
// the vendor captures).
template <class S_POINTER>
constexpr S_POINTER pingpong_pointer() {
  return S_POINTER{.POINTER_PP_EN = 1, .EXECUTER_PP_EN = 1, .POINTER_PP_MODE = 1};
}

}  // namespace regcmd::reg
