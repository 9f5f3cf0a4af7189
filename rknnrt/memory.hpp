#pragma once
// NPU memory behind rknn_tensor_mem, and the devices it lives on.
//
// - One open device per IOMMU domain id (rknn-matmul-api §1.10, §4.3): on rocket each open
//   file is its own IOMMU domain, so a context's buffers and jobs live on its domain's file;
//   rknpu has one address space, each domain still gets its own open of the node.
// - rknn_create_mem allocates a regcmd buffer and exports it as a dma-buf (the fd clients
//   read from rknn_tensor_mem, one per allocation as the vendor's). Exported buffers are
//   found again by the dma-buf's inode, so rknn_create_mem_from_fd on one of them is a view
//   (the same buffer at an offset) on any context of that domain.
// - A dma-buf of anything else (a dma-heap allocation) gets a shadow buffer on the
//   context's device, copied from the client's mapping before each run and back after it,
//   those CPU accesses between the dma-buf's DMA_BUF_IOCTL_SYNC START and END (another
//   device may use it; the library keeps a copy of its fd for them).
// - Memory belongs to no context: it outlives the context that made it, and any context of
//   its domain may use it.

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xf86drm.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include <regcmd/runtime/buffer.hpp>
#include <regcmd/runtime/device.hpp>

#include <rknn/rknn_api.h>

namespace regcmd::rknn {

// A buffer the library allocated, with its exported dma-buf.
struct npu_memory {
  int domain = 0;
  runtime::buffer buffer;
  int fd = -1;
  npu_memory() = default;
  npu_memory(const npu_memory&) = delete;
  npu_memory& operator=(const npu_memory&) = delete;
  ~npu_memory() {
    if (fd >= 0) ::close(fd);
  }
};

// What a rknn_tensor_mem stands for (its priv_data).
struct mem_record {
  std::shared_ptr<npu_memory> memory;  // the buffer the NPU reads (a foreign fd's shadow)
  std::uint64_t offset = 0;            // into memory->buffer
  std::uint32_t size = 0;
  std::uint8_t* host = nullptr;  // the client's bytes (virt_addr + offset)
  bool foreign = false;          // host is not memory's mapping: copied at each run
  void* mapping = nullptr;       // a foreign fd mapped here (no virt_addr given)
  std::size_t mapping_size = 0;
  int dmabuf = -1;  // foreign: the library's own copy of the client's fd, for its CPU-access syncs
  // rknn_destroy_mem was called: a context it is still bound to must not use it (the record
  // lives on with the context, but the client has freed the mem and may reuse the bytes).
  std::atomic<bool> destroyed = false;
  ~mem_record() {
    if (mapping) ::munmap(mapping, mapping_size);
    if (dmabuf >= 0) ::close(dmabuf);
  }
};

using inode_key = std::pair<dev_t, ino_t>;

inline result<inode_key> inode_of(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return make_error(rules::ioctl_failed, "fd").with_note("fstat").with_errno(errno);
  return inode_key{st.st_dev, st.st_ino};
}

// The process's devices and memory.
class memory_registry {
 public:
  // Never destroyed: it lives until the process ends, when the kernel closes its files
  // (destroyed at exit, it would close them after libraries it calls may be gone).
  static memory_registry& instance() {
    static memory_registry* r = new memory_registry;
    return *r;
  }

  // The device of an IOMMU domain, opened on first use.
  result<runtime::device> device_of(int domain) {
    const std::lock_guard g{lock_};
    if (auto it = devices_.find(domain); it != devices_.end()) return it->second;
    auto d = runtime::device::open({}, domain);
    if (!d) return d.err();
    devices_.emplace(domain, d.value());
    return d;
  }

