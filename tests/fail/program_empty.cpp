// A program of no tasks starts nothing: a submit of it never completes (rknpu) or lists no
// job (rocket).
// EXPECT: regcmd rule program-empty:
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
inline constexpr std::span<const task> tasks{};
#else
inline constexpr std::span<const task> tasks{one_task.tasks.data(), 1};
#endif

static_assert(report<violated_rule(validate_structure(program_view{one_task.code(), {}, tasks, true, false}))>());
