// libregcmd-emu.so: an emulated NPU device for unmodified programs (LD_PRELOAD), with both
// drivers' nodes.
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

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libdrm/drm.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <vector>

#include <regcmd/model/npu.hpp>
#include <regcmd/task/writer.hpp>
#include <regcmd/rules/program_rules.hpp>
#include <regcmd/runtime/rknpu_uapi.hpp>
#include <regcmd/runtime/rocket_uapi.hpp>

#include "emu_stats.h"
#include "cpu_cache.hpp"
#include "fence.hpp"
#include "iova_allocator.hpp"
#include "next_call.hpp"
#include "user_memory.hpp"

namespace {

namespace rk = regcmd::rknpu;
namespace rt = regcmd::rocket;

using regcmd::shim::next_definition;

std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

enum class driver { rknpu, rocket };

using regcmd::emu::fence;

struct emu_buffer {
  driver kind = driver::rknpu;
  std::uint32_t handle = 0;
  std::uint32_t flags = 0;
  std::uint64_t size = 0;
  std::uint64_t iova = 0;
  std::uint64_t cookie = 0;
  std::uint8_t* memory = nullptr;  // what the CPU maps
  std::uint8_t* device = nullptr;  // what the NPU sees: a copy of its own when cacheable
  std::uint8_t* clean = nullptr;   // cacheable: the CPU's copy as it was when last clean
  int fd = -1;
  std::int32_t domain = 0;  // rknpu: its IOMMU domain
  fence last_write;  // rocket: of the last job that wrote it

  bool cacheable() const { return clean != nullptr; }
  regcmd::emu::cpu_cache cache() const { return {memory, device, clean, size}; }
};

// An open file of a node: its GEM handles; rocket also gives each its own IOMMU domain
// and scheduler entity.
struct open_file {
  driver kind = driver::rknpu;
  regcmd::model::iova_space domain;  // rocket only
  regcmd::emu::iova_allocator iovas;  // rocket only
  std::int64_t busy_until_ns = 0;     // rocket: when its last queued job ends
};

using buffer_key = std::pair<int, std::uint32_t>;  // (file, handle)

struct device_state {
  std::recursive_mutex lock;
  std::map<int, open_file> files;
  std::map<int, std::pair<int, std::uint32_t>> dmabufs;  // dma-buf fd -> (file, handle)
  std::map<int, fence> sync_files;                       // sync_file fd -> its fence
  std::set<int> heaps;                                   // open dma-heap nodes
  std::set<std::pair<dev_t, ino_t>> dma_buf_files;       // dma-heap allocations and exports, by inode
  std::map<buffer_key, emu_buffer> buffers;
  std::uint64_t next_cookie = 1;
  // rknpu: an IOVA space per IOMMU domain (MEM_CREATE's and SUBMIT's iommu_domain_id,
  // driver 0.9.6+), each with its own allocator
  std::map<std::int32_t, regcmd::emu::iova_allocator> domain_iovas;
  std::map<std::int32_t, regcmd::model::iova_space> domains;
  std::uint64_t rknpu_iova_base = 0x10000000;
  std::uint64_t rocket_iova_base = 0;
  std::array<regcmd::model::npu, 3> cores;
  std::set<std::pair<std::uint64_t, std::uint32_t>> timeout_at;  // (submit, rocket job)
  std::set<std::uint64_t> corrupt_at;
  std::set<std::uint64_t> drop_at;  // submits that return success and never reach the cores
  std::int64_t stop_ns = 500'000'000;  // rocket's JOB_TIMEOUT_MS (fact sheet §3.2)
  std::int64_t submit_ns = 0;          // rknpu: how long a submit keeps its caller
  std::uint64_t submits_in_flight = 0;
  regcmd::emu::user_memory user;
  regcmd_emu_stats stats{};
  bool log = false;
  bool configured = false;

  // Reads the environment when a node is first opened, not at construction: a sanitizer
  // runtime calls open/close/ioctl before the C library has set up the environment.
  void configure() {
    if (configured) return;
    configured = true;
    rknpu_iova_base = std::strtoull(env("REGCMD_EMU_IOVA_BASE", "0x10000000").c_str(), nullptr, 0);
    rocket_iova_base = std::strtoull(env("REGCMD_EMU_IOVA_BASE", "0").c_str(), nullptr, 0);
    stop_ns = std::strtoll(env("REGCMD_EMU_STOP_MS", "500").c_str(), nullptr, 10) * 1'000'000;
    submit_ns = std::strtoll(env("REGCMD_EMU_SUBMIT_MS", "0").c_str(), nullptr, 10) * 1'000'000;
    log = env("REGCMD_EMU_LOG", "0") == "1";
    const bool quirks = env("REGCMD_EMU_QUIRKS", "all") != "none";
    for (auto& c : cores) c.behaviour = {quirks, quirks};
    const std::string faults = env("REGCMD_EMU_FAULTS", "");
    for (std::size_t at = 0; (at = faults.find("timeout@", at)) != std::string::npos; at += 8) {
      char* end = nullptr;
      const std::uint64_t submit = std::strtoull(faults.c_str() + at + 8, &end, 10);
      const auto job = static_cast<std::uint32_t>(*end == '.' ? std::strtoul(end + 1, nullptr, 10) : 1);
      timeout_at.insert({submit, job});
    }
    for (std::size_t at = 0; (at = faults.find("corrupt@", at)) != std::string::npos; at += 8)
      corrupt_at.insert(std::strtoull(faults.c_str() + at + 8, nullptr, 10));
    for (std::size_t at = 0; (at = faults.find("drop@", at)) != std::string::npos; at += 5)
      drop_at.insert(std::strtoull(faults.c_str() + at + 5, nullptr, 10));
  }

