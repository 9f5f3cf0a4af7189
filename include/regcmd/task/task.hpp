#pragma once
// The task skeleton: one task described as data, a stage per block, every register of a
// stage a typed member that defaults to what the hardware-run programs write where an op
// does not use it (the bypass values). An op is "the values that differ from the defaults";
// regcmd/task/emit_task.hpp writes any description in one canonical order, derives the
// op-enable word and the completion interrupts from the stages present, and writes the tail.
//
//   task_desc t;
//   t.dpu = dpu_stage{.data_format = {...}, .output = {operand_role::output, 0, bytes}, ...};
//   t.dpu_rdma = dpu_rdma_stage{...};
//   emit_task(writer, t);                       // enable 0x18, interrupts DPU_0 | DPU_1
//
// Members without a default must be given: the precision registers (core/field.hpp: a
// precision's 0 is int8) and the address slots. Sources of the defaults: matmul-recipe §1.1
// (implementation A's complete write list), §2.2 (B), Mesa's conv emission (fact sheet §5.2),
// ops-reference §5 (pooling); docs/matmul-values.md and docs/sdp-values.md per value.

#include <array>
#include <cstdint>
#include <optional>

#include <regcmd/task/program.hpp>
#include <regcmd/registers/cna.hpp>
#include <regcmd/registers/control.hpp>
#include <regcmd/registers/core.hpp>
#include <regcmd/registers/dpu.hpp>
#include <regcmd/registers/dpu_rdma.hpp>
#include <regcmd/registers/ppu.hpp>
#include <regcmd/registers/ppu_rdma.hpp>

