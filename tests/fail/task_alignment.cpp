// A task starts on a 16-byte boundary: the PC fetches from PC_SOURCE_ADDR (bits 31:4), so a
// task at an odd entry would be fetched from the entry before it.
// EXPECT: regcmd rule task-alignment:
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;
using namespace regcmd::reg;

constexpr program<16, 1> one_task() {
  program<16, 1> p;
  (void)fill(p, [](program_writer& w) {
    w.begin_task();
    w.end_task({.DPU_OP_EN = 1}, dpu_done_interrupts);
  });
#ifdef REGCMD_COMPILE_FAIL
  // the task moved one entry on: a zero entry before it
  for (std::uint32_t i = p.entry_count; i > 0; --i) p.entries[i] = p.entries[i - 1];
  p.entries[0] = entry{};
  p.entry_count += 1;
  p.tasks[0].first = 1;
#endif
  return p;
}

inline constexpr program<16, 1> moved = one_task();
static_assert(report<violated_rule(validate(moved.view()))>());
