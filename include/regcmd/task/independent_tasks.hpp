#pragma once
// Which leading tasks of a program may run on different cores at once: the cores of one
// submit start together and nothing orders one core's tasks after another's (fact sheet
// §1.6; regcmd-isa-reference "Multi-core submit"), so tasks split over cores must hand
// nothing to each other. From the slots: a task writes through its DPU or PPU destination
// register and reads through every other operand register; two tasks conflict when one
// writes bytes (role, [offset, offset + extent)) the other reads or writes.

#include <algorithm>
#include <cstdint>
#include <vector>

#include <regcmd/task/program.hpp>
#include <regcmd/registers/dpu.hpp>
#include <regcmd/registers/ppu.hpp>

namespace regcmd {

namespace detail {
struct byte_range {
  operand_role role{};
  std::uint64_t first = 0, end = 0;
  constexpr bool meets(const byte_range& o) const { return role == o.role && first < o.end && o.first < end; }
};

// The operand bytes a task's slots write or read (its links to the program are neither).
constexpr bool writes_through(entry e) {
  return e.offset() == reg::DPU_DST_BASE_ADDR::offset || e.offset() == reg::PPU_DST_BASE_ADDR::offset;
}
}  // namespace detail

// The number of leading tasks none of which reads or writes bytes another of them writes
// (at least 1 for a program with tasks). A program with delta tasks has 1: its later tasks
// rely on the registers of earlier ones.
inline std::uint32_t independent_prefix(const program_view& p) {
  if (p.tasks.empty()) return 0;
  if (p.delta_tasks) return 1;
  // each task's slots (tasks and slots are in entry order)
  std::vector<std::vector<const slot*>> of_task(p.tasks.size());
  for (const slot& s : p.slots) {
    const auto after = std::upper_bound(p.tasks.begin(), p.tasks.end(), s.entry,
                                        [](std::uint32_t e, const task& t) { return e < t.first; });
    if (after != p.tasks.begin()) of_task[static_cast<std::size_t>(after - p.tasks.begin()) - 1].push_back(&s);
  }
  std::vector<detail::byte_range> written, read;
  std::uint32_t n = 0;
  for (const std::vector<const slot*>& slots : of_task) {
    std::vector<detail::byte_range> w, r;
    for (const slot* s : slots) {
      if (s->role == operand_role::regcmd || s->role == operand_role::next_program) continue;
      const detail::byte_range range{s->role, s->offset, std::uint64_t{s->offset} + s->extent};
      (detail::writes_through(p.entries[s->entry]) ? w : r).push_back(range);
    }
    for (const detail::byte_range& x : w)
      for (const auto* others : {&written, &read})
        for (const detail::byte_range& y : *others)
          if (x.meets(y)) return n;
    for (const detail::byte_range& x : r)
      for (const detail::byte_range& y : written)
        if (x.meets(y)) return n;
    written.insert(written.end(), w.begin(), w.end());
    read.insert(read.end(), r.begin(), r.end());
    ++n;
  }
  return n;
}

}  // namespace regcmd
