// A task's PC_BASE_ADDRESS must point at the next task: a link back to the first task would
// run it again and never the second.
// EXPECT: regcmd rule chain-link:
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;
using namespace regcmd::reg;

inline constexpr GLOBAL_OPERATION_ENABLE blocks{.DPU_OP_EN = 1};

constexpr program<16, 2> two_tasks() {
  program<16, 2> p;
  (void)fill(p, [](program_writer& w) {
    w.begin_task();
    w.end_task(blocks, dpu_done_interrupts);
    w.begin_task();
    w.end_task(blocks, dpu_done_interrupts);
  });
#ifdef REGCMD_COMPILE_FAIL
  p.slots[0].offset = 0;  // the link of task 0, pointed at task 0
#endif
  return p;
}

inline constexpr program<16, 2> chain = two_tasks();
static_assert(report<violated_rule(validate(chain.view()))>());
