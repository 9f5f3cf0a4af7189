#pragma once
// Registers by address or by name, and writing a register from named field values at run
// time (a text assembler, a dump editor). The run-time writer applies the same checks the
// compiler applies to typed writes: unknown field, field of another register, a field given
// twice, and the field value check itself.

#include <cstdint>
#include <span>
#include <string_view>

#include <regcmd/core/entry.hpp>
#include <regcmd/core/error.hpp>
#include <regcmd/registers/all.hpp>

namespace regcmd {

namespace rules {
inline constexpr rule unknown_register{
    "unknown-register", "no register of the map has this name: use a rocket_registers.h name "
    "such as CNA_CBUF_CON0", "fact sheet §4"};
inline constexpr rule unknown_field{
    "unknown-field", "the register has no field of this name: see its declaration under "
    "registers/", "fact sheet §4"};
inline constexpr rule field_of_another_register{
    "field-of-another-register", "this field belongs to another register: write it there",
    "fact sheet §4"};
inline constexpr rule duplicate_field{
    "duplicate-field", "the field is given twice in one register write: give it once (an "
    "entry writes the whole register, values are never OR-ed)", "DESIGN: whole-register writes"};
}  // namespace rules

constexpr const register_info* find_register(block_id block, std::uint16_t offset) {
  for (const register_info& r : register_table)
    if (r.block == block && r.offset == offset) return &r;
  return nullptr;
}

constexpr const register_info* find_register(std::string_view name) {
  for (const register_info& r : register_table)
    if (r.name == name) return &r;
  return nullptr;
}

struct field_assignment {
  std::string_view field;
  std::uint64_t value;
};

constexpr result<entry> encode_by_name(std::string_view register_name,
                                       std::span<const field_assignment> values) {
  const register_info* reg = find_register(register_name);
  if (reg == nullptr) return make_error(rules::unknown_register, register_name);
  std::uint32_t bits = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const field_assignment& a = values[i];
    const field_info* f = reg->field(a.field);
    if (f == nullptr) {
      for (const register_info& other : register_table)
        if (other.field(a.field) != nullptr)
          return make_error(rules::field_of_another_register, reg->name, a.field);
      return make_error(rules::unknown_field, reg->name, a.field);
    }
    for (std::size_t j = 0; j < i; ++j)
      if (values[j].field == a.field) return make_error(rules::duplicate_field, reg->name, a.field);
    if (const rule* violated = check_field(f->shape, a.value))
      return make_error(*violated, reg->name, a.field, a.value);
    bits |= f->shape.place(a.value);
  }
  return entry::make(reg->block, bits, reg->offset);
}

}  // namespace regcmd
