#pragma once
// NPU buffer objects, owned (RAII), on either driver.
//
// rknpu (fact sheet §1.4, §1.5): MEM_CREATE, MEM_MAP + mmap, MEM_SYNC, MEM_DESTROY. The
// task-descriptor buffer needs KERNEL_MAPPING (the kernel reads tasks through its own
// mapping); operand and regcmd buffers are CACHEABLE, so the CPU fills them fast and
// MEM_SYNC (which requires CACHEABLE) hands them over.
// rocket (fact sheet §3.1, §3.2): CREATE_BO (the IOVA is this fd's own) + mmap at the
// returned offset, FINI_BO before the NPU reads what the CPU wrote, PREP_BO (wait for the
// NPU's writes, then sync) before the CPU reads, GEM_CLOSE. Its BOs start zeroed.
// Every IOVA must fit 32 bits: address registers and PC_BASE_ADDRESS are 32-bit.

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include <regcmd/core/error.hpp>
#include <regcmd/core/soc.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/runtime/device.hpp>
#include <regcmd/runtime/rocket_uapi.hpp>

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
    buffer b;
    b.id_ = next_id();
    std::uint64_t map_offset = 0;
    if (dev.kind() == driver::rknpu) {
      rknpu::mem_create c{};
      c.size = size;
      c.flags = use == buffer_use::tasks ? rknpu::mem_kernel_mapping : rknpu::mem_cacheable;
      if (status s = dev.ioctl(rknpu::ioctl_mem_create, &c, "RKNPU_MEM_CREATE"); !s) return s.err();
      b.device_ = &dev;  // from here on the buffer is released by its destructor
      b.handle_ = c.handle;
      b.flags_ = c.flags;
      b.size_ = c.size;
      b.cookie_ = c.obj_addr;
      b.iova_ = c.dma_addr;
      if (reachable(b.iova_, b.size_)) {
        rknpu::mem_map m{};
        m.handle = c.handle;
        if (status s = dev.ioctl(rknpu::ioctl_mem_map, &m, "RKNPU_MEM_MAP"); !s) return s.err();
        map_offset = m.offset;
      }
    } else {
      // The shmem BO is whole pages; CREATE_BO does not say so, but the mapping may use them.
      // Its size is 32 bits: checked before rounding, which would wrap a size near 2^64.
      const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      constexpr std::size_t max_bo = 0xffff'ffffu;
      if (size == 0 || size > max_bo - page + 1) return make_error(rules::bo_size, "buffer", "size", size);
      const std::size_t rounded = (size + page - 1) / page * page;
      rocket::create_bo c{};
      c.size = static_cast<std::uint32_t>(rounded);
      if (status s = dev.ioctl(rocket::ioctl_create_bo, &c, "DRM_IOCTL_ROCKET_CREATE_BO"); !s) return s.err();
      b.device_ = &dev;
      b.handle_ = c.handle;
      b.size_ = rounded;
      b.iova_ = c.dma_address;
      map_offset = c.offset;
    }
    if (!reachable(b.iova_, b.size_)) return make_error(rules::iova_32bit, "buffer", "end", end_of(b.iova_, b.size_));
    void* p = ::mmap(nullptr, b.size_, PROT_READ | PROT_WRITE, MAP_SHARED, dev.fd(), static_cast<off_t>(map_offset));
    if (p == MAP_FAILED) return make_error(rules::mmap_failed, "buffer").with_errno(errno);
    b.memory_ = static_cast<std::uint8_t*>(p);
    return b;
  }

  std::span<std::uint8_t> bytes() const { return {memory_, size_}; }
  std::size_t size() const { return size_; }
  std::uint64_t iova() const { return iova_; }
  std::uint32_t handle() const { return handle_; }
  std::uint64_t cookie() const { return cookie_; }  // rknpu: the kernel's obj_addr
  // Distinct for every buffer ever created in this process (handles are reused).
  std::uint64_t id() const { return id_; }

  // What the CPU wrote becomes visible to the NPU.
  status sync_to_device() const {
    if (device_->kind() == driver::rocket) {
      rocket::fini_bo f{handle_, 0};
      return device_->ioctl(rocket::ioctl_fini_bo, &f, "DRM_IOCTL_ROCKET_FINI_BO");
    }
    return sync(rknpu::sync_to_device);
  }
  // What the NPU wrote becomes visible to the CPU (rocket: after waiting up to
  // `timeout_ms` for the jobs writing it).
  status sync_from_device(std::uint32_t timeout_ms = 6000) const {
    if (device_->kind() == driver::rocket) {
      timespec now{};
      ::clock_gettime(CLOCK_MONOTONIC, &now);
      const std::int64_t deadline = std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec + std::int64_t{timeout_ms} * 1'000'000;
      rocket::prep_bo p{handle_, 0, deadline};  // absolute: a relative value reads as long past
      return device_->ioctl(rocket::ioctl_prep_bo, &p, "DRM_IOCTL_ROCKET_PREP_BO");
    }
    return sync(rknpu::sync_from_device);
  }

 private:
  // Every byte has an IOVA the NPU's 32-bit address registers can hold (compared without
  // overflow: an IOVA near 2^64 plus the size must not wrap into range).
  static bool reachable(std::uint64_t iova, std::uint64_t size) {
    constexpr std::uint64_t limit = soc::rk3588::max_iova + 1;  // one past the last address
    return iova <= limit && size <= limit - iova;
  }
  // One past the last byte, saturated: what an iova-32bit error reports.
  static std::uint64_t end_of(std::uint64_t iova, std::uint64_t size) {
    return size > ~std::uint64_t{0} - iova ? ~std::uint64_t{0} : iova + size;
  }
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
    if (device_->kind() == driver::rocket) {
      rocket::gem_close c{handle_, 0};
      (void)device_->ioctl(rocket::ioctl_gem_close, &c, "DRM_IOCTL_GEM_CLOSE");
    } else {
      rknpu::mem_destroy d{handle_, 0, cookie_};
      (void)device_->ioctl(rknpu::ioctl_mem_destroy, &d, "RKNPU_MEM_DESTROY");
    }
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
