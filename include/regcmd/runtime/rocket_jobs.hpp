#pragma once
// Submitting a prepared program to the mainline rocket driver (fact sheet §3): one
// drm_rocket_task per program task, one job per task chain, one SUBMIT per stage, the buffers each job reads and
// writes listed on it, and completion read from the job's fence.
//
// What the rocket kernel does differently from rknpu, and how this backend meets it:
//   - it kicks every task on its own (TASK_NUMBER 1) from the task's {regcmd, count}, the
//     tail included; the tails' links stay in the program but are not followed;
//   - jobs of one file share a fence context: each job writes a page of its own, so its
//     completion is read from a fence no later job replaces;
//   - it turns ping-pong on for every task and rewrites CNA/CORE S_POINTER before each, so
//     programs that need ping-pong off or lean on an earlier task's registers are refused;
//   - it ends a task only on a DPU interrupt (0x300), whatever the program's int_mask;
//   - SUBMIT returns before the job runs, and drops a job it cannot queue without an error
//     (so every job is checked here first, and no buffer is listed twice);
//   - a job that runs past 500 ms is stopped and its core reset by the kernel: the job's
//     fence carries the error, which run reports as a timeout.

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <regcmd/task/program.hpp>
#include <regcmd/runtime/buffer.hpp>
#include <regcmd/runtime/device.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/rules/program_rules.hpp>
#include <regcmd/runtime/npu_state.hpp>
#include <regcmd/runtime/rknpu_jobs.hpp>
#include <regcmd/runtime/rocket_uapi.hpp>
#include <regcmd/runtime/run_options.hpp>

namespace regcmd::runtime {

class rocket_jobs {
 public:
  // The kernel's view of a task placed at `regcmd_iova`: every entry, the tail included.
  static constexpr rocket::task descriptor(const task& t, std::uint64_t regcmd_iova) {
    return {static_cast<std::uint32_t>(regcmd_iova + std::uint64_t{t.first} * 8), t.count};
  }

  // What the rocket kernel cannot run (the program rules hold already, as one submit runs
  // the tasks). It kicks each task alone on register group 0, so the rules must also hold
  // with the registers each task inherits that way.
  template <class Soc = soc::rk3588>
  static constexpr status check(const program_view& p) {
    if (!p.pingpong) return make_error(rules::rocket_pingpong, "prepare");
    if (p.delta_tasks) return make_error(rules::rocket_delta_tasks, "prepare");
    for (std::size_t i = 0; i < p.tasks.size(); ++i)
      if (p.tasks[i].int_mask != dpu_done_interrupts)
        return make_error(rules::rocket_interrupt, "prepare", "task", i);
    return validate<Soc>(p, "prepare (rocket: every task kicked alone on register group 0)", register_groups::one_per_kick);
  }

  static result<rocket_jobs> create(const device& dev, const buffer& regcmd, std::span<const task> tasks,
                                    std::vector<task_stage> stages, bool /*pingpong: the kernel turns it on*/) {
    rocket_jobs j;
    for (const task& t : tasks) j.tasks_.push_back(descriptor(t, regcmd.iova()));
    for (const task_stage& stage : stages) {
      j.stage_first_.push_back(j.chains_.size());
      j.chains_.insert(j.chains_.end(), stage.begin(), stage.end());
    }
    j.stage_first_.push_back(j.chains_.size());
    j.regcmd_handle_ = regcmd.handle();
    // Jobs of one file share a fence context: on a buffer two jobs write, the later job's
    // fence replaces the earlier one's. So each job also writes a page of its own, whose
    // fence is that job's alone; run exports it from there.
    for (std::size_t c = 0; c < j.chains_.size(); ++c) {
      auto marker = buffer::create(dev, 1);
      if (!marker) return marker.err();
      rocket::prime_handle h{marker.value().handle(), O_CLOEXEC, -1};
      if (status s = dev.ioctl(rocket::ioctl_prime_handle_to_fd, &h, "DRM_IOCTL_PRIME_HANDLE_TO_FD"); !s) return s.err();
      j.fences_.push_back({std::move(marker.value()), owned_fd{dev.calls(), h.fd}});
    }
    j.list_buffers({}, {});  // a job is listed even when nothing is bound
    return j;
  }

  // Lists the buffers bound for reading and for writing on every job. A buffer listed
  // twice (in both lists, or twice in one) fails the kernel's reservation lock and the job
  // is dropped: each is listed once, as written if it is written.
  void list_buffers(std::span<const std::uint32_t> reads, std::span<const std::uint32_t> writes) {
    writes_.assign(writes.begin(), writes.end());
    std::sort(writes_.begin(), writes_.end());
    writes_.erase(std::unique(writes_.begin(), writes_.end()), writes_.end());
    in_.assign(1, regcmd_handle_);  // the NPU reads the program
    for (std::uint32_t h : reads)
      if (!std::binary_search(writes_.begin(), writes_.end(), h) && std::find(in_.begin(), in_.end(), h) == in_.end())
        in_.push_back(h);
    out_.clear();
    jobs_.clear();
    for (std::size_t c = 0; c < chains_.size(); ++c) {
      std::vector<std::uint32_t> out = writes_;
      out.push_back(fences_[c].marker.handle());
      out_.push_back(std::move(out));
    }
    for (std::size_t c = 0; c < chains_.size(); ++c)
      jobs_.push_back({address_of(tasks_.data() + chains_[c][0]), address_of(in_.data()), address_of(out_[c].data()),
                       chains_[c][1], sizeof(rocket::task), static_cast<std::uint32_t>(in_.size()),
                       static_cast<std::uint32_t>(out_[c].size())});
  }

