#pragma once
// What a program asks of the hardware, read from its registers alone: the bytes each DMA
// moves, the MACs of the CNA, the elements the DPU and PPU process, the regcmd the PC
// fetches. It works on regcmd's programs (tasks and slots known) and on captured dumps
// (tasks found at their op-enable entries) alike.
//
// Bytes moved, per task, in the layouts of rules/dma_extent.hpp (which gives the span a DMA
// reaches; here the bytes it fetches, strides left out):
//   regcmd       the task's entries, 8 bytes each, tail and LUT uploads included
//   feature      row-major: M rows of K elements (int4: K bytes, reference "0x107c");
//                surface: ceil(K·bits/128) surfaces of M·W 16-byte atoms; 0 with DATA_REUSE
//   weight       CNA_WEIGHT_SIZE0 WEIGHT_BYTES; 0 with WEIGHT_REUSE (the kernels stay in the
//                CBUF: ops-reference §2.2, Mesa's 0x2000 on a conv's later row tasks)
//   rdma_source  ceil(C·bits/128) surfaces of W·H atoms, unless MRDMA_DISABLE
//   ew_operand   per channel: C elements; per element: the source's atoms at its data size
//   bias / bn    an int32 per channel (BRDMA_DATA_USE), one atom (NRDMA_DATA_USE)
//   ppu_source   ceil(C·bits/128) surfaces of W·H atoms of the PPU_RDMA's input cube
//   output       row-major (the CNA's GROUP_LINE_OFF): H rows of C outputs; otherwise
//                ceil(C·bits/128) surfaces of W·H atoms; only while OUTPUT_MODE writes memory
//   ppu_output   ceil(C·bits/128) surfaces of out W·H atoms
// Work: MACs = DATAOUT_ATOMICS x WEIGHT_KERNELS x kernel W x H x DATAIN_CHANNEL (direct),
// DATAOUT_ATOMICS x DATAIN_CHANNEL x kernel W x H (depthwise): what the array computes,
// padding included. DPU elements = its output cube; PPU operations = output elements x
// kernel window. A register the program never wrote counts as 0, its reset value.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <regcmd/core/cost.hpp>
#include <regcmd/core/entry.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/task/program.hpp>
#include <regcmd/registers/all.hpp>
#include <regcmd/rules/dma_extent.hpp>

namespace regcmd {

// The stream an address register feeds (stream_count: none, e.g. the PC's own address).
constexpr std::size_t stream_of_address(std::uint16_t offset) {
  using namespace reg;
  switch (offset) {
    case CNA_FEATURE_DATA_ADDR::offset: return static_cast<std::size_t>(stream::feature);
    case CNA_DCOMP_ADDR0::offset: return static_cast<std::size_t>(stream::weight);
    case DPU_RDMA_RDMA_SRC_BASE_ADDR::offset: return static_cast<std::size_t>(stream::rdma_source);
    case DPU_RDMA_RDMA_EW_BASE_ADDR::offset: return static_cast<std::size_t>(stream::ew_operand);
    case DPU_RDMA_RDMA_BS_BASE_ADDR::offset: return static_cast<std::size_t>(stream::bias);
    case DPU_RDMA_RDMA_BN_BASE_ADDR::offset: return static_cast<std::size_t>(stream::bn);
    case PPU_RDMA_RDMA_SRC_BASE_ADDR::offset: return static_cast<std::size_t>(stream::ppu_source);
    case DPU_DST_BASE_ADDR::offset: return static_cast<std::size_t>(stream::output);
    case PPU_DST_BASE_ADDR::offset: return static_cast<std::size_t>(stream::ppu_output);
    default: return stream_count;
  }
}

namespace detail {

template <register_type R>
constexpr bool is(entry e) {
  return e.target() == static_cast<std::uint16_t>(R::block) && e.offset() == R::offset;
}

// The registers the accounting reads beyond those the extents read.
struct cost_registers {
  dma_state dma;
  std::uint32_t data_size3 = 0, weight_size2 = 0, cbuf_con0 = 0, dpu_feature_mode = 0, pool_kernel = 0;
  std::array<std::uint64_t, stream_count> where{};

