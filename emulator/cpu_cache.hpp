#pragma once
// A cacheable buffer as a board's CPU and NPU see it: two copies, joined only by syncs.
//
// On RK3588 the NPU's DMA is not coherent with the CPU's caches. A buffer mapped cacheable
// (rknpu RKNPU_MEM_CACHEABLE, every rocket BO: shmem mapped write-back) is, for the CPU, its
// cache; for the NPU, the DRAM behind it. The strictest board is one whose cache never
// evicts a line on its own, and that is the one modelled:
//   - what the CPU writes reaches the NPU only when a TO_DEVICE sync cleans the line
//     (rknpu MEM_SYNC TO_DEVICE, rocket FINI_BO: dma_sync_*_for_device);
//   - what the NPU writes reaches the CPU only when a FROM_DEVICE sync invalidates the line
//     (rknpu MEM_SYNC FROM_DEVICE, rocket PREP_BO: dma_sync_*_for_cpu);
//   - an invalidate drops what the CPU wrote and never cleaned (arm64's dcache_inval_poc
//     cleans a partial line at either end of the range first, and so does the model).
// A line is dirty when the CPU's copy differs from what it held when last clean (a third
// copy): a clean writes back only dirty lines, as a cache does, so bytes the NPU wrote that
// the CPU never touched are not overwritten by the CPU's stale copy. (A CPU store of the
// value its line already held is not seen as a write: the one way the model is laxer
// than a board.) Non-cacheable buffers (rknpu's default and write-combine) are one copy.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace regcmd::emu {

// The CPU's cache line on RK3588 (Cortex-A76 and A55): syncs work on whole lines.
inline constexpr std::size_t cache_line = 64;

struct cpu_cache {
  std::uint8_t* cpu = nullptr;     // the CPU's view: what a mapping reads and writes
  std::uint8_t* device = nullptr;  // the NPU's view: what its DMA reads and writes
  std::uint8_t* clean = nullptr;   // the CPU's view as it was when last clean
  std::size_t size = 0;

  // Lines [first, last) covering [offset, offset + count) of the buffer, clamped to it.
  struct lines {
    std::size_t first, last;
  };
  lines covering(std::size_t offset, std::size_t count) const {
    const std::size_t begin = std::min(offset, size), end = begin + std::min(count, size - begin);
    return {begin / cache_line, (end + cache_line - 1) / cache_line};
  }

  bool dirty(std::size_t line) const {
    const std::size_t at = line * cache_line;
    return std::memcmp(cpu + at, clean + at, length(line)) != 0;
  }

  // TO_DEVICE: every dirty line of the range is written back. Returns the lines written.
  std::size_t clean_range(std::size_t offset, std::size_t count) {
    const lines r = covering(offset, count);
    std::size_t written = 0;
    for (std::size_t l = r.first; l < r.last; ++l)
      if (dirty(l)) {
        write_back(l);
        ++written;
      }
    return written;
  }

  // FROM_DEVICE: the range's lines are read again from the NPU's view; a dirty partial
  // line at either end is written back first. Returns the dirty lines dropped: CPU writes
  // lost because no TO_DEVICE sync came before.
  std::size_t invalidate_range(std::size_t offset, std::size_t count) {
    const lines r = covering(offset, count);
    if (r.first == r.last) return 0;
    const std::size_t begin = std::min(offset, size), end = begin + std::min(count, size - begin);
    if (begin % cache_line != 0 && dirty(r.first)) write_back(r.first);
    if (end % cache_line != 0 && dirty(r.last - 1)) write_back(r.last - 1);
    std::size_t dropped = 0;
    for (std::size_t l = r.first; l < r.last; ++l) {
      dropped += dirty(l) ? 1 : 0;
      const std::size_t at = l * cache_line;
      std::memcpy(cpu + at, device + at, length(l));
      std::memcpy(clean + at, device + at, length(l));
    }
    return dropped;
  }

 private:
  std::size_t length(std::size_t line) const { return std::min(cache_line, size - line * cache_line); }
  void write_back(std::size_t line) {
    const std::size_t at = line * cache_line;
    std::memcpy(device + at, cpu + at, length(line));
    std::memcpy(clean + at, cpu + at, length(line));
  }
};

}  // namespace regcmd::emu
