#pragma once
// A captured program as a template: what `regcmd-dis --format cpp` writes for a dump, so an
// op regcmd does not generate can be replayed, patched to another shape (regcmd/programs/captured/patch.hpp)
// and checked by every program rule before it runs.
//
//   inline constexpr auto softmax = regcmd::captured_program<120, 1, 8>({.pingpong = true},
//       [](regcmd::program_writer& w) { w.begin_task(); w.put(...); ... w.end_task(...); });
//
// The captured entries are written through the program writer, so the task tails are
// regcmd's (they link the tasks) and every address register is a slot; the slots' extents
// are read from the registers. A constant only (consteval): a capture that does not fit the
// storage it names does not compile. Nothing is validated here: validate() or patched<>() does.

#include <cstddef>

#include <regcmd/programs/captured/patch.hpp>
#include <regcmd/task/program.hpp>
#include <regcmd/task/writer.hpp>

namespace regcmd {

namespace detail {
// Deliberately not constexpr: reached in a constant expression, its name is the message.
inline void regcmd_captured_program_does_not_fit_the_storage_it_names() {}
}  // namespace detail

template <std::size_t Entries, std::size_t Tasks, std::size_t Slots, class Build>
consteval program<Entries, Tasks, Slots> captured_program(submit_options options, Build&& build) {
  program<Entries, Tasks, Slots> p{};
  p.pingpong = options.pingpong;
  p.delta_tasks = options.delta_tasks;
  if (!fill(p, build)) detail::regcmd_captured_program_does_not_fit_the_storage_it_names();
  read_extents(patch_target_of(p));
  return p;
}

}  // namespace regcmd
