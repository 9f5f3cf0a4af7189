#pragma once
// The bytes each DMA of a task touches from its base address, implied by the registers the
// task runs with: what an address slot's extent must cover (rule slot-extent), so that
// binding a buffer too small for what the NPU reads or writes is refused.
//
// Lower bounds, in the layouts the reference measured and Mesa's conv:
//   CNA feature  row-major (CNA_CONV_CON1 GROUP_LINE_OFF): M rows LINE_STRIDE·16 bytes apart,
//                each K elements (int4: K bytes, read as int8 lines); surface: K/atom surfaces
//                (SURF_STRIDE + LINE_STRIDE)·16 bytes apart, of M rows LINE_STRIDE·4 bytes
//                apart, each W (DATAIN_WIDTH) 16-byte atoms (reference "Key registers"
//                0x107c/0x1080, ops-reference §2.1; the M = 1 stride wraps to one row)
//   CNA weight   CNA_WEIGHT_SIZE0 WEIGHT_BYTES
//   DPU output   row-major: M rows (NOTCH_ADDR_1 + 1)·4 outputs apart, N outputs each;
//                otherwise ceil(C·bytes/16) surfaces DST_SURF_STRIDE·16 bytes apart of W·H
//                16-byte atoms (reference "Key registers" 0x4024, 0x4038)
//   DPU_RDMA     source: ceil(C·bytes/16) contiguous surfaces of W·H atoms (the MRDMA has no
//                source stride); EW operand: C elements per channel, or surfaces
//                EW_SURF_STRIDE·16 bytes apart (reference "0x5034 DPU_RDMA_RDMA_ERDMA_CFG")
//   BS operand   while BRDMA_DATA_USE is set: an int32 per channel (Mesa's conv bias)
//   PPU_RDMA     ceil(C·bytes/16) surfaces SRC_SURF_STRIDE·16 bytes apart of H rows
//                SRC_LINE_STRIDE·16 bytes apart, each W atoms (ops-reference §5.1)
//   PPU output   ceil(C·bytes/16) surfaces DST_SURF_STRIDE·16 bytes apart of out_w·out_h
//                atoms (ops-reference §5.1, lines packed)
//   others       (BN while its DATA_USE is set): one 16-byte atom while the block runs
// A register the program never wrote counts as 0, its reset value.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <regcmd/core/precision.hpp>
#include <regcmd/core/entry.hpp>
#include <regcmd/registers/addresses.hpp>
#include <regcmd/registers/cna.hpp>
#include <regcmd/registers/core.hpp>
#include <regcmd/registers/dpu.hpp>
#include <regcmd/registers/dpu_rdma.hpp>
#include <regcmd/registers/global.hpp>
#include <regcmd/registers/ppu.hpp>
#include <regcmd/registers/ppu_rdma.hpp>

namespace regcmd {

// The register values the extents read, as the task's op-enable sees them.
struct dma_state {
  std::uint32_t conv_con1 = 0, data_size0 = 0, data_size1 = 0, weight_size0 = 0, dma_con1 = 0, dma_con2 = 0;
  std::uint32_t data_format = 0, dst_surf_stride = 0, cube_width = 0, cube_height = 0, cube_notch = 0, cube_channel = 0;
  std::uint32_t rdma_width = 0, rdma_height = 0, rdma_channel = 0, rdma_feature_mode = 0, erdma_cfg = 0,
                ew_surf_stride = 0, brdma_cfg = 0, nrdma_cfg = 0;
  std::uint32_t ppu_out_width = 0, ppu_out_height = 0, ppu_out_channel = 0, ppu_dst_surf_stride = 0, ppu_data_format = 0;
  std::uint32_t ppu_rdma_width = 0, ppu_rdma_height = 0, ppu_rdma_channel = 0, ppu_rdma_line_stride = 0,
                ppu_rdma_surf_stride = 0, ppu_rdma_data_format = 0;

