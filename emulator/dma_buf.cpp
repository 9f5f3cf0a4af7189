// dma-bufs (a node's exports), the dma-heap nodes' allocations and sync_files (device.hpp).
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

#include "next_call.hpp"

#include "device.hpp"

namespace regcmd::emu {

using shim::next_definition;

// A file of `size` bytes of memory with an inode of its own: a dma-buf's stand-in.
namespace {
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

}  // namespace

// A dma-buf is known by its file (any fd or copy of one), as the kernel knows it.
static void note_dma_buf(device_state& s, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) == 0) s.dma_buf_files.insert({st.st_dev, st.st_ino});
}

// DMA_BUF_IOCTL_SYNC (linux/dma-buf.h, dma_buf_ioctl): the CPU's access to a dma-buf,
// START or END, READ and/or WRITE; other flags are EINVAL. Counted: the model of a
// dma-buf's caches is its exporter's, and these buffers have no device here but the CPU.
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

}  // namespace regcmd::emu