  regcmd::emu::iova_allocator& iovas_of(std::int32_t domain) {
    return domain_iovas.try_emplace(domain, regcmd::emu::iova_allocator{rknpu_iova_base}).first->second;
  }
  bool times_out(std::uint64_t submit) const {
    auto it = timeout_at.lower_bound({submit, 0});
    return it != timeout_at.end() && it->first == submit;
  }
  emu_buffer* by_cookie(std::uint64_t cookie) {
    for (auto& [key, b] : buffers)
      if (b.cookie == cookie) return &b;
    return nullptr;
  }
  // A handle as the kernels look it up: in the calling file only.
  emu_buffer* by_handle(int fd, std::uint32_t handle) {
    auto it = buffers.find({fd, handle});
    return it != buffers.end() ? &it->second : nullptr;
  }
};

device_state& state() {
  static device_state s;
  return s;
}

bool ours(int fd) {
  device_state& s = state();
  std::lock_guard g(s.lock);
  return s.files.count(fd) || s.dmabufs.count(fd) || s.sync_files.count(fd) || s.heaps.count(fd);
}

void note_fault(device_state& s, const std::string& what) {
  std::snprintf(s.stats.last_fault, sizeof s.stats.last_fault, "%s", what.c_str());
  ++s.stats.faults;
}

int fail(int error) {
  errno = error;
  return -1;
}

// A pollable fd that is ready at once: stands for a signalled sync_file.
int ready_fd() { return eventfd(1, EFD_CLOEXEC); }

// A file of `size` bytes of memory with an inode of its own: a dma-buf's stand-in.
int memory_fd(const char* name, std::uint64_t size) {
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int e = errno;
    next_definition<int (*)(int)>("close")(fd);
    return fail(e);
  }
  return fd;
}

// A dma-buf is known by its file (any fd or copy of one), as the kernel knows it.
void note_dma_buf(device_state& s, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) == 0) s.dma_buf_files.insert({st.st_dev, st.st_ino});
}

// DMA_BUF_IOCTL_SYNC (linux/dma-buf.h, dma_buf_ioctl): the CPU's access to a dma-buf,
// START or END, READ and/or WRITE; other flags are EINVAL. Counted: the model of a
// dma-buf's caches is its exporter's, and these buffers have no device here but the CPU.
inline constexpr unsigned long dma_buf_ioctl_sync = regcmd::ioctl_codes::iow('b', 0, 8);
static_assert(dma_buf_ioctl_sync == 0x40086200);
int dma_buf_sync(device_state& s, void* arg) {
  std::uint64_t flags = 0;
  if (!s.user.read(&flags, reinterpret_cast<std::uintptr_t>(arg), sizeof flags)) return fail(EFAULT);
  constexpr std::uint64_t rw = 3, end = 4;
  if ((flags & ~(rw | end)) != 0 || (flags & rw) == 0) return fail(EINVAL);
  ++(flags & end ? s.stats.dma_buf_sync_ends : s.stats.dma_buf_sync_starts);
  return 0;
}

// DRM_IOCTL_PRIME_HANDLE_TO_FD, on either node.
int export_buffer(device_state& s, int fd, void* arg) {
  rt::prime_handle a;
  if (!s.user.read(&a, reinterpret_cast<std::uintptr_t>(arg), sizeof a)) return fail(EFAULT);
  const emu_buffer* b = s.by_handle(fd, a.handle);
  if (!b) return fail(ENOENT);
  a.fd = memory_fd("regcmd-emu-dmabuf", b->size);  // a dma-buf's size: lseek(SEEK_END), fstat
  if (a.fd < 0) return -1;
  note_dma_buf(s, a.fd);
  s.dmabufs[a.fd] = {fd, a.handle};
  if (!s.user.write(reinterpret_cast<std::uintptr_t>(arg), &a, sizeof a)) return fail(EFAULT);
  return 0;
}

