#pragma once
// Typed register fields: where a field sits (msb:lsb) and what its value means.
//
//   uint_field<M, L>      an unsigned number, stored as value << L
//   bool_field<B>         one bit, 0 or 1
//   enum_field<E, M, L>   a REGCMD_ENUM value; only declared enumerators encode
//   address_field<M, L>   a byte address (IOVA) occupying bits M:L unshifted, so its low L
//                         bits must be zero; registers holding one are the program's slots
//
// A field holds the value exactly as given. Whether it fits is decided by one constexpr
// check (`check_field`): in a constant expression a value that does not fit stops
// compilation right where it is written; at run time encoding returns the error.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include <regcmd/core/enumeration.hpp>
#include <regcmd/core/error.hpp>

namespace regcmd {

enum class field_kind : std::uint8_t { uint, boolean, enumeration, address };

// The field-value rules, as an X-list so rules/catalog.hpp can report them by message.
#define REGCMD_FIELD_RULES(X)                                                                      \
  X(field_range, "field-range",                                                                   \
    "the value does not fit the field's bit range: give a value below 2^width (it is never "     \
    "truncated)",                                                                                 \
    "fact sheet §4, register map")                                                                \
  X(enum_value, "enum-value",                                                                     \
    "the value is not a declared enumerator of the field's enum: use one of its named values",   \
    "fact sheet §4.1; regcmd-isa-reference \"The precision enum\"")                               \
  X(address_alignment, "address-alignment",                                                       \
    "the address has bits set below the field's lowest bit: align it (e.g. 16 bytes for a 31:4 " \
    "address field)",                                                                             \
    "fact sheet §4 (fields starting at bit 4)")                                                   \
  X(field_unnamed, "field-unnamed",                                                               \
    "a field whose 0 is a value (a precision: 0 is int8) was left out of a register write: name "  \
    "it, or write R::zeroed() for a register that is all zero on purpose",                        \
    "DESIGN: whole-register writes")                                                              \
  X(array_element, "array-element",                                                               \
    "the register array has no element of this number: CNA_DCOMP_AMOUNT0..15, CNA_CVT_CON1..4, " \
    "DPU_EW_OP_VALUE_0..7",                                                                       \
    "fact sheet §4")

namespace rules {
REGCMD_FIELD_RULES(REGCMD_DEFINE_RULE)
}  // namespace rules

// Where a field sits and what kind of value it holds; names are added by the register.
struct field_shape {
  std::uint8_t msb;
  std::uint8_t lsb;
  field_kind kind;
  const enum_info* enumeration = nullptr;

  constexpr unsigned width() const { return msb - lsb + 1u; }
  constexpr std::uint32_t mask() const {
    return static_cast<std::uint32_t>(((std::uint64_t{1} << width()) - 1) << lsb);
  }
  // Largest value the field accepts as given (addresses are given unshifted).
  constexpr std::uint64_t max_value() const {
    return kind == field_kind::address ? mask() : (std::uint64_t{1} << width()) - 1;
  }
  // The field's value as read back from a register value.
  constexpr std::uint64_t extract(std::uint32_t reg) const {
    return kind == field_kind::address ? (reg & mask()) : (reg & mask()) >> lsb;
  }
  // The register bits for an already-checked value.
  constexpr std::uint32_t place(std::uint64_t value) const {
    return kind == field_kind::address ? static_cast<std::uint32_t>(value)
                                       : static_cast<std::uint32_t>(value << lsb);
  }
};

// The raw value of a field whose 0 is a value, left out of a write (enum_field below).
inline constexpr std::uint64_t unnamed_field_value = ~std::uint64_t{1};

// The one check every field value passes, typed or by name: &no_violation when it fits.
constexpr const rule* check_field(const field_shape& s, std::uint64_t value) {
  if (value == unnamed_field_value) return &rules::field_unnamed;
  if (value > s.max_value()) return &rules::field_range;
  if (s.kind == field_kind::address && (value & ((std::uint64_t{1} << s.lsb) - 1)) != 0)
    return &rules::address_alignment;
  if (s.kind == field_kind::enumeration && !s.enumeration->contains(static_cast<std::uint32_t>(value)))
    return &rules::enum_value;
  return &no_violation;
}

struct field_info {
  std::string_view name;
  field_shape shape;
};

namespace detail {
// Deliberately not constexpr: reaching one in a constant expression is the compile error,
// and its name is the message. The compiler's note points at the offending field value.
inline void regcmd_field_value_does_not_fit_its_bit_range() {}
inline void regcmd_field_value_is_not_a_declared_enumerator() {}
inline void regcmd_field_address_is_not_aligned_to_its_lowest_bit() {}
inline void regcmd_field_whose_zero_is_a_value_was_left_out_name_it() {}

constexpr void reject_at_compile_time(const rule* violated) {
  if (!std::is_constant_evaluated() || *violated == no_violation) return;
  if (*violated == rules::field_range) regcmd_field_value_does_not_fit_its_bit_range();
  if (*violated == rules::enum_value) regcmd_field_value_is_not_a_declared_enumerator();
  if (*violated == rules::address_alignment) regcmd_field_address_is_not_aligned_to_its_lowest_bit();
}

template <std::integral T>
constexpr std::uint64_t as_u64(T v) {
  if constexpr (std::is_signed_v<T>) {
    if (v < 0) return std::numeric_limits<std::uint64_t>::max();  // never fits
  }
  return static_cast<std::uint64_t>(v);
}

// True when no two of the masks share a bit: the fields of one register must not overlap.
template <std::size_t N>
constexpr bool disjoint(const std::uint32_t (&masks)[N]) {
  std::uint32_t seen = 0;
  for (std::uint32_t m : masks) {
    if (seen & m) return false;
    seen |= m;
  }
  return true;
}
}  // namespace detail

// Common part of the number-valued fields (uint, bool, address).
template <unsigned Msb, unsigned Lsb, field_kind Kind>
struct number_field {
  static_assert(Lsb <= Msb, "a field's lsb must not exceed its msb");
  static_assert(Msb < 32, "a field must lie inside the 32-bit register value");
  static constexpr field_shape shape{Msb, Lsb, Kind};

