#pragma once
// The rules an assembled program must satisfy, whoever wrote it: checked on the entries,
// so a hand-authored program gets the same protection as a generated one.
//
// Register state is tracked the way the NPU keeps it: a later copy of a register wins, and
// it persists into later tasks (delta tasks rely on that); with ping-pong the two register
// groups alternate task by task. The per-op rules are evaluated at each task's op-enable.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include <regcmd/core/precision.hpp>
#include <regcmd/core/soc.hpp>
#include <regcmd/task/program.hpp>
#include <regcmd/task/tail.hpp>
#include <regcmd/task/writer.hpp>
#include <regcmd/registers/addresses.hpp>
#include <regcmd/registers/cna.hpp>
#include <regcmd/registers/core.hpp>
#include <regcmd/registers/dpu.hpp>
#include <regcmd/registers/dpu_rdma.hpp>
#include <regcmd/registers/global.hpp>
#include <regcmd/registers/ppu.hpp>
#include <regcmd/registers/ppu_rdma.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/rules/cbuf.hpp>
#include <regcmd/rules/dma_extent.hpp>
#include <regcmd/rules/limits.hpp>
#include <regcmd/rules/precision_rules.hpp>

namespace regcmd {

namespace detail {

template <register_type R>
constexpr bool is_register(entry e) {
  return e.target() == static_cast<std::uint16_t>(R::block) && e.offset() == R::offset;
}

// The registers the per-op rules read.
struct op_state {
  std::optional<std::uint32_t> cbuf_con0, conv_con1, data_size0, data_size1, weight_size2, misc_cfg, core_out1, data_format,
      bs_cfg, bs_ow_cfg, out_cvt_scale, rdma_feature_mode, erdma_cfg;

