// libregcmd-capture.so: records what any program submits to the NPU (LD_PRELOAD), on the
// vendor rknpu driver (/dev/dri/...) or the mainline rocket driver (/dev/accel/...).
//
//   REGCMD_CAPTURE_DIR=/tmp/cap LD_PRELOAD=libregcmd-capture.so ./any_program
//
// It watches the NPU nodes the program opens: the buffer ioctls (rknpu MEM_CREATE + MEM_MAP,
// rocket CREATE_BO) and mmap tell it where each buffer object lives in the process; on each
// submit it finds every task's regcmd through its IOVA (rknpu: the descriptors through
// task_obj_addr, then regcmd_addr; rocket: each job's drm_rocket_task array, then regcmd)
// and writes, numbered per submit (0001, 0002, ...):
//   NNNN-regcmd.bin  the regcmd each task makes the PC fetch (rknpu: regcfg_amount + the
//                    tail; rocket: regcmd_count), rounded to whole 128-bit words, tasks in
//                    order, raw little-endian u64
//   NNNN-tasks.bin   the task descriptors of the submit (rknpu_task / drm_rocket_task), raw
//   NNNN-submit.bin  the submit argument (rknpu_submit / drm_rocket_submit), raw
//   NNNN.txt         a summary: flags or jobs, each task's address and what was found
// then lets the call through unchanged. Without REGCMD_CAPTURE_DIR it only passes through.

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
#include <string_view>
#include <vector>

#include <regcmd/runtime/rknpu_uapi.hpp>
#include <regcmd/runtime/rocket_uapi.hpp>

namespace {

namespace rk = regcmd::rknpu;
namespace rt = regcmd::rocket;

template <class F>
F real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

struct tracked_buffer {
  std::uint64_t size = 0, dma_addr = 0, obj_addr = 0, map_offset = ~std::uint64_t{0};
  std::uint8_t* mapped = nullptr;
  int fd = -1;  // rocket IOVAs are per open file
};

struct capture_state {
  std::recursive_mutex lock;
  std::map<int, bool> fds;  // watched fd -> is a rocket node
  std::map<std::pair<int, std::uint32_t>, tracked_buffer> buffers;  // by (fd, handle): handles are per file
  unsigned submits = 0;
  std::string dir;
  bool configured = false;
  // Reads the environment when a DRM node is first opened, not at construction: a
  // sanitizer runtime calls open/close/mmap before the C library has set it up.
  void configure() {
    if (configured) return;
    configured = true;
    const char* d = std::getenv("REGCMD_CAPTURE_DIR");
    if (d && *d) {
      dir = d;
      ::mkdir(dir.c_str(), 0755);
    }
  }
};

capture_state& state() {
  static capture_state s;
  return s;
}

void track(int fd, const char* path) {
  if (fd < 0 || path == nullptr) return;
  const std::string_view p = path;
  if (!p.starts_with("/dev/dri/") && !p.starts_with("/dev/accel/")) return;
  capture_state& s = state();
  std::lock_guard g(s.lock);
  s.configure();
  s.fds[fd] = p.starts_with("/dev/accel/");
}

bool tracked(int fd) {
  capture_state& s = state();
  std::lock_guard g(s.lock);
  return s.fds.count(fd) != 0;
}

void write_file(const std::string& path, const void* data, std::size_t size) {
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
}

// The process's view of an IOVA range of file `fd`, if a mapped buffer holds it.
const std::uint8_t* find_iova(capture_state& s, int fd, std::uint64_t iova, std::uint64_t& available) {
  for (auto& [handle, b] : s.buffers)
    if (b.fd == fd && b.mapped && iova >= b.dma_addr && iova < b.dma_addr + b.size) {
      available = b.dma_addr + b.size - iova;
      return b.mapped + (iova - b.dma_addr);
    }
  return nullptr;
}

// Appends what the PC fetches for a task at `iova` of `entries` entries (whole 128-bit
// words) to `regcmd`; returns the qwords found.
std::uint64_t capture_task(capture_state& s, int fd, std::uint64_t iova, std::uint64_t entries, std::vector<std::uint8_t>& regcmd) {
  const std::uint64_t qwords = (entries + 1) / 2 * 2;
  std::uint64_t available = 0;
  const std::uint8_t* code = find_iova(s, fd, iova, available);
  const std::uint64_t bytes = code ? std::min(qwords * 8, available) : 0;
  if (code) regcmd.insert(regcmd.end(), code, code + bytes);
  return bytes / 8;
}

std::string submit_base(capture_state& s) {
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "/%04u", ++s.submits);
  return s.dir + prefix;
}

