// The register map as a whole: completeness against the fact sheet, round trips, lookup.
#include <regcmd/testing/doctest.hpp>

#include <boost/hana/for_each.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include <regcmd/decode/lookup.hpp>
#include <regcmd/registers/all.hpp>

using namespace regcmd;

// The declaration rules that span registers, checked once here rather than in every
// translation unit that includes the map (registers/all.hpp).
static_assert(detail::registers_have_unique_addresses(), "two registers are declared at the same block and offset");
static_assert(detail::registers_have_unique_names(), "two registers are declared with the same name");

namespace {
std::size_t count(block_id b, provenance origin) {
  std::size_t n = 0;
  for (const register_info& r : register_table) n += r.block == b && r.origin == origin;
  return n;
}
}  // namespace

TEST_CASE("every register of the fact sheet is declared, per block") {
  // Rows of the fact sheet §4 tables ("Domain PC" ... "Domain PPU_RDMA"), counted by hand.
  CHECK(count(block_id::pc, provenance::mainline) == 12);
  CHECK(count(block_id::cna, provenance::mainline) == 52);
  CHECK(count(block_id::core, provenance::mainline) == 8);
  CHECK(count(block_id::dpu, provenance::mainline) == 52);
  CHECK(count(block_id::dpu_rdma, provenance::mainline) == 20);
  CHECK(count(block_id::ppu, provenance::mainline) == 20);
  CHECK(count(block_id::ppu_rdma, provenance::mainline) == 10);
  // Beyond mainline: the two offsets every matmul recipe writes as 0 (fact sheet §4).
  CHECK(count(block_id::core, provenance::reference) == 1);
  CHECK(count(block_id::dpu, provenance::reference) == 1);
  CHECK(register_table.size() == 176);
  CHECK(op_enable_fields.size() == 6);
}

