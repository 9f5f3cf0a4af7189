// libregcmd-emu.so: an emulated rknpu device for unmodified programs (LD_PRELOAD).
//
// It answers open() of the device node (default /dev/dri/card1), DRM_IOCTL_VERSION, the
// six rknpu ioctls and mmap() of its buffers the way the 0.9.x vendor kernel does (fact
// sheet §1), and runs submitted jobs on the functional model. Everything else passes
// through to libc.
//
// Environment:
//   REGCMD_EMU_DEVICE=PATH        the node it answers (default /dev/dri/card1)
//   REGCMD_EMU_DRIVER=NAME        the DRM driver name it reports (default rknpu)
//   REGCMD_EMU_OPEN_ERRNO=N       open() of the node fails with errno N (e.g. 13)
//   REGCMD_EMU_IOVA_BASE=ADDR     first IOVA handed out (default 0x10000000)
//   REGCMD_EMU_FAULTS=timeout@N,...  the N-th submit (1-based) times out and wedges its core;
//                                 corrupt@N: the N-th submit's first op writes one wrong bit
//   REGCMD_EMU_QUIRKS=none        turn off the board's cold-start and int8-entry quirks
//   REGCMD_EMU_LOG=1              one line per submit on stderr
// Tests read counters through regcmd_emu_get_stats() (found with dlsym).

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libdrm/drm.h>

#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <regcmd/model/npu.hpp>
#include <regcmd/runtime/rknpu_uapi.hpp>

#include "emu_stats.h"

namespace {

namespace rk = regcmd::rknpu;

template <class F>
F real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

struct emu_buffer {
  std::uint32_t handle = 0;
  std::uint32_t flags = 0;
  std::uint64_t size = 0;
  std::uint64_t iova = 0;
  std::uint64_t cookie = 0;
  std::uint8_t* memory = nullptr;
  int fd = -1;
};

struct device_state {
  std::recursive_mutex lock;
  std::set<int> fds;
  std::map<std::uint32_t, emu_buffer> buffers;
  std::uint32_t next_handle = 1;
  std::uint64_t next_iova = 0;
  regcmd::model::iova_space memory;
  std::array<regcmd::model::npu, 3> cores;
  std::set<std::uint64_t> timeout_at, corrupt_at;
  regcmd_emu_stats stats{};
  bool log = false;
  bool configured = false;

  // Reads the environment when the node is first opened, not at construction: a sanitizer
  // runtime calls open/close/ioctl before the C library has set up the environment.
  void configure() {
    if (configured) return;
    configured = true;
    next_iova = std::strtoull(env("REGCMD_EMU_IOVA_BASE", "0x10000000").c_str(), nullptr, 0);
    log = env("REGCMD_EMU_LOG", "0") == "1";
    const bool quirks = env("REGCMD_EMU_QUIRKS", "all") != "none";
    for (auto& c : cores) c.behaviour = {quirks, quirks};
    std::string faults = env("REGCMD_EMU_FAULTS", "");
    for (std::size_t at = 0; (at = faults.find("timeout@", at)) != std::string::npos; at += 8)
      timeout_at.insert(std::strtoull(faults.c_str() + at + 8, nullptr, 10));
    for (std::size_t at = 0; (at = faults.find("corrupt@", at)) != std::string::npos; at += 8)
      corrupt_at.insert(std::strtoull(faults.c_str() + at + 8, nullptr, 10));
  }