  constexpr number_field() = default;
  template <std::integral T>
  constexpr number_field(T v) : raw{detail::as_u64(v)} {
    detail::reject_at_compile_time(check_field(shape, raw));
  }

  static constexpr number_field from_register(std::uint32_t reg) {
    number_field f;
    f.raw = shape.extract(reg);
    return f;
  }

  constexpr std::uint64_t value() const { return raw; }
  constexpr std::uint64_t raw_value() const { return raw; }
  friend constexpr bool operator==(const number_field&, const number_field&) = default;

  std::uint64_t raw = 0;
};

template <unsigned Msb, unsigned Lsb>
using uint_field = number_field<Msb, Lsb, field_kind::uint>;

template <unsigned Bit>
using bool_field = number_field<Bit, Bit, field_kind::boolean>;

template <unsigned Msb, unsigned Lsb>
using address_field = number_field<Msb, Lsb, field_kind::address>;

template <declared_enum E, unsigned Msb, unsigned Lsb>
struct enum_field {
  static_assert(Lsb <= Msb, "a field's lsb must not exceed its msb");
  static_assert(Msb < 32, "a field must lie inside the 32-bit register value");
  static_assert(info_of<E>().max_value() <= (std::uint64_t{1} << (Msb - Lsb + 1)) - 1,
                "an enumerator of this enum does not fit the field it is declared for");
  static_assert(info_of<E>().contains(0),
                "an enum field's type must declare the value 0, which an unset field encodes");
  static constexpr field_shape shape{Msb, Lsb, field_kind::enumeration, &info_of<E>()};
  using enum_type = E;

  constexpr enum_field() requires(!zero_must_be_named<E>) = default;
  // A field whose 0 is a value (precision: 0 is int8) has no default: left out of a
  // designated initializer it does not compile in a constant expression, and at run time
  // encoding it is the error field-unnamed. R::zeroed() writes an all-zero register.
  constexpr enum_field() requires(zero_must_be_named<E>) : named_{false} {
    if (std::is_constant_evaluated()) detail::regcmd_field_whose_zero_is_a_value_was_left_out_name_it();
  }
  constexpr enum_field(E e) : value_{e} { detail::reject_at_compile_time(check_field(shape, raw_value())); }

  static constexpr enum_field from_register(std::uint32_t reg) {
    return enum_field{from_bits{}, static_cast<E>(shape.extract(reg))};
  }

  constexpr E value() const { return value_; }
  constexpr std::uint64_t raw_value() const { return named_ ? static_cast<std::uint64_t>(value_) : unnamed_field_value; }
  friend constexpr bool operator==(const enum_field&, const enum_field&) = default;

 private:
  struct from_bits {};
  constexpr enum_field(from_bits, E e) : value_{e} {}
  E value_{};
  bool named_ = true;
};

}  // namespace regcmd
