// Reading dumps: text and binary, and every way they can be malformed.
#include <doctest/doctest.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include <regcmd/decode/dump.hpp>

using namespace regcmd;

namespace {
std::vector<std::uint8_t> bytes(std::string_view s) { return {s.begin(), s.end()}; }
}  // namespace

TEST_CASE("text dumps: one hex entry per line, 0x optional, # comments") {
  const auto d = parse_dump(bytes("# CBUF split\n0x0201000000b11040\n  0201000000b11040  # again\n\n"
                                  "0X0041000000000000\r\n00810000000d0008\n"));
  REQUIRE(d.ok());
  REQUIRE(d.entries.size() == 4);
  CHECK(d.entries[0].bits() == 0x0201'0000'00b1'1040);
  CHECK(d.entries[1] == d.entries[0]);
  CHECK(d.entries[2].bits() == 0x0041'0000'0000'0000);
  CHECK(d.entries[3].bits() == 0x0081'0000'000d'0008);
}

TEST_CASE("binary dumps: little-endian u64 entries") {
  const std::vector<std::uint8_t> raw{0x40, 0x10, 0xb1, 0x00, 0x00, 0x00, 0x01, 0x02,
                                      0x08, 0x00, 0x0d, 0x00, 0x00, 0x00, 0x81, 0x00};
  const auto d = parse_dump(raw);
  REQUIRE(d.ok());
  REQUIRE(d.entries.size() == 2);
  CHECK(d.entries[0].bits() == 0x0201'0000'00b1'1040);
  CHECK(d.entries[1].bits() == 0x0081'0000'000d'0008);
}

TEST_CASE("a truncated binary dump is an error that says where") {
  const std::vector<std::uint8_t> raw{0x40, 0x10, 0xb1, 0x00, 0x00, 0x00, 0x01, 0x02, 0x08, 0x00, 0x0d};
  const auto d = parse_dump(raw);
  CHECK_FALSE(d.ok());
  CHECK(d.error.find("11 bytes") != std::string::npos);
  CHECK(d.error.find("3 trailing bytes after entry 1") != std::string::npos);
  CHECK(d.entries.empty());
}

TEST_CASE("malformed text is an error naming the line") {
  const auto bad_digit = parse_dump(bytes("0x0201000000b11040\n0x02010000zzb11040\n"));
  CHECK_FALSE(bad_digit.ok());
  CHECK(bad_digit.error.find("line 2") != std::string::npos);
  CHECK(bad_digit.entries.empty());

  CHECK_FALSE(parse_dump(bytes("0x10201000000b11040\n")).ok());  // 17 digits: wider than 64 bits
  CHECK_FALSE(parse_dump(bytes("0x\n")).ok());
  CHECK_FALSE(parse_dump(bytes("0x0201 0x0041\n")).ok());  // one entry per line
  CHECK_FALSE(parse_dump(bytes("hello\n")).ok());
}

TEST_CASE("the format can be forced") {
  // 8 printable bytes read as binary when asked to.
  const auto d = parse_dump(bytes("01234567"), dump_format::binary);
  REQUIRE(d.ok());
  CHECK(d.entries[0].bits() == 0x3736'3534'3332'3130);
  CHECK(parse_dump(bytes("01234567"), dump_format::text).entries[0].bits() == 0x0123'4567);
  CHECK_FALSE(parse_dump(std::vector<std::uint8_t>{0x01, 0x02}, dump_format::text).ok());
}

TEST_CASE("an empty dump has no entries") {
  CHECK(parse_dump(std::vector<std::uint8_t>{}).ok());
  CHECK(parse_dump(bytes("# nothing here\n")).entries.empty());
}
