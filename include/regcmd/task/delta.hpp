#pragma once
// Copies of a prepared task, in full or as delta tasks.
//
// A delta task carries only what differs from the task that last used its register group
// (the vendor's multi-task pattern: "task[0,1] full, task[2+] lightweight"): registers keep
// their values from task to task, and with ping-pong the two register groups alternate. The
// difference is taken between two task bodies as emitted from their descriptions
// (regcmd/task/emit_task.hpp), register by register, so it holds for any op: a register is
// written when the earlier body does not write it or wrote another value, an address when
// its slot points elsewhere.

#include <cstddef>
#include <cstdint>
#include <span>

#include <regcmd/task/program.hpp>
#include <regcmd/task/writer.hpp>

namespace regcmd {

// A task as emitted, without its tail: the body's entries (address entries hold 0), its
// slots (entry indices relative to the body), and the op-enable entry and interrupts that
// end it.
struct task_body {
  std::span<const entry> entries;
  std::span<const slot> slots;
  entry op_enable{};
  std::uint32_t int_mask = 0;
};

namespace detail {
constexpr bool same_register(entry a, entry b) { return a.target() == b.target() && a.offset() == b.offset(); }

// Index in `body` of the entry writing the register `e` writes, or body.entries.size().
constexpr std::size_t find_register(const task_body& body, entry e, std::size_t hint) {
  if (hint < body.entries.size() && same_register(body.entries[hint], e)) return hint;
  for (std::size_t i = 0; i < body.entries.size(); ++i)
    if (same_register(body.entries[i], e)) return i;
  return body.entries.size();
}

constexpr const slot* slot_at(const task_body& body, std::size_t index) {
  for (const slot& s : body.slots)
    if (s.entry == index) return &s;
  return nullptr;
}

constexpr bool same_target(const slot& a, const slot& b) {
  return a.role == b.role && a.offset == b.offset && a.extent == b.extent;
}
}  // namespace detail

// Writes `now` as one task: in full without `before`, else only what differs from `before`,
// the full body its register group last held. Bodies copied from one prepared task (the same
// storage) differ in their slots only, which keeps a plan of thousands of delta tasks cheap
// to build at compile time.
constexpr void emit_copy(program_writer& w, const task_body& now, const task_body* before = nullptr) {
  w.begin_task();
  if (!before) {
    w.put_body(now.entries, now.slots);
  } else if (now.entries.data() == before->entries.data()) {
    // Raw pointers: in constant evaluation every checked access is steps.
    const slot* mine = now.slots.data();
    const slot* theirs = before->slots.data();
    for (std::size_t s = 0, n = now.slots.size(); s != n; ++s)
      if (mine[s].offset != theirs[s].offset || mine[s].role != theirs[s].role || mine[s].extent != theirs[s].extent)
        w.put_raw_slot(now.entries.data()[mine[s].entry], mine[s].role, mine[s].offset, mine[s].extent);
  } else {
    std::size_t s = 0;
    for (std::size_t i = 0; i < now.entries.size(); ++i) {
      const entry e = now.entries[i];
      const std::size_t j = detail::find_register(*before, e, i);
      const bool written = j < before->entries.size();
      if (s < now.slots.size() && now.slots[s].entry == i) {
        const slot& mine = now.slots[s++];
        const slot* theirs = written ? detail::slot_at(*before, j) : nullptr;
        if (!theirs || !detail::same_target(mine, *theirs)) w.put_raw_slot(e, mine.role, mine.offset, mine.extent);
      } else if (!written || before->entries[j] != e) {
        w.put_raw(e);
      }
    }
  }
  w.end_task(now.op_enable, now.int_mask);
}

}  // namespace regcmd
