#pragma once
// The emulated device's state, shared by its parts: the open files of both nodes, their
// buffers (each a CPU view and, when cacheable, the NPU's own copy), the IOVA spaces, the
// three cores of the functional model, the faults to inject and the counters tests read.
// One instance (state()), under its lock; emu.cpp says what the device does and takes the
// calls, rknpu_node.cpp and rocket_node.cpp answer each driver's ioctls, buffers.cpp makes
// and frees buffers and syncs their caches, dma_buf.cpp answers dma-bufs, dma-heaps and
// sync_files.

#include <sys/eventfd.h>
#include <sys/types.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include <regcmd/model/npu.hpp>
#include <regcmd/runtime/ioctl_codes.hpp>
#include <regcmd/runtime/rknpu_uapi.hpp>
#include <regcmd/runtime/rocket_uapi.hpp>

#include "cpu_cache.hpp"
#include "emu_stats.h"
#include "fence.hpp"
#include "iova_allocator.hpp"
#include "user_memory.hpp"

namespace regcmd::emu {

namespace rk = regcmd::rknpu;
namespace rt = regcmd::rocket;

inline std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

enum class driver { rknpu, rocket };

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

inline device_state& state() {
  static device_state s;
  return s;
}

inline bool ours(int fd) {
  device_state& s = state();
  std::lock_guard g(s.lock);
  return s.files.count(fd) || s.dmabufs.count(fd) || s.sync_files.count(fd) || s.heaps.count(fd);
}

inline void note_fault(device_state& s, const std::string& what) {
  std::snprintf(s.stats.last_fault, sizeof s.stats.last_fault, "%s", what.c_str());
  ++s.stats.faults;
}

inline int fail(int error) {
  errno = error;
  return -1;
}

// A pollable fd that is ready at once: stands for a signalled sync_file.
inline int ready_fd() { return eventfd(1, EFD_CLOEXEC); }

// A DRM ioctl argument as the kernel handles it: it copies in the size the request code
// carries (zero-filling the rest of its struct) and copies that much back; an argument it
// cannot read or write is EFAULT.
struct drm_argument {
  const user_memory& user;
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

// Buffers (buffers.cpp).
emu_buffer* new_buffer(device_state& s, int fd, std::uint64_t size, driver kind, bool cacheable, std::uint8_t fill);
void destroy(device_state& s, emu_buffer& b);
// MEM_DESTROY, GEM_CLOSE: the file's handle freed (EINVAL: no such handle).
int free_handle(device_state& s, int fd, std::uint32_t handle);
void clean(device_state& s, emu_buffer& b, std::uint64_t offset, std::uint64_t size);
void invalidate(device_state& s, emu_buffer& b, std::uint64_t offset, std::uint64_t size);

// Each node's ioctls (rknpu_node.cpp, rocket_node.cpp), under the state's lock.
int rknpu_ioctl(device_state& s, int fd, unsigned long request, void* arg);
int rocket_ioctl(device_state& s, int fd, unsigned long request, void* arg);

// dma-bufs, dma-heaps and sync_files (dma_buf.cpp).
inline constexpr unsigned long dma_buf_ioctl_sync = ioctl_codes::iow('b', 0, 8);  // DMA_BUF_IOCTL_SYNC
static_assert(dma_buf_ioctl_sync == 0x40086200);
int dma_buf_sync(device_state& s, void* arg);
int export_buffer(device_state& s, int fd, void* arg);
int dma_heap_ioctl(device_state& s, unsigned long request, void* arg);
int dmabuf_ioctl(device_state& s, int fd, unsigned long request, void* arg);
int sync_file_ioctl(device_state& s, int fd, unsigned long request, void* arg);

}  // namespace regcmd::emu
