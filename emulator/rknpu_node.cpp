// The vendor rknpu node's ioctls (emu.cpp says what the node does, device.hpp holds its state).
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <regcmd/rules/program_rules.hpp>

#include "device.hpp"

namespace regcmd::emu {


namespace {

int do_mem_create(device_state& s, int fd, rk::mem_create& c) {
  if (c.size == 0 || c.iommu_domain_id < 0 || c.iommu_domain_id >= rk::max_iommu_domains) return fail(EINVAL);
  // Without ZEROING the kernel skips zeroing too: the pages hold what they held.
  emu_buffer* b = new_buffer(s, fd, c.size, driver::rknpu, (c.flags & rk::mem_cacheable) != 0,
                             (c.flags & rk::mem_zeroing) ? 0 : 0xa5);
  if (!b) return fail(ENOMEM);
  b->flags = c.flags;
  b->domain = c.iommu_domain_id;
  b->iova = s.iovas_of(b->domain).allocate(b->size);
  b->cookie = 0xffff'ff80'0000'0000u | (s.next_cookie++ << 12);  // a kernel pointer, unique
  s.domains[b->domain].add(b->iova, {b->device, b->size});
  c.handle = b->handle;
  c.size = b->size;
  c.obj_addr = b->cookie;
  c.dma_addr = b->iova;
  return 0;
}

int do_rknpu_submit(device_state& s, rk::submit& args) {
  const std::uint64_t number = ++s.stats.submits;
  if (args.task_number == 0 || args.core_mask > rk::max_core_mask || !(args.flags & rk::job_pc)) return fail(EINVAL);
  if (s.drop_at.count(number)) {  // reported done, never run
    note_fault(s, "injected drop: submit " + std::to_string(number) + " never reached the cores");
    args.task_counter = args.task_number;
    if (args.flags & rk::job_fence_out) args.fence_fd = ready_fd();
    return 0;
  }
  emu_buffer* tasks_buffer = s.by_cookie(args.task_obj_addr);
  if (!tasks_buffer) return fail(EINVAL);
  if (!(tasks_buffer->flags & rk::mem_kernel_mapping)) {
    note_fault(s, "task buffer without RKNPU_MEM_KERNEL_MAPPING: the kernel reads tasks through kv_addr (NULL)");
    return fail(EFAULT);
  }
  auto* tasks = reinterpret_cast<const rk::task*>(tasks_buffer->memory);
  const std::size_t capacity = tasks_buffer->size / sizeof(rk::task);

  // Which subcore_task each core runs (fact sheet §1.6).
  std::vector<std::pair<unsigned, rk::core_range>> runs;
  switch (args.core_mask) {
    case 0x0: runs = {{0, args.subcore_task[0]}}; break;
    case 0x1: runs = {{0, args.subcore_task[0]}}; break;
    case 0x2: runs = {{1, args.subcore_task[1]}}; break;
    case 0x4: runs = {{2, args.subcore_task[2]}}; break;
    case 0x3: runs = {{0, args.subcore_task[0]}, {1, args.subcore_task[1]}}; break;
    case 0x7: runs = {{0, args.subcore_task[2]}, {1, args.subcore_task[3]}, {2, args.subcore_task[4]}}; break;
    default: note_fault(s, "unknown core mask: nothing committed"); return fail(ETIMEDOUT);
  }
  for (auto& [core, range] : runs)
    if (range.task_number == 0 || std::uint64_t{range.task_start} + range.task_number > capacity) {
      note_fault(s, "a core's subcore_task is empty or out of range: NULL dereference in rknpu_job_subcore_commit");
      return fail(EFAULT);
    }

  if (args.iommu_domain_id >= rk::max_iommu_domains) return fail(EINVAL);
  regcmd::model::iova_space& memory = s.domains[static_cast<std::int32_t>(args.iommu_domain_id)];
  bool timed_out = s.times_out(number);
  std::vector<regcmd::model::chain> chains;
  for (auto& [core, range] : runs) {
    regcmd::model::npu& npu = s.cores[core];
    if (timed_out) {
      note_fault(s, "injected timeout");
      npu.wedge();  // as after a real timeout, the core stays wedged until RKNPU_ACT_RESET
      continue;
    }
    npu.corrupt_next_output = s.corrupt_at.count(number) != 0;
    const rk::task& first = tasks[range.task_start];
    chains.push_back(npu.start(first.regcmd_addr & 0xffff'ffffu, rk::pc_data_amount(first), range.task_number,
                               args.flags & rk::job_pingpong));
  }
  // The cores start together: a task on each per round, the highest core first.
  for (bool more = !chains.empty(); more;) {
    more = false;
    for (std::size_t i = chains.size(); i-- > 0;) more = s.cores[runs[i].first].step(memory, chains[i]) || more;
  }
  memory.end_job();
  std::uint32_t done = 0;
  for (std::size_t i = 0; i < chains.size(); ++i) {
    const regcmd::model::run_result& r = chains[i].result;
    for (const auto& f : r.faults) note_fault(s, std::string(regcmd::model::name_of(f.kind)) + ": " + f.what);
    done += r.tasks_completed;
    // The IRQ handler accepts only the last task's exact (pair-completed) mask, and the status
    // is the pair of the block that ends the task: the PPU's when the task enables it (a
    // pooling), else the DPU's. The task's enable_mask (the kernel ignores it) says which.
    const rk::core_range& range = runs[i].second;
    const rk::task& last = tasks[range.task_start + range.task_number - 1];
    const std::uint32_t raised = last.enable_mask & regcmd::detail::ppu_enabled ? regcmd::ppu_done_interrupts : regcmd::dpu_done_interrupts;
    if (!r.completed() || last.int_mask != raised) timed_out = true;
  }
  args.task_counter = done;
  if (s.log)
    std::fprintf(stderr, "regcmd-emu: rknpu submit %llu: %u tasks, core mask 0x%x: %s\n",
                 static_cast<unsigned long long>(number), args.task_number, args.core_mask,
                 timed_out ? "timed out" : "done");
  if (timed_out) {
    ++s.stats.timeouts;
    return fail(ETIMEDOUT);
  }
  ++s.stats.jobs_done;
  args.hw_elapse_time = 1000;
  if (args.flags & rk::job_fence_out) args.fence_fd = ready_fd();  // already signalled
  return 0;
}

}  // namespace

int rknpu_ioctl(device_state& s, int fd, unsigned long request, void* arg) {
  const drm_argument io{s.user, request, arg};
  switch (rk::number_of(request)) {
    case rk::nr_action: {
      rk::action a;
      if (!io.in(a)) return fail(EFAULT);
      if (a.flags == rk::action_reset) {
        for (auto& c : s.cores) c.reset();
        ++s.stats.resets;
      } else if (a.flags == rk::action_get_drv_version) {
        a.value = 907;
      } else if (a.flags == rk::action_get_hw_version) {
        a.value = 0x46495245;
      }
      return io.back(a);
    }
    case rk::nr_submit: {
      rk::submit a;
      if (!io.in(a)) return fail(EFAULT);
      const int rc = do_rknpu_submit(s, a);
      const int saved = errno;
      if (io.back(a) != 0) return -1;
      errno = saved;
      return rc;
    }
    case rk::nr_mem_create: {
      rk::mem_create a;
      if (!io.in(a)) return fail(EFAULT);
      if (do_mem_create(s, fd, a) != 0) return -1;
      return io.back(a);
    }
    case rk::nr_mem_map: {
      rk::mem_map a;
      if (!io.in(a)) return fail(EFAULT);
      if (!s.by_handle(fd, a.handle)) return fail(EINVAL);
      a.offset = std::uint64_t{a.handle} << 12;
      return io.back(a);
    }
    case rk::nr_mem_destroy: {
      rk::mem_destroy a;
      if (!io.in(a)) return fail(EFAULT);
      return free_handle(s, fd, a.handle);
    }
    case rk::nr_mem_sync: {
      rk::mem_sync a;
      if (!io.in(a)) return fail(EFAULT);
      emu_buffer* b = s.by_cookie(a.obj_addr);
      if (!b || !(b->flags & rk::mem_cacheable) || a.offset > b->size || a.size > b->size - a.offset) return fail(EINVAL);
      // rknpu_gem_sync_ioctl: dma_sync_single_range_for_device (TO_DEVICE), then
      // _for_cpu (FROM_DEVICE), over [offset, offset + size).
      if (a.flags & rk::sync_to_device) clean(s, *b, a.offset, a.size);
      if (a.flags & rk::sync_from_device) invalidate(s, *b, a.offset, a.size);
      ++s.stats.syncs;
      return 0;
    }
    default: return fail(ENOTTY);
  }
}

}  // namespace regcmd::emu