  // `size` bytes on the device of `domain`, exported as a dma-buf.
  result<std::shared_ptr<npu_memory>> allocate(int domain, std::uint64_t size) {
    auto dev = device_of(domain);
    if (!dev) return dev.err();
    auto b = runtime::buffer::create(dev.value(), size);
    if (!b) return b.err();
    auto m = std::make_shared<npu_memory>();
    m->domain = domain;
    m->buffer = std::move(b.value());
    if (drmPrimeHandleToFD(dev.value().fd(), m->buffer.handle(), DRM_CLOEXEC | DRM_RDWR, &m->fd) != 0)
      return make_error(rules::ioctl_failed, "rknn_create_mem")
          .with_note("DRM_IOCTL_PRIME_HANDLE_TO_FD")
          .with_errno(errno);
    auto key = inode_of(m->fd);
    if (!key) return key.err();
    const std::lock_guard g{lock_};
    std::erase_if(exported_, [](const auto& kv) { return kv.second.expired(); });
    exported_[key.value()] = m;
    return m;
  }

  // The buffer this library exported as `fd`, or null (a foreign dma-buf).
  std::shared_ptr<npu_memory> exported(int fd) {
    auto key = inode_of(fd);
    if (!key) return nullptr;
    const std::lock_guard g{lock_};
    auto it = exported_.find(key.value());
    return it == exported_.end() ? nullptr : it->second.lock();
  }

  // rknn_tensor_mem structs handed out, so a pointer the library did not make is refused.
  rknn_tensor_mem* adopt(std::unique_ptr<rknn_tensor_mem> mem) {
    const std::lock_guard g{lock_};
    return *mems_.insert(mem.release()).first;
  }
  bool known(const rknn_tensor_mem* mem) {
    const std::lock_guard g{lock_};
    return mems_.count(const_cast<rknn_tensor_mem*>(mem)) != 0;
  }
  bool release(rknn_tensor_mem* mem) {
    {
      const std::lock_guard g{lock_};
      if (mems_.erase(mem) == 0) return false;
    }
    auto* record = static_cast<std::shared_ptr<mem_record>*>(mem->priv_data);
    (*record)->destroyed = true;
    delete record;
    delete mem;
    return true;
  }

 private:
  std::mutex lock_;
  std::map<int, runtime::device> devices_;
  std::map<inode_key, std::weak_ptr<npu_memory>> exported_;
  std::set<rknn_tensor_mem*> mems_;
};

// What the CPU wrote to a mem's bytes becomes visible to the device (a foreign fd's shadow
// holds nothing of the client's until a run copies it in: nothing to sync).
inline status to_device(const mem_record& r) {
  if (r.foreign) return {};
  return r.memory->buffer.sync_to_device(r.offset, r.size);
}

// DMA_BUF_IOCTL_SYNC (linux/dma-buf.h): the CPU's reads and writes of a dma-buf another
// device may use go between START and END, READ and/or WRITE, so that the exporter makes
// them coherent (on a non-coherent SoC: invalidate before a read, clean after a write).
struct dma_buf_sync_arg {
  std::uint64_t flags;
};
inline constexpr unsigned long dma_buf_ioctl_sync = 0x40086200;  // _IOW('b', 0, struct dma_buf_sync)
inline constexpr std::uint64_t dma_buf_sync_read = 1, dma_buf_sync_write = 2, dma_buf_sync_end = 4;

// START (`end` false) or END of the CPU's access to a foreign mem's dma-buf; nothing for a
// library buffer, nor for a file that is no dma-buf (ENOTTY: a plain mapping is coherent).
inline status cpu_access(const mem_record& r, std::uint64_t direction, bool end) {
  if (!r.foreign || r.dmabuf < 0) return {};
  dma_buf_sync_arg s{direction | (end ? dma_buf_sync_end : 0)};
  for (;;) {
    if (::ioctl(r.dmabuf, dma_buf_ioctl_sync, &s) == 0 || errno == ENOTTY) return {};
    if (errno != EINTR && errno != EAGAIN)  // the two the kernel asks to restart on
      return make_error(rules::ioctl_failed, "rknn_matmul_run").with_note("DMA_BUF_IOCTL_SYNC").with_errno(errno);
  }
}

// The record behind a rknn_tensor_mem the registry knows.
inline std::shared_ptr<mem_record> record_of(const rknn_tensor_mem* mem) {
  return *static_cast<std::shared_ptr<mem_record>*>(mem->priv_data);
}

}  // namespace regcmd::rknn