  constexpr void write(entry e) {
    using namespace reg;
    if (is_register<CNA_CBUF_CON0>(e)) cbuf_con0 = e.value();
    else if (is_register<CNA_CONV_CON1>(e)) conv_con1 = e.value();
    else if (is_register<CNA_DATA_SIZE0>(e)) data_size0 = e.value();
    else if (is_register<CNA_DATA_SIZE1>(e)) data_size1 = e.value();
    else if (is_register<CNA_WEIGHT_SIZE2>(e)) weight_size2 = e.value();
    else if (is_register<CORE_MISC_CFG>(e)) misc_cfg = e.value();
    else if (is_register<CORE_DATAOUT_SIZE_1>(e)) core_out1 = e.value();
    else if (is_register<DPU_DATA_FORMAT>(e)) data_format = e.value();
    else if (is_register<DPU_BS_CFG>(e)) bs_cfg = e.value();
    else if (is_register<DPU_BS_OW_CFG>(e)) bs_ow_cfg = e.value();
    else if (is_register<DPU_OUT_CVT_SCALE>(e)) out_cvt_scale = e.value();
    else if (is_register<DPU_RDMA_RDMA_FEATURE_MODE_CFG>(e)) rdma_feature_mode = e.value();
    else if (is_register<DPU_RDMA_RDMA_ERDMA_CFG>(e)) erdma_cfg = e.value();
  }
};

// Both interrupts of each pair (bits 2i and 2i + 1 of PC_INTERRUPT_MASK's 14) or neither.
constexpr bool pair_complete(std::uint32_t mask) {
  constexpr std::uint32_t first_of_pairs = 0x1555, second_of_pairs = 0x2aaa;
  return mask != 0 && (mask & first_of_pairs) << 1 == (mask & second_of_pairs);
}

// What an SDP task (DPU_RDMA enabled, no CNA) reads, against the reference's stalls.
// `after_matmul`: the task before it was a matmul writing `matmul_out`; `source_written`:
// the precision an earlier task of the program wrote the SDP's source in, plus one (0: none).
constexpr status check_sdp(const op_state& s, bool pingpong, bool after_matmul, precision matmul_out,
                           std::uint32_t source_written, std::string_view where) {
  using namespace reg;
  if (pingpong) return make_error(rules::sdp_pingpong, where);
  if (!s.rdma_feature_mode) return {};
  const precision in = unpack<DPU_RDMA_RDMA_FEATURE_MODE_CFG>(*s.rdma_feature_mode).IN_PRECISION.value();
  if (!sdp_reads(in))
    return make_error(rules::sdp_feature_precision, where, "DPU_RDMA_RDMA_FEATURE_MODE_CFG", *s.rdma_feature_mode);
  const bool two_inputs = s.erdma_cfg && unpack<DPU_RDMA_RDMA_ERDMA_CFG>(*s.erdma_cfg).ERDMA_DISABLE.value() == 0;
  if (two_inputs && ((after_matmul && matmul_out != in) || (source_written != 0 && source_written != static_cast<std::uint32_t>(in) + 1)))
    return make_error(rules::sdp_precision_path, where, "DPU_RDMA_RDMA_FEATURE_MODE_CFG", *s.rdma_feature_mode);
  return {};
}

// A CNA op is a convolution (rather than a matmul, which the matmul rules judge) when it
// reads a bias or residual (DPU_RDMA on), a feature row wider than one pixel, a kernel
// larger than 1×1, or runs depthwise.
constexpr bool is_conv(const op_state& s, std::uint32_t enable_mask) {
  using namespace reg;
  const bool rdma = (enable_mask & pack(GLOBAL_OPERATION_ENABLE{.DPU_RDMA_OP_EN = 1}).value()) != 0;
  // (plain reads: g++ 12 refuses value_or on these optionals in constant evaluation)
  const std::uint32_t size0_bits = s.data_size0 ? *s.data_size0 : 0u, size2_bits = s.weight_size2 ? *s.weight_size2 : 0u,
                      con1_bits = s.conv_con1 ? *s.conv_con1 : 0u;
  const auto size2 = unpack<CNA_WEIGHT_SIZE2>(size2_bits);
  return rdma || unpack<CNA_DATA_SIZE0>(size0_bits).DATAIN_WIDTH.value() > 1 || size2.WEIGHT_WIDTH.value() > 1 ||
         size2.WEIGHT_HEIGHT.value() > 1 || unpack<CNA_CONV_CON1>(con1_bits).CONV_MODE.value() == conv_mode::depthwise;
}

// The conv rule a task's registers can be judged by: its input rows fit its data banks.
template <class Soc>
constexpr status check_conv(const op_state& s, std::string_view where) {
  using namespace reg;
  if (!s.cbuf_con0 || !s.data_size0 || !s.data_size1 || !s.conv_con1) return {};
  const auto size0 = unpack<CNA_DATA_SIZE0>(*s.data_size0);
  const std::uint64_t channels = unpack<CNA_DATA_SIZE1>(*s.data_size1).DATAIN_CHANNEL.value();
  const std::uint64_t bytes = bytes_of(unpack<CNA_CONV_CON1>(*s.conv_con1).IN_PRECISION.value(), channels);
  const std::uint64_t entries = cbuf_row_entries(size0.DATAIN_WIDTH.value(), static_cast<std::uint32_t>((bytes + 15) / 16));
  if (!conv_rows_fit<Soc>(unpack<CNA_CBUF_CON0>(*s.cbuf_con0).DATA_BANK.value(), size0.DATAIN_HEIGHT.value(), entries))
    return make_error(rules::conv_cbuf_row, where, "CNA_DATA_SIZE0", *s.data_size0);
  return {};
}

template <class Soc>
constexpr status check_op(const op_state& s, std::uint32_t enable_mask, std::string_view where) {
  using namespace reg;
  if ((enable_mask & 1u) == 0) return {};  // no CNA: not a matmul/conv op
  if (s.cbuf_con0) {
    const auto c = unpack<CNA_CBUF_CON0>(*s.cbuf_con0);
    if (!is_bank_split<Soc>(c.DATA_BANK.value(), c.WEIGHT_BANK.value()))
      return make_error(rules::bank_split, where, "CNA_CBUF_CON0", *s.cbuf_con0);
  }
  if (!s.conv_con1) return {};
  const auto con1 = unpack<CNA_CONV_CON1>(*s.conv_con1);
  const precision in = con1.IN_PRECISION.value();
  bool consistent = con1.PROC_PRECISION.value() == in;
  if (s.misc_cfg) consistent = consistent && unpack<CORE_MISC_CFG>(*s.misc_cfg).PROC_PRECISION.value() == in;
  std::optional<precision> out;
  if (s.data_format) {
    const auto f = unpack<DPU_DATA_FORMAT>(*s.data_format);
    consistent = consistent && f.IN_PRECISION.value() == in && f.PROC_PRECISION.value() == in;
    out = f.OUT_PRECISION.value();
  }
  if (!consistent) return make_error(rules::precision_consistent, where, "CNA_CONV_CON1", *s.conv_con1);
  const bool conv = is_conv(s, enable_mask);
  // Mesa's int8 conv writes int8 through the BS stage (0x1d) and completes; the matmul's
  // narrow output does not
  if (out && !conv && !int8_writes_int32(in, *out))
    return make_error(rules::int8_output_int32, where, "DPU_DATA_FORMAT", *s.data_format);
  if (in == precision::fp16 && out == precision::fp16) {
    const bool bypassed = s.bs_cfg && *s.bs_cfg == pack(reg::bypass::bs).value();
    const bool to_fp16 = s.out_cvt_scale && unpack<DPU_OUT_CVT_SCALE>(*s.out_cvt_scale).FP32TOFP16_EN.value() == 1;
    if (!bypassed || !to_fp16) return make_error(rules::fp16_output_stage, where, "DPU_BS_CFG", s.bs_cfg.value_or(0));
    if (s.bs_ow_cfg) {
      const auto ow = unpack<DPU_BS_OW_CFG>(*s.bs_ow_cfg);
      if (ow.SIZE_E_0.value() != 1 || ow.SIZE_E_1.value() != 1 || ow.SIZE_E_2.value() != 1)
        return make_error(rules::fp16_output_atom8, where, "DPU_BS_OW_CFG", *s.bs_ow_cfg);
    }
  }
  if (conv) return check_conv<Soc>(s, where);  // the matmul's measured K and M limits are not a conv's
  if (s.data_size1) {
    const auto K = static_cast<std::uint32_t>(unpack<CNA_DATA_SIZE1>(*s.data_size1).DATAIN_CHANNEL.value());
    if (!k_fits_one_op<Soc>(K)) return make_error(rules::k_single_op_max, where, "K", K);
    const bool split = s.cbuf_con0 && unpack<CNA_CBUF_CON0>(*s.cbuf_con0).DATA_BANK.value() > 1;
    if (split && !bank_split_valid_k(in, K)) return make_error(rules::small_k_bank_split, where, "K", K);
    if (s.data_size0 && K != 0) {
      const auto M = static_cast<std::uint32_t>(unpack<CNA_DATA_SIZE0>(*s.data_size0).DATAIN_HEIGHT.value());
      if (!within_fp16_k128_cap(in, K, M)) return make_error(rules::fp16_k128_cap, where, "M", M);
      if (M > m_ceiling<Soc>(in, K, split)) return make_error(m_ceiling_rule(in), where, "M", M);
    }
  }
  if (s.core_out1) {
    const std::uint64_t N = unpack<CORE_DATAOUT_SIZE_1>(*s.core_out1).DATAOUT_CHANNEL.value() + 1;
    if (!n_fits_one_op<Soc>(N)) return make_error(rules::n_max, where, "N", N);
  }
  return {};
}

}  // namespace detail

namespace detail {
// Walks the slot table along ascending entry indices (slots are kept in entry order).
class slot_cursor {
 public:
  constexpr explicit slot_cursor(std::span<const slot> slots) : next_{slots.data()}, end_{slots.data() + slots.size()} {}
  constexpr bool is_slot(std::uint32_t entry_index) { return slot_at(entry_index) != nullptr; }
  // The slot of the entry, or nullptr.
  constexpr const slot* slot_at(std::uint32_t entry_index) {
    while (next_ != end_ && next_->entry < entry_index) ++next_;
    return next_ != end_ && next_->entry == entry_index ? next_ : nullptr;
  }

