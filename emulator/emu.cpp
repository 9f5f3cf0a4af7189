// libregcmd-emu.so: an emulated NPU device for unmodified programs (LD_PRELOAD), with both
// drivers' nodes; built as the static library regcmd::emulated_device, the same device as a
// table of calls for a process that opens it itself (in_process.hpp).
//
// It answers open() of the rknpu card node (default /dev/dri/card1) and of the rocket accel
// node (default /dev/accel/accel0), DRM_IOCTL_VERSION, each driver's ioctls and mmap() of
// their buffers the way the kernels do, and runs submitted jobs on the functional model
// (three cores). Everything else passes through to libc.
// Both number GEM handles per open file (the lowest free from 1), hand out page-aligned
// IOVAs first fit (a freed range is reused), and read the caller's memory as
// copy_from_user does: a bad pointer is EFAULT, a count too large to allocate ENOMEM,
// never a crash.
//   rknpu (0.9.x, fact sheet §1): an IOVA space per IOMMU domain (0.9.6+: MEM_CREATE
//     places a buffer in its iommu_domain_id's, a submit runs in its own); RKNPU_SUBMIT runs the chained tasks
//     of each core's subcore_task range and blocks. The cores of one submit start
//     together: each round runs one task on every core, the highest core first, so a
//     chain that reads what another core's chain writes in the same submit sees it
//     unwritten, as nothing orders them on the board. A timed-out core stays wedged
//     until RKNPU_ACT_RESET (the submit returns at once rather than after its timeout).
//   rocket (fact sheet §3): an IOVA space per open file; SUBMIT runs each job (its tasks
//     one kick each, ping-pong on, on core 0: the scheduler's pick when the cores are
//     idle) and returns 0 even for a job it drops; a job that faults is stopped as after
//     the kernel's timeout (REGCMD_EMU_STOP_MS, 500 by default): its core is reset and its
//     fence carries -ECANCELED once the timeout has passed. The jobs of a file run in
//     order, each from the end of the one before. PREP_BO waits for the BO's last
//     writer until its deadline.
//     dma-buf EXPORT_SYNC_FILE and SYNC_IOC_FILE_INFO report the fence of the last job
//     that wrote a BO (a later job of the file replaces an earlier one's).
// Caches (cpu_cache.hpp): a cacheable buffer (rknpu RKNPU_MEM_CACHEABLE, every rocket BO)
// is two copies, the CPU's mapping and the NPU's, joined only by syncs: a TO_DEVICE sync
// (rknpu MEM_SYNC, rocket FINI_BO) writes back the lines the CPU wrote, a FROM_DEVICE sync
// (MEM_SYNC, PREP_BO) reads the NPU's again and drops CPU writes never synced. The kernel
// reads rknpu's task descriptors through its own (cached, so coherent) mapping.
// Both export BOs as dma-bufs (PRIME_HANDLE_TO_FD): each a file of its own inode, as the
// kernel's are, so a library can tell one export from another by fstat.
// The dma-heap nodes /dev/dma_heap/system and /dev/dma_heap/cma allocate with
// DMA_HEAP_IOCTL_ALLOC: a memory-backed file the caller maps, as clients of the vendor's
// matmul API allocate staging memory. DMA_BUF_IOCTL_SYNC on such a buffer or an export (any
// copy of its fd) checks its flags and counts START and END.
//
// Environment:
//   REGCMD_EMU_DEVICE=PATH        the rknpu node (default /dev/dri/card1; "none": no node)
//   REGCMD_EMU_ACCEL_DEVICE=PATH  the rocket node (default /dev/accel/accel0; "none": no node)
//   REGCMD_EMU_DRIVER=NAME        the DRM driver name both report (default rknpu / rocket)
//   REGCMD_EMU_OPEN_ERRNO=N       open() of a node fails with errno N (e.g. 13)
//   REGCMD_EMU_IOVA_BASE=ADDR     first IOVA handed out (default 0x10000000 rknpu, 0 rocket)
//   REGCMD_EMU_FAULTS=timeout@N,...  the N-th submit (1-based) times out: rknpu wedges its
//                                 cores; rocket stops its first job (timeout@N.J: its J-th)
//                                 and resets the core; corrupt@N: the N-th submit's first
//                                 op writes a wrong element (an exponent bit flipped);
//                                 drop@N: the N-th submit returns success and runs nothing
//                                 (as a shim or a kernel that loses it)
//   REGCMD_EMU_STOP_MS=N          rocket: how long a job runs before the kernel stops it
//   REGCMD_EMU_SUBMIT_MS=N        rknpu: a submit returns after N ms (the device serves other
//                                 threads meanwhile), to show whether submits overlap
//   REGCMD_EMU_QUIRKS=none        turn off the board's cold-start and int8-entry quirks
//   REGCMD_EMU_LOG=1              one line per submit on stderr, and one per sync that drops CPU writes
// Tests read counters through regcmd_emu_get_stats() (found with dlsym).

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <libdrm/drm.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

