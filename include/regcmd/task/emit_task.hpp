#pragma once
// Writes a task description (regcmd/task/task.hpp) as one task of a program:
//
//   - a lookup-table upload first, where the task carries one (ops-reference §6.2),
//   - the DPU's S_POINTER (implementation A and the vendor's captures start with it),
//   - then every present block in the order CNA, CORE, DPU, DPU_RDMA, PPU, PPU_RDMA, each
//     register of a block in ascending offset (the vendor's and Mesa's order), an address
//     register as a slot of the program,
//   - then the tail, with the op-enable mask of the blocks present (GLOBAL_OPERATION_ENABLE,
//     fact sheet §2.2: matmul 0x0d, SDP 0x18, conv with bias 0x1d, pooling 0x60) and the
//     completion interrupts of the last stage (PPU_0|PPU_1 when the PPU runs, else
//     DPU_0|DPU_1; both kernels take only a pair-complete mask, fact sheet §1.6).

#include <cstdint>

#include <regcmd/task/task.hpp>
#include <regcmd/task/writer.hpp>
#include <regcmd/registers/global.hpp>

namespace regcmd {

constexpr reg::GLOBAL_OPERATION_ENABLE enable_of(const task_desc& t) {
  return {.CNA_OP_EN = t.cna.has_value(), .CORE_OP_EN = t.core.has_value(), .DPU_OP_EN = t.dpu.has_value(),
          .DPU_RDMA_OP_EN = t.dpu_rdma.has_value(), .PPU_OP_EN = t.ppu.has_value(),
          .PPU_RDMA_OP_EN = t.ppu_rdma.has_value()};
}

// 0 for a task with neither a DPU nor a PPU: no interrupt completes it (rule task-interrupts).
constexpr std::uint32_t completion_interrupts(const task_desc& t) {
  return t.ppu ? ppu_done_interrupts : t.dpu ? dpu_done_interrupts : 0;
}

namespace detail {
template <register_type R>
constexpr void put_address(program_writer& w, const address& a) {
  w.put_slot<R>(a.role, a.offset, a.extent);
}
template <register_type R>
constexpr void put_address(program_writer& w, const std::optional<address>& a) {
  if (a) put_address<R>(w, *a);
}
template <class A, std::size_t N>
constexpr void put_array(program_writer& w, const std::array<A, N>& elements) {
  for (unsigned i = 0; i < N; ++i) w.put(elements[i], A::first_number + i);
}
template <class Stage>
constexpr void put_alu_mul(program_writer& w, const Stage& s) {
  w.put(s.cfg);
  w.put(s.alu);
  w.put(s.mul);
  w.put(s.relux);
}

constexpr void put_stage(program_writer& w, const cna_stage& s) {
  using namespace reg;
  w.put(s.conv_con1);
  w.put(s.conv_con2);
  w.put(s.conv_con3);
  w.put(s.data_size0);
  w.put(s.data_size1);
  w.put(s.data_size2);
  w.put(s.data_size3);
  w.put(s.weight_size0);
  w.put(s.weight_size1);
  w.put(s.weight_size2);
  w.put(s.cbuf_con0);
  w.put(s.cbuf_con1);
  w.put(s.cvt_con0);
  put_array(w, s.cvt_con);
  w.put(s.fc_con0);
  w.put(s.fc_con1);
  w.put(s.pad_con0);
  put_address<CNA_FEATURE_DATA_ADDR>(w, s.feature);
  w.put(s.fc_con2);
  w.put(s.dma_con0);
  w.put(s.dma_con1);
  w.put(s.dma_con2);
  w.put(s.fc_data_size0);
  w.put(s.fc_data_size1);
  w.put(s.dcomp_ctrl);
  w.put(s.dcomp_regnum);
  put_address<CNA_DCOMP_ADDR0>(w, s.weight);
  put_array(w, s.dcomp_amount);
  w.put(s.cvt_con5);
  w.put(s.pad_con1);
}

constexpr void put_stage(program_writer& w, const core_stage& s) {
  w.put(s.misc_cfg);
  w.put(s.dataout_size_0);
  w.put(s.dataout_size_1);
  w.put(s.clip_truncate);
  w.put(s.unnamed_3030);
}

// Everything of the DPU but its S_POINTER, which leads the task.
constexpr void put_stage(program_writer& w, const dpu_stage& s) {
  using namespace reg;
  w.put(s.feature_mode);
  w.put(s.data_format);
  if (s.complete) w.put(s.offset_pend);
  put_address<DPU_DST_BASE_ADDR>(w, s.output);
  w.put(s.dst_surf_stride);
  w.put(s.cube_width);
  w.put(s.cube_height);
  w.put(s.cube_notch);
  w.put(s.cube_channel);
  put_alu_mul(w, s.bs);
  w.put(s.bs_ow_cfg);
  w.put(s.bs_ow_op);
  w.put(s.wdma_size_0);
  w.put(s.wdma_size_1);
  put_alu_mul(w, s.bn);
  w.put(s.ew.cfg);
  w.put(s.ew.cvt_offset);
  w.put(s.ew.cvt_scale);
  w.put(s.ew.relux);
  w.put(s.out_convert.offset);
  w.put(s.out_convert.scale);
  w.put(s.out_convert.shift);
  put_array(w, s.ew.operands);
  w.put(s.surface_add);
  if (!s.complete && !s.lut_config) return;
  w.put(s.unnamed_40c4);
  if (s.complete) {
    w.put(s.lut.access_cfg);
    w.put(s.lut.access_data);
  }
  w.put(s.lut.cfg);
  w.put(s.lut.info);
  w.put(s.lut.le_start);
  w.put(s.lut.le_end);
  w.put(s.lut.lo_start);
  w.put(s.lut.lo_end);
  w.put(s.lut.le_slope_scale);
  w.put(s.lut.le_slope_shift);
  w.put(s.lut.lo_slope_scale);
  w.put(s.lut.lo_slope_shift);
}

// LUT_ACCESS_CFG in write mode at entry 0 of a table, then its entries (auto-increment).
// The data entry is encoded once and each entry takes its 16 bits (the whole field, so
// nothing is cut): a thousand full encodings cost clang's constant evaluator ~0.5 s.
constexpr void put_lut_upload(program_writer& w, const lut_upload& u) {
  using namespace reg;
  static_assert(decltype(DPU_LUT_ACCESS_DATA::LUT_ACCESS_DATA)::shape.max_value() == 0xffff);
  const entry data = encode(DPU_LUT_ACCESS_DATA{}).value();
  for (const std::int16_t* table : {u.le, u.lo}) {
    w.put(DPU_LUT_ACCESS_CFG{.LUT_TABLE_ID = table == u.lo, .LUT_ACCESS_TYPE = 1});
    for (std::uint32_t i = 0; i < u.entries; ++i) w.put_raw(data.with_value(static_cast<std::uint16_t>(table[i])));
  }
}

constexpr void put_stage(program_writer& w, const dpu_rdma_stage& s) {
  using namespace reg;
  w.put(s.pointer);
  w.put(s.cube_width);
  w.put(s.cube_height);
  w.put(s.cube_channel);
  put_address<DPU_RDMA_RDMA_SRC_BASE_ADDR>(w, s.source);
  w.put(s.brdma_cfg);
  put_address<DPU_RDMA_RDMA_BS_BASE_ADDR>(w, s.bs_operand);
  w.put(s.nrdma_cfg);
  put_address<DPU_RDMA_RDMA_BN_BASE_ADDR>(w, s.bn_operand);
  w.put(s.erdma_cfg);
  if (s.ew_operand) {
    put_address<DPU_RDMA_RDMA_EW_BASE_ADDR>(w, *s.ew_operand);
    w.put(s.ew_surf_stride);
  }
  w.put(s.feature_mode);
  w.put(s.src_dma_cfg);
  w.put(s.surf_notch);
  w.put(s.pad_cfg);
  w.put(s.weight);
  w.put(s.ew_surf_notch);
}

constexpr void put_stage(program_writer& w, const ppu_stage& s) {
  w.put(s.pointer);
  w.put(s.cube_in_width);
  w.put(s.cube_in_height);
  w.put(s.cube_in_channel);
  w.put(s.cube_out_width);
  w.put(s.cube_out_height);
  w.put(s.cube_out_channel);
  w.put(s.operation_mode);
  w.put(s.kernel);
  w.put(s.recip_kernel_width);
  w.put(s.recip_kernel_height);
  w.put(s.padding);
  w.put(s.padding_value_1);
  w.put(s.padding_value_2);
  put_address<reg::PPU_DST_BASE_ADDR>(w, s.output);
  w.put(s.dst_surf_stride);
  w.put(s.data_format);
  w.put(s.misc_ctrl);
}

constexpr void put_stage(program_writer& w, const ppu_rdma_stage& s) {
  w.put(s.pointer);
  w.put(s.cube_in_width);
  w.put(s.cube_in_height);
  w.put(s.cube_in_channel);
  put_address<reg::PPU_RDMA_RDMA_SRC_BASE_ADDR>(w, s.source);
  w.put(s.src_line_stride);
  w.put(s.src_surf_stride);
  w.put(s.data_format);
}
}  // namespace detail

constexpr void emit_task(program_writer& w, const task_desc& t) {
  w.begin_task();
  if (t.dpu && t.dpu->upload) detail::put_lut_upload(w, *t.dpu->upload);
  if (t.dpu) w.put(t.dpu->pointer);
  if (t.cna) detail::put_stage(w, *t.cna);
  if (t.core) detail::put_stage(w, *t.core);
  if (t.dpu) detail::put_stage(w, *t.dpu);
  if (t.dpu_rdma) detail::put_stage(w, *t.dpu_rdma);
  if (t.ppu) detail::put_stage(w, *t.ppu);
  if (t.ppu_rdma) detail::put_stage(w, *t.ppu_rdma);
  w.end_task(enable_of(t), completion_interrupts(t));
}

}  // namespace regcmd
