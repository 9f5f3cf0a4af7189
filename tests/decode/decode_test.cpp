// Decoding entries to names, fields and enum names, and the regcmd-dis line formats.
#include <regcmd/testing/doctest.hpp>

#include <string>

#include <regcmd/decode/decode.hpp>
#include <regcmd/decode/format.hpp>

using namespace regcmd;

TEST_CASE("a register write decodes to its name, fields and enum names") {
  const decoded_entry d = decode(entry::from_bits(0x1001'a800'0002'4010));
  CHECK(d.kind == entry_kind::register_write);
  CHECK(d.name == "DPU_DATA_FORMAT");
  REQUIRE(d.field("OUT_PRECISION") != nullptr);
  CHECK(d.field("OUT_PRECISION")->value == 5);
  CHECK(d.field("OUT_PRECISION")->enum_name == "fp32");
  CHECK(d.field("IN_PRECISION")->enum_name == "fp16");
  CHECK(d.field("PROC_PRECISION")->enum_name == "fp16");
  CHECK(d.reserved_bits == 0);
}

TEST_CASE("decoding is constexpr: CNA_CBUF_CON0's name and bank fields in static_assert") {
  constexpr decoded_entry d = decode(entry::from_bits(0x0201'0000'00b1'1040));
  static_assert(d.name == "CNA_CBUF_CON0");
  static_assert(d.field("DATA_BANK")->value == 1);
  static_assert(d.field("WEIGHT_BANK")->value == 11);
  CHECK(d.known());
}

TEST_CASE("unknown targets and offsets decode raw, never fail") {
  const decoded_entry unknown_offset = decode(entry::make(block_id::cna, 0x1234'5678, 0x1ffc));
  CHECK_FALSE(unknown_offset.known());
  CHECK(unknown_offset.field_count == 0);
  CHECK(format_text(unknown_offset, 3) == "3 CNA UNKNOWN_0x1ffc 0x12345678");

  const decoded_entry unknown_target = decode(entry::from_bits(0x0001'0000'0000'0000));
  CHECK(unknown_target.kind == entry_kind::unknown_target);
  CHECK(format_text(unknown_target, 0) == "0 0x0001 UNKNOWN_0x0000 0x00000000");
}

TEST_CASE("reserved bits that are set are shown") {
  // CNA_CBUF_CON0 bit 11 is reserved.
  const decoded_entry d = decode(entry::make(block_id::cna, 0x8b1, 0x1040));
  CHECK(d.reserved_bits == 0x800);
  CHECK(format_text(d, 0) ==
        "0 CNA CNA_CBUF_CON0 0x000008b1 DATA_BANK=1 WEIGHT_BANK=11 FC_DATA_BANK=0 DATA_REUSE=0 "
        "WEIGHT_REUSE=0 reserved=0x00000800");
}

TEST_CASE("the task tail's special entries print as OP_EN_PREAMBLE, OP_ENABLE with its blocks, ZERO") {
  CHECK(format_text(decode(op_enable_preamble()), 106) == "106 0x0041 OP_EN_PREAMBLE 0x00000000");
  CHECK(format_text(decode(entry::from_bits(0x0081'0000'000d'0008)), 107) ==
        "107 0x0081 OP_ENABLE 0x0000000d CNA_OP_EN=1 CORE_OP_EN=1 DPU_OP_EN=1 DPU_RDMA_OP_EN=0 "
        "PPU_OP_EN=0 PPU_RDMA_OP_EN=0");
  CHECK(format_text(decode(entry::from_bits(0)), 104) == "104 0x0000 ZERO 0x00000000");
}

TEST_CASE("text format: numbers decimal, addresses hex, enums by name") {
  CHECK(format_text(decode(entry::from_bits(0x0201'1000'0000'1070)), 21) ==
        "21 CNA CNA_FEATURE_DATA_ADDR 0x10000000 FEATURE_BASE_ADDR=0x10000000");
  CHECK(format_text(decode(entry::from_bits(0x0201'0000'0120'100c)), 1) ==
        "1 CNA CNA_CONV_CON1 0x00000120 CONV_MODE=direct IN_PRECISION=fp16 PROC_PRECISION=fp16 ARGB_IN=0 "
        "DECONV=0 GROUP_LINE_OFF=0 NONALIGN_DMA=0");
  // An undeclared enum value (CONV_MODE 1 is reserved) prints as its number.
  CHECK(format_text(decode(entry::make(block_id::cna, 0x121, 0x100c)), 1).find("CONV_MODE=1 ") !=
        std::string::npos);
}

TEST_CASE("an entry as JSON: index, block, target, offset, register, value, every field and enum name") {
  CHECK(format_json(decode(entry::from_bits(0x0201'0000'00b1'1040)), 11) ==
        R"({"index":11,"block":"CNA","target":513,"offset":4160,"register":"CNA_CBUF_CON0","value":177,)"
        R"("fields":{"DATA_BANK":1,"WEIGHT_BANK":11,"FC_DATA_BANK":0,"DATA_REUSE":0,"WEIGHT_REUSE":0},"enums":{}})");
  CHECK(format_json(decode(entry::from_bits(0x0201'0000'0120'100c)), 1).find(
            R"("enums":{"CONV_MODE":"direct","IN_PRECISION":"fp16","PROC_PRECISION":"fp16"})") !=
        std::string::npos);
}

TEST_CASE("errors print with their rule, subject and reference") {
  const auto e = make_error(rules::field_range, "CNA_CBUF_CON0", "DATA_BANK", 16);
  CHECK(to_string(e).starts_with("field-range: the value does not fit"));
  CHECK(to_string(e).find("(CNA_CBUF_CON0.DATA_BANK = 16)") != std::string::npos);
}