void capture_rocket_submit(capture_state& s, int fd, const void* arg, std::size_t size) {
  rt::submit args{};
  std::memcpy(&args, arg, std::min(size, sizeof args));
  const std::string base = submit_base(s);
  write_file(base + "-submit.bin", arg, std::min(size, sizeof args));
  std::string summary = "jobs " + std::to_string(args.job_count) + "\n";
  std::vector<std::uint8_t> regcmd, descriptors;
  for (std::uint32_t j = 0; j < args.job_count && args.job_struct_size >= sizeof(rt::job); ++j) {
    rt::job job{};
    std::memcpy(&job, reinterpret_cast<const std::uint8_t*>(args.jobs) + std::size_t{j} * args.job_struct_size, sizeof job);
    summary += "job " + std::to_string(j) + ": " + std::to_string(job.task_count) + " tasks, " +
               std::to_string(job.in_bo_handle_count) + " in BOs, " + std::to_string(job.out_bo_handle_count) + " out BOs\n";
    for (std::uint32_t i = 0; i < job.task_count && job.task_struct_size >= sizeof(rt::task); ++i) {
      rt::task t{};
      std::memcpy(&t, reinterpret_cast<const std::uint8_t*>(job.tasks) + std::size_t{i} * job.task_struct_size, sizeof t);
      const auto* raw = reinterpret_cast<const std::uint8_t*>(&t);
      descriptors.insert(descriptors.end(), raw, raw + sizeof t);
      const std::uint64_t found = capture_task(s, fd, t.regcmd, t.regcmd_count, regcmd);
      char line[128];
      std::snprintf(line, sizeof line, "  task %u: regcmd 0x%x regcmd_count %u: %s %llu qwords\n", i, t.regcmd,
                    t.regcmd_count, found ? "captured" : "NOT FOUND,", static_cast<unsigned long long>(found));
      summary += line;
    }
  }
  write_file(base + "-tasks.bin", descriptors.data(), descriptors.size());
  write_file(base + "-regcmd.bin", regcmd.data(), regcmd.size());
  write_file(base + ".txt", summary.data(), summary.size());
}

void capture_submit(capture_state& s, int fd, const void* arg, std::size_t size) {
  rk::submit args{};
  std::memcpy(&args, arg, std::min(size, sizeof args));
  const std::string base = submit_base(s);
  write_file(base + "-submit.bin", arg, std::min(size, sizeof args));

  char head[128];
  std::snprintf(head, sizeof head, "flags 0x%x task_number %u core_mask 0x%x timeout %u\n", args.flags,
                args.task_number, args.core_mask, args.timeout);
  std::string summary = head;
  // The tasks any core may run: every populated range (fact sheet §1.6).
  std::uint64_t lo = args.task_start, hi = std::uint64_t{args.task_start} + args.task_number;
  for (const auto& r : args.subcore_task)
    if (r.task_number) {
      lo = std::min<std::uint64_t>(lo, r.task_start);
      hi = std::max<std::uint64_t>(hi, std::uint64_t{r.task_start} + r.task_number);
    }
  const tracked_buffer* tasks = nullptr;
  for (auto& [handle, b] : s.buffers)
    if (b.fd == fd && b.obj_addr == args.task_obj_addr && b.mapped) tasks = &b;
  std::vector<std::uint8_t> regcmd, descriptors;
  if (!tasks || hi * sizeof(rk::task) > tasks->size) {
    summary += "task descriptors not found in a mapped buffer\n";
  } else {
    descriptors.assign(tasks->mapped + lo * sizeof(rk::task), tasks->mapped + hi * sizeof(rk::task));
    for (std::uint64_t i = lo; i < hi; ++i) {
      rk::task t;
      std::memcpy(&t, tasks->mapped + i * sizeof t, sizeof t);
      // What the PC fetches: regcfg_amount + the 4-entry tail.
      const std::uint64_t found =
          capture_task(s, fd, t.regcmd_addr, std::uint64_t{t.regcfg_amount} + rk::pc_data_extra_amount, regcmd);
      char line[160];
      std::snprintf(line, sizeof line, "task %llu: regcmd_addr 0x%llx regcfg_amount %u enable_mask 0x%x int_mask 0x%x: %s %llu qwords\n",
                    static_cast<unsigned long long>(i), static_cast<unsigned long long>(t.regcmd_addr), t.regcfg_amount,
                    t.enable_mask, t.int_mask, found ? "captured" : "NOT FOUND,", static_cast<unsigned long long>(found));
      summary += line;
    }
  }
  write_file(base + "-tasks.bin", descriptors.data(), descriptors.size());
  write_file(base + "-regcmd.bin", regcmd.data(), regcmd.size());
  write_file(base + ".txt", summary.data(), summary.size());
}

int forward_ioctl(int fd, unsigned long request, void* arg) {
  return real<int (*)(int, unsigned long, void*)>("ioctl")(fd, request, arg);
}

// The mmap offset of the buffer just created or mapped, found again in mmap().
void note_buffer(capture_state& s, int fd, std::uint32_t handle, std::uint64_t size, std::uint64_t dma_addr,
                 std::uint64_t obj_addr, std::uint64_t map_offset) {
  s.buffers[{fd, handle}] = {size, dma_addr, obj_addr, map_offset, nullptr, fd};
}

