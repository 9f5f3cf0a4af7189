#pragma once
// The set of every declared register, as one Boost.Hana tuple of types, and the plain
// table derived from it that decoding and lookup by name use. The declaration rules that
// span registers (no two registers share a (block, offset) or a name) are defined here and
// asserted by the register map's test. (Each register checks its own fields where it is
// declared.)

#include <algorithm>
#include <array>
#include <boost/hana/for_each.hpp>
#include <boost/hana/size.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <cstddef>
#include <span>

#include <regcmd/core/layout.hpp>
#include <regcmd/registers/addresses.hpp>
#include <regcmd/registers/cna.hpp>
#include <regcmd/registers/core.hpp>
#include <regcmd/registers/dpu.hpp>
#include <regcmd/registers/dpu_rdma.hpp>
#include <regcmd/registers/global.hpp>
#include <regcmd/registers/pc.hpp>
#include <regcmd/registers/ppu.hpp>
#include <regcmd/registers/ppu_rdma.hpp>

namespace regcmd {

struct register_info {
  std::string_view name;
  block_id block;
  std::uint16_t offset;
  provenance origin;
  std::span<const field_info> fields;
  std::uint32_t defined_mask;                   // bits some field defines; the rest is reserved
  std::string_view declared_as;                 // the C++ type: `name`, or the register array it is an element of
  unsigned element = 0;                         // the element's number, in an array (CNA_CVT_CON1: 1)
  std::span<const field_info> declared_fields;  // the C++ type's fields (an element's are numbered)

  // fields.size() when absent (an index: see register_index in decode/lookup.hpp).
  constexpr std::size_t field_index(std::string_view field_name) const {
    std::size_t i = 0;
    while (i < fields.size() && fields[i].name != field_name) ++i;
    return i;
  }
  constexpr const field_info* field(std::string_view field_name) const {
    const std::size_t i = field_index(field_name);
    return i < fields.size() ? &fields[i] : nullptr;
  }
};

// The table rows of one declaration: a register, or every element of a register array.
template <class R>
constexpr std::size_t rows_of() {
  if constexpr (register_array<R>)
    return R::count;
  else
    return 1;
}
template <class R>
constexpr std::array<register_info, rows_of<R>()> infos_of() {
  if constexpr (register_array<R>) {
    std::array<register_info, R::count> out{};
    for (std::size_t i = 0; i < R::count; ++i) {
      const auto& element = array_elements<R>[i];
      out[i] = {element.name,   R::block,          element.offset, R::origin,
                element.fields, defined_mask<R>(), R::name,        static_cast<unsigned>(R::first_number + i),
                fields_of<R>};
    }
    return out;
  } else {
    return {register_info{R::name, R::block, R::offset, R::origin, fields_of<R>, defined_mask<R>(), R::name, 0,
                          fields_of<R>}};
  }
}

namespace detail {
template <class... R>
constexpr auto register_types(register_list<R...>) {
  return boost::hana::tuple_t<R...>;
}
}  // namespace detail

namespace reg {
// One Hana tuple of register types per block (a single 176-type tuple costs far more to
// compile than seven small ones).
inline constexpr auto register_blocks = boost::hana::make_tuple(
    ::regcmd::detail::register_types(pc_registers{}), ::regcmd::detail::register_types(cna_registers{}), ::regcmd::detail::register_types(core_registers{}),
    ::regcmd::detail::register_types(dpu_registers{}), ::regcmd::detail::register_types(dpu_rdma_registers{}), ::regcmd::detail::register_types(ppu_registers{}),
    ::regcmd::detail::register_types(ppu_rdma_registers{}));

// Calls f(boost::hana::type_c<R>) for every declaration (a register or a register array).
template <class F>
constexpr void for_each_register(F&& f) {
  boost::hana::for_each(register_blocks, [&](auto block) { boost::hana::for_each(block, f); });
}
}  // namespace reg

namespace detail {
template <class Block>
constexpr auto block_table(Block block) {
  return boost::hana::unpack(block, [](auto... r) {
    std::array<register_info, (rows_of<typename decltype(r)::type>() + ...)> out{};
    std::size_t next = 0;
    auto append = [&](const auto& rows) {
      for (const register_info& row : rows) out[next++] = row;
    };
    (append(infos_of<typename decltype(r)::type>()), ...);
    return out;
  });
}
}  // namespace detail

inline constexpr auto register_table = boost::hana::unpack(reg::register_blocks, [](auto... block) {
  constexpr std::size_t total = (decltype(detail::block_table(block))().size() + ...);
  std::array<register_info, total> all{};
  std::size_t next = 0;
  auto append = [&](const auto& part) {
    for (const register_info& r : part) all[next++] = r;
  };
  (append(detail::block_table(block)), ...);
  return all;
});

// The GLOBAL op-enable mask is not addressable by a regcmd target; decoding uses its
// layout for the value of the 0x0081 entry.
inline constexpr std::span<const field_info> op_enable_fields = fields_of<reg::GLOBAL_OPERATION_ENABLE>;

// The registers with an address field (registers/addresses.hpp lists them): exactly those
// of the table, and each field runs up to bit 31.
namespace detail {
constexpr bool address_registers_complete() {
  std::size_t n = 0;
  for (const register_info& r : register_table)
    for (const field_info& f : r.fields) {
      if (f.shape.kind != field_kind::address) continue;
      const std::size_t i = address_register_index(entry::make(r.block, 0, r.offset));
      if (f.shape.msb != 31 || i == address_registers.size() || address_registers[i].field != f.name ||
          address_registers[i].lsb != f.shape.lsb)
        return false;
      ++n;
    }
  return n == address_registers.size();
}
}  // namespace detail
static_assert(detail::address_registers_complete(),
              "registers/addresses.hpp must list every register with an address field, each ending at bit 31 "
              "(binding checks only 32 bits and alignment)");

namespace detail {
// Sorted copies make both checks n log n (constant evaluation counts each comparison). The
// register map's test asserts them (tests/registers/register_map_test.cpp): a declaration
// rule is checked once when the map changes, not in every translation unit that includes it.
constexpr bool registers_have_unique_addresses() {
  std::array<std::uint32_t, register_table.size()> keys{};
  for (std::size_t i = 0; i < keys.size(); ++i)
    keys[i] = std::uint32_t{static_cast<std::uint16_t>(register_table[i].block)} << 16 | register_table[i].offset;
  std::sort(keys.begin(), keys.end());
  return std::adjacent_find(keys.begin(), keys.end()) == keys.end();
}
constexpr bool registers_have_unique_names() {
  std::array<std::string_view, register_table.size()> names{};
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = register_table[i].name;
  std::sort(names.begin(), names.end());
  return std::adjacent_find(names.begin(), names.end()) == names.end();
}
}  // namespace detail


}  // namespace regcmd
