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
#include <regcmd/rules/catalog.hpp>

namespace regcmd {


// Lookups by index (register_table.size() when absent) for constant evaluation, where GCC
// cannot compare a pointer into a table with nullptr under -fsanitize=undefined; and by
// pointer (nullptr when absent) for everyone else.
constexpr std::size_t register_index(block_id block, std::uint16_t offset) {
  std::size_t i = 0;
  while (i < register_table.size() && !(register_table[i].block == block && register_table[i].offset == offset)) ++i;
  return i;
}
constexpr std::size_t register_index(std::string_view name) {
  std::size_t i = 0;
  while (i < register_table.size() && register_table[i].name != name) ++i;
  return i;
}

constexpr const register_info* find_register(block_id block, std::uint16_t offset) {
  const std::size_t i = register_index(block, offset);
  return i < register_table.size() ? &register_table[i] : nullptr;
}
constexpr const register_info* find_register(std::string_view name) {
  const std::size_t i = register_index(name);
  return i < register_table.size() ? &register_table[i] : nullptr;
}

struct field_assignment {
  std::string_view field;
  std::uint64_t value;
};

constexpr result<entry> encode_by_name(std::string_view register_name,
                                       std::span<const field_assignment> values) {
  const std::size_t index = register_index(register_name);
  if (index == register_table.size()) return make_error(rules::unknown_register, register_name);
  const register_info* reg = &register_table[index];
  std::uint32_t bits = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const field_assignment& a = values[i];
    const std::size_t field = reg->field_index(a.field);
    if (field == reg->fields.size()) {
      for (const register_info& other : register_table)
        if (other.field_index(a.field) < other.fields.size())
          return make_error(rules::field_of_another_register, reg->name, a.field);
      return make_error(rules::unknown_field, reg->name, a.field);
    }
    const field_info* f = &reg->fields[field];
    for (std::size_t j = 0; j < i; ++j)
      if (values[j].field == a.field) return make_error(rules::duplicate_field, reg->name, a.field);
    if (const rule* violated = check_field(f->shape, a.value); *violated != no_violation)
      return make_error(*violated, reg->name, a.field, a.value);
    bits |= f->shape.place(a.value);
  }
  return entry::make(reg->block, bits, reg->offset);
}

}  // namespace regcmd
