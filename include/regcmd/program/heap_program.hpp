#pragma once
// A program built at run time, for shapes known only then: heap storage sized by the
// builder, the geometry its packers need, and its ping-pong and delta settings. The
// compile-time form of the same program is a `program<E, T>` value.

#include <cstddef>
#include <utility>
#include <vector>

#include <regcmd/core/error.hpp>
#include <regcmd/program/writer.hpp>

namespace regcmd {

template <class Geometry>
struct heap_program {
  Geometry geometry{};
  bool pingpong = true;
  bool delta_tasks = false;
  std::vector<entry> entries;
  std::vector<slot> slots;
  std::vector<task> tasks;
  program_view view() const { return {entries, slots, tasks, pingpong, delta_tasks}; }
};

struct storage_size {
  std::size_t entries = 0, slots = 0, tasks = 0;
};

// Runs `emit(writer)` into storage of `size`, keeps what it wrote, and returns it once
// `check(view)` (the program rules that apply) passes.
template <class Geometry, class Emit, class Check>
result<heap_program<Geometry>> build_on_heap(const Geometry& geometry, storage_size size, bool pingpong,
                                             bool delta_tasks, Emit&& emit, Check&& check) {
  heap_program<Geometry> p{geometry, pingpong, delta_tasks, std::vector<entry>(size.entries),
                           std::vector<slot>(size.slots), std::vector<task>(size.tasks)};
  program_writer w{p.entries, p.slots, p.tasks};
  emit(w);
  if (status s = w.outcome(); !s) return s.err();
  p.entries.resize(w.entry_count());
  p.slots.resize(w.slot_count());
  p.tasks.resize(w.task_count());
  if (status s = check(p.view()); !s) return s.err();
  return p;
}

}  // namespace regcmd
