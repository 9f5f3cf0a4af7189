// A task is fetched in 128-bit words counted in 16 bits: 131073 entries are one word too many
// (checked on the task alone, before its entries are read).
// EXPECT: regcmd rule task-length:
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;

inline constexpr program<8, 1> one_task = [] {
  program<8, 1> p;
  (void)fill(p, [](program_writer& w) {
    w.begin_task();
    w.end_task(reg::GLOBAL_OPERATION_ENABLE{.DPU_OP_EN = 1}, dpu_done_interrupts);
  });
  return p;
}();

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t count = 131'073;
#else
inline constexpr std::uint32_t count = 4;
#endif
inline constexpr std::array<task, 1> tasks{task{0, count, one_task.tasks[0].enable_mask, dpu_done_interrupts}};

static_assert(report<violated_rule(validate_structure(program_view{one_task.code(), {}, tasks, true, false}))>());