// The dma-heap uapi (linux/dma-heap.h).
struct dma_heap_allocation_data {
  std::uint64_t len;
  std::uint32_t fd;
  std::uint32_t fd_flags;
  std::uint64_t heap_flags;
};
static_assert(sizeof(dma_heap_allocation_data) == 24);
inline constexpr unsigned long dma_heap_ioctl_alloc = regcmd::ioctl_codes::iowr('H', 0x0, sizeof(dma_heap_allocation_data));
static_assert(dma_heap_ioctl_alloc == 0xC0184800);  // DMA_HEAP_IOCTL_ALLOC

int dma_heap_ioctl(device_state& s, unsigned long request, void* arg) {
  if (request != dma_heap_ioctl_alloc) return fail(ENOTTY);
  dma_heap_allocation_data a{};
  if (!s.user.read(&a, reinterpret_cast<std::uintptr_t>(arg), sizeof a)) return fail(EFAULT);
  if (a.len == 0 || a.heap_flags != 0) return fail(EINVAL);
  if (a.len > (std::uint64_t{1} << 40)) return fail(ENOMEM);
  const int fd = memory_fd("regcmd-emu-dma-heap", a.len);
  if (fd < 0) return -1;
  note_dma_buf(s, fd);
  a.fd = static_cast<std::uint32_t>(fd);
  if (!s.user.write(reinterpret_cast<std::uintptr_t>(arg), &a, sizeof a)) return fail(EFAULT);
  ++s.stats.buffers_created;
  return 0;
}

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