  // One switch on the offset (each block owns its own offset window, so an offset names
  // one register): programs are validated entry by entry at compile time, where every
  // comparison is a counted step.
  constexpr void write(entry e) {
    using namespace reg;
    std::uint32_t* field = nullptr;
    block_id block{};
    switch (e.offset()) {
      case CNA_CONV_CON1::offset: field = &conv_con1, block = CNA_CONV_CON1::block; break;
      case CNA_DATA_SIZE0::offset: field = &data_size0, block = CNA_DATA_SIZE0::block; break;
      case CNA_DATA_SIZE1::offset: field = &data_size1, block = CNA_DATA_SIZE1::block; break;
      case CNA_WEIGHT_SIZE0::offset: field = &weight_size0, block = CNA_WEIGHT_SIZE0::block; break;
      case CNA_DMA_CON1::offset: field = &dma_con1, block = CNA_DMA_CON1::block; break;
      case CNA_DMA_CON2::offset: field = &dma_con2, block = CNA_DMA_CON2::block; break;
      case DPU_DATA_FORMAT::offset: field = &data_format, block = DPU_DATA_FORMAT::block; break;
      case DPU_DST_SURF_STRIDE::offset: field = &dst_surf_stride, block = DPU_DST_SURF_STRIDE::block; break;
      case DPU_DATA_CUBE_WIDTH::offset: field = &cube_width, block = DPU_DATA_CUBE_WIDTH::block; break;
      case DPU_DATA_CUBE_HEIGHT::offset: field = &cube_height, block = DPU_DATA_CUBE_HEIGHT::block; break;
      case DPU_DATA_CUBE_NOTCH_ADDR::offset: field = &cube_notch, block = DPU_DATA_CUBE_NOTCH_ADDR::block; break;
      case DPU_DATA_CUBE_CHANNEL::offset: field = &cube_channel, block = DPU_DATA_CUBE_CHANNEL::block; break;
      case DPU_RDMA_RDMA_DATA_CUBE_WIDTH::offset: field = &rdma_width, block = DPU_RDMA_RDMA_DATA_CUBE_WIDTH::block; break;
      case DPU_RDMA_RDMA_DATA_CUBE_HEIGHT::offset: field = &rdma_height, block = DPU_RDMA_RDMA_DATA_CUBE_HEIGHT::block; break;
      case DPU_RDMA_RDMA_DATA_CUBE_CHANNEL::offset: field = &rdma_channel, block = DPU_RDMA_RDMA_DATA_CUBE_CHANNEL::block; break;
      case DPU_RDMA_RDMA_FEATURE_MODE_CFG::offset: field = &rdma_feature_mode, block = DPU_RDMA_RDMA_FEATURE_MODE_CFG::block; break;
      case DPU_RDMA_RDMA_ERDMA_CFG::offset: field = &erdma_cfg, block = DPU_RDMA_RDMA_ERDMA_CFG::block; break;
      case DPU_RDMA_RDMA_EW_SURF_STRIDE::offset: field = &ew_surf_stride, block = DPU_RDMA_RDMA_EW_SURF_STRIDE::block; break;
      case DPU_RDMA_RDMA_BRDMA_CFG::offset: field = &brdma_cfg, block = DPU_RDMA_RDMA_BRDMA_CFG::block; break;
      case DPU_RDMA_RDMA_NRDMA_CFG::offset: field = &nrdma_cfg, block = DPU_RDMA_RDMA_NRDMA_CFG::block; break;
      case PPU_DATA_CUBE_OUT_WIDTH::offset: field = &ppu_out_width, block = PPU_DATA_CUBE_OUT_WIDTH::block; break;
      case PPU_DATA_CUBE_OUT_HEIGHT::offset: field = &ppu_out_height, block = PPU_DATA_CUBE_OUT_HEIGHT::block; break;
      case PPU_DATA_CUBE_OUT_CHANNEL::offset: field = &ppu_out_channel, block = PPU_DATA_CUBE_OUT_CHANNEL::block; break;
      case PPU_DST_SURF_STRIDE::offset: field = &ppu_dst_surf_stride, block = PPU_DST_SURF_STRIDE::block; break;
      case PPU_DATA_FORMAT::offset: field = &ppu_data_format, block = PPU_DATA_FORMAT::block; break;
      case PPU_RDMA_RDMA_CUBE_IN_WIDTH::offset: field = &ppu_rdma_width, block = PPU_RDMA_RDMA_CUBE_IN_WIDTH::block; break;
      case PPU_RDMA_RDMA_CUBE_IN_HEIGHT::offset: field = &ppu_rdma_height, block = PPU_RDMA_RDMA_CUBE_IN_HEIGHT::block; break;
      case PPU_RDMA_RDMA_CUBE_IN_CHANNEL::offset: field = &ppu_rdma_channel, block = PPU_RDMA_RDMA_CUBE_IN_CHANNEL::block; break;
      case PPU_RDMA_RDMA_SRC_LINE_STRIDE::offset: field = &ppu_rdma_line_stride, block = PPU_RDMA_RDMA_SRC_LINE_STRIDE::block; break;
      case PPU_RDMA_RDMA_SRC_SURF_STRIDE::offset: field = &ppu_rdma_surf_stride, block = PPU_RDMA_RDMA_SRC_SURF_STRIDE::block; break;
      case PPU_RDMA_RDMA_DATA_FORMAT::offset: field = &ppu_rdma_data_format, block = PPU_RDMA_RDMA_DATA_FORMAT::block; break;
      default: return;
    }
    if (e.target() == static_cast<std::uint16_t>(block)) *field = e.value();
  }
};

namespace detail {

// The 16-byte atoms that `channels` elements of `bits` bits each take.
constexpr std::uint64_t atoms(std::uint64_t channels, std::uint64_t bits) { return (channels * bits + 127) / 128; }

// A W x H x C cube of `bits`-bit elements, laid out as ceil(C·bits/128) surfaces of W·H
// 16-byte atoms: what each DMA below reads or writes, as its registers give it.
struct cube {
  std::uint64_t w = 0, h = 0, c = 0, bits = 0;
  constexpr std::uint64_t surfaces() const { return atoms(c, bits); }
  // The surfaces packed one after another: the bytes the DMA moves.
  constexpr std::uint64_t bytes() const { return surfaces() * w * h * 16; }
  // The surfaces `stride` bytes apart: the span the DMA reaches.
  constexpr std::uint64_t span(std::uint64_t stride) const { return (surfaces() - 1) * stride + w * h * 16; }
};

// The CNA's feature cube: DATAIN_WIDTH (at least 1) x M rows x K channels.
constexpr cube cna_feature_cube(const dma_state& s) {
  using namespace reg;
  return {std::max<std::uint64_t>(unpack<CNA_DATA_SIZE0>(s.data_size0).DATAIN_WIDTH.value(), 1),
          unpack<CNA_DATA_SIZE0>(s.data_size0).DATAIN_HEIGHT.value(), unpack<CNA_DATA_SIZE1>(s.data_size1).DATAIN_CHANNEL.value(),
          traits(unpack<CNA_CONV_CON1>(s.conv_con1).IN_PRECISION.value()).bits_per_element};
}
// A row-major feature row: K elements; int4 rows are read as int8 lines, K bytes: the
// nibbles and a zero half-line ("0x107c").
constexpr std::uint64_t cna_feature_row(const dma_state& s) {
  using namespace reg;
  const precision in = unpack<CNA_CONV_CON1>(s.conv_con1).IN_PRECISION.value();
  const std::uint64_t K = unpack<CNA_DATA_SIZE1>(s.data_size1).DATAIN_CHANNEL.value();
  return in == precision::int4 ? K : bytes_of(in, K);
}
constexpr bool row_major_features(const dma_state& s) {
  return unpack<reg::CNA_CONV_CON1>(s.conv_con1).GROUP_LINE_OFF.value();
}

constexpr cube dpu_output_cube(const dma_state& s) {
  using namespace reg;
  return {unpack<DPU_DATA_CUBE_WIDTH>(s.cube_width).WIDTH.value() + 1ull, unpack<DPU_DATA_CUBE_HEIGHT>(s.cube_height).HEIGHT.value() + 1ull,
          unpack<DPU_DATA_CUBE_CHANNEL>(s.cube_channel).CHANNEL.value() + 1ull,
          traits(unpack<DPU_DATA_FORMAT>(s.data_format).OUT_PRECISION.value()).bits_per_element};
}

// The DPU_RDMA's cube at `bits` a element (its source's precision, or the EW operand's size).
constexpr cube rdma_cube(const dma_state& s, std::uint64_t bits) {
  using namespace reg;
  return {unpack<DPU_RDMA_RDMA_DATA_CUBE_WIDTH>(s.rdma_width).WIDTH.value() + 1ull,
          unpack<DPU_RDMA_RDMA_DATA_CUBE_HEIGHT>(s.rdma_height).HEIGHT.value() + 1ull,
          unpack<DPU_RDMA_RDMA_DATA_CUBE_CHANNEL>(s.rdma_channel).CHANNEL.value() + 1ull, bits};
}
constexpr std::uint64_t rdma_source_bits(const dma_state& s) {
  return traits(unpack<reg::DPU_RDMA_RDMA_FEATURE_MODE_CFG>(s.rdma_feature_mode).IN_PRECISION.value()).bits_per_element;
}
constexpr std::uint64_t ew_operand_bits(const dma_state& s) {
  constexpr std::uint64_t bits_of_size[] = {4, 8, 16, 32};  // data_size: four_bit .. four_byte
  return bits_of_size[static_cast<std::size_t>(unpack<reg::DPU_RDMA_RDMA_ERDMA_CFG>(s.erdma_cfg).ERDMA_DATA_SIZE.value()) & 3];
}
constexpr bool ew_per_channel(const dma_state& s) {
  return unpack<reg::DPU_RDMA_RDMA_ERDMA_CFG>(s.erdma_cfg).ERDMA_DATA_MODE.value() == reg::ew_data_mode::per_channel;
}

constexpr cube ppu_output_cube(const dma_state& s) {
  using namespace reg;
  return {unpack<PPU_DATA_CUBE_OUT_WIDTH>(s.ppu_out_width).CUBE_OUT_WIDTH.value() + 1ull,
          unpack<PPU_DATA_CUBE_OUT_HEIGHT>(s.ppu_out_height).CUBE_OUT_HEIGHT.value() + 1ull,
          unpack<PPU_DATA_CUBE_OUT_CHANNEL>(s.ppu_out_channel).CUBE_OUT_CHANNEL.value() + 1ull,
          traits(unpack<PPU_DATA_FORMAT>(s.ppu_data_format).PROC_PRECISION.value()).bits_per_element};
}
// IN_PRECISION is the storage width: 0 4-bit, 1 8-bit, 2 16-bit, 3 32-bit.
constexpr cube ppu_source_cube(const dma_state& s) {
  using namespace reg;
  return {unpack<PPU_RDMA_RDMA_CUBE_IN_WIDTH>(s.ppu_rdma_width).CUBE_IN_WIDTH.value() + 1ull,
          unpack<PPU_RDMA_RDMA_CUBE_IN_HEIGHT>(s.ppu_rdma_height).CUBE_IN_HEIGHT.value() + 1ull,
          unpack<PPU_RDMA_RDMA_CUBE_IN_CHANNEL>(s.ppu_rdma_channel).CUBE_IN_CHANNEL.value() + 1ull,
          std::uint64_t{4} << unpack<PPU_RDMA_RDMA_DATA_FORMAT>(s.ppu_rdma_data_format).IN_PRECISION.value()};
}

constexpr std::uint64_t cna_feature_extent(const dma_state& s) {
  using namespace reg;
  const cube f = cna_feature_cube(s);
  if (f.h == 0 || f.c == 0) return 0;
  const std::uint64_t line = unpack<CNA_DMA_CON1>(s.dma_con1).LINE_STRIDE.value();
  if (row_major_features(s)) return (f.h - 1) * line * 16 + cna_feature_row(s);
  constexpr std::uint64_t surf_mask = decltype(CNA_DMA_CON2::SURF_STRIDE)::shape.max_value();
  const std::uint64_t surface = ((unpack<CNA_DMA_CON2>(s.dma_con2).SURF_STRIDE.value() + line) & surf_mask) * 16;
  return (f.surfaces() - 1) * surface + (f.h - 1) * line * 4 + f.w * 16;
}

constexpr std::uint64_t dpu_output_extent(const dma_state& s, bool cna_runs) {
  using namespace reg;
  const cube o = dpu_output_cube(s);
  if (cna_runs && row_major_features(s)) {
    const std::uint64_t row = (unpack<DPU_DATA_CUBE_NOTCH_ADDR>(s.cube_notch).NOTCH_ADDR_1.value() + 1) * 4 * o.bits / 8;
    return (o.h - 1) * row + (o.c * o.bits + 7) / 8;
  }
  return o.span(unpack<DPU_DST_SURF_STRIDE>(s.dst_surf_stride).DST_SURF_STRIDE.value() * 16);
}

constexpr std::uint64_t rdma_source_extent(const dma_state& s) {
  if (unpack<reg::DPU_RDMA_RDMA_FEATURE_MODE_CFG>(s.rdma_feature_mode).MRDMA_DISABLE.value()) return 0;
  return rdma_cube(s, rdma_source_bits(s)).bytes();
}

constexpr std::uint64_t rdma_ew_extent(const dma_state& s) {
  using namespace reg;
  if (unpack<DPU_RDMA_RDMA_ERDMA_CFG>(s.erdma_cfg).ERDMA_DISABLE.value()) return 0;
  const cube e = rdma_cube(s, ew_operand_bits(s));
  if (ew_per_channel(s)) return (e.c * e.bits + 7) / 8;
  return e.span(unpack<DPU_RDMA_RDMA_EW_SURF_STRIDE>(s.ew_surf_stride).EW_SURF_STRIDE.value() * 16);
}

constexpr std::uint64_t ppu_output_extent(const dma_state& s) {
  return ppu_output_cube(s).span(unpack<reg::PPU_DST_SURF_STRIDE>(s.ppu_dst_surf_stride).DST_SURF_STRIDE.value() * 16);
}

constexpr std::uint64_t ppu_rdma_source_extent(const dma_state& s) {
  using namespace reg;
  const cube i = ppu_source_cube(s);
  const std::uint64_t line = unpack<PPU_RDMA_RDMA_SRC_LINE_STRIDE>(s.ppu_rdma_line_stride).SRC_LINE_STRIDE.value() * 16;
  const std::uint64_t surface = unpack<PPU_RDMA_RDMA_SRC_SURF_STRIDE>(s.ppu_rdma_surf_stride).SRC_SURF_STRIDE.value() * 16;
  return (i.surfaces() - 1) * surface + (i.h - 1) * line + i.w * 16;
}

}  // namespace detail

// The bytes the DMA through address register `a` (an index into address_registers)
// touches in a task enabling `blocks`; 0 when that DMA does not run. The PC's own
// addresses are the chain-link rule's.
constexpr std::uint64_t dma_extent(const dma_state& s, const address_register& a, reg::GLOBAL_OPERATION_ENABLE blocks) {
  using namespace reg;
  const bool cna = blocks.CNA_OP_EN.value(), dpu = blocks.DPU_OP_EN.value(), rdma = blocks.DPU_RDMA_OP_EN.value();
  switch (a.offset) {
    case CNA_FEATURE_DATA_ADDR::offset: return cna ? detail::cna_feature_extent(s) : 0;
    case CNA_DCOMP_ADDR0::offset: return cna ? unpack<CNA_WEIGHT_SIZE0>(s.weight_size0).WEIGHT_BYTES.value() : 0;
    case DPU_DST_BASE_ADDR::offset: return dpu ? detail::dpu_output_extent(s, cna) : 0;
    case DPU_RDMA_RDMA_SRC_BASE_ADDR::offset: return rdma ? detail::rdma_source_extent(s) : 0;
    case DPU_RDMA_RDMA_EW_BASE_ADDR::offset: return rdma ? detail::rdma_ew_extent(s) : 0;
    case DPU_RDMA_RDMA_BS_BASE_ADDR::offset:  // an int32 operand per channel (Mesa's conv bias)
      return rdma && unpack<DPU_RDMA_RDMA_BRDMA_CFG>(s.brdma_cfg).BRDMA_DATA_USE.value() != 0
                 ? (unpack<DPU_RDMA_RDMA_DATA_CUBE_CHANNEL>(s.rdma_channel).CHANNEL.value() + 1) * 4
                 : 0;
    case DPU_RDMA_RDMA_BN_BASE_ADDR::offset:
      return rdma && unpack<DPU_RDMA_RDMA_NRDMA_CFG>(s.nrdma_cfg).NRDMA_DATA_USE.value() != 0 ? 16 : 0;
    case PPU_DST_BASE_ADDR::offset: return blocks.PPU_OP_EN.value() ? detail::ppu_output_extent(s) : 0;
    case PPU_RDMA_RDMA_SRC_BASE_ADDR::offset: return blocks.PPU_RDMA_OP_EN.value() ? detail::ppu_rdma_source_extent(s) : 0;
    default: return 0;
  }
}

}  // namespace regcmd
