// Raw ioctls on the node under test ($REGCMD_DEVICE), for the cases that must reach the
// driver exactly as written (bad pointers, huge counts, buffers still mapped at close):
// the runtime would refuse them or clean up first.
#pragma once

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <regcmd/runtime/rknpu_uapi.hpp>
#include <regcmd/runtime/rocket_uapi.hpp>

namespace regcmd::testing::raw {

// The node under test: a node under /dev/accel/ is rocket's (fact sheet §3.2), a DRM card
// node rknpu's (§1.1).
struct node {
  std::string path;
  bool rocket = false;
};

inline node node_under_test() {
  const char* p = std::getenv("REGCMD_DEVICE");
  REQUIRE_MESSAGE((p && *p), "run with REGCMD_DEVICE naming the rknpu or the rocket node");
  return {p, std::string_view(p).starts_with("/dev/accel/")};
}

// 0, or the errno of a failed ioctl.
inline int call(int fd, unsigned long request, void* arg) { return ::ioctl(fd, request, arg) == 0 ? 0 : errno; }

// One open file of the node; closed with the object unless closed before.
class file {
 public:
  explicit file(const node& n) : fd_{::open(n.path.c_str(), O_RDWR | O_CLOEXEC)}, rocket_{n.rocket} {
    REQUIRE_MESSAGE(fd_ >= 0, "cannot open ", n.path, ": ", std::strerror(errno));
  }
  file(const file&) = delete;
  file& operator=(const file&) = delete;
  ~file() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd() const { return fd_; }
  bool rocket() const { return rocket_; }