int watched_rocket_ioctl(capture_state& s, int fd, unsigned long request, void* arg) {
  const std::size_t size = regcmd::ioctl_codes::size_of(request);
  if (request == rt::ioctl_gem_close) {
    rt::gem_close c{};
    std::memcpy(&c, arg, std::min(size, sizeof c));
    const int rc = forward_ioctl(fd, request, arg);
    if (rc == 0) s.buffers.erase({fd, c.handle});
    return rc;
  }
  if (request == rt::ioctl_submit) {
    if (!s.dir.empty()) capture_rocket_submit(s, fd, arg, size);
    return forward_ioctl(fd, request, arg);
  }
  const int rc = forward_ioctl(fd, request, arg);
  if (request == rt::ioctl_create_bo && rc == 0) {
    rt::create_bo c{};
    std::memcpy(&c, arg, sizeof c);
    note_buffer(s, fd, c.handle, c.size, c.dma_address, 0, c.offset);
  }
  return rc;
}

int watched_ioctl(int fd, unsigned long request, void* arg) {
  capture_state& s = state();
  std::lock_guard g(s.lock);
  const std::size_t size = regcmd::ioctl_codes::size_of(request);
  if (((request >> 8) & 0xff) != 'd' || arg == nullptr) return forward_ioctl(fd, request, arg);
  if (s.fds[fd]) return watched_rocket_ioctl(s, fd, request, arg);
  switch (rk::number_of(request)) {
    case rk::drm_command_base + 0x01:
      if (!s.dir.empty()) capture_submit(s, fd, arg, size);
      return forward_ioctl(fd, request, arg);
    case rk::drm_command_base + 0x02: {
      const int rc = forward_ioctl(fd, request, arg);
      if (rc == 0 && size >= offsetof(rk::mem_create, dma_addr) + 8) {
        rk::mem_create c{};
        std::memcpy(&c, arg, std::min(size, sizeof c));
        note_buffer(s, fd, c.handle, c.size, c.dma_addr, c.obj_addr, ~std::uint64_t{0});
      }
      return rc;
    }
    case rk::drm_command_base + 0x03: {
      const int rc = forward_ioctl(fd, request, arg);
      if (rc == 0 && size >= sizeof(rk::mem_map)) {
        rk::mem_map m{};
        std::memcpy(&m, arg, sizeof m);
        if (auto it = s.buffers.find({fd, m.handle}); it != s.buffers.end()) it->second.map_offset = m.offset;
      }
      return rc;
    }
    case rk::drm_command_base + 0x04: {
      rk::mem_destroy d{};
      std::memcpy(&d, arg, std::min(size, sizeof d));
      const int rc = forward_ioctl(fd, request, arg);
      if (rc == 0) s.buffers.erase({fd, d.handle});
      return rc;
    }
    default: return forward_ioctl(fd, request, arg);
  }
}

}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = (flags & O_CREAT) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
  va_end(ap);
  const int fd = real<int (*)(const char*, int, ...)>("open")(path, flags, mode);
  track(fd, path);
  return fd;
}

int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = (flags & O_CREAT) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
  va_end(ap);
  const int fd = real<int (*)(const char*, int, ...)>("open64")(path, flags, mode);
  track(fd, path);
  return fd;
}

int openat(int dir, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = (flags & O_CREAT) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
  va_end(ap);
  const int fd = real<int (*)(int, const char*, int, ...)>("openat")(dir, path, flags, mode);
  track(fd, path);
  return fd;
}

int close(int fd) {
  {
    capture_state& s = state();
    std::lock_guard g(s.lock);
    s.fds.erase(fd);
  }
  return real<int (*)(int)>("close")(fd);
}

int ioctl(int fd, unsigned long request, ...) {
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return tracked(fd) ? watched_ioctl(fd, request, arg) : forward_ioctl(fd, request, arg);
}

void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  void* p = real<void* (*)(void*, std::size_t, int, int, int, off_t)>("mmap")(addr, length, prot, flags, fd, offset);
  if (p != MAP_FAILED && tracked(fd)) {
    capture_state& s = state();
    std::lock_guard g(s.lock);
    for (auto& [handle, b] : s.buffers)
      if (b.fd == fd && b.map_offset == static_cast<std::uint64_t>(offset)) b.mapped = static_cast<std::uint8_t*>(p);
  }
  return p;
}

void* mmap64(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  return mmap(addr, length, prot, flags, fd, offset);
}

int munmap(void* addr, std::size_t length) {
  {
    capture_state& s = state();
    std::lock_guard g(s.lock);
    for (auto& [handle, b] : s.buffers)
      if (b.mapped == addr) b.mapped = nullptr;
  }
  return real<int (*)(void*, std::size_t)>("munmap")(addr, length);
}

}  // extern "C"