std::uint8_t* map_anonymous(std::uint64_t size) {
  void* m = next_definition<void* (*)(void*, std::size_t, int, int, int, off_t)>("mmap")(
      nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return m == MAP_FAILED ? nullptr : static_cast<std::uint8_t*>(m);
}

// Unmaps a buffer's views (each once: a non-cacheable buffer's device view is its memory).
void unmap_views(const emu_buffer& b) {
  auto unmap = next_definition<int (*)(void*, std::size_t)>("munmap");
  if (b.memory) unmap(b.memory, b.size);
  if (b.device && b.device != b.memory) unmap(b.device, b.size);
  if (b.clean) unmap(b.clean, b.size);
}

// A new buffer of `size` bytes (whole pages) for file `fd`, filled with `fill`; nullptr
// when out of memory. A cacheable one has the NPU's copy and the CPU's clean copy too.
emu_buffer* new_buffer(device_state& s, int fd, std::uint64_t size, driver kind, bool cacheable, std::uint8_t fill) {
  if (size > (std::uint64_t{1} << 40)) return nullptr;  // more than any board's memory
  emu_buffer b;
  b.kind = kind;
  b.size = (size + 4095) & ~std::uint64_t{4095};
  b.memory = map_anonymous(b.size);
  b.device = cacheable ? map_anonymous(b.size) : b.memory;
  b.clean = cacheable ? map_anonymous(b.size) : nullptr;
  if (!b.memory || !b.device || (cacheable && !b.clean)) {
    unmap_views(b);
    return nullptr;
  }
  if (fill != 0)  // anonymous pages start zeroed, as shmem's and a zeroing allocation's do
    for (std::uint8_t* view : {b.memory, b.device, b.clean})
      if (view) std::memset(view, fill, b.size);
  // drm_gem_handle_create_tail: idr_alloc(&file_priv->object_idr, obj, 1, 0), the lowest
  // handle from 1 the file does not use, so a freed handle is given again.
  b.handle = 1;
  for (auto it = s.buffers.lower_bound({fd, 1}); it != s.buffers.end() && it->first == buffer_key{fd, b.handle}; ++it)
    ++b.handle;
  b.fd = fd;
  ++s.stats.buffers_created;
  return &(s.buffers[{fd, b.handle}] = b);
}

void destroy(device_state& s, emu_buffer& b) {
  // A dma-buf holds the object, not its handle: it must not find a later buffer the
  // handle is given to (not emulated further: its fence is gone, EXPORT_SYNC_FILE fails).
  for (auto& [dmabuf, object] : s.dmabufs)
    if (object == std::pair{b.fd, b.handle}) object = {-1, 0};
  if (b.kind == driver::rocket) {
    open_file& f = s.files[b.fd];
    f.domain.remove(b.iova);
    f.iovas.free(b.iova);
  } else {
    s.domains[b.domain].remove(b.iova);
    s.domain_iovas.at(b.domain).free(b.iova);
  }
  unmap_views(b);
}

// A TO_DEVICE sync of [offset, offset + size): the CPU's dirty lines reach the NPU.
void clean(device_state& s, emu_buffer& b, std::uint64_t offset, std::uint64_t size) {
  if (b.cacheable()) s.stats.lines_written_back += b.cache().clean_range(offset, size);
}

// A FROM_DEVICE sync: the CPU reads the NPU's bytes again, losing what it wrote unsynced.
void invalidate(device_state& s, emu_buffer& b, std::uint64_t offset, std::uint64_t size) {
  if (!b.cacheable()) return;
  const std::size_t dropped = b.cache().invalidate_range(offset, size);
  s.stats.dirty_lines_dropped += dropped;
  if (dropped && s.log)
    std::fprintf(stderr, "regcmd-emu: a FROM_DEVICE sync of handle %u dropped %zu cache lines the CPU wrote and never synced to the device\n",
                 b.handle, dropped);
}

// A DRM ioctl argument as the kernel handles it: it copies in the size the request code
// carries (zero-filling the rest of its struct) and copies that much back; an argument it
// cannot read or write is EFAULT.
struct drm_argument {
  const regcmd::emu::user_memory& user;
  unsigned long request;
  void* arg;
  std::size_t size(std::size_t ours) const { return std::min(regcmd::ioctl_codes::size_of(request), ours); }
  template <class T>
  bool in(T& local) const {
    local = T{};
    return user.read(&local, reinterpret_cast<std::uintptr_t>(arg), size(sizeof local));
  }
  template <class T>
  int back(const T& local) const {
    return user.write(reinterpret_cast<std::uintptr_t>(arg), &local, size(sizeof local)) ? 0 : fail(EFAULT);
  }
};

// ---- rknpu ----

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
      emu_buffer* b = s.by_handle(fd, a.handle);
      if (!b) return fail(EINVAL);
      destroy(s, *b);
      s.buffers.erase({fd, a.handle});
      return 0;
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

// ---- rocket ----

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

int rocket_ioctl(device_state& s, int fd, unsigned long request, void* arg) {
  const drm_argument io{s.user, request, arg};
  if (request == rt::ioctl_gem_close) {
    rt::gem_close a;
    if (!io.in(a)) return fail(EFAULT);
    emu_buffer* b = s.by_handle(fd, a.handle);
    if (!b) return fail(EINVAL);
    destroy(s, *b);
    s.buffers.erase({fd, a.handle});
    return 0;
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

int dmabuf_ioctl(device_state& s, int fd, unsigned long request, void* arg) {
  if (request != rt::ioctl_export_sync_file) return fail(ENOTTY);
  rt::export_sync_file e{};
  if (!s.user.read(&e, reinterpret_cast<std::uintptr_t>(arg), sizeof e)) return fail(EFAULT);
  const auto [file, handle] = s.dmabufs[fd];
  emu_buffer* b = s.by_handle(file, handle);
  if (!b) return fail(EINVAL);
  e.fd = regcmd::emu::fence_fd(b->last_write);
  if (e.fd < 0) return -1;
  s.sync_files[e.fd] = b->last_write;
  if (!s.user.write(reinterpret_cast<std::uintptr_t>(arg), &e, sizeof e)) return fail(EFAULT);
  return 0;
}

int sync_file_ioctl(device_state& s, int fd, unsigned long request, void* arg) {
  if (request != rt::ioctl_sync_file_info) return fail(ENOTTY);
  rt::sync_file_info info{};
  if (!s.user.read(&info, reinterpret_cast<std::uintptr_t>(arg), sizeof info)) return fail(EFAULT);
  if (info.num_fences != 0) return fail(EINVAL);  // the fence list is not emulated
  std::snprintf(info.name, sizeof info.name, "rocket");
  info.status = s.sync_files[fd].info_status();
  info.num_fences = 1;
  if (!s.user.write(reinterpret_cast<std::uintptr_t>(arg), &info, sizeof info)) return fail(EFAULT);
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
  const std::int64_t start = submit ? regcmd::emu::now_ns() : 0;
  const int rc = dispatch_ioctl(s, fd, request, arg);
  if (submit) s.stats.submit_ns += static_cast<std::uint64_t>(regcmd::emu::now_ns() - start);
  if (!submit || s.files[fd].kind != driver::rknpu || s.submit_ns == 0) return rc;
  // A blocking submit that takes time on the cores, the device free meanwhile: submits of
  // several threads overlap as on the board (max_submits_in_flight counts how many did).
  const int saved = errno;
  s.stats.max_submits_in_flight = std::max(s.stats.max_submits_in_flight, ++s.submits_in_flight);
  const std::int64_t until = regcmd::emu::now_ns() + s.submit_ns;
  g.unlock();
  regcmd::emu::sleep_until(until);
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
    f.iovas = regcmd::emu::iova_allocator{s.rocket_iova_base};
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

}  // extern "C"

// The calls the shim stands in for (interposers.hpp): a node's, a dma-buf's, a sync_file's
// or a dma-heap's fd is the emulator's; every other goes to the C library.
namespace regcmd::shim {
namespace {

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
void duplicated(int, int) {}

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

#include "interposers.hpp"