namespace regcmd {

// An address register of the task: the operand buffer it points into, the byte offset into
// it, and how many bytes the DMA reaches from there (a slot of the program).
struct address {
  operand_role role{};
  std::uint32_t offset = 0;
  std::uint32_t extent = 0;
  friend constexpr bool operator==(const address&, const address&) = default;
};

// The registers of a register array, every element `value`. Built element by element: g++ 12
// misreads some value-initialized arrays of one-field registers in constant evaluation (an
// array of 16 reads as uninitialized), and assigned elements it reads right.
template <class A>
constexpr std::array<A, A::count> every_element(const A& value) {
  std::array<A, A::count> out{};
  for (A& e : out) e = value;
  return out;
}

// CNA: feature and weight input. Defaults: stride 1, the template split 0xb1 (one data
// bank), the input conversion bypassed (0xb) with unit scales, bursts of 16 (A, B, Mesa).
struct cna_stage {
  reg::CNA_CONV_CON1 conv_con1;
  reg::CNA_CONV_CON2 conv_con2{};
  reg::CNA_CONV_CON3 conv_con3{.CONV_X_STRIDE = 1, .CONV_Y_STRIDE = 1};
  reg::CNA_DATA_SIZE0 data_size0{};
  reg::CNA_DATA_SIZE1 data_size1{};
  reg::CNA_DATA_SIZE2 data_size2{};
  reg::CNA_DATA_SIZE3 data_size3{};
  reg::CNA_WEIGHT_SIZE0 weight_size0{};
  reg::CNA_WEIGHT_SIZE1 weight_size1{};
  reg::CNA_WEIGHT_SIZE2 weight_size2{};
  reg::CNA_CBUF_CON0 cbuf_con0{.DATA_BANK = 1, .WEIGHT_BANK = 11};
  reg::CNA_CBUF_CON1 cbuf_con1{};
  reg::CNA_CVT_CON0 cvt_con0{.CVT_BYPASS = 1, .CVT_TYPE = 1, .DATA_SIGN = 1};
  std::array<reg::CNA_CVT_CON, reg::CNA_CVT_CON::count> cvt_con = every_element(reg::CNA_CVT_CON{.CVT_SCALE = 1});
  reg::CNA_FC_CON0 fc_con0{};
  reg::CNA_FC_CON1 fc_con1{};
  reg::CNA_PAD_CON0 pad_con0{};
  address feature;  // CNA_FEATURE_DATA_ADDR
  reg::CNA_FC_CON2 fc_con2{};
  reg::CNA_DMA_CON0 dma_con0{.DATA_BURST_LEN = 15, .WEIGHT_BURST_LEN = 15};
  reg::CNA_DMA_CON1 dma_con1{};
  reg::CNA_DMA_CON2 dma_con2{};
  reg::CNA_FC_DATA_SIZE0 fc_data_size0{};
  reg::CNA_FC_DATA_SIZE1 fc_data_size1{};
  reg::CNA_DCOMP_CTRL dcomp_ctrl{};
  reg::CNA_DCOMP_REGNUM dcomp_regnum{};
  address weight;  // CNA_DCOMP_ADDR0
  std::array<reg::CNA_DCOMP_AMOUNT, reg::CNA_DCOMP_AMOUNT::count> dcomp_amount = every_element(reg::CNA_DCOMP_AMOUNT{});
  reg::CNA_CVT_CON5 cvt_con5{};
  reg::CNA_PAD_CON1 pad_con1{};
};

// CORE: the MAC array.
struct core_stage {
  reg::CORE_MISC_CFG misc_cfg;
  reg::CORE_DATAOUT_SIZE_0 dataout_size_0{};
  reg::CORE_DATAOUT_SIZE_1 dataout_size_1{};
  reg::CORE_CLIP_TRUNCATE clip_truncate{};
  reg::CORE_UNNAMED_3030 unnamed_3030{};  // 0 in A, B and Mesa
};

// The DPU's BS (bias/scale) or BN (batch-norm) stage: the same four registers, fully
// bypassed by default (0x53).
template <class Cfg, class Alu, class Mul, class Relux, const Cfg& Bypassed>
struct alu_mul_stage {
  Cfg cfg = Bypassed;
  Alu alu{};
  Mul mul{};
  Relux relux{};
};
using bs_stage = alu_mul_stage<reg::DPU_BS_CFG, reg::DPU_BS_ALU_CFG, reg::DPU_BS_MUL_CFG, reg::DPU_BS_RELUX_CMP_VALUE,
                               reg::bypass::bs>;
using bn_stage = alu_mul_stage<reg::DPU_BN_CFG, reg::DPU_BN_ALU_CFG, reg::DPU_BN_MUL_CFG, reg::DPU_BN_RELUX_CMP_VALUE,
                               reg::bypass::bn>;

// The DPU's element-wise stage, bypassed (0x383) with a unit operand scale by default; the
// operand values are a register immediate, one per operand group.
struct ew_stage {
  reg::DPU_EW_CFG cfg = reg::bypass::ew;
  reg::DPU_EW_CVT_OFFSET_VALUE cvt_offset{};
  reg::DPU_EW_CVT_SCALE_VALUE cvt_scale{.EW_OP_CVT_SCALE = 1};
  reg::DPU_EW_RELUX_CMP_VALUE relux{};
  std::array<reg::DPU_EW_OP_VALUE, reg::DPU_EW_OP_VALUE::count> operands = every_element(reg::DPU_EW_OP_VALUE{});
};

// The DPU's output conversion: the identity (scale 1) by default.
struct out_convert_stage {
  reg::DPU_OUT_CVT_OFFSET offset{};
  reg::DPU_OUT_CVT_SCALE scale{.OUT_CVT_SCALE = 1};
  reg::DPU_OUT_CVT_SHIFT shift{};
};

// The DPU's lookup tables (LE and LO), unused (0) by default.
struct lut_stage {
  reg::DPU_LUT_ACCESS_CFG access_cfg{};
  reg::DPU_LUT_ACCESS_DATA access_data{};
  reg::DPU_LUT_CFG cfg{};
  reg::DPU_LUT_INFO info{};
  reg::DPU_LUT_LE_START le_start{};
  reg::DPU_LUT_LE_END le_end{};
  reg::DPU_LUT_LO_START lo_start{};
  reg::DPU_LUT_LO_END lo_end{};
  reg::DPU_LUT_LE_SLOPE_SCALE le_slope_scale{};
  reg::DPU_LUT_LE_SLOPE_SHIFT le_slope_shift{};
  reg::DPU_LUT_LO_SLOPE_SCALE lo_slope_scale{};
  reg::DPU_LUT_LO_SLOPE_SHIFT lo_slope_shift{};
};

// Tables for the DPU's lookup table, written through LUT_ACCESS_CFG / LUT_ACCESS_DATA: the LE
// table then the LO table, `entries` signed 16-bit values each (ops-reference §6.2).
struct lut_upload {
  const std::int16_t* le = nullptr;
  const std::int16_t* lo = nullptr;
  std::uint32_t entries = 0;
};

// DPU: the output stage. Defaults: ping-pong pointer (0xe), output to memory with bursts of
// 16 (0x1e4), every stage bypassed.
struct dpu_stage {
  reg::DPU_S_POINTER pointer = reg::pingpong_pointer<reg::DPU_S_POINTER>();
  reg::DPU_FEATURE_MODE_CFG feature_mode{.OUTPUT_MODE = 2, .BURST_LEN = 15};
  reg::DPU_DATA_FORMAT data_format;
  reg::DPU_OFFSET_PEND offset_pend{};
  address output;  // DPU_DST_BASE_ADDR
  reg::DPU_DST_SURF_STRIDE dst_surf_stride{};
  reg::DPU_DATA_CUBE_WIDTH cube_width{};
  reg::DPU_DATA_CUBE_HEIGHT cube_height{};
  reg::DPU_DATA_CUBE_NOTCH_ADDR cube_notch{};
  reg::DPU_DATA_CUBE_CHANNEL cube_channel{};
  bs_stage bs{};
  reg::DPU_BS_OW_CFG bs_ow_cfg{};
  reg::DPU_BS_OW_OP bs_ow_op{};
  reg::DPU_WDMA_SIZE_0 wdma_size_0{};
  reg::DPU_WDMA_SIZE_1 wdma_size_1{};
  bn_stage bn{};
  ew_stage ew{};
  out_convert_stage out_convert{};
  reg::DPU_SURFACE_ADD surface_add{};
  reg::DPU_UNNAMED_40C4 unnamed_40c4{};  // 0 in A, B and Mesa
  lut_stage lut{};
  // The complete write list (implementation A, Mesa, the vendor's matmul and conv: 51 DPU
  // entries) also writes OFFSET_PEND, 0x40C4 and the LUT stage, so that nothing an earlier
  // task left there survives; the vendor's element-wise captures leave those 14 out.
  bool complete = true;
  // A lookup-table op without the complete list writes 0x40C4 and the LUT configuration
  // (LUT_CFG to the slopes) but not the access pair (AB-SILU's order, ops-reference §6.2).
  bool lut_config = false;
  // Tables uploaded at the start of the task, before every other register (AB-SILU, AB-OPS).
  std::optional<lut_upload> upload{};
};

// DPU_RDMA: the DPU's reads (the main feature in flying mode, the BS/BN/EW operands). An
// address left empty is not written; the EW operand's surface stride goes with its address.
// Defaults: no second operand (ERDMA_DISABLE), unit operand weights (0x01010101, Mesa, the
// vendor captures).
struct dpu_rdma_stage {
  reg::DPU_RDMA_RDMA_S_POINTER pointer = reg::pingpong_pointer<reg::DPU_RDMA_RDMA_S_POINTER>();
  reg::DPU_RDMA_RDMA_DATA_CUBE_WIDTH cube_width{};
  reg::DPU_RDMA_RDMA_DATA_CUBE_HEIGHT cube_height{};
  reg::DPU_RDMA_RDMA_DATA_CUBE_CHANNEL cube_channel{};
  std::optional<address> source{};  // DPU_RDMA_RDMA_SRC_BASE_ADDR
  reg::DPU_RDMA_RDMA_BRDMA_CFG brdma_cfg{};
  std::optional<address> bs_operand{};  // DPU_RDMA_RDMA_BS_BASE_ADDR
  reg::DPU_RDMA_RDMA_NRDMA_CFG nrdma_cfg{};
  std::optional<address> bn_operand{};  // DPU_RDMA_RDMA_BN_BASE_ADDR
  reg::DPU_RDMA_RDMA_ERDMA_CFG erdma_cfg{.ERDMA_DISABLE = 1};
  std::optional<address> ew_operand{};  // DPU_RDMA_RDMA_EW_BASE_ADDR
  reg::DPU_RDMA_RDMA_EW_SURF_STRIDE ew_surf_stride{};
  reg::DPU_RDMA_RDMA_FEATURE_MODE_CFG feature_mode;
  reg::DPU_RDMA_RDMA_SRC_DMA_CFG src_dma_cfg{};
  reg::DPU_RDMA_RDMA_SURF_NOTCH surf_notch{};
  reg::DPU_RDMA_RDMA_PAD_CFG pad_cfg{};
  reg::DPU_RDMA_RDMA_WEIGHT weight{.M_WEIGHT = 1, .B_WEIGHT = 1, .N_WEIGHT = 1, .E_WEIGHT = 1};
  reg::DPU_RDMA_RDMA_EW_SURF_NOTCH ew_surf_notch{};
};

// PPU: pooling, writing to memory. Defaults: ping-pong pointer, bursts of 4 (MISC_CTRL 3,
// AB-POOL and the vendor's maxpool, ops-reference §5).
struct ppu_stage {
  reg::PPU_S_POINTER pointer = reg::pingpong_pointer<reg::PPU_S_POINTER>();
  reg::PPU_DATA_CUBE_IN_WIDTH cube_in_width{};
  reg::PPU_DATA_CUBE_IN_HEIGHT cube_in_height{};
  reg::PPU_DATA_CUBE_IN_CHANNEL cube_in_channel{};
  reg::PPU_DATA_CUBE_OUT_WIDTH cube_out_width{};
  reg::PPU_DATA_CUBE_OUT_HEIGHT cube_out_height{};
  reg::PPU_DATA_CUBE_OUT_CHANNEL cube_out_channel{};
  reg::PPU_OPERATION_MODE_CFG operation_mode{};
  reg::PPU_POOLING_KERNEL_CFG kernel{};
  reg::PPU_RECIP_KERNEL_WIDTH recip_kernel_width{};
  reg::PPU_RECIP_KERNEL_HEIGHT recip_kernel_height{};
  reg::PPU_POOLING_PADDING_CFG padding{};
  reg::PPU_PADDING_VALUE_1_CFG padding_value_1{};
  reg::PPU_PADDING_VALUE_2_CFG padding_value_2{};
  address output;  // PPU_DST_BASE_ADDR
  reg::PPU_DST_SURF_STRIDE dst_surf_stride{};
  reg::PPU_DATA_FORMAT data_format;
  reg::PPU_MISC_CTRL misc_ctrl{.BURST_LEN = 3};
};

// PPU_RDMA: the PPU's own read of its input (flying mode).
struct ppu_rdma_stage {
  reg::PPU_RDMA_RDMA_S_POINTER pointer = reg::pingpong_pointer<reg::PPU_RDMA_RDMA_S_POINTER>();
  reg::PPU_RDMA_RDMA_CUBE_IN_WIDTH cube_in_width{};
  reg::PPU_RDMA_RDMA_CUBE_IN_HEIGHT cube_in_height{};
  reg::PPU_RDMA_RDMA_CUBE_IN_CHANNEL cube_in_channel{};
  address source;  // PPU_RDMA_RDMA_SRC_BASE_ADDR
  reg::PPU_RDMA_RDMA_SRC_LINE_STRIDE src_line_stride{};
  reg::PPU_RDMA_RDMA_SRC_SURF_STRIDE src_surf_stride{};
  reg::PPU_RDMA_RDMA_DATA_FORMAT data_format{};
};

// One task: the blocks it runs, each with its registers. A block left empty is not enabled
// and none of its registers is written.
struct task_desc {
  std::optional<cna_stage> cna{};
  std::optional<core_stage> core{};
  std::optional<dpu_stage> dpu{};
  std::optional<dpu_rdma_stage> dpu_rdma{};
  std::optional<ppu_stage> ppu{};
  std::optional<ppu_rdma_stage> ppu_rdma{};
};

}  // namespace regcmd
