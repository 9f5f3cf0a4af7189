// The emulated buffers: made, freed and synced (device.hpp).
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "next_call.hpp"

#include "device.hpp"

namespace regcmd::emu {

using shim::next_definition;

namespace {

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

}  // namespace

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

int free_handle(device_state& s, int fd, std::uint32_t handle) {
  emu_buffer* b = s.by_handle(fd, handle);
  if (!b) return fail(EINVAL);
  destroy(s, *b);
  s.buffers.erase({fd, handle});
  return 0;
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

}  // namespace regcmd::emu
