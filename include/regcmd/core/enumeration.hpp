#pragma once
// Enumerations carried by register fields, declared once with their names.
//
//   REGCMD_ENUM(alu_algo, (MAX, 0), (MIN, 1), (SUM, 2))
//
// declares `enum class alu_algo : std::uint32_t` and its name table, found by ADL through
// `regcmd_enum_info(alu_algo{})`. Encoding checks a value against the table, decoding
// prints its name; an undeclared value decodes as a plain number.

#include <concepts>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include <regcmd/core/preprocessor.hpp>

namespace regcmd {

struct enumerator_info {
  std::string_view name;
  std::uint32_t value;
};

struct enum_info {
  std::string_view name;
  std::span<const enumerator_info> values;

  // By name, for parsers (nullptr when absent).
  constexpr const enumerator_info* find(std::string_view name_) const {
    for (const auto& v : values)
      if (v.name == name_) return &v;
    return nullptr;
  }
  // By value, without pointers: GCC cannot compare a pointer into a table with nullptr in
  // a constant expression under -fsanitize=undefined, and programs must build with it.
  constexpr bool contains(std::uint32_t value) const {
    for (const auto& v : values)
      if (v.value == value) return true;
    return false;
  }
  // The enumerator's name, empty when the value is not declared.
  constexpr std::string_view name_of(std::uint32_t value) const {
    for (const auto& v : values)
      if (v.value == value) return v.name;
    return {};
  }
  constexpr std::uint32_t max_value() const {
    std::uint32_t m = 0;
    for (const auto& v : values) m = v.value > m ? v.value : m;
    return m;
  }
};

template <class E>
concept declared_enum = std::is_enum_v<E> && requires(E e) {
  { regcmd_enum_info(e) } -> std::same_as<const enum_info&>;
};

// An enum whose 0 is a value someone chooses (precision: 0 is int8), not "nothing set": a
// field of it must be named in every register write (core/field.hpp). Declared with
// REGCMD_ENUM_ZERO_IS_A_VALUE(E) next to the enum.
template <class E>
concept zero_must_be_named = declared_enum<E> && requires(E e) {
  { regcmd_enum_zero_is_a_value(e) };
};

template <declared_enum E>
constexpr const enum_info& info_of() {
  return regcmd_enum_info(E{});
}

template <declared_enum E>
constexpr bool is_declared(E e) {
  return info_of<E>().contains(static_cast<std::uint32_t>(e));
}

template <declared_enum E>
constexpr std::string_view name_of(E e) {
  return info_of<E>().name_of(static_cast<std::uint32_t>(e));
}

}  // namespace regcmd

#define REGCMD_DETAIL_ENUMERATOR(data, e) REGCMD_PP_HEAD(e) = REGCMD_PP_TAIL(e),
#define REGCMD_DETAIL_ENUMERATOR_INFO(data, e) \
  ::regcmd::enumerator_info{REGCMD_PP_VIEW(REGCMD_PP_STRINGIZE(REGCMD_PP_HEAD(e))), REGCMD_PP_TAIL(e)},

#define REGCMD_ENUM(NAME, ...)                                                                 \
  enum class NAME : std::uint32_t { REGCMD_PP_FOR_EACH(REGCMD_DETAIL_ENUMERATOR, ~, __VA_ARGS__) }; \
  inline constexpr ::regcmd::enumerator_info regcmd_enumerators_##NAME[] = {                   \
      REGCMD_PP_FOR_EACH(REGCMD_DETAIL_ENUMERATOR_INFO, ~, __VA_ARGS__)};                      \
  inline constexpr ::regcmd::enum_info regcmd_enum_table_##NAME{REGCMD_PP_VIEW(#NAME), regcmd_enumerators_##NAME}; \
  constexpr const ::regcmd::enum_info& regcmd_enum_info(NAME) { return regcmd_enum_table_##NAME; }

#define REGCMD_ENUM_ZERO_IS_A_VALUE(NAME) \
  constexpr bool regcmd_enum_zero_is_a_value(NAME) { return true; }
