// The mainline rocket node's ioctls (emu.cpp says what the node does, device.hpp holds its state).
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "device.hpp"

namespace regcmd::emu {


namespace {

// Reads `count` u32 handles at `pointer` as drm_gem_objects_lookup does: false with the
// errno the kernel returns (ENOMEM: an array it cannot allocate; EFAULT).
bool read_handles(device_state& s, std::uint64_t pointer, std::uint32_t count, std::vector<std::uint32_t>& out, int& error) {
  if (std::uint64_t{count} * 4 > INT_MAX) {
    error = ENOMEM;
    return false;
  }
  out.resize(count);
  if (!s.user.read(out.data(), pointer, out.size() * 4)) {
    error = EFAULT;
    return false;
  }
  return true;
}

// Runs job `index` (1-based) of submit `number` as rocket_job.c would, or drops it as
// rocket_ioctl_submit does when rocket_ioctl_submit_job fails (the ioctl still returns 0).
void run_rocket_job(device_state& s, int fd, const rt::job& job, std::uint64_t number, std::uint32_t index) {
  auto drop = [&](const std::string& why) {
    ++s.stats.jobs_dropped;
    note_fault(s, "rocket job dropped: " + why);
  };
  if (job.task_count == 0) return drop("task_count is 0 (-EINVAL)");
  if (job.task_struct_size < sizeof(rt::task)) return drop("task_struct_size too small (-EINVAL)");
  if (std::uint64_t{job.task_count} * sizeof(rt::task) > INT_MAX) return drop("a task array too large to allocate (-ENOMEM)");
  std::vector<rt::task> tasks(job.task_count);
  for (std::uint32_t i = 0; i < job.task_count; ++i)
    if (!s.user.read(&tasks[i], job.tasks + std::uint64_t{i} * job.task_struct_size, sizeof(rt::task)))
      return drop("the task array is not readable (-EFAULT)");
  for (const rt::task& t : tasks)
    if (t.regcmd_count == 0) return drop("a task's regcmd_count is 0 (-EINVAL)");
  std::vector<std::uint32_t> in, out;
  int error = 0;
  if (!read_handles(s, job.in_bo_handles, job.in_bo_handle_count, in, error) ||
      !read_handles(s, job.out_bo_handles, job.out_bo_handle_count, out, error))
    return drop(std::string("a BO handle list: ") + std::strerror(error));
  std::set<std::uint32_t> seen;
  for (const auto* list : {&in, &out})
    for (std::uint32_t h : *list) {
      if (!s.by_handle(fd, h)) return drop("an unknown BO handle (drm_gem_objects_lookup: -ENOENT)");
      if (!seen.insert(h).second) return drop("a BO listed twice (drm_gem_lock_reservations: -EALREADY)");
    }
  s.stats.last_job_tasks = job.task_count;
  s.stats.last_job_in_count = static_cast<std::uint32_t>(in.size());
  s.stats.last_job_out_count = static_cast<std::uint32_t>(out.size());
  std::copy_n(in.begin(), std::min<std::size_t>(in.size(), REGCMD_EMU_MAX_HANDLES), s.stats.last_job_in);
  std::copy_n(out.begin(), std::min<std::size_t>(out.size(), REGCMD_EMU_MAX_HANDLES), s.stats.last_job_out);

  regcmd::model::npu& npu = s.cores[0];
  bool stopped = s.timeout_at.count({number, index}) != 0;
  if (stopped) note_fault(s, "injected timeout");
  npu.corrupt_next_output = index == 1 && s.corrupt_at.count(number) != 0;
  open_file& file = s.files[fd];
  for (std::size_t i = 0; i < tasks.size() && !stopped; ++i) {
    // One kick per task: TASK_NUMBER 1, ping-pong on (PC_TASK_CON 0x7001).
    const regcmd::model::run_result r = npu.run(file.domain, tasks[i].regcmd, rt::pc_data_amount(tasks[i]), 1, true);
    for (const auto& f : r.faults) note_fault(s, std::string(regcmd::model::name_of(f.kind)) + ": " + f.what);
    stopped = !r.completed();
  }
  // The job starts when the one before it on this file's entity ends; a stopped one runs
  // until the kernel's timeout.
  const std::int64_t start = std::max(regcmd::emu::now_ns(), file.busy_until_ns);
  const fence done{stopped ? -ECANCELED : 1, start + (stopped ? s.stop_ns : 0)};
  file.busy_until_ns = done.end_ns;
  if (stopped) {
    // rocket_job_timedout: the core is reset, the job's fence ends with -ECANCELED.
    npu.reset();
    ++s.stats.kernel_resets;
    ++s.stats.timeouts;
  } else {
    ++s.stats.jobs_done;
  }
  for (std::uint32_t h : out) s.by_handle(fd, h)->last_write = done;
  if (s.log)
    std::fprintf(stderr, "regcmd-emu: rocket submit %llu job %u: %u tasks: %s\n", static_cast<unsigned long long>(number),
                 index, job.task_count, stopped ? "stopped after the job timeout" : "done");
}

// PREP_BO (to_device false: the CPU now sees the NPU's bytes, as after an invalidate, once
// the BO's last writer has ended or the deadline has passed) and FINI_BO (to_device: the
// NPU now sees the CPU's, as after a clean); both over the whole BO (dma_sync_sgtable_*).
int sync_bo(device_state& s, int fd, std::uint32_t handle, std::uint32_t reserved, bool to_device, std::int64_t deadline_ns) {
  emu_buffer* b = s.by_handle(fd, handle);
  if (reserved != 0) return fail(EINVAL);
  if (!b) return fail(ENOENT);
  if (to_device) {
    clean(s, *b, 0, b->size);
    ++s.stats.fini_bo;
  } else {
    if (!b->last_write.signalled()) {
      // drm_gem_dma_resv_wait up to the absolute deadline: -EBUSY when it has passed
      // already, -ETIMEDOUT when it passes while waiting.
      if (deadline_ns <= regcmd::emu::now_ns()) return fail(EBUSY);
      regcmd::emu::sleep_until(std::min(deadline_ns, b->last_write.end_ns));
      if (!b->last_write.signalled()) return fail(ETIMEDOUT);
    }
    invalidate(s, *b, 0, b->size);
    ++s.stats.prep_bo;
  }
  ++s.stats.syncs;
  return 0;
}

}  // namespace

int rocket_ioctl(device_state& s, int fd, unsigned long request, void* arg) {
  const drm_argument io{s.user, request, arg};
  if (request == rt::ioctl_gem_close) {
    rt::gem_close a;
    if (!io.in(a)) return fail(EFAULT);
    return free_handle(s, fd, a.handle);
  }
  switch (regcmd::ioctl_codes::number_of(request)) {
    case rt::nr_create_bo: {
      rt::create_bo a;
      if (!io.in(a)) return fail(EFAULT);
      if (a.size == 0) return fail(EINVAL);
      emu_buffer* b = new_buffer(s, fd, a.size, driver::rocket, true, 0);  // shmem: cacheable
      if (!b) return fail(ENOMEM);
      open_file& f = s.files[fd];
      b->iova = f.iovas.allocate(b->size);
      f.domain.add(b->iova, {b->device, b->size});
      a.handle = b->handle;
      a.dma_address = b->iova;
      a.offset = std::uint64_t{b->handle} << 12;
      return io.back(a);
    }
    case rt::nr_submit: {
      rt::submit a;
      if (!io.in(a)) return fail(EFAULT);
      if (a.reserved != 0 || (a.job_count != 0 && a.job_struct_size < sizeof(rt::job))) return fail(EINVAL);
      if (a.job_count == 0) return 0;
      if (std::uint64_t{a.job_count} * sizeof(rt::job) > INT_MAX) return fail(ENOMEM);  // kvmalloc_array
      // Every job is copied in before any is queued.
      std::vector<rt::job> jobs(a.job_count);
      for (std::uint32_t i = 0; i < a.job_count; ++i)
        if (!s.user.read(&jobs[i], a.jobs + std::uint64_t{i} * a.job_struct_size, sizeof(rt::job))) return fail(EFAULT);
      const std::uint64_t number = ++s.stats.submits;
      if (s.drop_at.count(number)) {  // queued as far as the caller can tell, never run
        note_fault(s, "injected drop: submit " + std::to_string(number) + " never reached the cores");
        return 0;
      }
      for (std::uint32_t i = 0; i < a.job_count; ++i) run_rocket_job(s, fd, jobs[i], number, i + 1);
      return 0;
    }
    case rt::nr_prep_bo: {
      rt::prep_bo a;
      if (!io.in(a)) return fail(EFAULT);
      return sync_bo(s, fd, a.handle, a.reserved, false, a.timeout_ns);
    }
    case rt::nr_fini_bo: {
      rt::fini_bo a;
      if (!io.in(a)) return fail(EFAULT);
      return sync_bo(s, fd, a.handle, a.reserved, true, 0);
    }
    default: return fail(ENOTTY);
  }
}

}  // namespace regcmd::emu
