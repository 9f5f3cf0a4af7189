#pragma once
// Writes a program into caller-owned storage: tasks of register writes, address slots, and
// the tails that chain the tasks. The same code fills a fixed-capacity constexpr
// `program<...>` or buffers a run-time door allocates. Nothing here allocates.

#include <cstddef>
#include <cstdint>
#include <span>

#include <regcmd/core/entry.hpp>
#include <regcmd/core/error.hpp>
#include <regcmd/core/layout.hpp>
#include <regcmd/task/operand_binding.hpp>
#include <regcmd/task/program.hpp>
#include <regcmd/task/tail.hpp>
#include <regcmd/registers/global.hpp>
#include <regcmd/registers/pc.hpp>

namespace regcmd {

#define REGCMD_WRITER_RULES(X)                                                                    \
  X(program_capacity, "program-capacity",                                                        \
    "the program does not fit the storage it is built into: give it more entries, slots or "    \
    "tasks",                                                                                     \
    "regcmd")                                                                                    \
  X(task_structure, "task-structure",                                                            \
    "a task was ended without being begun, or the program finished inside a task: pair "        \
    "begin_task() with end_task()",                                                              \
    "regcmd")

namespace rules {
REGCMD_WRITER_RULES(REGCMD_DEFINE_RULE)
}  // namespace rules

// Completion interrupts of a task whose last stage is the DPU or the PPU: both kernels accept
// only a pair-complete mask (fact sheet §1.6, §3.3).
inline constexpr std::uint32_t dpu_done_interrupts = pack(reg::PC_INTERRUPT_MASK{.DPU_0 = 1, .DPU_1 = 1}).value();
inline constexpr std::uint32_t ppu_done_interrupts = pack(reg::PC_INTERRUPT_MASK{.PPU_0 = 1, .PPU_1 = 1}).value();

// The first failure is kept and everything after it is ignored, so builders can emit
// straight-line code and check once at the end.
class program_writer {
 public:
  constexpr program_writer(std::span<entry> entries, std::span<slot> slots, std::span<task> tasks)
      : entries_{entries}, slots_{slots}, tasks_{tasks} {}

  constexpr bool ok() const { return !failed_; }
  constexpr status outcome() const {
    if (failed_) return error_;
    if (in_task_) return make_error(rules::task_structure);
    return {};
  }
  constexpr void fail(const error& e) {
    if (!failed_) {
      failed_ = true;
      error_ = e;
    }
  }

  constexpr std::uint32_t entry_count() const { return entry_count_; }
  constexpr std::uint32_t slot_count() const { return slot_count_; }
  constexpr std::uint32_t task_count() const { return task_count_; }
  constexpr std::span<const entry> entries() const { return entries_.first(entry_count_); }
  constexpr std::span<const slot> slots() const { return slots_.first(slot_count_); }
  constexpr std::span<const task> tasks() const { return tasks_.first(task_count_); }

  // The binding every slot written from now on goes through (regcmd/task/operand_binding.hpp):
  // a graph binds each op to its tensors; {} restores the identity.
  constexpr void bind(const operand_binding& b) { binding_ = b; }

  // Starts a task at the next 16-byte boundary (padding with zero qwords, which the PC
  // fetches harmlessly: implementation A's tail carries one).
  constexpr void begin_task() {
    if (in_task_) return fail(make_error(rules::task_structure));
    while (ok() && entry_count_ % 2 != 0) append(entry{});
    in_task_ = true;
    task_first_ = entry_count_;
    task_first_slot_ = slot_count_;
  }

  template <register_type R>
  constexpr void put(const R& value) {
    if (!ok()) return;
    result<entry> e = encode(value);
    if (!e) return fail(e.err());
    append(e.value());
  }

  // Element `number` of a register array (CNA_CVT_CON, 3: CNA_CVT_CON3).
  template <register_array A>
  constexpr void put(const A& value, unsigned number) {
    if (!ok()) return;
    result<entry> e = encode(value, number);
    if (!e) return fail(e.err());
    append(e.value());
  }

  // An address register whose value bind fills in: IOVA of `role`'s buffer + offset.
  template <register_type R>
  constexpr void put_slot(operand_role role, std::uint32_t offset, std::uint32_t extent) {
    if (!ok()) return;
    add_slot(binding_.apply(slot{entry_count_, role, offset, extent}));
    put(R{});
  }

  constexpr void put_raw(entry e) {
    if (ok()) append(e);
  }

  // A prepared address entry (value 0) and its slot, e.g. copied from another program.
  constexpr void put_raw_slot(entry e, operand_role role, std::uint32_t offset, std::uint32_t extent) {
    if (!ok()) return;
    add_slot(binding_.apply(slot{entry_count_, role, offset, extent}));
    append(e);
  }