 private:
  const slot* next_;
  const slot* end_;
};

// The interrupts the kernel must see for a task to complete: its last block's pair (it
// compares the pair-widened status with the mask exactly, fact sheet §1.6); a task ending
// on neither the DPU nor the PPU keeps the mask it has.
inline constexpr std::uint32_t ppu_enabled = pack(reg::GLOBAL_OPERATION_ENABLE{.PPU_OP_EN = 1}).value();
inline constexpr std::uint32_t dpu_enabled = pack(reg::GLOBAL_OPERATION_ENABLE{.DPU_OP_EN = 1}).value();
constexpr std::uint32_t completion_interrupts(const task& k) {
  if (k.enable_mask & ppu_enabled) return ppu_done_interrupts;
  if (k.enable_mask & dpu_enabled) return dpu_done_interrupts;
  return k.int_mask;
}

// The roles an address register can take: the DPU and the PPU write, the PC fetches regcmd,
// the CNA reads weights from the weight buffer, the DPU_RDMA's BS read a bias (or, for an
// SDP op, its operand) and its EW read a residual, an operand or an fp16 conv's bias, the
// other DMAs read operands.
constexpr bool role_fits(std::uint16_t address_register_offset, operand_role role) {
  using namespace reg;
  const bool fetched = role == operand_role::regcmd || role == operand_role::next_program;
  switch (address_register_offset) {
    case PC_BASE_ADDRESS::offset:
    case PC_TASK_DMA_BASE_ADDR::offset: return fetched;
    case DPU_DST_BASE_ADDR::offset:
    case PPU_DST_BASE_ADDR::offset: return npu_writes(role);
    case CNA_DCOMP_ADDR0::offset: return role == operand_role::weight;
    case DPU_RDMA_RDMA_BS_BASE_ADDR::offset: return role == operand_role::bias || role == operand_role::ew_operand;
    case DPU_RDMA_RDMA_EW_BASE_ADDR::offset: return !fetched && role != operand_role::output;
    default:
      return !fetched && role != operand_role::output && role != operand_role::bias && role != operand_role::residual;
  }
}

// The tail of task t: PC_BASE_ADDRESS (a slot to the next task, or 0 ending the chain),
// PC_REGISTER_AMOUNTS (the next task's fetch amount, or 0), the 0x0041 preamble, the
// op-enable with the task's mask; and a pair-complete interrupt mask.
constexpr status check_tail(const program_view& p, std::size_t t, slot_cursor& slots, std::string_view where) {
  using namespace reg;
  const task& k = p.tasks.data()[t];
  const task_tail tail = tail_of(p.entries, k);
  const bool chained = t + 1 < p.tasks.size();
  const slot* link = slots.slot_at(tail_index(k, tail_entry::next_address));
  if (!is_register<PC_BASE_ADDRESS>(tail.next_address) || tail.next_address.value() != 0 || chained != (link != nullptr) ||
      !is_register<PC_REGISTER_AMOUNTS>(tail.next_amount) ||
      tail.next_amount.value() != (chained ? pc_fetch_amount(p.tasks.data()[t + 1].count) : 0) ||
      tail.preamble != op_enable_preamble() || kind_of(tail.op_enable) != entry_kind::op_enable ||
      tail.op_enable.offset() != op_enable_offset || tail.op_enable.value() != k.enable_mask)
    return make_error(rules::tail_complete, where, "task", t);
  if (chained) {
    // chain-link: the PC fetches the next task from where the link points, as much as the
    // amount says; anything else runs another task (or none) in its place.
    const task& next = p.tasks.data()[t + 1];
    if (link->role != operand_role::regcmd || link->offset != std::uint64_t{next.first} * 8 ||
        link->extent != std::uint64_t{next.count} * 8)
      return make_error(rules::chain_link, where, "task", t);
  }
  const bool ends_on_a_pair = k.enable_mask & (ppu_enabled | dpu_enabled) ? k.int_mask == completion_interrupts(k)
                                                                            : pair_complete(k.int_mask);
  if (!ends_on_a_pair) return make_error(rules::task_interrupts, where, "task", t);
  return {};
}

constexpr status check_slots(const program_view& p, std::string_view where) {
  const entry* entries = p.entries.data();
  std::uint64_t next_free = 0;  // slots are kept in entry order, one per entry
  for (const slot& s : p.slots) {
    if (s.entry >= p.entries.size() || !is_address_register(entries[s.entry]) || entries[s.entry].value() != 0 ||
        s.entry < next_free)
      return make_error(rules::address_slots, where, name_of(s.role), s.entry);
    next_free = std::uint64_t{s.entry} + 1;
  }
  return {};
}

// A task lies inside the entries (in 64 bits: a first entry near 2^32 must not wrap).
constexpr bool task_in_bounds(const program_view& p, const task& k) {
  return k.count >= task_tail_entries && std::uint64_t{k.first} + k.count <= p.entries.size();
}

// task-length: the PC fetches a task in 128-bit words, the count in PC_REGISTER_AMOUNTS' 16
// bits, for the first task of a submit (the kernel writes it) as for a linked one.
constexpr bool fetchable(const task& k) {
  return pc_fetch_amount(k.count) <= decltype(reg::PC_REGISTER_AMOUNTS::PC_DATA_AMOUNT)::shape.max_value();
}

// The address registers' values and the slot that last wrote each (index + 1; 0: none).
struct dma_registers {
  dma_state values;
  std::array<std::uint32_t, address_register_count> slot_of{};
};

// A task's body and op-enable mask, as each_task_dma reads them.
struct dma_task_body {
  std::size_t first = 0, end = 0;
  std::uint32_t enable_mask = 0;
};

// Each DMA each task runs: after task n's body, f(n, address register index, slot index,
// extent) for every address register its register group holds a slot for, the extent from
// the group's registers (rules/dma_extent.hpp). The groups alternate task by task
// (`alternate`: rknpu ping-pong) or one serves throughout. body(n) gives task n's body;
// slot_at(i), asked in ascending order for the address registers' entries, the slot
// index + 1 of entry i (0: none).
template <class Body, class SlotAt, class F>
constexpr void each_task_dma(std::span<const entry> entries, std::size_t tasks, bool alternate, Body&& body,
                             SlotAt&& slot_at, F&& f) {
  dma_registers even, odd;  // the ping-pong groups (not an array: g++ 12 misreads one in constant evaluation)
  for (std::size_t n = 0; n < tasks; ++n) {
    const dma_task_body k = body(n);
    dma_registers& dma = alternate && n % 2 ? odd : even;
    for (std::size_t i = k.first; i < k.end && i < entries.size(); ++i) {
      const entry e = entries[i];
      if (const std::size_t a = address_register_index(e); a < address_registers.size())
        if (const std::uint32_t s = slot_at(i)) dma.slot_of[a] = s;
      dma.values.write(e);
    }
    const auto blocks = unpack<reg::GLOBAL_OPERATION_ENABLE>(k.enable_mask);
    for (std::size_t a = 0; a < address_registers.size(); ++a)
      if (const std::uint32_t s = dma.slot_of[a]; s != 0)
        f(n, a, std::size_t{s - 1}, dma_extent(dma.values, address_registers[a], blocks));
  }
}

// slot-extent: the slot of each DMA the task runs covers what that DMA touches. Returns the
// first address register whose slot falls short (address_registers.size(): none) and the
// bytes its DMA touches; no status on the way (each is counted at compile time).
struct extent_shortfall {
  std::size_t reg = address_registers.size();
  std::uint64_t touched = 0;
};
constexpr extent_shortfall short_extent(const program_view& p, const dma_registers& dma,
                                        const reg::GLOBAL_OPERATION_ENABLE& blocks) {
  for (std::size_t a = 0; a < address_registers.size(); ++a) {
    if (dma.slot_of[a] == 0) continue;  // no slot: nothing to hold to an extent
    const std::uint64_t touched = dma_extent(dma.values, address_registers[a], blocks);
    if (p.slots[dma.slot_of[a] - 1].extent < touched) return {a, touched};
  }
  return {};
}

// The index of register R in address_registers.
template <register_type R>
inline constexpr std::size_t address_index = [] {
  std::size_t i = 0;
  while (i < address_registers.size() && address_registers[i].offset != R::offset) ++i;
  return i;
}();

// The role of the slot that last wrote address register R in this group, if any.
template <register_type R>
constexpr std::optional<operand_role> role_of(const program_view& p, const dma_registers& dma) {
  const std::uint32_t s = dma.slot_of[address_index<R>];
  return s ? std::optional<operand_role>{p.slots[s - 1].role} : std::nullopt;
}

// The bounds and the length of every task, before anything reads their entries.
constexpr status check_tasks(const program_view& p, std::string_view where) {
  if (p.tasks.empty()) return make_error(rules::program_empty, where);
  for (std::size_t t = 0; t < p.tasks.size(); ++t) {
    const task& k = p.tasks.data()[t];
    if (!fetchable(k)) return make_error(rules::task_length, where, "task", t);
    if (k.first % 2 != 0) return make_error(rules::task_alignment, where, "task", t);
    if (!task_in_bounds(p, k)) return make_error(rules::tail_complete, where, "task", t);
  }
  return {};
}
}  // namespace detail

// The structure of a program: slot table, task bounds, tails and chain links. Enough for a
// program assembled from tasks that were each validated in full (plans).
constexpr status validate_structure(const program_view& p, std::string_view where = "program") {
  if (status s = detail::check_tasks(p, where); !s) return s;
  if (status s = detail::check_slots(p, where); !s) return s;
  detail::slot_cursor slots{p.slots};
  for (std::size_t t = 0; t < p.tasks.size(); ++t)
    if (status s = detail::check_tail(p, t, slots, where); !s) return s;
  return {};
}

// Which register group each task writes and reads: with ping-pong the groups alternate
// task by task (one submit runs them all, rknpu); the rocket kernel kicks every task alone
// (TASK_NUMBER 1), each on group 0, so a task there finds the registers of the task just
// before it, not of the one two before.
enum class register_groups : std::uint8_t { as_programmed, one_per_kick };

// Every rule on a program: its structure, every address register a slot, and the per-op
// rules at each task's op-enable, with register state kept per register group.
namespace detail {
template <class Soc>
constexpr status validate_known(const program_view& p, std::string_view where, register_groups groups_of_tasks) {
  const bool alternate = p.pingpong && groups_of_tasks == register_groups::as_programmed;
  if (status s = detail::check_tasks(p, where); !s) return s;
  if (status s = detail::check_slots(p, where); !s) return s;
  detail::slot_cursor slots{p.slots};
  std::array<detail::op_state, 2> groups{};
  detail::dma_registers dma_even, dma_odd;  // the ping-pong groups (not an array: g++ 12 misreads one)
  bool after_matmul = false;  // the task before was a matmul writing matmul_out
  precision matmul_out{};
  std::array<std::uint32_t, operand_role_count> written_as{};  // per role: the DPU's precision + 1 (0: none)
  for (std::size_t t = 0; t < p.tasks.size(); ++t) {
    const task& k = p.tasks[t];
    detail::op_state& state = groups[alternate ? t % 2 : 0];
    detail::dma_registers& dma = alternate && t % 2 ? dma_odd : dma_even;
    for (std::uint32_t i = k.first; i < body_end(k); ++i) {
      const entry e = p.entries[i];
      // A lookup table's data (1026 of a LUT task's entries): no rule here reads it, and
      // passing it by first keeps a graph with tables within the compilers' constexpr budgets.
      if (detail::is_register<reg::DPU_LUT_ACCESS_DATA>(e)) continue;
      if (kind_of(e) == entry_kind::op_enable || kind_of(e) == entry_kind::op_enable_preamble)
        return make_error(rules::tail_complete, where, "task", t);
      if (const std::size_t a = address_register_index(e); a < address_registers.size()) {
        const slot* s = slots.slot_at(i);
        if (!s || !detail::role_fits(address_registers[a].offset, s->role))
          return make_error(rules::address_slots, where, address_registers[a].name, i);
        dma.slot_of[a] = static_cast<std::uint32_t>(s - p.slots.data()) + 1;
      }
      state.write(e);
      dma.values.write(e);
    }
    if (status s = detail::check_tail(p, t, slots, where); !s) return s;
    if (status s = detail::check_op<Soc>(state, k.enable_mask, where); !s) return s;
    const auto blocks = unpack<reg::GLOBAL_OPERATION_ENABLE>(k.enable_mask);
    if (blocks.DPU_RDMA_OP_EN.value() && !blocks.CNA_OP_EN.value()) {
      const auto source = detail::role_of<reg::DPU_RDMA_RDMA_SRC_BASE_ADDR>(p, dma);
      const std::uint32_t source_written = source ? written_as[static_cast<std::size_t>(*source)] : 0;
      if (status s = detail::check_sdp(state, p.pingpong, after_matmul, matmul_out, source_written, where); !s) return s;
    }
    if (const auto f = detail::short_extent(p, dma, blocks); f.reg < address_registers.size())
      return make_error(rules::slot_extent, where, address_registers[f.reg].name, f.touched);
    if (const auto out = detail::role_of<reg::DPU_DST_BASE_ADDR>(p, dma); out && blocks.DPU_OP_EN.value())
      written_as[static_cast<std::size_t>(*out)] =
          static_cast<std::uint32_t>(decltype(reg::DPU_DATA_FORMAT::OUT_PRECISION)::shape.extract(dma.values.data_format)) + 1;
    after_matmul = blocks.CNA_OP_EN.value() && state.data_format;
    if (after_matmul) matmul_out = unpack<reg::DPU_DATA_FORMAT>(*state.data_format).OUT_PRECISION.value();
  }
  return {};
}
}  // namespace detail

// On a SoC without the numbers the per-op rules read, every program is refused
// (soc-value-unknown, core/soc.hpp).
template <class Soc = soc::rk3588>
constexpr status validate(const program_view& p, std::string_view where = "program",
                          register_groups groups_of_tasks = register_groups::as_programmed) {
  if constexpr (!soc::programs_known<Soc>)
    return make_error(rules::soc_value_unknown, Soc::name, soc::first_unknown_value<Soc>()).with_note(where);
  else return detail::validate_known<Soc>(p, where, groups_of_tasks);
}

}  // namespace regcmd