 private:
  int fd_;
  bool rocket_;
};

// A buffer object as the kernel reports it.
struct bo {
  std::uint32_t handle = 0;
  std::uint64_t size = 0, iova = 0, obj_addr = 0, map_offset = 0;
};

// rknpu MEM_CREATE (+ MEM_MAP for the mmap offset, §1.5), rocket CREATE_BO (§3.1); 0 or the
// errno. rknpu buffers get KERNEL_MAPPING unless told, which a task-descriptor buffer needs
// (§1.6): not cacheable, so the CPU and the NPU share their bytes. rocket BOs are cacheable.
inline int create(const file& f, std::uint64_t size, bo& out, std::uint32_t rknpu_flags = rknpu::mem_kernel_mapping) {
  out = {};
  if (f.rocket()) {
    rocket::create_bo c{};
    c.size = static_cast<std::uint32_t>(size);
    if (const int e = call(f.fd(), rocket::ioctl_create_bo, &c)) return e;
    out = {c.handle, size, c.dma_address, 0, c.offset};
    return 0;
  }
  rknpu::mem_create c{};
  c.size = size;
  c.flags = rknpu_flags;
  if (const int e = call(f.fd(), rknpu::ioctl_mem_create, &c)) return e;
  rknpu::mem_map m{};
  m.handle = c.handle;
  if (const int e = call(f.fd(), rknpu::ioctl_mem_map, &m)) return e;
  out = {c.handle, c.size, c.dma_addr, c.obj_addr, m.offset};
  return 0;
}

inline bo create(const file& f, std::uint64_t size, std::uint32_t rknpu_flags = rknpu::mem_kernel_mapping) {
  bo b;
  const int e = create(f, size, b, rknpu_flags);
  REQUIRE_MESSAGE(e == 0, "creating a buffer of ", size, " bytes: ", std::strerror(e));
  return b;
}

// GEM_CLOSE (rocket) or MEM_DESTROY (rknpu); 0 or the errno.
inline int destroy(const file& f, const bo& b) {
  if (f.rocket()) {
    rocket::gem_close c{b.handle, 0};
    return call(f.fd(), rocket::ioctl_gem_close, &c);
  }
  rknpu::mem_destroy d{b.handle, 0, b.obj_addr};
  return call(f.fd(), rknpu::ioctl_mem_destroy, &d);
}

// A cache sync of a buffer: rknpu MEM_SYNC over [offset, offset + size) (§1.5), rocket
// FINI_BO (to the device) or PREP_BO (from it, waiting for its writers) of the whole BO.
// 0 or the errno.
inline int sync(const file& f, const bo& b, bool to_device, std::uint64_t offset = 0, std::uint64_t size = 0) {
  if (f.rocket()) {
    if (to_device) {
      rocket::fini_bo s{b.handle, 0};
      return call(f.fd(), rocket::ioctl_fini_bo, &s);
    }
    rocket::prep_bo s{b.handle, 0, INT64_MAX};
    return call(f.fd(), rocket::ioctl_prep_bo, &s);
  }
  rknpu::mem_sync s{to_device ? rknpu::sync_to_device : rknpu::sync_from_device, 0, b.obj_addr, offset, size ? size : b.size - offset};
  return call(f.fd(), rknpu::ioctl_mem_sync, &s);
}

inline std::uint8_t* map(const file& f, const bo& b) {
  void* p = ::mmap(nullptr, b.size, PROT_READ | PROT_WRITE, MAP_SHARED, f.fd(), static_cast<off_t>(b.map_offset));
  REQUIRE_MESSAGE(p != MAP_FAILED, "mmap: ", std::strerror(errno));
  return static_cast<std::uint8_t*>(p);
}

// A readable page followed by `reach` inaccessible bytes (a page unless told): before(n) is
// n readable bytes ending where the inaccessible part starts, so a read past them faults
// exactly there, and so does one up to `reach` bytes further; unreadable() is an address
// no read may use. The inaccessible part is only reserved address space.
class guarded {
 public:
  explicit guarded(std::uint64_t reach = 0)
      : page_{static_cast<std::size_t>(::sysconf(_SC_PAGESIZE))}, length_{page_ + (reach ? reach : page_)} {
    void* p = ::mmap(nullptr, length_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(p != MAP_FAILED);
    base_ = static_cast<std::uint8_t*>(p);
    REQUIRE(::mprotect(base_, page_, PROT_READ | PROT_WRITE) == 0);
  }
  guarded(const guarded&) = delete;
  guarded& operator=(const guarded&) = delete;
  ~guarded() { ::munmap(base_, length_); }
  std::uint8_t* before(std::size_t n) const { return base_ + page_ - n; }
  // `value` copied so that it ends where the inaccessible part starts.
  template <class T>
  T* place(const T& value) const {
    auto* at = before(sizeof value);
    std::memcpy(at, &value, sizeof value);
    return reinterpret_cast<T*>(at);
  }
  void* unreadable() const { return base_ + page_; }
  std::uint64_t unreadable_address() const { return reinterpret_cast<std::uintptr_t>(unreadable()); }

 private:
  std::size_t page_;
  std::size_t length_;
  std::uint8_t* base_ = nullptr;
};

inline std::uint64_t address_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// A program of `entries` regcmd entries, distinct for each `seed`; the capture shim records
// bytes whatever they mean.
inline std::vector<std::uint64_t> program(std::uint32_t seed, std::uint32_t entries = 16) {
  std::vector<std::uint64_t> code(entries);
  for (std::uint32_t i = 0; i < entries; ++i) code[i] = std::uint64_t{seed} << 48 | std::uint64_t{0x1000 + i} << 16 | i;
  return code;
}

// One submit of `code` (written to `regcmd`, mapped at `regcmd_map`) as one task: rknpu
// through a task-descriptor buffer (§1.6: regcfg_amount leaves out the 4-entry tail),
// rocket as one job of one task (§3.1: regcmd_count counts every entry). Returns 0 or the
// errno; a rknpu core left wedged by it is reset.
inline int submit(const file& f, const bo& regcmd, std::uint8_t* regcmd_map, const std::vector<std::uint64_t>& code,
                  const bo* tasks = nullptr, std::uint8_t* tasks_map = nullptr) {
  std::memcpy(regcmd_map, code.data(), code.size() * 8);
  const auto count = static_cast<std::uint32_t>(code.size());
  if (f.rocket()) {
    sync(f, regcmd, true);  // a BO is cacheable: the program reaches the NPU through FINI_BO
    rocket::task t{static_cast<std::uint32_t>(regcmd.iova), count};
    std::uint32_t in[1] = {regcmd.handle};
    rocket::job j{address_of(&t), address_of(in), 0, 1, sizeof t, 1, 0};
    rocket::submit s{address_of(&j), 1, sizeof j, 0};
    return call(f.fd(), rocket::ioctl_submit, &s);
  }
  REQUIRE(tasks != nullptr);
  const rknpu::task t{0, 0, 0xd, 0x300, rknpu::int_clear_all, 0, count - rknpu::pc_data_extra_amount, 0, regcmd.iova};
  std::memcpy(tasks_map, &t, sizeof t);
  rknpu::submit s{};
  s.flags = rknpu::job_pc | rknpu::job_pingpong;
  s.timeout = 6000;
  s.task_number = 1;
  s.task_obj_addr = tasks->obj_addr;
  s.core_mask = 1;
  s.subcore_task[0] = {0, 1};
  const int e = call(f.fd(), rknpu::ioctl_submit, &s);
  rknpu::action reset{rknpu::action_reset, 0};
  call(f.fd(), rknpu::ioctl_action, &reset);
  return e;
}

}  // namespace regcmd::testing::raw
