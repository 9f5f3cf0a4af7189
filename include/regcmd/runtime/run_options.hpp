#pragma once
// How a prepared program is run, and what a run reports (session.hpp).

#include <cstdint>

namespace regcmd::runtime {

// rknpu: the runtime picks the core(s) by core mask. rocket: the kernel's scheduler picks
// a core for each job; cores::all still splits the tasks into chains, one job each.
//   all           every task, in up to three chains, one submit (nothing handed on)
//   all_then_one  the program's leading tasks that hand nothing to each other
//                 (regcmd/task/independent_tasks.hpp) in up to three chains, one submit; the
//                 rest on one core in a second (a graph's independent branches, then the
//                 ops that read them)
enum class cores : std::uint8_t { one, round_robin, all, all_then_one };

struct prepare_options {
  cores use = cores::one;
};

struct run_options {
  cores use = cores::one;     // one or round_robin (cores::all and all_then_one are chosen at prepare); rknpu only
  unsigned core = 0;          // with cores::one: which core (0..2); rknpu only
  std::uint32_t timeout_ms = 6000;  // rknpu: the submit's; rocket: how long run waits (the kernel stops a job at 500 ms)
  bool blocking = true;       // rknpu: false = RKNPU_JOB_NONBLOCK + a fence, waited on with poll(); rocket always waits on a fence
};

struct run_report {
  unsigned submits = 0;       // including a warm-up and re-runs
  bool reset = false;         // the NPU was reset during the run (rknpu: by the runtime first; rocket: by the kernel after a timed-out job)
  std::uint32_t core_mask = 0;  // rknpu: the cores used; rocket: 0 (the kernel chose)
  std::int64_t hw_ns = 0;     // rknpu: the kernel's hw_elapse_time of the last submit; rocket: 0 (not reported)
  double wall_us = 0;         // the whole run
};

}  // namespace regcmd::runtime
