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
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <boost/preprocessor/punctuation/comma_if.hpp>
#include <boost/preprocessor/seq/for_each.hpp>
#include <boost/preprocessor/seq/for_each_i.hpp>
#include <boost/preprocessor/stringize.hpp>
#include <boost/preprocessor/tuple/elem.hpp>
#include <boost/preprocessor/tuple/enum.hpp>
#include <boost/preprocessor/tuple/pop_front.hpp>
#include <boost/preprocessor/variadic/to_seq.hpp>
#include <cstdint>
#include <span>
#include <string_view>

#include <regcmd/core/entry.hpp>
#include <regcmd/core/error.hpp>
#include <regcmd/core/field.hpp>

#if defined(__clang__)
// A register write naming a field twice must not compile; clang only warns by default.
#pragma clang diagnostic error "-Winitializer-overrides"
#endif

namespace regcmd {

// Where a register's declaration comes from: the mainline map, or a finding of the
// reference / the recipes where mainline is silent (each such declaration cites it).
enum class provenance : std::uint8_t { mainline, reference };

// One field of a register type R, by member pointer; `name` is the mainline field name.
template <auto Member>
struct field_ref;

template <class R, class F, F R::*Member>
struct field_ref<Member> {
  using register_type = R;
  using field_type = F;
  static constexpr auto member = Member;
  std::string_view name;
};

template <class L>
concept register_layout = requires {
  typename L::regcmd_layout_tag;
  { L::name } -> std::convertible_to<std::string_view>;
  L::fields();
};

template <class R>
concept register_type = register_layout<R> && requires {
  { R::block } -> std::convertible_to<block_id>;
  { R::offset } -> std::convertible_to<std::uint16_t>;
};

// The fields of a layout as plain data, for decoding and lookup by name.
template <register_layout L>
inline constexpr auto fields_of = boost::hana::unpack(L::fields(), [](auto... f) {
  return std::array<field_info, sizeof...(f)>{
      field_info{f.name, decltype(f)::field_type::shape}...};
});

// Bits of the register value that some field defines; the rest is reserved.
template <register_layout L>
constexpr std::uint32_t defined_mask() {
  std::uint32_t m = 0;
  for (const field_info& f : fields_of<L>) m |= f.shape.mask();
  return m;
}

// Check every field and pack them into the 32-bit register value.
template <register_layout L>
constexpr result<std::uint32_t> pack(const L& value) {
  std::uint32_t bits = 0;
  const rule* violated = nullptr;
  error failure{};
  boost::hana::for_each(L::fields(), [&](auto f) {
    using F = typename decltype(f)::field_type;
    if (violated) return;
    const std::uint64_t raw = (value.*decltype(f)::member).raw_value();
    violated = check_field(F::shape, raw);
    if (violated)
      failure = make_error(*violated, L::name, f.name, raw);
    else
      bits |= F::shape.place(raw);
  });
  if (violated) return failure;
  return bits;
}

template <register_type R>
constexpr result<entry> encode(const R& value) {
  result<std::uint32_t> bits = pack(value);
  if (!bits) return bits.err();
  return entry::make(R::block, bits.value(), R::offset);
}

// Read every field of a register value back into its type (reserved bits are dropped).
template <register_layout L>
constexpr L unpack(std::uint32_t bits) {
  L out{};
  boost::hana::for_each(L::fields(), [&](auto f) {
    using F = typename decltype(f)::field_type;
    out.*decltype(f)::member = F::from_register(bits);
  });
  return out;
}

}  // namespace regcmd

#define REGCMD_DETAIL_FIELD_NAME(field) BOOST_PP_TUPLE_ELEM(0, field)
#define REGCMD_DETAIL_FIELD_TYPE(field) BOOST_PP_TUPLE_ENUM(BOOST_PP_TUPLE_POP_FRONT(field))
#define REGCMD_DETAIL_MEMBER(r, data, field) \
  REGCMD_DETAIL_FIELD_TYPE(field) REGCMD_DETAIL_FIELD_NAME(field){};
#define REGCMD_DETAIL_FIELD_MASK(r, data, field) REGCMD_DETAIL_FIELD_TYPE(field)::shape.mask(),
#define REGCMD_DETAIL_FIELD_REF(r, type, i, field)                           \
  BOOST_PP_COMMA_IF(i)::regcmd::field_ref<&type::REGCMD_DETAIL_FIELD_NAME(field)> { \
    BOOST_PP_STRINGIZE(REGCMD_DETAIL_FIELD_NAME(field))                      \
  }

// A register value layout without a block of its own (e.g. the GLOBAL op-enable mask that
// travels as the value of the 0x0081 entry).
#define REGCMD_LAYOUT_BODY(NAME, ...)                                                           \
  using regcmd_layout_tag = void;                                                               \
  static constexpr std::string_view name = #NAME;                                               \
  BOOST_PP_SEQ_FOR_EACH(REGCMD_DETAIL_MEMBER, ~, BOOST_PP_VARIADIC_TO_SEQ(__VA_ARGS__))         \
  static constexpr auto fields() {                                                              \
    return ::boost::hana::make_tuple(                                                           \
        BOOST_PP_SEQ_FOR_EACH_I(REGCMD_DETAIL_FIELD_REF, NAME, BOOST_PP_VARIADIC_TO_SEQ(__VA_ARGS__))); \
  }                                                                                             \
  friend constexpr bool operator==(const NAME&, const NAME&) = default;                          \
  static_assert(::regcmd::detail::disjoint({BOOST_PP_SEQ_FOR_EACH(REGCMD_DETAIL_FIELD_MASK, ~,    \
                                                                  BOOST_PP_VARIADIC_TO_SEQ(__VA_ARGS__))}), \
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

// A register mainline does not declare, known from the reference or the recipes.
#define REGCMD_REGISTER_BEYOND_MAINLINE(BLOCK, NAME, OFFSET, ...) \
  REGCMD_REGISTER_FROM(reference, BLOCK, NAME, OFFSET, __VA_ARGS__)