#include "device.hpp"
#include "next_call.hpp"

namespace regcmd::emu {
namespace {

using shim::next_definition;

int do_version(driver kind, drm_version* v) {
  // read each time: tests change it
  const std::string name = env("REGCMD_EMU_DRIVER", kind == driver::rknpu ? "rknpu" : "rocket");
  const char* date = kind == driver::rknpu ? "20240424" : "0";
  const char* desc = kind == driver::rknpu ? "RKNPU driver" : "rocket DRM";
  v->version_major = kind == driver::rknpu ? 0 : 1;
  v->version_minor = kind == driver::rknpu ? 9 : 0;
  v->version_patchlevel = kind == driver::rknpu ? 7 : 0;
  auto copy = [](char* out, __kernel_size_t& len, const char* text) {
    const std::size_t n = std::strlen(text);
    if (out && len) std::memcpy(out, text, std::min<std::size_t>(len, n));
    len = n;
  };
  copy(v->name, v->name_len, name.c_str());
  copy(v->date, v->date_len, date);
  copy(v->desc, v->desc_len, desc);
  return 0;
}

int dispatch_ioctl(device_state& s, int fd, unsigned long request, void* arg) {
  if (s.dmabufs.count(fd)) return dmabuf_ioctl(s, fd, request, arg);
  if (s.sync_files.count(fd)) return sync_file_ioctl(s, fd, request, arg);
  if (s.heaps.count(fd)) return dma_heap_ioctl(s, request, arg);
  const driver kind = s.files[fd].kind;
  if (request == DRM_IOCTL_VERSION) return do_version(kind, static_cast<drm_version*>(arg));
  if (request == rt::ioctl_prime_handle_to_fd) return export_buffer(s, fd, arg);
  return kind == driver::rknpu ? rknpu_ioctl(s, fd, request, arg) : rocket_ioctl(s, fd, request, arg);
}

static_assert(rk::nr_submit == rt::nr_submit);  // a submit of either node, by its number

int device_ioctl(int fd, unsigned long request, void* arg) {
  device_state& s = state();
  std::unique_lock g(s.lock);
  const bool submit = s.files.count(fd) && regcmd::ioctl_codes::number_of(request) == rk::nr_submit;
  const std::int64_t start = submit ? now_ns() : 0;
  const int rc = dispatch_ioctl(s, fd, request, arg);
  if (submit) s.stats.submit_ns += static_cast<std::uint64_t>(now_ns() - start);
  if (!submit || s.files[fd].kind != driver::rknpu || s.submit_ns == 0) return rc;
  // A blocking submit that takes time on the cores, the device free meanwhile: submits of
  // several threads overlap as on the board (max_submits_in_flight counts how many did).
  const int saved = errno;
  s.stats.max_submits_in_flight = std::max(s.stats.max_submits_in_flight, ++s.submits_in_flight);
  const std::int64_t until = now_ns() + s.submit_ns;
  g.unlock();
  sleep_until(until);
  g.lock();
  s.stats.submit_ns += static_cast<std::uint64_t>(s.submit_ns);
  --s.submits_in_flight;
  errno = saved;
  return rc;
}

int open_device(const char* path, int flags) {
  if (path == nullptr) return -2;
  if (std::strcmp(path, "/dev/dma_heap/system") == 0 || std::strcmp(path, "/dev/dma_heap/cma") == 0) {
    const int fd = next_definition<int (*)(const char*, int, ...)>("open")("/dev/null", (flags & O_CLOEXEC) | O_RDONLY);
    if (fd >= 0) {
      device_state& s = state();
      std::lock_guard g(s.lock);
      s.heaps.insert(fd);
    }
    return fd;
  }
  driver kind;
  if (env("REGCMD_EMU_DEVICE", "/dev/dri/card1") == path) {
    kind = driver::rknpu;
  } else if (env("REGCMD_EMU_ACCEL_DEVICE", "/dev/accel/accel0") == path) {
    kind = driver::rocket;
  } else {
    return -2;
  }
  if (const int e = std::atoi(env("REGCMD_EMU_OPEN_ERRNO", "0").c_str()); e != 0) return fail(e);
  const int fd = next_definition<int (*)(const char*, int, ...)>("open")("/dev/null", (flags & O_CLOEXEC) | O_RDWR);
  if (fd >= 0) {
    device_state& s = state();
    std::lock_guard g(s.lock);
    s.configure();
    open_file& f = s.files[fd];
    f = open_file{};
    f.kind = kind;
    f.iovas = iova_allocator{s.rocket_iova_base};
  }
  return fd;
}

}  // namespace
}  // namespace regcmd::emu