  constexpr void write(entry e, std::uint64_t where_value) {
    using namespace reg;
    dma.write(e);
    if (const std::size_t s = stream_of_address(e.offset()); s < stream_count && is_address_register(e)) where[s] = where_value;
    if (is<CNA_DATA_SIZE3>(e)) data_size3 = e.value();
    else if (is<CNA_WEIGHT_SIZE2>(e)) weight_size2 = e.value();
    else if (is<CNA_CBUF_CON0>(e)) cbuf_con0 = e.value();
    else if (is<DPU_FEATURE_MODE_CFG>(e)) dpu_feature_mode = e.value();
    else if (is<PPU_POOLING_KERNEL_CFG>(e)) pool_kernel = e.value();
  }
};

constexpr std::uint64_t feature_bytes(const cost_registers& r) {
  if (unpack<reg::CNA_CBUF_CON0>(r.cbuf_con0).DATA_REUSE.value()) return 0;
  const cube f = cna_feature_cube(r.dma);
  return row_major_features(r.dma) ? f.h * cna_feature_row(r.dma) : f.bytes();
}

constexpr std::uint64_t output_bytes(const cost_registers& r, bool cna_runs) {
  if ((unpack<reg::DPU_FEATURE_MODE_CFG>(r.dpu_feature_mode).OUTPUT_MODE.value() & 2) == 0) return 0;
  const cube o = dpu_output_cube(r.dma);
  return cna_runs && row_major_features(r.dma) ? o.h * ((o.c * o.bits + 7) / 8) : o.bytes();
}

constexpr std::uint64_t ew_bytes(const dma_state& s) {
  if (unpack<reg::DPU_RDMA_RDMA_ERDMA_CFG>(s.erdma_cfg).ERDMA_DISABLE.value()) return 0;
  const cube e = rdma_cube(s, ew_operand_bits(s));
  return ew_per_channel(s) ? (e.c * e.bits + 7) / 8 : e.bytes();
}

// The cost of a task of `entries` entries (`lut_entries` of them a table upload) whose
// registers hold `r` when its op-enable fires.
constexpr task_cost cost_of_task(const cost_registers& r, std::uint32_t enable_mask, std::uint32_t entries,
                                 std::uint32_t lut_entries) {
  using namespace reg;
  const dma_state& s = r.dma;
  const auto blocks = unpack<GLOBAL_OPERATION_ENABLE>(enable_mask);
  const bool cna = blocks.CNA_OP_EN.value(), dpu = blocks.DPU_OP_EN.value(), rdma = blocks.DPU_RDMA_OP_EN.value();
  const bool ppu = blocks.PPU_OP_EN.value(), ppu_rdma = blocks.PPU_RDMA_OP_EN.value();
  task_cost t;
  t.enable_mask = enable_mask;
  t.entries = entries;
  t.lut_entries = lut_entries;
  t.bytes[static_cast<std::size_t>(stream::regcmd)] = std::uint64_t{entries} * 8;
  auto put = [&](stream st, std::uint64_t n) { t.bytes[static_cast<std::size_t>(st)] = n; };
  if (cna) {
    put(stream::feature, feature_bytes(r));
    if (!unpack<CNA_CBUF_CON0>(r.cbuf_con0).WEIGHT_REUSE.value())
      put(stream::weight, unpack<CNA_WEIGHT_SIZE0>(s.weight_size0).WEIGHT_BYTES.value());
    const auto con1 = unpack<CNA_CONV_CON1>(s.conv_con1);
    const auto w2 = unpack<CNA_WEIGHT_SIZE2>(r.weight_size2);
    const std::uint64_t window = std::uint64_t{w2.WEIGHT_WIDTH.value()} * w2.WEIGHT_HEIGHT.value();
    const std::uint64_t per_output = window * unpack<CNA_DATA_SIZE1>(s.data_size1).DATAIN_CHANNEL.value();
    const std::uint64_t atomics = unpack<CNA_DATA_SIZE3>(r.data_size3).DATAOUT_ATOMICS.value();
    t.macs = saturating_mul(saturating_mul(atomics, per_output), con1.CONV_MODE.value() == conv_mode::depthwise ? 1 : w2.WEIGHT_KERNELS.value());
    t.macs_in = mac_class_of(con1.IN_PRECISION.value());
  }
  if (dpu) {
    put(stream::output, output_bytes(r, cna));
    const cube o = dpu_output_cube(s);
    t.dpu_elements = o.w * o.h * o.c;
  }
  if (rdma) {
    if (!unpack<DPU_RDMA_RDMA_FEATURE_MODE_CFG>(s.rdma_feature_mode).MRDMA_DISABLE.value())
      put(stream::rdma_source, rdma_cube(s, rdma_source_bits(s)).bytes());
    put(stream::ew_operand, ew_bytes(s));
  }
  if (ppu) {
    const cube o = ppu_output_cube(s);
    put(stream::ppu_output, o.bytes());
    const auto k = unpack<PPU_POOLING_KERNEL_CFG>(r.pool_kernel);
    t.ppu_operations = o.w * o.h * o.c * (k.KERNEL_WIDTH.value() + 1ull) * (k.KERNEL_HEIGHT.value() + 1ull);
  }
  if (ppu_rdma) put(stream::ppu_source, ppu_source_cube(s).bytes());
  // The operands whose bytes are their extents (contiguous, one per channel or one atom).
  for (const address_register& a : address_registers) {
    const std::size_t st = stream_of_address(a.offset);
    if (st == stream_count) continue;
    t.extent[st] = dma_extent(s, a, blocks);
    if (static_cast<stream>(st) == stream::bias || static_cast<stream>(st) == stream::bn) t.bytes[st] = t.extent[st];
    if (t.bytes[st] || t.extent[st]) t.where[st] = r.where[st];
  }
  return t;
}

// Lookup-table uploads: a DPU_LUT_ACCESS_CFG writing a table (LUT_ACCESS_TYPE 1), then the
// run of DPU_LUT_ACCESS_DATA writes after it (the decoder's lut_upload_run). A data write
// outside such a run (the vendor's matmul template writes one 0) is no upload.
struct lut_uploads {
  bool open = false;
  std::uint32_t entries = 0;
  // Whether e is LUT data (no DMA reads it); counts it when it belongs to an upload.
  constexpr bool data(entry e) {
    if (is<reg::DPU_LUT_ACCESS_DATA>(e)) {
      entries += open;
      return true;
    }
    open = is<reg::DPU_LUT_ACCESS_CFG>(e) && unpack<reg::DPU_LUT_ACCESS_CFG>(e.value()).LUT_ACCESS_TYPE.value() == 1;
    return false;
  }
};

}  // namespace detail

// Every task of a program, its register groups alternating when it runs ping-pong (as the
// program rules keep them); on_task(index, cost) sees each task.
template <class OnTask>
constexpr program_cost account(const program_view& p, OnTask&& on_task) {
  program_cost total;
  std::array<detail::cost_registers, 2> groups{};
  std::size_t next_slot = 0;
  for (std::size_t t = 0; t < p.tasks.size(); ++t) {
    const task& k = p.tasks[t];
    detail::cost_registers& r = groups[p.pingpong ? t % 2 : 0];
    detail::lut_uploads lut;
    for (std::uint32_t i = k.first; i < k.first + k.count && i < p.entries.size(); ++i) {
      while (next_slot < p.slots.size() && p.slots[next_slot].entry < i) ++next_slot;
      std::uint64_t where = p.entries[i].value();
      if (next_slot < p.slots.size() && p.slots[next_slot].entry == i)
        where = (std::uint64_t{static_cast<std::uint8_t>(p.slots[next_slot].role)} + 1) << 32 | p.slots[next_slot].offset;
      if (!lut.data(p.entries[i])) r.write(p.entries[i], where);
    }
    const task_cost c = detail::cost_of_task(r, k.enable_mask, k.count, lut.entries);
    on_task(t, c);
    total.add(c);
  }
  return total;
}
constexpr program_cost account(const program_view& p) {
  return account(p, [](std::size_t, const task_cost&) {});
}

// A dump: a task ends at each op-enable entry (the last entry of a task's tail); entries
// after the last op-enable form no task. `pingpong`: register groups alternate task by task
// (rknpu's RKNPU_JOB_PINGPONG, which the vendor runtime sets).
template <class OnTask>
constexpr program_cost account_dump(std::span<const entry> entries, bool pingpong, OnTask&& on_task) {
  program_cost total;
  std::array<detail::cost_registers, 2> groups{};
  std::size_t t = 0, first = 0;
  detail::lut_uploads lut;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const entry e = entries[i];
    detail::cost_registers& r = groups[pingpong ? t % 2 : 0];
    if (kind_of(e) != entry_kind::op_enable) {
      if (!lut.data(e)) r.write(e, e.value());
      continue;
    }
    const task_cost c = detail::cost_of_task(r, e.value(), static_cast<std::uint32_t>(i + 1 - first), lut.entries);
    on_task(t, c);
    total.add(c);
    ++t;
    first = i + 1;
    lut = {};
  }
  return total;
}
constexpr program_cost account_dump(std::span<const entry> entries, bool pingpong = true) {
  return account_dump(entries, pingpong, [](std::size_t, const task_cost&) {});
}

