#pragma once
// Handing out IOVAs as the kernels' allocators do (rknpu: the IOMMU DMA API; rocket: a
// drm_mm over the domain): page-aligned ranges, first fit from the base, a freed range
// reused. A size that does not fit before 2^64 is still handed out at the end, wrapping,
// so that the runtime's own range checks can be tested.

#include <cstdint>
#include <map>

namespace regcmd::emu {

class iova_allocator {
 public:
  iova_allocator() = default;
  explicit iova_allocator(std::uint64_t base) : base_{base} {}

  std::uint64_t allocate(std::uint64_t size) {
    std::uint64_t at = base_;
    for (const auto& [start, length] : used_) {
      if (start >= at && start - at >= size) break;  // the gap before this range holds it
      if (start + length > at) at = start + length;
    }
    used_[at] = size;
    return at;
  }
  void free(std::uint64_t iova) { used_.erase(iova); }

 private:
  std::uint64_t base_ = 0;
  std::map<std::uint64_t, std::uint64_t> used_;  // start -> size
};

}  // namespace regcmd::emu
