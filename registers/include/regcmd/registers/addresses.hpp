#pragma once
// The registers that hold an address (a program's slots: fact sheet §4, the fields declared
// address_field), sorted by offset: what the program rules and the binder read in every
// translation unit that builds a program, without the whole map's table. registers/all.hpp
// asserts that these are exactly the map's registers with an address field.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <regcmd/core/entry.hpp>
#include <regcmd/core/layout.hpp>
#include <regcmd/registers/cna.hpp>
#include <regcmd/registers/dpu.hpp>
#include <regcmd/registers/dpu_rdma.hpp>
#include <regcmd/registers/pc.hpp>
#include <regcmd/registers/ppu.hpp>
#include <regcmd/registers/ppu_rdma.hpp>

namespace regcmd {

struct address_register {
  std::uint16_t target = 0;
  std::uint16_t offset = 0;
  std::string_view name;
  std::string_view field;  // the address field
  std::uint8_t lsb = 0;    // its lowest bit: the address must be aligned to 2^lsb
  // Every address field runs up to bit 31 (checked in registers/all.hpp), so a 32-bit
  // address aligned to 2^lsb always fits it: binding checks just those two.
  constexpr std::uint32_t alignment_mask() const { return (1u << lsb) - 1u; }
  friend constexpr bool operator==(const address_register&, const address_register&) = default;
};

namespace detail {
// Register R's row: its address field (it has one).
template <register_type R>
constexpr address_register address_row() {
  for (const field_info& f : R::field_table)
    if (f.shape.kind == field_kind::address)
      return {static_cast<std::uint16_t>(R::block), R::offset, R::name, f.name, f.shape.lsb};
  return {};
}
template <register_type... R>
constexpr auto sorted_address_rows() {
  std::array<address_register, sizeof...(R)> out{address_row<R>()...};
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.offset < b.offset; });
  return out;
}
}  // namespace detail

inline constexpr auto address_registers = detail::sorted_address_rows<
    reg::PC_BASE_ADDRESS, reg::PC_TASK_DMA_BASE_ADDR, reg::CNA_FEATURE_DATA_ADDR, reg::CNA_DCOMP_ADDR0,
    reg::DPU_DST_BASE_ADDR, reg::DPU_RDMA_RDMA_SRC_BASE_ADDR, reg::DPU_RDMA_RDMA_BS_BASE_ADDR,
    reg::DPU_RDMA_RDMA_BN_BASE_ADDR, reg::DPU_RDMA_RDMA_EW_BASE_ADDR, reg::PPU_DST_BASE_ADDR,
    reg::PPU_RDMA_RDMA_SRC_BASE_ADDR>();
inline constexpr std::size_t address_register_count = address_registers.size();

// Binary search: programs are validated entry by entry at compile time, where every
// comparison is a counted step. Returns address_registers.size() for other registers.
// (An index, not a pointer: GCC's -fsanitize=null does not let a pointer into an array be
// compared with nullptr in a constant expression, and users build with sanitizers.)
constexpr std::size_t address_register_index(entry e) {
  const address_register* table = address_registers.data();
  const std::uint16_t offset = e.offset();
  std::size_t lo = 0, hi = address_registers.size();
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (table[mid].offset < offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < address_registers.size() && table[lo].offset == offset && table[lo].target == e.target()) return lo;
  return address_registers.size();
}
constexpr bool is_address_register(entry e) { return address_register_index(e) < address_registers.size(); }

// The address register an entry writes, or nullptr (for run-time callers).
inline const address_register* address_register_of(entry e) {
  const std::size_t i = address_register_index(e);
  return i < address_registers.size() ? &address_registers[i] : nullptr;
}

}  // namespace regcmd
