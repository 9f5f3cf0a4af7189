#pragma once
// Entry -> register name, field names and values, enum names; from the same declarations
// that encode. Decoding never fails: an unknown target or offset decodes as raw.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <regcmd/core/entry.hpp>
#include <regcmd/decode/lookup.hpp>
#include <regcmd/registers/all.hpp>

namespace regcmd {

inline constexpr std::size_t max_fields_per_register = [] {
  std::size_t n = op_enable_fields.size();
  for (const register_info& r : register_table) n = std::max(n, r.fields.size());
  return n;
}();

struct decoded_field {
  const field_info* info = nullptr;
  std::uint64_t value = 0;
  std::string_view enum_name;  // empty unless an enum field holding a declared value
};

struct decoded_entry {
  entry raw{};
  entry_kind kind = entry_kind::unknown_target;
  const register_info* reg = nullptr;  // set for a register of the map
  std::string_view name;               // register name or special-entry name; empty if unknown
  std::array<decoded_field, max_fields_per_register> field_storage{};
  std::size_t field_count = 0;
  std::uint32_t reserved_bits = 0;  // value bits that no field defines

  constexpr std::span<const decoded_field> fields() const { return {field_storage.data(), field_count}; }
  constexpr const decoded_field* field(std::string_view field_name) const {
    for (const decoded_field& f : fields())
      if (f.info->name == field_name) return &f;
    return nullptr;
  }
  constexpr bool known() const { return !name.empty(); }
};

// Short label of an entry's target: the block name, or the target id in hex.
struct target_label {
  std::array<char, 8> text{};
  std::size_t size = 0;
  constexpr std::string_view view() const { return {text.data(), size}; }
};

constexpr target_label label_of_target(std::uint16_t target) {
  target_label out;
  if (auto b = block_from_target(target)) {
    std::string_view n = block_name(*b);
    for (char c : n) out.text[out.size++] = c;
    return out;
  }
  constexpr char digits[] = "0123456789abcdef";
  out.text = {'0', 'x', digits[target >> 12], digits[(target >> 8) & 15], digits[(target >> 4) & 15],
              digits[target & 15]};
  out.size = 6;
  return out;
}

namespace detail {
constexpr void decode_fields(decoded_entry& d, std::span<const field_info> fields, std::uint32_t value) {
  std::uint32_t defined = 0;
  for (const field_info& f : fields) {
    decoded_field& out = d.field_storage[d.field_count++];
    out.info = &f;
    out.value = f.shape.extract(value);
    if (f.shape.kind == field_kind::enumeration)
      out.enum_name = f.shape.enumeration->name_of(static_cast<std::uint32_t>(out.value));
    defined |= f.shape.mask();
  }
  d.reserved_bits = value & ~defined;
}
}  // namespace detail

constexpr decoded_entry decode(entry e) {
  decoded_entry d;
  d.raw = e;
  d.kind = kind_of(e);
  switch (d.kind) {
    case entry_kind::zero: d.name = "ZERO"; break;
    case entry_kind::op_enable_preamble: d.name = "OP_EN_PREAMBLE"; break;
    case entry_kind::op_enable:
      d.name = "OP_ENABLE";
      detail::decode_fields(d, op_enable_fields, e.value());
      break;
    case entry_kind::register_write:
      if (const std::size_t i = register_index(*block_from_target(e.target()), e.offset()); i < register_table.size()) {
        d.reg = &register_table[i];
        d.name = d.reg->name;
        detail::decode_fields(d, d.reg->fields, e.value());
      }
      break;
    case entry_kind::unknown_target: break;
  }
  return d;
}

}  // namespace regcmd
