// The entry encoding, checked against words written out from the reference.
#include <regcmd/testing/doctest.hpp>

#include <array>
#include <cstdint>

#include <regcmd/core/entry.hpp>

using regcmd::block_id;
using regcmd::entry;

// regcmd-isa-reference "regcmd encoding": CNA_CBUF_CON0 (0x1040) = 0xb1 in block 0x0201.
static_assert(entry::make(block_id::cna, 0xb1, 0x1040).bits() == 0x0201'0000'00b1'1040);
static_assert(entry::make(0x0081, 0x0d, 0x0008).bits() == 0x0081'0000'000d'0008);
static_assert(regcmd::op_enable_preamble().bits() == 0x0041'0000'0000'0000);

TEST_CASE("an entry is target << 48 | value << 16 | offset") {
  const entry e = entry::make(block_id::dpu, 0xa800'0002, 0x4010);
  CHECK(e.bits() == 0x1001'a800'0002'4010);
  CHECK(e.target() == 0x1001);
  CHECK(e.value() == 0xa800'0002);
  CHECK(e.offset() == 0x4010);
}

TEST_CASE("an entry as the reference's two 32-bit words: offset, block and a value spanning both") {
  // offset = word0 & 0xffff, block = word1 >> 16, value = (word1 & 0xffff) << 16 | word0 >> 16
  const entry e = entry::from_words(0x00b1'1040, 0x0201'0000);
  CHECK(e.bits() == 0x0201'0000'00b1'1040);
  CHECK(e.word0() == 0x00b1'1040);
  CHECK(e.word1() == 0x0201'0000);
  CHECK(e.offset() == 0x1040);
  CHECK(e.target() == 0x0201);
  CHECK(e.value() == 0xb1);

  // A value spanning both words: CNA_DATA_SIZE1 K=64 is (63 << 16) | 64 = 0x003f0040.
  const entry k = entry::from_words(0x0040'1024, 0x0201'003f);
  CHECK(k.value() == 0x003f'0040);
  CHECK(k == entry::make(block_id::cna, 0x003f'0040, 0x1024));
}

TEST_CASE("serialization is little-endian whatever the host") {
  const entry e = entry::from_bits(0x0201'0000'00b1'1040);
  const std::array<std::uint8_t, 8> expected{0x40, 0x10, 0xb1, 0x00, 0x00, 0x00, 0x01, 0x02};
  CHECK(e.to_bytes() == expected);
  CHECK(entry::from_bytes(expected) == e);
}

TEST_CASE("with_value keeps target and offset") {
  const entry slot = entry::make(block_id::cna, 0, 0x1070);
  const entry patched = slot.with_value(0x1000'0000);
  CHECK(patched.bits() == 0x0201'1000'0000'1070);
}

TEST_CASE("an entry's kind from its target: zero, op-enable preamble, op enable, register write, unknown target") {
  using regcmd::entry_kind;
  CHECK(regcmd::kind_of(entry::from_bits(0)) == entry_kind::zero);
  CHECK(regcmd::kind_of(entry::from_bits(0x0041'0000'0000'0000)) == entry_kind::op_enable_preamble);
  CHECK(regcmd::kind_of(entry::from_bits(0x0081'0000'000d'0008)) == entry_kind::op_enable);
  CHECK(regcmd::kind_of(entry::from_bits(0x0201'0000'00b1'1040)) == entry_kind::register_write);
  // Recipe B pads the tail of its last task with 0x0001000000000000: not a block.
  CHECK(regcmd::kind_of(entry::from_bits(0x0001'0000'0000'0000)) == entry_kind::unknown_target);
}

TEST_CASE("each block's 4 KiB register window, its name and its target") {
  CHECK(regcmd::window_base(block_id::dpu_rdma) == 0x5000);
  CHECK(regcmd::offset_in_window(block_id::core, 0x3030));
  CHECK_FALSE(regcmd::offset_in_window(block_id::core, 0x4000));
  CHECK(regcmd::block_name(block_id::ppu_rdma) == "PPU_RDMA");
  CHECK(regcmd::block_from_target(0x2001) == block_id::dpu_rdma);
  CHECK_FALSE(regcmd::block_from_target(0x0041).has_value());
}