// The bytes of each stream once re-reads are removed: the union of the spans its tasks
// reach, [where, where + extent), capped by the bytes it moved. For regcmd's programs a span
// is a slot's role and offset; for a dump, the address the register held. What this leaves
// counts every distinct byte once: weights re-read per M tile once, a K-split's partial
// outputs each (they lie apart). The operation's minimum is the spec's (programs/).
class distinct_bytes {
 public:
  void add(const task_cost& t) {
    for (std::size_t s = 0; s < stream_count; ++s)
      if (t.bytes[s] && s != static_cast<std::size_t>(stream::regcmd))
        spans_[s].push_back({t.where[s], t.where[s] + std::max(t.extent[s], t.bytes[s])});
    for (std::size_t s = 0; s < stream_count; ++s) moved_[s] = saturating_add(moved_[s], t.bytes[s]);
  }
  // Per stream: the union's length, at most the bytes moved (strided spans hold gaps).
  stream_bytes bytes() {
    stream_bytes out{};
    for (std::size_t s = 0; s < stream_count; ++s) {
      std::vector<std::pair<std::uint64_t, std::uint64_t>>& v = spans_[s];
      std::sort(v.begin(), v.end());
      std::uint64_t length = 0, end = 0;
      for (const auto& [a, b] : v) {
        if (b <= end) continue;
        length = saturating_add(length, b - std::max(a, end));
        end = b;
      }
      out[s] = std::min(length, moved_[s]);
    }
    out[static_cast<std::size_t>(stream::regcmd)] = moved_[static_cast<std::size_t>(stream::regcmd)];
    return out;
  }

 private:
  std::array<std::vector<std::pair<std::uint64_t, std::uint64_t>>, stream_count> spans_;
  stream_bytes moved_{};
};

}  // namespace regcmd