  // Copies a prepared task body and its slots (slot entries relative to the body's start).
  // One capacity check and one block copy: constant evaluation counts every operation, and
  // plans copy thousands of bodies.
  constexpr void put_body(std::span<const entry> body, std::span<const slot> body_slots) {
    if (!ok()) return;
    if (entries_.size() - entry_count_ < body.size()) return fail(make_error(rules::program_capacity, "entries"));
    if (slots_.size() - slot_count_ < body_slots.size()) return fail(make_error(rules::program_capacity, "slots"));
    copy_entries(entries_.data() + entry_count_, body.data(), body.size());
    slot* slots_out = slots_.data() + slot_count_;
    const bool moves = binding_.moves();
    for (std::size_t i = 0, n = body_slots.size(); i != n; ++i) {
      slots_out[i] = moves ? binding_.apply(body_slots.data()[i]) : body_slots.data()[i];
      slots_out[i].entry += entry_count_;
    }
    slot_count_ += static_cast<std::uint32_t>(body_slots.size());
    entry_count_ += static_cast<std::uint32_t>(body.size());
  }

  // Closes the task with its tail: PC_BASE_ADDRESS and PC_REGISTER_AMOUNTS (0 until a
  // following task links them), the 0x0041 preamble, then the op-enable entry.
  constexpr void end_task(const reg::GLOBAL_OPERATION_ENABLE& enable, std::uint32_t int_mask) {
    result<entry> op = op_enable(enable);
    if (!op) return fail(op.err());
    end_task(op.value(), int_mask);
  }

  // The same with the op-enable entry already encoded (copies of a prepared task).
  constexpr void end_task(entry op_enable_entry, std::uint32_t int_mask) {
    if (!in_task_) return fail(make_error(rules::task_structure));
    in_task_ = false;
    put_raw(tail_base_);
    put_raw(tail_amount_);
    put_raw(op_enable_preamble());
    put_raw(op_enable_entry);
    if (!ok()) return;
    if (task_count_ == tasks_.size()) return fail(make_error(rules::program_capacity, "tasks"));
    const task t{task_first_, entry_count_ - task_first_, op_enable_entry.value(), int_mask};
    if (task_count_ > 0) link(tasks_.data()[task_count_ - 1], t);
    tasks_.data()[task_count_++] = t;
  }

 private:
  // clang evaluates __builtin_memcpy of trivially copyable values as one step of its
  // 1M-step constexpr budget, where a loop costs several per entry: a plan of 1000 full
  // tasks fits only so. g++ neither evaluates it nor needs it (its budget is 33M).
  static constexpr void copy_entries(entry* out, const entry* in, std::size_t n) {
#if defined(__clang__)
    __builtin_memcpy(out, in, n * sizeof(entry));
#else
    for (std::size_t i = 0; i != n; ++i) out[i] = in[i];
#endif
  }

  // Raw pointers, not span indexing: in constant evaluation every checked access is steps.
  constexpr void append(entry e) {
    if (entry_count_ == entries_.size()) return fail(make_error(rules::program_capacity, "entries"));
    entries_.data()[entry_count_++] = e;
  }
  constexpr void add_slot(const slot& s) {
    if (slot_count_ == slots_.size()) return fail(make_error(rules::program_capacity, "slots"));
    slots_.data()[slot_count_++] = s;
  }
  // The previous task's tail points the PC at `next` and says how much to fetch of it. Its
  // slot goes before the slots of `next`, keeping the table in entry order.
  constexpr void link(const task& previous, const task& next) {
    const std::uint32_t address = tail_index(previous, tail_entry::next_address);
    add_slot(slot{});
    if (!ok()) return;
    slot* slots = slots_.data();
    for (std::uint32_t i = slot_count_ - 1; i > task_first_slot_; --i) slots[i] = slots[i - 1];
    slots[task_first_slot_] = slot{address, operand_role::regcmd, next.first * 8, next.count * 8};
    const std::uint32_t amount = pc_fetch_amount(next.count);
    if (const rule* violated = check_field(decltype(reg::PC_REGISTER_AMOUNTS::PC_DATA_AMOUNT)::shape, amount);
        *violated != no_violation)
      return fail(make_error(*violated, reg::PC_REGISTER_AMOUNTS::name, "PC_DATA_AMOUNT", amount));
    entries_.data()[tail_index(previous, tail_entry::next_amount)] = tail_amount_.with_value(amount);
  }

  // The tail's first two entries before linking, encoded once.
  static constexpr entry tail_base_ = encode(reg::PC_BASE_ADDRESS{}).value();
  static constexpr entry tail_amount_ = encode(reg::PC_REGISTER_AMOUNTS{}).value();

  std::span<entry> entries_;
  std::span<slot> slots_;
  std::span<task> tasks_;
  std::uint32_t entry_count_ = 0, slot_count_ = 0, task_count_ = 0;
  std::uint32_t task_first_ = 0;
  std::uint32_t task_first_slot_ = 0;
  operand_binding binding_{};
  bool in_task_ = false;
  bool failed_ = false;
  error error_{};
};

// Runs `build(writer)` into the storage of `p` and keeps what it wrote.
template <std::size_t E, std::size_t T, std::size_t S, class Build>
constexpr status fill(program<E, T, S>& p, Build&& build) {
  program_writer w{p.entries, p.slots, p.tasks};
  build(w);
  p.entry_count = w.entry_count();
  p.slot_count = w.slot_count();
  p.task_count = w.task_count();
  return w.outcome();
}

}  // namespace regcmd
