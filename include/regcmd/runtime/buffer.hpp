#pragma once
// NPU buffer objects, owned (RAII), on either driver. A buffer keeps its device's file
// open; a prepared program keeps the buffers bound to it (session.hpp).
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

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include <regcmd/core/error.hpp>
#include <regcmd/core/math.hpp>
#include <regcmd/core/soc.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/runtime/device.hpp>
#include <regcmd/runtime/rocket_uapi.hpp>

namespace regcmd::runtime {

enum class buffer_use : std::uint8_t { operand, regcmd, tasks };

// The kernel object behind a buffer and its CPU mapping, released when the last owner
// goes: the buffer, or a prepared program it is bound to (so a bound buffer destroyed,
// moved or reallocated before a run leaves nothing dangling).
class buffer_object {
 public:
  buffer_object(std::shared_ptr<const device_file> file, std::uint32_t handle, std::uint32_t flags, std::size_t size,
                std::uint64_t cookie, std::uint64_t iova)
      : file_{std::move(file)}, handle_{handle}, flags_{flags}, size_{size}, cookie_{cookie}, iova_{iova}, id_{next_id()} {}
  buffer_object(const buffer_object&) = delete;
  buffer_object& operator=(const buffer_object&) = delete;
  ~buffer_object() {
    if (memory_) file_->calls().munmap(memory_, size_);
    if (file_->kind() == driver::rocket) {
      rocket::gem_close c{handle_, 0};
      (void)file_->ioctl(rocket::ioctl_gem_close, &c, "DRM_IOCTL_GEM_CLOSE");
    } else {
      rknpu::mem_destroy d{handle_, 0, cookie_};
      (void)file_->ioctl(rknpu::ioctl_mem_destroy, &d, "RKNPU_MEM_DESTROY");
    }
  }

  const device_file& file() const { return *file_; }
  std::uint32_t handle() const { return handle_; }
  std::uint32_t flags() const { return flags_; }
  std::size_t size() const { return size_; }
  std::uint64_t cookie() const { return cookie_; }
  std::uint64_t iova() const { return iova_; }
  std::uint64_t id() const { return id_; }
  std::uint8_t* memory() const { return memory_; }
  void map(std::uint8_t* memory) { memory_ = memory; }

  // Whether an NPU job has written this buffer since it was allocated: the first job
  // writing a fresh buffer leaves it stale (regcmd-isa-reference "State gotchas"). Read
  // and set by session::run (runs of several threads at once).
  bool npu_written() const { return npu_written_; }
  void set_npu_written() const { npu_written_ = true; }

 private:
  static std::uint64_t next_id() {
    static std::atomic<std::uint64_t> ids{1};
    return ids++;
  }
  std::shared_ptr<const device_file> file_;
  std::uint32_t handle_;
  std::uint32_t flags_;
  std::size_t size_;
  std::uint64_t cookie_;
  std::uint64_t iova_;
  std::uint64_t id_;
  std::uint8_t* memory_ = nullptr;
  mutable std::atomic<bool> npu_written_ = false;  // the device's state, not the buffer's value
};

class buffer {
 public:
  buffer() = default;
  buffer(buffer&&) noexcept = default;
  buffer& operator=(buffer&&) noexcept = default;
  buffer(const buffer&) = delete;  // one owner; a prepared program shares the object()
  buffer& operator=(const buffer&) = delete;

