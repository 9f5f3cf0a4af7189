#pragma once
// Program storage on the heap, for programs whose size is known only at run time: the one
// container of the program layer that allocates, used by the run-time doors
// (regcmd/programs/door.hpp). Firmware-like users who allocate nothing write into storage of
// their own with a program_writer instead.

#include <cstddef>
#include <vector>

#include <regcmd/task/program.hpp>
#include <regcmd/task/writer.hpp>

namespace regcmd {

struct heap_code {
  std::vector<entry> entries;
  std::vector<slot> slots;
  std::vector<task> tasks;
  submit_options options{};
  program_view view() const { return {entries, slots, tasks, options.pingpong, options.delta_tasks}; }
};

// Runs `emit(writer)` (which returns a status) into heap storage of `size` and keeps what
// it wrote.
template <class Emit>
result<heap_code> write_on_heap(program_size size, submit_options options, Emit&& emit) {
  heap_code code{std::vector<entry>(size.entries), std::vector<slot>(size.slots), std::vector<task>(size.tasks),
                 options};
  program_writer w{code.entries, code.slots, code.tasks};
  if (status s = emit(w); !s) return s.err();
  code.entries.resize(w.entry_count());
  code.slots.resize(w.slot_count());
  code.tasks.resize(w.task_count());
  return code;
}

}  // namespace regcmd
