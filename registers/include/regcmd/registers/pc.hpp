#pragma once
// PC (program control), target 0x0101, window 0x0000-0x0fff.
// Every register and field of the mainline map (fact sheet §4, from Mesa registers.xml =
// rocket_registers.h); fields are listed lowest bit first, reserved bits are not fields.


#include <regcmd/core/layout.hpp>

namespace regcmd::reg {

REGCMD_REGISTER(pc, PC_VERSION, 0x0000, (VERSION, uint_field<31, 0>));

REGCMD_REGISTER(pc, PC_VERSION_NUM, 0x0004, (VERSION_NUM, uint_field<31, 0>));

// Kernel-programmed (PC kick); a task tail uses the 0x0081 entry instead.
REGCMD_REGISTER(pc, PC_OPERATION_ENABLE, 0x0008, (OP_EN, bool_field<0>));

// In a task tail: the next task's regcmd IOVA (0 ends the chain). PC_SOURCE_ADDR is
// the 16-byte aligned address itself; PC_SEL 0 = PC (DMA fetch) mode (TRM, fact sheet §2.3).
REGCMD_REGISTER(pc, PC_BASE_ADDRESS, 0x0010, (PC_SEL, bool_field<0>), (PC_SOURCE_ADDR, address_field<31, 4>));

// In a task tail: fetch amount of the next task, in 128-bit words minus one
// (fact sheet §2.3); 0 for the last task.
REGCMD_REGISTER(pc, PC_REGISTER_AMOUNTS, 0x0014, (PC_DATA_AMOUNT, uint_field<15, 0>));

// The interrupt bits, in pairs (fact sheet §1.6): MASK, CLEAR, STATUS and RAW_STATUS share them.
#define REGCMD_PC_INTERRUPT_FIELDS \
  (CNA_FEATURE_0, bool_field<0>), (CNA_FEATURE_1, bool_field<1>), \
      (CNA_WEIGHT_0, bool_field<2>), (CNA_WEIGHT_1, bool_field<3>), \
      (CNA_CSC_0, bool_field<4>), (CNA_CSC_1, bool_field<5>), \
      (CORE_0, bool_field<6>), (CORE_1, bool_field<7>), \
      (DPU_0, bool_field<8>), (DPU_1, bool_field<9>), \
      (PPU_0, bool_field<10>), (PPU_1, bool_field<11>), \
      (DMA_READ_ERROR, bool_field<12>), (DMA_WRITE_ERROR, bool_field<13>)

// Kernel-programmed from rknpu_task.int_mask; interrupts come in pairs (e.g. DPU_0|DPU_1).
REGCMD_REGISTER(pc, PC_INTERRUPT_MASK, 0x0020, REGCMD_PC_INTERRUPT_FIELDS);
REGCMD_REGISTER(pc, PC_INTERRUPT_CLEAR, 0x0024, REGCMD_PC_INTERRUPT_FIELDS);
REGCMD_REGISTER(pc, PC_INTERRUPT_STATUS, 0x0028, REGCMD_PC_INTERRUPT_FIELDS);
REGCMD_REGISTER(pc, PC_INTERRUPT_RAW_STATUS, 0x002c, REGCMD_PC_INTERRUPT_FIELDS);

// Kernel-programmed: TASK_NUMBER tasks per kick, TASK_PP_EN = ping-pong (fact sheet §1.6).
REGCMD_REGISTER(pc, PC_TASK_CON, 0x0030, (TASK_NUMBER, uint_field<11, 0>), (TASK_PP_EN, bool_field<12>),
                (TASK_COUNT_CLEAR, bool_field<13>));

REGCMD_REGISTER(pc, PC_TASK_DMA_BASE_ADDR, 0x0034, (DMA_BASE_ADDR, address_field<31, 4>));

REGCMD_REGISTER(pc, PC_TASK_STATUS, 0x003c, (TASK_STATUS, uint_field<27, 0>));

using pc_registers = register_list<
    PC_VERSION, PC_VERSION_NUM, PC_OPERATION_ENABLE,
    PC_BASE_ADDRESS, PC_REGISTER_AMOUNTS, PC_INTERRUPT_MASK,
    PC_INTERRUPT_CLEAR, PC_INTERRUPT_STATUS, PC_INTERRUPT_RAW_STATUS,
    PC_TASK_CON, PC_TASK_DMA_BASE_ADDR, PC_TASK_STATUS>;

}  // namespace regcmd::reg