  emu_buffer* by_cookie(std::uint64_t cookie) {
    for (auto& [h, b] : buffers)
      if (b.cookie == cookie) return &b;
    return nullptr;
  }
};

device_state& state() {
  static device_state s;
  return s;
}

bool ours(int fd) {
  device_state& s = state();
  std::lock_guard g(s.lock);
  return s.fds.count(fd) != 0;
}

void note_fault(device_state& s, const std::string& what) {
  std::snprintf(s.stats.last_fault, sizeof s.stats.last_fault, "%s", what.c_str());
  ++s.stats.faults;
}

int fail(int error) {
  errno = error;
  return -1;
}

int do_version(drm_version* v) {
  const std::string name = env("REGCMD_EMU_DRIVER", "rknpu");  // read each time: tests change it
  static const char date[] = "20240424", desc[] = "RKNPU driver";
  v->version_major = 0;
  v->version_minor = 9;
  v->version_patchlevel = 7;
  auto copy = [](char* out, __kernel_size_t& len, const char* text, std::size_t n) {
    if (out && len) std::memcpy(out, text, std::min<std::size_t>(len, n));
    len = n;
  };
  copy(v->name, v->name_len, name.c_str(), name.size());
  copy(v->date, v->date_len, date, sizeof date - 1);
  copy(v->desc, v->desc_len, desc, sizeof desc - 1);
  return 0;
}

int do_mem_create(int fd, rk::mem_create& c) {
  device_state& s = state();
  emu_buffer b;
  b.size = (c.size + 4095) & ~std::uint64_t{4095};
  if (b.size == 0) return fail(EINVAL);
  void* m = real<void* (*)(void*, std::size_t, int, int, int, off_t)>("mmap")(
      nullptr, b.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return fail(ENOMEM);
  b.memory = static_cast<std::uint8_t*>(m);
  if (!(c.flags & rk::mem_zeroing)) std::memset(b.memory, 0xa5, b.size);  // the kernel skips zeroing too
  b.handle = s.next_handle++;
  b.flags = c.flags;
  b.iova = s.next_iova;
  s.next_iova += b.size;
  b.cookie = 0xffff'ff80'0000'0000u | (std::uint64_t{b.handle} << 12);
  b.fd = fd;
  s.memory.add(b.iova, {b.memory, b.size});
  s.buffers[b.handle] = b;
  c.handle = b.handle;
  c.size = b.size;
  c.obj_addr = b.cookie;
  c.dma_addr = b.iova;
  ++s.stats.buffers_created;
  return 0;
}

void destroy(device_state& s, emu_buffer& b) {
  s.memory.remove(b.iova);
  real<int (*)(void*, std::size_t)>("munmap")(b.memory, b.size);
}

int do_submit(rk::submit& args) {
  device_state& s = state();
  const std::uint64_t number = ++s.stats.submits;
  if (args.task_number == 0 || args.core_mask > rk::max_core_mask || !(args.flags & rk::job_pc)) return fail(EINVAL);
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

  bool timed_out = s.timeout_at.count(number) != 0;
  std::uint32_t done = 0;
  for (auto& [core, range] : runs) {
    regcmd::model::npu& npu = s.cores[core];
    if (timed_out) {
      note_fault(s, "injected timeout");
      npu.wedge();  // as after a real timeout, the core stays wedged until RKNPU_ACT_RESET
      continue;
    }
    npu.corrupt_next_output = s.corrupt_at.count(number) != 0;
    const rk::task& first = tasks[range.task_start];
    const rk::task& last = tasks[range.task_start + range.task_number - 1];
    const std::uint32_t amount = (first.regcfg_amount + 4 + 2 - 1) / 2 - 1;
    const regcmd::model::run_result r =
        npu.run(s.memory, first.regcmd_addr & 0xffff'ffffu, amount, range.task_number, args.flags & rk::job_pingpong);
    for (const auto& f : r.faults) note_fault(s, std::string(regcmd::model::name_of(f.kind)) + ": " + f.what);
    done += r.tasks_completed;
    // The IRQ handler accepts only the last task's exact (pair-completed) mask.
    if (!r.completed() || last.int_mask != 0x300) timed_out = true;
  }
  args.task_counter = done;
  if (s.log)
    std::fprintf(stderr, "regcmd-emu: submit %llu: %u tasks, core mask 0x%x: %s\n",
                 static_cast<unsigned long long>(number), args.task_number, args.core_mask,
                 timed_out ? "timed out" : "done");
  if (timed_out) {
    ++s.stats.timeouts;
    return fail(ETIMEDOUT);
  }
  ++s.stats.jobs_done;
  args.hw_elapse_time = 1000;
  if (args.flags & rk::job_fence_out) args.fence_fd = eventfd(1, EFD_CLOEXEC);  // already signalled
  return 0;
}

int rknpu_ioctl(int fd, unsigned long request, void* arg) {
  device_state& s = state();
  std::lock_guard g(s.lock);
  const std::uint32_t nr = rk::command_of(request);
  const std::size_t size = (request >> 16) & 0x3fff;
  auto in = [&](auto& local) {  // DRM copies the caller's size in and zero-fills the rest
    std::memset(&local, 0, sizeof local);
    std::memcpy(&local, arg, std::min(size, sizeof local));
  };
  auto back = [&](const auto& local) {
    std::memcpy(arg, &local, std::min(size, sizeof local));
    return 0;
  };
  if (request == DRM_IOCTL_VERSION) return do_version(static_cast<drm_version*>(arg));
  switch (nr) {
    case rk::drm_command_base + 0x00: {
      rk::action a;
      in(a);
      if (a.flags == rk::action_reset) {
        for (auto& c : s.cores) c.reset();
        ++s.stats.resets;
      } else if (a.flags == rk::action_get_drv_version) {
        a.value = 907;
      } else if (a.flags == rk::action_get_hw_version) {
        a.value = 0x46495245;
      }
      return back(a);
    }
    case rk::drm_command_base + 0x01: {
      rk::submit a;
      in(a);
      const int rc = do_submit(a);
      const int saved = errno;
      back(a);
      errno = saved;
      return rc;
    }
    case rk::drm_command_base + 0x02: {
      rk::mem_create a;
      in(a);
      if (do_mem_create(fd, a) != 0) return -1;
      return back(a);
    }
    case rk::drm_command_base + 0x03: {
      rk::mem_map a;
      in(a);
      if (!s.buffers.count(a.handle)) return fail(EINVAL);
      a.offset = std::uint64_t{a.handle} << 12;
      return back(a);
    }
    case rk::drm_command_base + 0x04: {
      rk::mem_destroy a;
      in(a);
      auto it = s.buffers.find(a.handle);
      if (it == s.buffers.end()) return fail(EINVAL);
      destroy(s, it->second);
      s.buffers.erase(it);
      return 0;
    }
    case rk::drm_command_base + 0x05: {
      rk::mem_sync a;
      in(a);
      emu_buffer* b = s.by_cookie(a.obj_addr);
      if (!b || !(b->flags & rk::mem_cacheable) || a.offset + a.size > b->size) return fail(EINVAL);
      ++s.stats.syncs;
      return 0;
    }
    default: return fail(ENOTTY);
  }
}

int open_device(const char* path, int flags) {
  if (path == nullptr || env("REGCMD_EMU_DEVICE", "/dev/dri/card1") != path) return -2;
  if (const int e = std::atoi(env("REGCMD_EMU_OPEN_ERRNO", "0").c_str()); e != 0) return fail(e);
  const int fd = real<int (*)(const char*, int, ...)>("open")("/dev/null", (flags & O_CLOEXEC) | O_RDWR);
  if (fd >= 0) {
    device_state& s = state();
    std::lock_guard g(s.lock);
    s.configure();
    s.fds.insert(fd);
  }
  return fd;
}

}  // namespace

extern "C" {

int regcmd_emu_get_stats(regcmd_emu_stats* out) {
  device_state& s = state();
  std::lock_guard g(s.lock);
  *out = s.stats;
  return 0;
}

void regcmd_emu_reset_stats(void) {
  device_state& s = state();
  std::lock_guard g(s.lock);
  s.stats = {};
}

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = (flags & O_CREAT) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
  va_end(ap);
  const int fd = open_device(path, flags);
  if (fd != -2) return fd;
  return real<int (*)(const char*, int, ...)>("open")(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = (flags & O_CREAT) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
  va_end(ap);
  const int fd = open_device(path, flags);
  if (fd != -2) return fd;
  return real<int (*)(const char*, int, ...)>("open64")(path, flags, mode);
}

int openat(int dir, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = (flags & O_CREAT) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
  va_end(ap);
  const int fd = open_device(path, flags);
  if (fd != -2) return fd;
  return real<int (*)(int, const char*, int, ...)>("openat")(dir, path, flags, mode);
}

int close(int fd) {
  if (ours(fd)) {
    device_state& s = state();
    std::lock_guard g(s.lock);
    s.fds.erase(fd);
    // closing the DRM file frees its GEM objects
    for (auto it = s.buffers.begin(); it != s.buffers.end();) {
      if (it->second.fd == fd) {
        destroy(s, it->second);
        it = s.buffers.erase(it);
      } else {
        ++it;
      }
    }
  }
  return real<int (*)(int)>("close")(fd);
}

int ioctl(int fd, unsigned long request, ...) {
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (ours(fd)) return rknpu_ioctl(fd, request, arg);
  return real<int (*)(int, unsigned long, void*)>("ioctl")(fd, request, arg);
}

void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  if (ours(fd)) {
    device_state& s = state();
    std::lock_guard g(s.lock);
    auto it = s.buffers.find(static_cast<std::uint32_t>(static_cast<std::uint64_t>(offset) >> 12));
    if (it == s.buffers.end() || length > it->second.size) {
      errno = EINVAL;
      return MAP_FAILED;
    }
    return it->second.memory;
  }
  return real<void* (*)(void*, std::size_t, int, int, int, off_t)>("mmap")(addr, length, prot, flags, fd, offset);
}

void* mmap64(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  return mmap(addr, length, prot, flags, fd, offset);
}

int munmap(void* addr, std::size_t length) {
  {
    device_state& s = state();
    std::lock_guard g(s.lock);
    for (auto& [h, b] : s.buffers)
      if (addr == b.memory) return 0;  // the memory lives until MEM_DESTROY
  }
  return real<int (*)(void*, std::size_t)>("munmap")(addr, length);
}

}  // extern "C"
