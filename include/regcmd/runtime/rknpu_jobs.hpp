#pragma once
// Submitting a prepared program to the vendor rknpu driver: one task descriptor per task in
// a KERNEL_MAPPING buffer, one RKNPU_SUBMIT per stage of a run (one stage but with
// cores::all_then_one) with the core mask and subcore_task ranges (fact sheet §1.6;
// regcmd-isa-reference "Multi-core submit").

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <regcmd/task/program.hpp>
#include <regcmd/runtime/buffer.hpp>
#include <regcmd/runtime/device.hpp>
#include <regcmd/runtime/npu_state.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/runtime/rknpu_uapi.hpp>
#include <regcmd/runtime/run_options.hpp>

namespace regcmd::runtime {

// [first task, task count]: the tasks one core runs as one PC chain.
using task_chain = std::array<std::uint32_t, 2>;
// The chains of one submit; a run submits each stage in turn.
using task_stage = std::vector<task_chain>;

class rknpu_jobs {
 public:
  // The descriptor of a task placed at `regcmd_iova`: regcfg_amount excludes the 4-entry
  // tail (the kernel adds it back); enable_mask is informational (the kernel does not read
  // it; the 0x0081 tail entry enables the blocks); int_mask is what the IRQ waits for.
  static constexpr rknpu::task descriptor(const task& t, std::uint64_t regcmd_iova) {
    return {0, 0, t.enable_mask, t.int_mask, rknpu::int_clear_all, 0, t.regcfg_amount(), 0,
            regcmd_iova + std::uint64_t{t.first} * 8};
  }

  // The vendor kernel runs every program the rules accept.
  template <class Soc = soc::rk3588>
  static constexpr status check(const program_view&) { return {}; }

  static result<rknpu_jobs> create(const device& dev, const buffer& regcmd, std::span<const task> tasks,
                                   std::vector<task_stage> stages, bool pingpong) {
    rknpu_jobs j;
    auto descriptors = buffer::create(dev, std::max<std::size_t>(1, tasks.size()) * sizeof(rknpu::task), buffer_use::tasks);
    if (!descriptors) return descriptors.err();
    j.descriptors_ = std::move(descriptors.value());
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      const rknpu::task d = descriptor(tasks[i], regcmd.iova());
      std::memcpy(j.descriptors_.bytes().data() + i * sizeof d, &d, sizeof d);
    }
    j.stages_ = std::move(stages);
    j.pingpong_ = pingpong;
    return j;
  }

  // RKNPU_SUBMIT names no buffers: nothing to list.
  void list_buffers(std::span<const std::uint32_t>, std::span<const std::uint32_t>) {}

  // Before the first submit of a run: RKNPU_ACT_RESET when a job timed out since the last
  // one, or when int8 mode is entered (regcmd-isa-reference "State gotchas").
  static status prime(const device& dev, npu_state& npu, bool entering_int8, run_report& report) {
    if (!npu.owes_reset && !entering_int8) return {};
    if (status s = dev.reset(); !s) return s;
    npu.owes_reset = false;
    report.reset = true;
    return {};
  }
  // The reset has already happened before an int8 entry: a failed submit is not re-run.
  static constexpr bool reruns_int8_entry = false;
  std::size_t stages() const { return stages_.size(); }
  // Some submit runs on several cores.
  bool split() const {
    return std::any_of(stages_.begin(), stages_.end(), [](const task_stage& s) { return s.size() > 1; });
  }

  // A timed-out core stays wedged until the next RKNPU_ACT_RESET.

  static constexpr bool timeout_needs_reset = true;

  // One RKNPU_SUBMIT of a stage: its chains on cores 0..2, or its one chain on `core`.
  status submit(const device& dev, const run_options& options, unsigned core, run_report& report,
                std::size_t stage = 0) const {
    const task_stage& chains_of = stages_[stage];
    rknpu::submit args{};
    args.flags = rknpu::job_pc | (pingpong_ ? rknpu::job_pingpong : 0u) |
                 (options.blocking ? rknpu::job_block : rknpu::job_nonblock | rknpu::job_fence_out);
    args.timeout = options.timeout_ms;
    for (const task_chain& c : chains_of) args.task_number += c[1];
    args.task_obj_addr = descriptors_.cookie();
    args.iommu_domain_id = static_cast<std::uint32_t>(dev.iommu_domain());
    args.fence_fd = -1;
    const auto chains = static_cast<std::uint32_t>(chains_of.size());
    if (chains > 1) {
      // core i runs subcore_task[i + 2] with three cores, [i] with two.
      args.core_mask = chains == 3 ? 0x7u : 0x3u;
      for (std::uint32_t i = 0; i < 5; ++i) {
        const task_chain& c = chains_of[chains == 3 ? (i < 2 ? i : i - 2) : std::min(i, chains - 1)];
        args.subcore_task[i] = {c[0], c[1]};
      }
    } else {
      args.core_mask = 1u << core;
      for (auto& st : args.subcore_task) st = {chains_of[0][0], chains_of[0][1]};  // whichever entry the kernel reads
    }
    report.core_mask = args.core_mask;
    if (status s = dev.ioctl(rknpu::ioctl_submit, &args, "RKNPU_SUBMIT"); !s) return s;
    if (!options.blocking) {
      pollfd fence{args.fence_fd, POLLIN, 0};
      const int ready = ::poll(&fence, 1, static_cast<int>(options.timeout_ms));
      const int e = errno;
      dev.calls().close(args.fence_fd);
      if (ready <= 0) return make_error(rules::submit_timeout, "run").with_note("fence").with_errno(ready == 0 ? ETIMEDOUT : e);
    }
    report.hw_ns = args.hw_elapse_time;
    return {};
  }

 private:
  buffer descriptors_;
  std::vector<task_stage> stages_;
  bool pingpong_ = true;
};

}  // namespace regcmd::runtime