extern "C" {

int regcmd_emu_get_stats(regcmd_emu_stats* out) {
  regcmd::emu::device_state& s = regcmd::emu::state();
  std::lock_guard g(s.lock);
  *out = s.stats;
  return 0;
}

void regcmd_emu_reset_stats(void) {
  regcmd::emu::device_state& s = regcmd::emu::state();
  std::lock_guard g(s.lock);
  s.stats = {};
}

}  // extern "C"

// The calls the shim stands in for (interposers.hpp): a node's, a dma-buf's, a sync_file's
// or a dma-heap's fd is the emulator's; every other goes to the C library.
namespace regcmd::shim {
namespace {

using namespace regcmd::emu;

int open_file(const char* path, int flags, next_call<int> next) {
  const int fd = open_device(path, flags);
  return fd != -2 ? fd : next();
}

int close_file(int fd, next_call<int> next) {
  if (ours(fd)) {
    device_state& s = state();
    std::lock_guard g(s.lock);
    s.dmabufs.erase(fd);
    s.sync_files.erase(fd);
    s.heaps.erase(fd);
    if (s.files.count(fd)) {
      // closing the DRM file frees its GEM objects (and rocket's IOMMU domain)
      for (auto it = s.buffers.begin(); it != s.buffers.end();) {
        if (it->first.first == fd) {
          destroy(s, it->second);
          it = s.buffers.erase(it);
        } else {
          ++it;
        }
      }
      s.files.erase(fd);
    }
  }
  return next();
}

// A duplicate of a node's fd is not the emulator's: programs using the nodes do not dup them.
[[maybe_unused]] void duplicated(int, int) {}  // (the in-process table takes no dup)

int control(int fd, unsigned long request, void* arg, next_call<int> next) {
  if (request == dma_buf_ioctl_sync) {
    struct stat st {};
    device_state& s = state();
    std::lock_guard g(s.lock);
    if (::fstat(fd, &st) == 0 && s.dma_buf_files.count({st.st_dev, st.st_ino})) return dma_buf_sync(s, arg);
  }
  if (ours(fd)) {
    try {
      return device_ioctl(fd, request, arg);
    } catch (const std::bad_alloc&) {  // the model's or a table's memory: the kernel's ENOMEM
      return fail(ENOMEM);
    }
  }
  return next();
}

void* map(void*, std::size_t length, int, int, int fd, off_t offset, next_call<void*> next) {
  {
    device_state& s = state();
    std::lock_guard g(s.lock);
    if (s.files.count(fd)) {
      auto it = s.buffers.find({fd, static_cast<std::uint32_t>(static_cast<std::uint64_t>(offset) >> 12)});
      if (it == s.buffers.end() || length > it->second.size) {
        errno = EINVAL;
        return MAP_FAILED;
      }
      return it->second.memory;
    }
  }
  return next();
}

int unmap(void* addr, std::size_t length, next_call<int> next) {
  {
    device_state& s = state();
    std::lock_guard g(s.lock);
    // A BO's pages live until it is freed (its GEM object holds them), whatever part of
    // the mapping is unmapped: a hole would crash the NPU's reads, or a later mapping
    // would take its place.
    const auto* lo = static_cast<const std::uint8_t*>(addr);
    for (auto& [h, b] : s.buffers)
      if (lo < b.memory + b.size && b.memory < lo + length) return 0;
  }
  return next();
}

}  // namespace
}  // namespace regcmd::shim

#ifdef REGCMD_EMU_IN_PROCESS
#include "call_table.hpp"
#else
#include "interposers.hpp"
#endif
