#pragma once
// Registers as types. A register is declared once:
//
//   REGCMD_REGISTER(cna, CNA_CBUF_CON0, 0x1040,
//                   (DATA_BANK, uint_field<3, 0>),
//                   (WEIGHT_BANK, uint_field<7, 4>), ...)
//
// which makes an aggregate `CNA_CBUF_CON0` with one member per field (lowest bit first),
// its block, offset and mainline name, and a Boost.Hana tuple of its fields that drives
// encoding, decoding and printing. A value is written with designated initializers:
//
//   encode(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11})   // 0x0201'0000'00b1'1040
//
// Every entry writes the whole register: a field not named is written as 0, reserved bits
// are always 0. A field of another register is not a member (does not compile), a field
// named twice is rejected by the compiler (clang's initializer-overrides is made an error
// below), and a value that does not fit is rejected by the field's own check.

#include <array>
#include <boost/hana/tuple.hpp>
#include <cstdint>
#include <span>
#include <string_view>

#include <regcmd/core/entry.hpp>
#include <regcmd/core/error.hpp>
#include <regcmd/core/field.hpp>
#include <regcmd/core/preprocessor.hpp>

#if defined(__clang__)
// A register write naming a field twice must not compile; clang only warns by default.
#pragma clang diagnostic error "-Winitializer-overrides"
#endif

namespace regcmd {

// Where a register's declaration comes from: the mainline map, or a finding of the
// reference / the recipes where mainline is silent (each such declaration cites it).
enum class provenance : std::uint8_t { mainline, reference };

// One field of a register type R, by member pointer; `name` is the mainline field name
// (a plain pointer: measuring it costs constant-evaluation steps, and only errors need it).
template <auto Member>
struct field_ref;

template <class R, class F, F R::*Member>
struct field_ref<Member> {
  using register_type = R;
  using field_type = F;
  static constexpr auto member = Member;
  const char* name;
};

namespace detail {
struct list_start {};
// The field list of a layout; the declaration macro emits ", ref" per field after a start.
template <class... Refs>
constexpr auto field_list(list_start, Refs... refs) {
  return boost::hana::make_tuple(refs...);
}
}  // namespace detail

// Only REGCMD_LAYOUT_BODY defines the tag, and it defines fields() with it. The concept
// does not name fields(): deducing its return type would build the Hana field list of
// every register a table mentions, which doubled the cost of including the map.
template <class L>
concept register_layout = requires {
  typename L::regcmd_layout_tag;
  { L::name } -> std::convertible_to<std::string_view>;
  L::field_table;
};

template <class R>
concept register_type = register_layout<R> && requires {
  { R::block } -> std::convertible_to<block_id>;
  { R::offset } -> std::convertible_to<std::uint16_t>;
};

// A register array: `count` registers of one layout, 4 bytes apart from `first_offset`,
// named by number (REGCMD_REGISTER_ARRAY below).
template <class A>
concept register_array = register_layout<A> && requires {
  { A::block } -> std::convertible_to<block_id>;
  { A::first_offset } -> std::convertible_to<std::uint16_t>;
  { A::count } -> std::convertible_to<unsigned>;
  { A::first_number } -> std::convertible_to<unsigned>;
};

// The registers a block header declares, as a plain type list: naming it instantiates
// nothing (registers/all.hpp turns the lists into the map's Hana tuples, for the TUs that
// decode).
template <class... Registers>
struct register_list {};

// The fields of a layout as plain data, for decoding and lookup by name.
template <register_layout L>
inline constexpr std::span<const field_info> fields_of{L::field_table};

// Bits of the register value that some field defines; the rest is reserved.
constexpr std::uint32_t defined_mask(std::span<const field_info> fields) {
  std::uint32_t m = 0;
  for (const field_info& f : fields) m |= f.shape.mask();
  return m;
}
template <register_layout L>
constexpr std::uint32_t defined_mask() {
  return defined_mask(fields_of<L>);
}

// Check every field and pack them into the 32-bit register value. A plain loop over the
// field table and the values the layout lists in the same order: encoding a register
// instantiates nothing per field, which keeps a 104-register program cheap to compile.
template <register_layout L>
constexpr result<std::uint32_t> pack(const L& value) {
  const auto raw = value.raw_values();
  std::uint32_t bits = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const field_info& f = L::field_table[i];
    if (const rule* violated = check_field(f.shape, raw[i]); *violated != no_violation)
      return make_error(*violated, L::name, f.name, raw[i]);
    bits |= f.shape.place(raw[i]);
  }
  return bits;
}

template <register_type R>
constexpr result<entry> encode(const R& value) {
  result<std::uint32_t> bits = pack(value);
  if (!bits) return bits.err();
  return entry::make(R::block, bits.value(), R::offset);
}

