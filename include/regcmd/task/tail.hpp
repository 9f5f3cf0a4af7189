#pragma once
// The tail every task ends with, reached by name (fact sheet §2.3):
//
//   next_address  PC_BASE_ADDRESS: the next task's regcmd IOVA (a slot), 0 ends the chain
//   next_amount   PC_REGISTER_AMOUNTS: the next task's fetch amount, 0 for the last task
//   preamble      the 0x0041 entry the TRM requires before op_en
//   op_enable     the 0x0081 entry: the task's block enable mask

#include <cstdint>
#include <span>

#include <regcmd/task/program.hpp>

namespace regcmd {

enum class tail_entry : std::uint32_t { next_address = 0, next_amount = 1, preamble = 2, op_enable = 3 };

// Index of one tail entry of task `t` in its program's entries.
constexpr std::uint32_t tail_index(const task& t, tail_entry which) {
  return t.first + t.count - task_tail_entries + static_cast<std::uint32_t>(which);
}

// One past the task's last body entry (the body is [t.first, body_end(t))).
constexpr std::uint32_t body_end(const task& t) { return tail_index(t, tail_entry::next_address); }

// The tail entries of task `t`, by name.
struct task_tail {
  entry next_address, next_amount, preamble, op_enable;
};
constexpr task_tail tail_of(std::span<const entry> entries, const task& t) {
  const entry* tail = entries.data() + body_end(t);
  return {tail[0], tail[1], tail[2], tail[3]};
}

}  // namespace regcmd