  static result<buffer> create(const device& dev, std::size_t size, buffer_use use = buffer_use::operand) {
    if (!dev.file()) return make_error(rules::ioctl_failed, "buffer").with_note("the device is not open").with_errno(EBADF);
    buffer b;
    std::shared_ptr<buffer_object> object;
    std::uint64_t map_offset = 0;
    if (dev.kind() == driver::rknpu) {
      rknpu::mem_create c{};
      c.size = size;
      c.flags = use == buffer_use::tasks ? rknpu::mem_kernel_mapping : rknpu::mem_cacheable;
      c.iommu_domain_id = dev.iommu_domain();
      if (status s = dev.ioctl(rknpu::ioctl_mem_create, &c, "RKNPU_MEM_CREATE"); !s) return s.err();
      // from here on the kernel object is released with the buffer
      object = std::make_shared<buffer_object>(dev.file(), c.handle, c.flags, c.size, c.obj_addr, c.dma_addr);
      if (reachable(c.dma_addr, c.size, dev.soc().max_iova)) {
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
      const std::size_t rounded = round_up(size, static_cast<std::uint32_t>(page));
      rocket::create_bo c{};
      c.size = static_cast<std::uint32_t>(rounded);
      if (status s = dev.ioctl(rocket::ioctl_create_bo, &c, "DRM_IOCTL_ROCKET_CREATE_BO"); !s) return s.err();
      object = std::make_shared<buffer_object>(dev.file(), c.handle, 0, rounded, 0, c.dma_address);
      map_offset = c.offset;
    }
    buffer_object& o = *object;
    if (!reachable(o.iova(), o.size(), dev.soc().max_iova)) return make_error(rules::iova_32bit, "buffer", "end", end_of(o.iova(), o.size()));
    void* p = dev.calls().mmap(nullptr, o.size(), PROT_READ | PROT_WRITE, MAP_SHARED, dev.fd(), static_cast<off_t>(map_offset));
    if (p == MAP_FAILED) return make_error(rules::mmap_failed, "buffer").with_errno(errno);
    o.map(static_cast<std::uint8_t*>(p));
    b.object_ = std::move(object);
    return b;
  }

  // A default or moved-from buffer is empty: no bytes, size 0, id 0.
  std::span<std::uint8_t> bytes() const { return object_ ? std::span{object_->memory(), object_->size()} : std::span<std::uint8_t>{}; }
  std::size_t size() const { return object_ ? object_->size() : 0; }
  std::uint64_t iova() const { return object_ ? object_->iova() : 0; }
  std::uint32_t handle() const { return object_ ? object_->handle() : 0; }
  std::uint64_t cookie() const { return object_ ? object_->cookie() : 0; }  // rknpu: the kernel's obj_addr
  // Distinct for every buffer ever created in this process (handles are reused).
  std::uint64_t id() const { return object_ ? object_->id() : 0; }
  // Whether the buffer was made on this open of the device (handles and, on rocket, IOVAs
  // mean something only to the file they came from).
  bool made_on(const device_file* file) const { return object_ && &object_->file() == file; }
  // The kernel object, shared: what a prepared program keeps of a buffer bound to it.
  const std::shared_ptr<const buffer_object>& object() const { return object_; }

  // What the CPU wrote to [offset, offset + size) becomes visible to the NPU (rocket: the
  // whole BO, FINI_BO has no range). Default: the whole buffer.
  status sync_to_device(std::uint64_t offset = 0, std::uint64_t size = whole) const {
    return object_ ? sync_to_device(*object_, offset, size) : not_allocated();
  }
  // What the NPU wrote to [offset, offset + size) becomes visible to the CPU, dropping what
  // the CPU wrote there without a sync_to_device (rocket: the whole BO, after waiting up to
  // `timeout_ms` for the jobs writing it; for part of a BO, the CPU's writes cleaned first).
  status sync_from_device(std::uint32_t timeout_ms = 6000, std::uint64_t offset = 0, std::uint64_t size = whole) const {
    return object_ ? sync_from_device(*object_, timeout_ms, offset, size) : not_allocated();
  }

  static constexpr std::uint64_t whole = ~std::uint64_t{0};  // to the buffer's end
  static status sync_to_device(const buffer_object& o, std::uint64_t offset = 0, std::uint64_t size = whole) {
    if (o.file().kind() == driver::rocket) {
      rocket::fini_bo f{o.handle(), 0};
      return o.file().ioctl(rocket::ioctl_fini_bo, &f, "DRM_IOCTL_ROCKET_FINI_BO");
    }
    return sync(o, rknpu::sync_to_device, offset, size);
  }
  static status sync_from_device(const buffer_object& o, std::uint32_t timeout_ms, std::uint64_t offset = 0,
                                 std::uint64_t size = whole) {
    if (o.file().kind() == driver::rocket) {
      // PREP_BO invalidates the whole BO: for part of it, what the CPU wrote elsewhere is
      // cleaned first (FINI_BO), as arm64 cleans the partial lines of a range it invalidates,
      // so a view's sync does not drop another view's writes.
      if (offset != 0 || size < o.size())
        if (status s = sync_to_device(o); !s) return s;
      timespec now{};
      ::clock_gettime(CLOCK_MONOTONIC, &now);
      const std::int64_t deadline = std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec + std::int64_t{timeout_ms} * 1'000'000;
      rocket::prep_bo p{o.handle(), 0, deadline};  // absolute: a relative value reads as long past
      return o.file().ioctl(rocket::ioctl_prep_bo, &p, "DRM_IOCTL_ROCKET_PREP_BO");
    }
    return sync(o, rknpu::sync_from_device, offset, size);
  }

 private:
  // Every byte has an IOVA the NPU's 32-bit address registers can hold, up to the SoC's
  // max_iova (compared without overflow: an IOVA near 2^64 plus the size must not wrap).
  static bool reachable(std::uint64_t iova, std::uint64_t size, std::uint64_t max_iova) {
    const std::uint64_t limit = max_iova + 1;  // one past the last address
    return iova <= limit && size <= limit - iova;
  }
  // One past the last byte, saturated: what an iova-32bit error reports.
  static std::uint64_t end_of(std::uint64_t iova, std::uint64_t size) {
    return size > ~std::uint64_t{0} - iova ? ~std::uint64_t{0} : iova + size;
  }
  // rknpu MEM_SYNC over the part of [offset, offset + size) inside the buffer (the kernel
  // refuses a range past its end); only a cacheable buffer has anything to sync.
  static status sync(const buffer_object& o, std::uint32_t direction, std::uint64_t offset, std::uint64_t size) {
    if (!(o.flags() & rknpu::mem_cacheable) || offset >= o.size()) return {};
    rknpu::mem_sync s{direction, 0, o.cookie(), offset, std::min<std::uint64_t>(size, o.size() - offset)};
    return o.file().ioctl(rknpu::ioctl_mem_sync, &s, "RKNPU_MEM_SYNC");
  }
  static status not_allocated() { return make_error(rules::ioctl_failed, "buffer").with_note("an empty buffer").with_errno(EBADF); }

  std::shared_ptr<const buffer_object> object_;
};

}  // namespace regcmd::runtime