namespace detail {
constexpr std::size_t decimal_size(unsigned v) {
  std::size_t n = 1;
  for (; v >= 10; v /= 10) ++n;
  return n;
}
constexpr void put_decimal(char*& out, unsigned v) {
  const std::size_t n = decimal_size(v);
  for (std::size_t i = n; i-- > 0; v /= 10) out[i] = static_cast<char>('0' + v % 10);
  out += n;
}
constexpr void put_text(char*& out, std::string_view text) {
  for (char c : text) *out++ = c;
}

// The names of a register array's elements: register NAME<separator><number> with fields
// FIELD<separator><number - first_number>, as mainline spells them (CNA_CVT_CON1 holds
// CVT_OFFSET0 and CVT_SCALE0). All the characters, element after element.
template <register_array A>
constexpr std::size_t array_name_size() {
  std::size_t n = 0;
  for (unsigned i = 0; i < A::count; ++i) {
    n += A::name.size() + A::separator.size() + decimal_size(A::first_number + i);
    for (const field_info& f : A::field_table) n += f.name.size() + A::separator.size() + decimal_size(i);
  }
  return n;
}
template <register_array A>
inline constexpr auto array_name_chars = [] {
  std::array<char, array_name_size<A>()> chars{};
  char* out = chars.data();
  for (unsigned i = 0; i < A::count; ++i) {
    put_text(out, A::name);
    put_text(out, A::separator);
    put_decimal(out, A::first_number + i);
    for (const field_info& f : A::field_table) {
      put_text(out, f.name);
      put_text(out, A::separator);
      put_decimal(out, i);
    }
  }
  return chars;
}();
}  // namespace detail

// One element of a register array, as decoding and lookup by name see it.
template <std::size_t Fields>
struct array_element_info {
  std::string_view name;
  std::uint16_t offset = 0;
  std::array<field_info, Fields> fields{};
};

template <register_array A>
inline constexpr auto array_elements = [] {
  std::array<array_element_info<std::size(A::field_table)>, A::count> out{};
  const char* at = detail::array_name_chars<A>.data();
  auto take = [&](std::size_t n) {
    const std::string_view text{at, n};
    at += n;
    return text;
  };
  for (unsigned i = 0; i < A::count; ++i) {
    out[i].name = take(A::name.size() + A::separator.size() + detail::decimal_size(A::first_number + i));
    out[i].offset = static_cast<std::uint16_t>(A::first_offset + 4 * i);
    for (std::size_t f = 0; f < out[i].fields.size(); ++f)
      out[i].fields[f] = {take(A::field_table[f].name.size() + A::separator.size() + detail::decimal_size(i)),
                          A::field_table[f].shape};
  }
  return out;
}();

// Element `number` of a register array (CNA_CVT_CON, 3: CNA_CVT_CON3): errors name the
// element's register and field.
template <register_array A>
constexpr result<entry> encode(const A& value, unsigned number) {
  if (number < A::first_number || number - A::first_number >= A::count)
    return make_error(rules::array_element, A::name, {}, number);
  const auto& element = array_elements<A>[number - A::first_number];
  const auto raw = value.raw_values();
  std::uint32_t bits = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const field_info& f = element.fields[i];
    if (const rule* violated = check_field(f.shape, raw[i]); *violated != no_violation)
      return make_error(*violated, element.name, f.name, raw[i]);
    bits |= f.shape.place(raw[i]);
  }
  return entry::make(A::block, bits, element.offset);
}

// Read every field of a register value back into its type (reserved bits are dropped).
template <register_layout L>
constexpr L unpack(std::uint32_t bits) {
  return L::from_bits(bits);
}

}  // namespace regcmd

#define REGCMD_DETAIL_MEMBER(data, field) REGCMD_PP_TAIL(field) REGCMD_PP_HEAD(field){};
#define REGCMD_DETAIL_FIELD_MASK(data, field) REGCMD_PP_TAIL(field)::shape.mask(),
#define REGCMD_DETAIL_FIELD_INFO(data, field) \
  ::regcmd::field_info{REGCMD_PP_VIEW(REGCMD_PP_STRINGIZE(REGCMD_PP_HEAD(field))), REGCMD_PP_TAIL(field)::shape},
#define REGCMD_DETAIL_RAW_VALUE(data, field) REGCMD_PP_HEAD(field).raw_value(),
#define REGCMD_DETAIL_FROM_BITS(data, field) REGCMD_PP_TAIL(field)::from_register(bits),
#define REGCMD_DETAIL_FIELD_REF(type, field) \
  , ::regcmd::field_ref<&type::REGCMD_PP_HEAD(field)>{REGCMD_PP_STRINGIZE(REGCMD_PP_HEAD(field))}