TEST_CASE("DPU_EW_CFG and other declarations match the fact sheet's offset, block, mask and field bits") {
  const register_info* ew = find_register("DPU_EW_CFG");
  REQUIRE(ew != nullptr);
  CHECK(ew->offset == 0x4070);
  CHECK(ew->block == block_id::dpu);
  CHECK(ew->defined_mask == 0xf0ff'07e7);  // "Value mask" column
  CHECK(ew->fields.size() == 16);
  const field_info* algo = ew->field("EW_ALU_ALGO");
  REQUIRE(algo != nullptr);
  CHECK(algo->shape.msb == 19);
  CHECK(algo->shape.lsb == 16);
  CHECK(algo->shape.kind == field_kind::enumeration);

  CHECK(find_register("CNA_CONV_CON1")->defined_mask == 0x6001'f3ff);
  CHECK(find_register("DPU_RDMA_RDMA_FEATURE_MODE_CFG")->defined_mask == 0x0003'ffff);
  CHECK(find_register("PPU_MISC_CTRL")->defined_mask == 0xffff'018f);
  CHECK(find_register("PC_INTERRUPT_MASK")->defined_mask == 0x0000'3fff);
  CHECK(find_register(block_id::cna, 0x1110)->name == "CNA_DCOMP_ADDR0");
  CHECK(find_register(block_id::core, 0x3030)->origin == provenance::reference);
  CHECK(find_register(block_id::cna, 0x1030 + 2) == nullptr);
  CHECK(find_register("CNA_NOT_A_REGISTER") == nullptr);
}

TEST_CASE("address fields are exactly the registers that hold IOVAs") {
  std::map<std::string, std::uint16_t> addresses;
  for (const register_info& r : register_table)
    for (const field_info& f : r.fields)
      if (f.shape.kind == field_kind::address) addresses[std::string(r.name)] = r.offset;
  const std::map<std::string, std::uint16_t> expected{
      {"PC_BASE_ADDRESS", 0x0010},          {"PC_TASK_DMA_BASE_ADDR", 0x0034},
      {"CNA_FEATURE_DATA_ADDR", 0x1070},    {"CNA_DCOMP_ADDR0", 0x1110},
      {"DPU_DST_BASE_ADDR", 0x4020},        {"DPU_RDMA_RDMA_SRC_BASE_ADDR", 0x5018},
      {"DPU_RDMA_RDMA_BS_BASE_ADDR", 0x5020}, {"DPU_RDMA_RDMA_BN_BASE_ADDR", 0x502c},
      {"DPU_RDMA_RDMA_EW_BASE_ADDR", 0x5038}, {"PPU_DST_BASE_ADDR", 0x6070},
      {"PPU_RDMA_RDMA_SRC_BASE_ADDR", 0x701c}};
  CHECK(addresses == expected);
}

namespace {
// A value for every field that uses its whole width: the top value (for an address, every
// allowed bit set), or the largest declared enumerator.
template <class F>
F extreme_value() {
  if constexpr (requires { typename F::enum_type; }) {
    using E = typename F::enum_type;
    return F(static_cast<E>(info_of<E>().max_value()));
  } else {
    return F(F::shape.max_value());
  }
}
}  // namespace

// Every element of a declaration: a register once, a register array at each of its numbers.
template <class R, class Check>
void for_each_element(Check&& check) {
  if constexpr (register_array<R>) {
    for (unsigned n = R::first_number; n < R::first_number + R::count; ++n)
      check([n](const R& v) { return encode(v, n); }, static_cast<std::uint16_t>(R::first_offset + 4 * (n - R::first_number)));
  } else {
    check([](const R& v) { return encode(v); }, R::offset);
  }
}

TEST_CASE("every declared register round-trips: encode then decode gives the same fields") {
  std::size_t registers = 0;
  reg::for_each_register([&](auto type) {
    using R = typename decltype(type)::type;
    CAPTURE(std::string(R::name));
    for_each_element<R>([&](auto encode_one, std::uint16_t offset) {
      // Each field alone at its extreme (so a field leaking into a neighbour shows), then all.
      R all = R::zeroed();
      boost::hana::for_each(R::fields(), [&](auto f) {
        using F = typename decltype(f)::field_type;
        R one = R::zeroed();
        one.*decltype(f)::member = extreme_value<F>();
        all.*decltype(f)::member = extreme_value<F>();
        const result<entry> e = encode_one(one);
        REQUIRE(e.ok());
        CHECK(e.value().target() == static_cast<std::uint16_t>(R::block));
        CHECK(e.value().offset() == offset);
        CHECK((e.value().value() & ~F::shape.mask()) == 0);
        CHECK(unpack<R>(e.value().value()) == one);
      });
      const result<entry> e = encode_one(all);
      REQUIRE(e.ok());
      CHECK((e.value().value() & ~defined_mask<R>()) == 0);
      CHECK(unpack<R>(e.value().value()) == all);
      ++registers;
    });
  });
  CHECK(registers == 176);  // the per-block counts of the first test case
}

TEST_CASE("register arrays keep mainline's names and offsets, element by element") {
  // fact sheet §4: CNA_CVT_CON1..4 at 0x1050..0x105c hold CVT_OFFSETn/CVT_SCALEn with n = 0..3
  const register_info* con3 = find_register("CNA_CVT_CON3");
  REQUIRE(con3 != nullptr);
  CHECK(con3->offset == 0x1058);
  REQUIRE(con3->fields.size() == 2);
  CHECK(con3->fields[0].name == "CVT_OFFSET2");
  CHECK(con3->fields[1].name == "CVT_SCALE2");
  CHECK(find_register(block_id::cna, 0x117c)->name == "CNA_DCOMP_AMOUNT15");
  CHECK(find_register("CNA_DCOMP_AMOUNT15")->fields[0].name == "DCOMP_AMOUNT15");
  CHECK(find_register(block_id::dpu, 0x40ac)->name == "DPU_EW_OP_VALUE_7");
  CHECK(find_register("DPU_EW_OP_VALUE_7")->fields[0].name == "EW_OPERAND_7");
  CHECK(find_register("CNA_CVT_CON0")->offset == 0x104c);  // not an element: CVT_CON0 has its own fields
  CHECK(find_register("CNA_CVT_CON5")->offset == 0x1180);
  // the bytes of one element, and the refusals
  CHECK(encode(reg::CNA_CVT_CON{.CVT_SCALE = 1}, 2).value().bits() == 0x0201'0001'0000'1054);
  CHECK(encode(reg::DPU_EW_OP_VALUE{.EW_OPERAND = 0x3f80'0000}, 0).value().bits() == 0x1001'3f80'0000'4090);
  CHECK_BREAKS(encode(reg::CNA_CVT_CON{}, 0), rules::array_element);
  CHECK_BREAKS(encode(reg::CNA_CVT_CON{}, 5), rules::array_element);
  const auto wide = encode(reg::CNA_CVT_CON{.CVT_SCALE = 0x10000}, 4);
  CHECK_BREAKS(wide, rules::field_range);
  CHECK(wide.err().subject == "CNA_CVT_CON4");
  CHECK(wide.err().detail == "CVT_SCALE3");
  const field_assignment scale[] = {{"CVT_SCALE1", 1}};
  CHECK(encode_by_name("CNA_CVT_CON2", scale) == encode(reg::CNA_CVT_CON{.CVT_SCALE = 1}, 2).value());
}

TEST_CASE("writing a register by name applies the same checks") {
  const field_assignment bank[] = {{"DATA_BANK", 1}, {"WEIGHT_BANK", 11}};
  CHECK(encode_by_name("CNA_CBUF_CON0", bank) == entry::from_bits(0x0201'0000'00b1'1040));

  const field_assignment too_big[] = {{"DATA_BANK", 16}};
  CHECK_BREAKS(encode_by_name("CNA_CBUF_CON0", too_big), rules::field_range);

  const field_assignment twice[] = {{"DATA_BANK", 1}, {"DATA_BANK", 2}};
  const auto dup = encode_by_name("CNA_CBUF_CON0", twice);
  CHECK_BREAKS(dup, rules::duplicate_field);
  CHECK(dup.err().detail == "DATA_BANK");

  const field_assignment other[] = {{"IN_PRECISION", 2}};
  CHECK_BREAKS(encode_by_name("CNA_CBUF_CON0", other), rules::field_of_another_register);

  const field_assignment nonsense[] = {{"NO_SUCH_FIELD", 0}};
  CHECK_BREAKS(encode_by_name("CNA_CBUF_CON0", nonsense), rules::unknown_field);
  CHECK_BREAKS(encode_by_name("CNA_NOT_A_REGISTER", bank), rules::unknown_register);

  const field_assignment reserved_mode[] = {{"CONV_MODE", 1}};
  CHECK_BREAKS(encode_by_name("CNA_CONV_CON1", reserved_mode), rules::enum_value);
  const field_assignment misaligned[] = {{"PC_SOURCE_ADDR", 0x1008}};
  CHECK_BREAKS(encode_by_name("PC_BASE_ADDRESS", misaligned), rules::address_alignment);
}
