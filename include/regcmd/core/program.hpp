#pragma once
// A regcmd program: entries, the tasks they form, and the slot table of operand addresses.
//
//   entries  what goes into the regcmd buffer, task after task; every task starts 16 bytes
//            aligned (PC_SOURCE_ADDR is bits 31:4) and ends with its 4-entry tail
//   tasks    [first, first + count) of the entries, tail included, with the task's block
//            enable mask and completion interrupt mask (what rknpu_task needs)
//   slots    every entry that holds an address, in entry order: which operand buffer it
//            points into, at which byte offset, and how many bytes the DMA reaches from
//            there. Address registers hold 0 until bind patches IOVA + offset into them.
//
// Programs are built through a program_writer over caller-owned storage, so the same code
// fills a fixed-capacity constexpr `program<...>` or buffers a runtime allocates. Nothing
// here allocates.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <regcmd/core/entry.hpp>
#include <regcmd/core/error.hpp>
#include <regcmd/core/layout.hpp>
#include <regcmd/registers/global.hpp>
#include <regcmd/registers/pc.hpp>

namespace regcmd {

// The buffers a program's address slots point into.
enum class operand_role : std::uint8_t {
  feature,       // input A (CNA_FEATURE_DATA_ADDR; DPU_RDMA source for SDP programs)
  weight,        // input B (CNA_DCOMP_ADDR0)
  output,        // output C (DPU_DST_BASE_ADDR)
  ew_operand,    // second element-wise operand (DPU_RDMA_RDMA_EW_BASE_ADDR)
  regcmd,        // this program's own regcmd buffer: a task tail's next-task address
  next_program,  // the regcmd buffer of a program chained after this one
  intermediate,  // written by one task and read by a later one (a fused chain's matmul result)
};
inline constexpr std::size_t operand_role_count = 7;

constexpr std::string_view name_of(operand_role r) {
  switch (r) {
    case operand_role::feature: return "feature";
    case operand_role::weight: return "weight";
    case operand_role::output: return "output";
    case operand_role::ew_operand: return "ew_operand";
    case operand_role::regcmd: return "regcmd";
    case operand_role::next_program: return "next_program";
    case operand_role::intermediate: return "intermediate";
  }
  return "?";
}

struct slot {
  std::uint32_t entry = 0;   // index of the entry holding the address
  operand_role role{};
  std::uint32_t offset = 0;  // bytes added to the operand buffer's IOVA
  std::uint32_t extent = 0;  // bytes the DMA touches from that address on
  friend constexpr bool operator==(const slot&, const slot&) = default;
};

struct task {
  std::uint32_t first = 0;        // first entry
  std::uint32_t count = 0;        // entries, tail included
  std::uint32_t enable_mask = 0;  // GLOBAL op-enable mask: the value of the task's 0x0081 entry
  std::uint32_t int_mask = 0;     // completion interrupts, pair-complete (e.g. DPU_0 | DPU_1)

  // rknpu_task.regcfg_amount: the entries before the 4-entry tail (fact sheet §1.6).
  constexpr std::uint32_t regcfg_amount() const { return count - 4; }
  friend constexpr bool operator==(const task&, const task&) = default;
};

// PC_REGISTER_AMOUNTS for a task of `entries` entries, tail included: the 128-bit words the
// PC fetches, minus one (fact sheet §2.3; equals the vendor kernel's and rocket's formula).
constexpr std::uint32_t pc_fetch_amount(std::uint32_t entries) { return (entries + 1) / 2 - 1; }

// Completion interrupt of a task whose last stage is the DPU (both kernels accept only a
// pair-complete mask; fact sheet §1.6, §3.3).
inline constexpr std::uint32_t dpu_done_interrupts = 0x300;

// A read-only view of a program, whatever owns it.
struct program_view {
  std::span<const entry> entries;
  std::span<const slot> slots;
  std::span<const task> tasks;
  bool pingpong = true;  // submitted with RKNPU_JOB_PINGPONG (two register groups alternate)
  bool delta_tasks = false;  // some task relies on registers an earlier task wrote

  constexpr std::size_t size_bytes() const { return entries.size() * 8; }
};

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

// Writes a program into caller-owned storage. The first failure is kept and everything
// after it is ignored, so builders can emit straight-line code and check once at the end.
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

  // An address register whose value bind fills in: IOVA of `role`'s buffer + offset.
  template <register_type R>
  constexpr void put_slot(operand_role role, std::uint32_t offset, std::uint32_t extent) {
    if (!ok()) return;
    add_slot(slot{entry_count_, role, offset, extent});
    put(R{});
  }

  constexpr void put_raw(entry e) {
    if (ok()) append(e);
  }

  // A prepared address entry (value 0) and its slot, e.g. copied from another program.
  constexpr void put_raw_slot(entry e, operand_role role, std::uint32_t offset, std::uint32_t extent) {
    if (!ok()) return;
    add_slot(slot{entry_count_, role, offset, extent});
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
    for (std::size_t i = 0, n = body_slots.size(); i != n; ++i) {
      slots_out[i] = body_slots.data()[i];
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
    const std::uint32_t tail = previous.first + previous.count - 4;
    add_slot(slot{});
    if (!ok()) return;
    slot* slots = slots_.data();
    for (std::uint32_t i = slot_count_ - 1; i > task_first_slot_; --i) slots[i] = slots[i - 1];
    slots[task_first_slot_] = slot{tail, operand_role::regcmd, next.first * 8, next.count * 8};
    const std::uint32_t amount = pc_fetch_amount(next.count);
    if (const rule* violated = check_field(decltype(reg::PC_REGISTER_AMOUNTS::PC_DATA_AMOUNT)::shape, amount);
        *violated != no_violation)
      return fail(make_error(*violated, reg::PC_REGISTER_AMOUNTS::name, "PC_DATA_AMOUNT", amount));
    entries_.data()[tail + 1] = tail_amount_.with_value(amount);
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
  bool in_task_ = false;
  bool failed_ = false;
  error error_{};
};

// A program with fixed capacity, usable as a constexpr value.
template <std::size_t MaxEntries, std::size_t MaxTasks = 1, std::size_t MaxSlots = 8 * MaxTasks>
struct program {
  std::array<entry, MaxEntries> entries{};
  std::array<slot, MaxSlots> slots{};
  std::array<task, MaxTasks> tasks{};
  std::uint32_t entry_count = 0;
  std::uint32_t slot_count = 0;
  std::uint32_t task_count = 0;
  bool pingpong = true;
  bool delta_tasks = false;

  constexpr program_view view() const {
    return {std::span<const entry>(entries.data(), entry_count), std::span<const slot>(slots.data(), slot_count),
            std::span<const task>(tasks.data(), task_count), pingpong, delta_tasks};
  }
  constexpr std::span<const entry> code() const { return {entries.data(), entry_count}; }

  // Runs `build(writer)` into this program's storage and keeps what it wrote.
  template <class Build>
  constexpr status fill(Build&& build) {
    program_writer w{entries, slots, tasks};
    build(w);
    entry_count = w.entry_count();
    slot_count = w.slot_count();
    task_count = w.task_count();
    return w.outcome();
  }
};

}  // namespace regcmd