// A register value layout without a block of its own (e.g. the GLOBAL op-enable mask that
// travels as the value of the 0x0081 entry).
// fields() is a template so that only the registers a translation unit uses pay for
// their Hana tuple; field_table is the same list as plain data, for decoding, and
// raw_values() / from_bits() the members in that order, for encoding and decoding.
// zeroed() is the all-zero value, for the writes that mean it (a field whose zero is a
// value must otherwise be named: core/field.hpp).
#define REGCMD_LAYOUT_BODY(NAME, ...)                                                      \
  using regcmd_layout_tag = void;                                                          \
  static constexpr std::string_view name = REGCMD_PP_VIEW(#NAME);                          \
  REGCMD_PP_FOR_EACH(REGCMD_DETAIL_MEMBER, ~, __VA_ARGS__)                                  \
  template <class Self = NAME>                                                             \
  static constexpr auto fields() {                                                         \
    return ::regcmd::detail::field_list(                                                   \
        ::regcmd::detail::list_start{} REGCMD_PP_FOR_EACH(REGCMD_DETAIL_FIELD_REF, Self, __VA_ARGS__)); \
  }                                                                                        \
  static constexpr ::regcmd::field_info field_table[] = {                                  \
      REGCMD_PP_FOR_EACH(REGCMD_DETAIL_FIELD_INFO, ~, __VA_ARGS__)};                         \
  constexpr std::array<std::uint64_t, std::size(field_table)> raw_values() const {         \
    return {REGCMD_PP_FOR_EACH(REGCMD_DETAIL_RAW_VALUE, ~, __VA_ARGS__)};                    \
  }                                                                                        \
  static constexpr NAME from_bits(std::uint32_t bits) {                                    \
    return NAME{REGCMD_PP_FOR_EACH(REGCMD_DETAIL_FROM_BITS, ~, __VA_ARGS__)};                \
  }                                                                                        \
  static constexpr NAME zeroed() { return from_bits(0); }                                  \
  friend constexpr bool operator==(const NAME&, const NAME&) = default;                     \
  static_assert(::regcmd::detail::disjoint({REGCMD_PP_FOR_EACH(REGCMD_DETAIL_FIELD_MASK, ~, __VA_ARGS__)}), \
                "two fields of this register overlap: check the msb:lsb of its declaration");

#define REGCMD_LAYOUT(NAME, ...)            \
  struct NAME {                             \
    REGCMD_LAYOUT_BODY(NAME, __VA_ARGS__)   \
  }

#define REGCMD_REGISTER_FROM(ORIGIN, BLOCK, NAME, OFFSET, ...)                                  \
  struct NAME {                                                                                 \
    static constexpr ::regcmd::block_id block = ::regcmd::block_id::BLOCK;                      \
    static constexpr std::uint16_t offset = OFFSET;                                             \
    static constexpr ::regcmd::provenance origin = ::regcmd::provenance::ORIGIN;                \
    REGCMD_LAYOUT_BODY(NAME, __VA_ARGS__)                                                       \
  };                                                                                            \
  static_assert(NAME::offset % 4 == 0, "a register offset must be 4-byte aligned");             \
  static_assert(::regcmd::offset_in_window(NAME::block, NAME::offset),                          \
                "a register offset must lie in its block's 4 KiB window")

// A register of the mainline map (rocket_registers.h).
#define REGCMD_REGISTER(BLOCK, NAME, OFFSET, ...) \
  REGCMD_REGISTER_FROM(mainline, BLOCK, NAME, OFFSET, __VA_ARGS__)

// A register array of the mainline map: COUNT registers of these fields at OFFSET,
// OFFSET + 4, ..., named NAME<SEPARATOR><FIRST_NUMBER + i> with fields <field><SEPARATOR><i>
// (mainline's CNA_DCOMP_AMOUNT0..15, CNA_CVT_CON1..4, DPU_EW_OP_VALUE_0..7). The members
// are the field names without the number.
#define REGCMD_REGISTER_ARRAY(BLOCK, NAME, OFFSET, COUNT, FIRST_NUMBER, SEPARATOR, ...)        \
  struct NAME {                                                                                 \
    static constexpr ::regcmd::block_id block = ::regcmd::block_id::BLOCK;                      \
    static constexpr std::uint16_t first_offset = OFFSET;                                       \
    static constexpr unsigned count = COUNT;                                                    \
    static constexpr unsigned first_number = FIRST_NUMBER;                                      \
    static constexpr std::string_view separator = SEPARATOR;                                    \
    static constexpr ::regcmd::provenance origin = ::regcmd::provenance::mainline;              \
    REGCMD_LAYOUT_BODY(NAME, __VA_ARGS__)                                                       \
  };                                                                                            \
  static_assert(NAME::first_offset % 4 == 0, "a register offset must be 4-byte aligned");       \
  static_assert(::regcmd::offset_in_window(NAME::block, NAME::first_offset) &&                  \
                    ::regcmd::offset_in_window(NAME::block, NAME::first_offset + 4 * (COUNT - 1)), \
                "a register array must lie in its block's 4 KiB window")

// A register mainline does not declare, known from the reference or the recipes.
#define REGCMD_REGISTER_BEYOND_MAINLINE(BLOCK, NAME, OFFSET, ...) \
  REGCMD_REGISTER_FROM(reference, BLOCK, NAME, OFFSET, __VA_ARGS__)