  // No reset request: the kernel resets a core itself when a job times out.
  static status prime(const device&, npu_state& npu, bool, run_report&) {
    npu.owes_reset = false;
    return {};
  }
  // The first int8 job on a core wedges until the kernel stops it and resets the core,
  // which primes it: such a job is run again (regcmd-isa-reference "State gotchas").
  static constexpr bool reruns_int8_entry = true;
  std::size_t stages() const { return stage_first_.empty() ? 0 : stage_first_.size() - 1; }
  // Some submit holds several jobs (the chains of a split).
  bool split() const {
    for (std::size_t i = 0; i + 1 < stage_first_.size(); ++i)
      if (stage_first_[i + 1] - stage_first_[i] > 1) return true;
    return false;
  }

  static constexpr bool timeout_needs_reset = false;

  // One SUBMIT of a stage's jobs, then the wait for each job's fence. `core` is the
  // kernel's choice here.
  status submit(const device& dev, const run_options& options, unsigned /*core*/, run_report& report,
                std::size_t stage = 0) const {
    const std::size_t first = stage_first_[stage], end = stage_first_[stage + 1];
    if (first == end) return make_error(rules::program_empty, "run").with_note("no rocket job");
    rocket::submit args{address_of(jobs_.data() + first), static_cast<std::uint32_t>(end - first), sizeof(rocket::job), 0};
    if (status s = dev.ioctl(rocket::ioctl_submit, &args, "DRM_IOCTL_ROCKET_SUBMIT"); !s) return s;
    report.core_mask = 0;
    report.hw_ns = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds{options.timeout_ms};
    for (std::size_t c = first; c < end; ++c)
      if (status s = wait(dev.calls(), fences_[c].dmabuf.get(), deadline, c); !s) return s;
    return {};
  }

  // What the kernel is given for each task, in program order.
  std::span<const rocket::task> tasks() const { return tasks_; }

 private:
  class owned_fd {
   public:
    owned_fd() = default;
    owned_fd(const system_calls& calls, int fd) : calls_{&calls}, fd_{fd} {}
    owned_fd(owned_fd&& o) noexcept : calls_{o.calls_}, fd_{std::exchange(o.fd_, -1)} {}
    owned_fd& operator=(owned_fd&& o) noexcept {
      if (this != &o) {
        reset();
        calls_ = o.calls_;
        fd_ = std::exchange(o.fd_, -1);
      }
      return *this;
    }
    owned_fd(const owned_fd&) = delete;
    owned_fd& operator=(const owned_fd&) = delete;
    ~owned_fd() { reset(); }
    int get() const { return fd_; }

   private:
    void reset() {
      if (fd_ >= 0) calls_->close(fd_);
      fd_ = -1;
    }
    const system_calls* calls_ = &os_calls();
    int fd_ = -1;
  };

  template <class T>
  static std::uint64_t address_of(const T* p) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
  }

  // Waits for the fence job `job` left on its page and reads its status. The sync_file is
  // exported right after SUBMIT: a fence that has signalled is no longer exported, and a
  // failing job takes the kernel's 500 ms to be stopped.
  static status wait(const system_calls& calls, int dmabuf, std::chrono::steady_clock::time_point deadline,
                     std::size_t job) {
    rocket::export_sync_file e{rocket::dma_buf_sync_read, -1};
    if (status s = fd_ioctl(calls, dmabuf, rocket::ioctl_export_sync_file, &e, "DMA_BUF_IOCTL_EXPORT_SYNC_FILE"); !s)
      return s;
    const owned_fd fence{calls, e.fd};
    pollfd p{fence.get(), POLLIN, 0};
    int ready;
    do {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      ready = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(0, left)));
    } while (ready < 0 && errno == EINTR);
    const std::string note = "rocket job " + std::to_string(job);
    if (ready == 0) return make_error(rules::submit_timeout, "run").with_note(note + " fence").with_errno(ETIMEDOUT);
    if (ready < 0) return make_error(rules::ioctl_failed, "run").with_note("poll on the " + note + " fence").with_errno(errno);
    rocket::sync_file_info info{};
    if (status s = fd_ioctl(calls, fence.get(), rocket::ioctl_sync_file_info, &info, "SYNC_IOC_FILE_INFO"); !s) return s;
    if (info.status < 0)
      return make_error(rules::submit_timeout, "run")
          .with_note(note + ": the kernel stopped it and reset its core")
          .with_errno(-info.status);
    return {};
  }

  // A job's own page and the dma-buf its fence is exported from.
  struct job_fence {
    buffer marker;
    owned_fd dmabuf;
  };

  std::vector<rocket::task> tasks_;
  std::vector<task_chain> chains_;        // every stage's, one job each
  std::vector<std::size_t> stage_first_;  // the first chain of each stage, then the end
  std::uint32_t regcmd_handle_ = 0;
  std::vector<job_fence> fences_;  // one per job
  // Handles; jobs_ point into these and tasks_ (a move keeps their storage).
  std::vector<std::uint32_t> writes_, in_;
  std::vector<std::vector<std::uint32_t>> out_;
  std::vector<rocket::job> jobs_;
};

}  // namespace regcmd::runtime