namespace regcmd {

// A hand-authored program, checked by every program rule at compile time:
//
//   constexpr auto p = checked_program<128, 1, [](program_writer& w) {
//     w.begin_task();
//     w.put(reg::CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
//     ...
//     w.end_task({.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1}, dpu_done_interrupts);
//   }>();
//
// A violated rule fails with its message; run-time programs use validate() on their view.
// Programs with an SDP task run with ping-pong off: checked_program<E, T, build, false>.
template <std::size_t Entries, std::size_t Tasks, auto Build, bool Pingpong = true, class Soc = soc::rk3588>
constexpr program<Entries, Tasks> checked_program() {
  struct built_program {
    program<Entries, Tasks> code;
    status outcome;
  };
  constexpr built_program built = [] {
    built_program b{};
    b.code.pingpong = Pingpong;
    b.outcome = fill(b.code, Build);
    if (b.outcome) b.outcome = validate<Soc>(b.code.view());
    return b;
  }();
  static_assert(report<violated_rule(built.outcome)>());
  return built.code;
}

}  // namespace regcmd

namespace regcmd {

// Operand base addresses, by role.
using operand_addresses = std::array<std::uint64_t, operand_role_count>;

// The checks of one bound address: within the SoC's IOVA limit (32 bits), and aligned to its
// field's lowest bit.
template <class Soc = soc::rk3588>
constexpr status check_address(const address_register& reg, operand_role role, std::uint64_t address) {
  if (address > Soc::max_iova) return make_error(rules::iova_32bit, reg.name, name_of(role), address);
  if ((address & reg.alignment_mask()) != 0) return make_error(rules::address_alignment, reg.name, reg.field, address);
  return {};
}

// Writes IOVA + offset of every slot into `entries` (a copy of the program's entries).
template <class Soc = soc::rk3588>
constexpr status patch_slots(std::span<entry> entries, std::span<const slot> slots, const operand_addresses& base) {
  for (const slot& s : slots) {
    const std::uint64_t address = base[static_cast<std::size_t>(s.role)] + s.offset;
    const std::size_t index = s.entry < entries.size() ? address_register_index(entries[s.entry]) : address_registers.size();
    if (index == address_registers.size()) return make_error(rules::address_slots, "bind", name_of(s.role), s.entry);
    if (status st = check_address<Soc>(address_registers[index], s.role, address); !st) return st;
    entries[s.entry] = entries[s.entry].with_value(static_cast<std::uint32_t>(address));
  }
  return {};
}

}  // namespace regcmd
