// Reading dumps: text and binary, and every way they can be malformed.
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
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

TEST_CASE("a dump's format can be forced: printable bytes read as binary, binary as text refused") {
  // 8 printable bytes read as binary when asked to.
  const auto d = parse_dump(bytes("01234567"), dump_format::binary);
  REQUIRE(d.ok());
  CHECK(d.entries[0].bits() == 0x3736'3534'3332'3130);
  CHECK(parse_dump(bytes("01234567"), dump_format::text).entries[0].bits() == 0x0123'4567);
  CHECK_FALSE(parse_dump(std::vector<std::uint8_t>{0x01, 0x02}, dump_format::text).ok());
}

TEST_CASE("an empty dump, or one of comments only, parses to no entries") {
  CHECK(parse_dump(std::vector<std::uint8_t>{}).ok());
  CHECK(parse_dump(bytes("# nothing here\n")).entries.empty());
}

// Issue 13, item 24: what a text dump may hold besides its entries.
TEST_CASE("text dumps: a byte-order mark, CRLF, form feeds and colour codes") {
  const std::uint64_t cbuf = 0x0201'0000'00b1'1040, op_enable = 0x0081'0000'000d'0008;
  for (std::string_view text : {std::string_view("\xef\xbb\xbf" "0x0201000000b11040\r\n0x00810000000d0008\r\n"),
                                std::string_view("0x0201000000b11040\n\f\n\f0x00810000000d0008\f\n"),
                                std::string_view("\x1b[01;31m\x1b[K0x0201000000b11040\x1b[m\x1b[K\n"
                                                 "0x0081\x1b[1m0000000d\x1b(B\x1b[m0008  # bold, then tput sgr0\n"),
                                std::string_view("\x1b]8;;file:///tmp/x\x1b\\0x0201000000b11040\x1b]8;;\x07\n"
                                                 "# caf\xc3\xa9 \xe2\x86\x92 UTF-8 in a comment\n0x00810000000d0008")}) {
    CAPTURE(text);
    const auto d = parse_dump(bytes(text));
    REQUIRE(d.ok());
    REQUIRE(d.entries.size() == 2);
    CHECK(d.entries[0].bits() == cbuf);
    CHECK(d.entries[1].bits() == op_enable);
  }
}

TEST_CASE("a text dump with a byte that is not text is an error at that byte, never binary") {
  const auto nul = parse_dump(bytes(std::string_view("0x0201000000b11040\n0x0041\0", 26)));
  CHECK(nul.error.starts_with("byte 25 (line 2): 0x00 is a control byte, not text"));
  const auto latin1 = parse_dump(bytes("# caf\xe9\n0x0201000000b11040\n"));
  CHECK(latin1.error.starts_with("byte 6 (line 1): 0x0a breaks a UTF-8 character (begun at byte 5), not text"));
  const auto overlong = parse_dump(bytes("0x0201000000b11040 # \xc0\xaf\n"));
  CHECK(overlong.error.starts_with("byte 21 (line 1): 0xc0 cannot start a UTF-8 character"));
  const auto cut = parse_dump(bytes("0x0201000000b11040\x1b[01;3"));
  CHECK(cut.error == "byte 24 (line 1): the input ends inside an escape sequence (begun at byte 18)");
  const auto bom_alone = parse_dump(bytes("\xef\xbb\xbf"));
  CHECK((bom_alone.ok() && bom_alone.entries.empty()));
}

TEST_CASE("the first 8 bytes decide: a control byte other than whitespace and ESC means binary") {
  CHECK(looks_like_text(bytes("0x020100")));
  CHECK(looks_like_text(bytes("\x1b[01;31m")));
  CHECK(looks_like_text(bytes("\xef\xbb\xbf# caf\xe9")));
  CHECK(looks_like_text(bytes("\f\t\r\n\v    ")));
  // each kind of entry the NPU reads: a register, the zero word, the two op-enable words
  for (std::uint64_t e : {0x0201'0000'00b1'1040ull, 0ull, 0x0041'0000'0000'0000ull, 0x0081'0000'000d'0008ull})
    CHECK_FALSE(looks_like_text(entry::from_bits(e).to_bytes()));
}

TEST_CASE("a dump fed in pieces of any size parses as it does whole") {
  const std::string text =
      "\xef\xbb\xbf# caf\xc3\xa9\r\n0x0201000000b11040\r\n\x1b[01;31m0x0081\x1b[m0000000d0008\n\f\n0X0041000000000000";
  std::vector<std::uint8_t> binary;
  for (std::uint64_t e : {0x0201'0000'00b1'1040ull, 0x0081'0000'000d'0008ull, 0x0041'0000'0000'0000ull})
    for (std::uint8_t b : entry::from_bits(e).to_bytes()) binary.push_back(b);
  for (const std::vector<std::uint8_t>& input : {bytes(text), binary}) {
    const dump whole = parse_dump(input);
    REQUIRE(whole.ok());
    REQUIRE(whole.entries.size() == 3);
    for (std::size_t piece = 1; piece <= input.size(); ++piece) {
      CAPTURE(piece);
      dump_parser parser;
      std::vector<entry> got;
      auto keep = [&](entry e) {
        got.push_back(e);
        return true;
      };
      for (std::size_t at = 0; at < input.size(); at += piece)
        REQUIRE(parser.feed(std::span(input).subspan(at, std::min(piece, input.size() - at)), keep));
      REQUIRE(parser.finish(keep));
      CHECK(got == whole.entries);
    }
  }
}
