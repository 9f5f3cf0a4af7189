#pragma once
// NPU buffer objects: MEM_CREATE, MEM_MAP + mmap, MEM_SYNC, MEM_DESTROY, owned (RAII).
//
// Flags per use (fact sheet §1.4, §1.5): the task-descriptor buffer needs KERNEL_MAPPING
// (the kernel reads tasks through its own mapping); operand and regcmd buffers are
// CACHEABLE, so the CPU fills them fast and MEM_SYNC (which requires CACHEABLE) hands them
// over. Every IOVA must fit 32 bits: address registers and PC_BASE_ADDRESS are 32-bit.

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include <regcmd/core/error.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/runtime/device.hpp>

namespace regcmd::runtime {

enum class buffer_use : std::uint8_t { operand, regcmd, tasks };

class buffer {
 public:
  buffer() = default;
  buffer(buffer&& other) noexcept { *this = std::move(other); }
  buffer& operator=(buffer&& other) noexcept {
    if (this != &other) {
      release();
      device_ = std::exchange(other.device_, nullptr);
      handle_ = std::exchange(other.handle_, 0);
      flags_ = other.flags_;
      size_ = std::exchange(other.size_, 0);
      cookie_ = other.cookie_;
      iova_ = other.iova_;
      memory_ = std::exchange(other.memory_, nullptr);
      id_ = other.id_;
    }
    return *this;
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  ~buffer() { release(); }

  static result<buffer> create(const device& dev, std::size_t size, buffer_use use = buffer_use::operand) {
    rknpu::mem_create c{};
    c.size = size;
    c.flags = use == buffer_use::tasks ? rknpu::mem_kernel_mapping : rknpu::mem_cacheable;
    if (status s = dev.ioctl(rknpu::ioctl_mem_create, &c, "RKNPU_MEM_CREATE"); !s) return s.err();
    buffer b;
    b.device_ = &dev;
    b.handle_ = c.handle;
    b.flags_ = c.flags;
    b.size_ = c.size;
    b.cookie_ = c.obj_addr;
    b.iova_ = c.dma_addr;
    b.id_ = next_id();
    if (c.dma_addr + c.size > std::uint64_t{1} << 32)
      return make_error(rules::iova_32bit, "buffer", "dma_addr", c.dma_addr);
    rknpu::mem_map m{};
    m.handle = c.handle;
    if (status s = dev.ioctl(rknpu::ioctl_mem_map, &m, "RKNPU_MEM_MAP"); !s) return s.err();
    void* p = ::mmap(nullptr, c.size, PROT_READ | PROT_WRITE, MAP_SHARED, dev.fd(), static_cast<off_t>(m.offset));
    if (p == MAP_FAILED) return make_error(rules::mmap_failed, "buffer").with_errno(errno);
    b.memory_ = static_cast<std::uint8_t*>(p);
    return b;
  }

  std::span<std::uint8_t> bytes() const { return {memory_, size_}; }
  std::size_t size() const { return size_; }
  std::uint64_t iova() const { return iova_; }
  std::uint32_t handle() const { return handle_; }
  std::uint64_t cookie() const { return cookie_; }  // the kernel's obj_addr
  // Distinct for every buffer ever created in this process (handles are reused).
  std::uint64_t id() const { return id_; }

  status sync_to_device() const { return sync(rknpu::sync_to_device); }
  status sync_from_device() const { return sync(rknpu::sync_from_device); }

 private:
  static std::uint64_t next_id() {
    static std::atomic<std::uint64_t> ids{1};
    return ids++;
  }
  status sync(std::uint32_t direction) const {
    if (!(flags_ & rknpu::mem_cacheable)) return {};
    rknpu::mem_sync s{direction, 0, cookie_, 0, size_};
    return device_->ioctl(rknpu::ioctl_mem_sync, &s, "RKNPU_MEM_SYNC");
  }
  void release() {
    if (!device_) return;
    if (memory_) ::munmap(memory_, size_);
    rknpu::mem_destroy d{handle_, 0, cookie_};
    (void)device_->ioctl(rknpu::ioctl_mem_destroy, &d, "RKNPU_MEM_DESTROY");
    device_ = nullptr;
    memory_ = nullptr;
  }

  const device* device_ = nullptr;
  std::uint32_t handle_ = 0;
  std::uint32_t flags_ = 0;
  std::size_t size_ = 0;
  std::uint64_t cookie_ = 0;
  std::uint64_t iova_ = 0;
  std::uint8_t* memory_ = nullptr;
  std::uint64_t id_ = 0;
};

}  // namespace regcmd::runtime
