#pragma once
// A regcmd program: entries, the tasks they form, and the slot table of operand addresses.
//
//   entries  what goes into the regcmd buffer, task after task; every task starts 16 bytes
//            aligned (PC_SOURCE_ADDR is bits 31:4) and ends with its 4-entry tail
//            (regcmd/task/tail.hpp)
//   tasks    [first, first + count) of the entries, tail included, with the task's block
//            enable mask and completion interrupt mask (what rknpu_task needs)
//   slots    every entry that holds an address, in entry order: which operand buffer it
//            points into, at which byte offset, and how many bytes the DMA reaches from
//            there. Address registers hold 0 until bind patches IOVA + offset into them.
//
// `program<...>` is fixed-capacity storage usable as a constexpr value; regcmd/task/writer.hpp
// fills it (or any caller-owned storage). Nothing here allocates.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <regcmd/core/entry.hpp>

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
  bias,          // a conv's per-kernel bias, added by the DPU's BS stage (DPU_RDMA_RDMA_BS_BASE_ADDR)
  residual,      // a conv's residual tensor, added by the DPU's EW stage (DPU_RDMA_RDMA_EW_BASE_ADDR)
};
inline constexpr std::size_t operand_role_count = 9;

// The roles the NPU writes; every other role it only reads.
constexpr bool npu_writes(operand_role r) { return r == operand_role::output || r == operand_role::intermediate; }

constexpr std::string_view name_of(operand_role r) {
  switch (r) {
    case operand_role::feature: return "feature";
    case operand_role::weight: return "weight";
    case operand_role::output: return "output";
    case operand_role::ew_operand: return "ew_operand";
    case operand_role::regcmd: return "regcmd";
    case operand_role::next_program: return "next_program";
    case operand_role::intermediate: return "intermediate";
    case operand_role::bias: return "bias";
    case operand_role::residual: return "residual";
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

// What a program's slots ask of the buffer of each operand role: whether a slot uses it, the
// byte after the furthest one a DMA reaches, and the largest offset (so that a buffer is
// checked once, not once a slot).
struct role_use {
  bool used = false;
  std::uint64_t end = 0;
  std::uint32_t max_offset = 0;
};
using role_uses = std::array<role_use, operand_role_count>;
constexpr role_uses uses_of(std::span<const slot> slots) {
  role_uses uses{};
  for (const slot& s : slots) {
    role_use& use = uses[static_cast<std::size_t>(s.role)];
    use.used = true;
    use.end = std::max(use.end, std::uint64_t{s.offset} + s.extent);
    use.max_offset = std::max(use.max_offset, s.offset);
  }
  return uses;
}

// Entries every task ends with: PC_BASE_ADDRESS, PC_REGISTER_AMOUNTS, the 0x0041 preamble
// and the op-enable (fact sheet §2.3); regcmd/task/tail.hpp names them.
inline constexpr std::uint32_t task_tail_entries = 4;

struct task {
  std::uint32_t first = 0;        // first entry
  std::uint32_t count = 0;        // entries, tail included
  std::uint32_t enable_mask = 0;  // GLOBAL op-enable mask: the value of the task's 0x0081 entry
  std::uint32_t int_mask = 0;     // completion interrupts, pair-complete (e.g. DPU_0 | DPU_1)

  // rknpu_task.regcfg_amount: the entries before the tail (fact sheet §1.6).
  constexpr std::uint32_t regcfg_amount() const { return count - task_tail_entries; }
  friend constexpr bool operator==(const task&, const task&) = default;
};

// PC_REGISTER_AMOUNTS for a task of `entries` entries, tail included: the 128-bit words the
// PC fetches, minus one (fact sheet §2.3; equals the vendor kernel's and rocket's formula).
constexpr std::uint32_t pc_fetch_amount(std::uint32_t entries) { return (entries + 1) / 2 - 1; }

// How a program is submitted.
struct submit_options {
  bool pingpong = true;      // RKNPU_JOB_PINGPONG: two register groups alternate task by task
  bool delta_tasks = false;  // some task relies on registers an earlier task wrote
  friend constexpr bool operator==(const submit_options&, const submit_options&) = default;
};

// The most a program may need: what a writer is given room for.
struct program_size {
  std::size_t entries = 0, slots = 0, tasks = 0;
};

// A read-only view of a program, whatever owns it.
struct program_view {
  std::span<const entry> entries;
  std::span<const slot> slots;
  std::span<const task> tasks;
  bool pingpong = true;
  bool delta_tasks = false;

  constexpr std::size_t size_bytes() const { return entries.size() * 8; }
  constexpr submit_options options() const { return {pingpong, delta_tasks}; }
  // Some task reads what an earlier one wrote (a fused chain's intermediate).
  constexpr bool hands_on_data() const {
    for (const slot& s : slots)
      if (s.role == operand_role::intermediate) return true;
    return false;
  }
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
};

}  // namespace regcmd
