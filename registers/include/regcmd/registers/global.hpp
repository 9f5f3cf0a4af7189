#pragma once
// GLOBAL_OPERATION_ENABLE (0xF008): the block op-enable mask. Its block (target 0x40000)
// does not fit a regcmd target, so it is written through the task tail's special 0x0081
// entry (offset 0x0008), whose value is this mask; rknpu_task.enable_mask holds the same
// bits. Bits: CNA 0, CORE 2, DPU 3, DPU_RDMA 4, PPU 5, PPU_RDMA 6 (TRM, Mesa registers.xml;
// fact sheet §2.2). Matmul uses 0x0d (CNA | CORE | DPU), element-wise SDP 0x18.

#include <regcmd/core/entry.hpp>
#include <regcmd/core/error.hpp>
#include <regcmd/core/layout.hpp>

namespace regcmd::reg {

REGCMD_LAYOUT(GLOBAL_OPERATION_ENABLE,
              (CNA_OP_EN, bool_field<0>),
              (CORE_OP_EN, bool_field<2>),
              (DPU_OP_EN, bool_field<3>),
              (DPU_RDMA_OP_EN, bool_field<4>),
              (PPU_OP_EN, bool_field<5>),
              (PPU_RDMA_OP_EN, bool_field<6>));

}  // namespace regcmd::reg

namespace regcmd {

// The task tail's op-enable entry: target 0x0081, offset 0x0008, value = the mask.
constexpr result<entry> op_enable(const reg::GLOBAL_OPERATION_ENABLE& mask) {
  result<std::uint32_t> bits = pack(mask);
  if (!bits) return bits.err();
  return entry::make(op_enable_target, bits.value(), op_enable_offset);
}

}  // namespace regcmd
