// Program size: entries per task for a lone task, for chained tasks and for delta tasks
// (the vendor runtime writes 12 entries per delta task after the first two).
#include <cstdio>
#include <string>

#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/plan.hpp>

#include "harness.hpp"

using namespace regcmd;

namespace {
constexpr matmul_spec chain{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 8 * 96, .K = 2048, .N = 64,
                            .sched = schedule::template_split};  // 96 tiles of 8 rows
constexpr auto lone = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 64, .K = 512, .N = 256}>();
constexpr auto full = fixed<plan_request{chain}>();
constexpr auto delta = fixed<plan_request{chain, plan_options{.delta_tasks = true}}>();

template <class Program>
double entries_per_task(const Program& p, std::size_t from_task) {
  std::size_t entries = 0;
  for (std::size_t t = from_task; t < p.task_count; ++t) entries += p.tasks[t].count;
  return static_cast<double>(entries) / static_cast<double>(p.task_count - from_task);
}
}  // namespace

int main() {
  const double lone_entries = entries_per_task(lone.code, 0);
  const double chained = entries_per_task(full.code, 0);
  const double first_two = (delta.code.tasks[0].count + delta.code.tasks[1].count) / 2.0;
  const double later = entries_per_task(delta.code, 2);
  std::printf("entries per task: lone %.0f, chained %.1f, delta: first two %.0f, later %.1f (%u tasks)\n",
              lone_entries, chained, first_two, later, delta.code.task_count);
  bench::row("program size", "entries, lone task (104 writes + 4-entry tail)", bench::fixed(lone_entries, 0));
  bench::row("program size", "entries per task, chained (96 tasks)", bench::fixed(chained, 1));
  bench::row("program size", "entries per delta task, first two", bench::fixed(first_two, 0));
  bench::row("program size", "entries per delta task after the first two", bench::fixed(later, 1), "<= 12 (vendor)",
             later <= 12);
  bench::row("program size", "bytes of the 96-task program, full / delta",
             std::to_string(full.code.entry_count * 8) + " / " + std::to_string(delta.code.entry_count * 8));
  return 0;
}
