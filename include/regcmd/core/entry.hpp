#pragma once
// One regcmd entry: a 64-bit register write `target << 48 | value << 16 | offset`.
//
// This is the only place in regcmd that shifts an entry together; everything else builds
// entries from typed registers (core/layout.hpp) or the named special entries below.
// Reference: regcmd-isa-reference "regcmd encoding"; fact sheet §2.1.

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <optional>
#include <span>
#include <string_view>

namespace regcmd {

// The blocks a regcmd entry can address, by target id (mainline `target` enum + 1, fact
// sheet §2.1). The reference uses older labels for three of them: 0x0801 "DPU" (mainline
// CORE), 0x1001 "PPU / core output" (mainline DPU) and 0x2001 "CDMA" (mainline DPU_RDMA).
enum class block_id : std::uint16_t {
  pc = 0x0101,
  cna = 0x0201,
  core = 0x0801,
  dpu = 0x1001,
  dpu_rdma = 0x2001,
  ppu = 0x4001,
  ppu_rdma = 0x8001,
};

inline constexpr std::array all_blocks{block_id::pc,  block_id::cna,      block_id::core,
                                       block_id::dpu, block_id::dpu_rdma, block_id::ppu,
                                       block_id::ppu_rdma};

// Mainline block name, as it prefixes every register name of the block.
constexpr std::string_view block_name(block_id b) {
  switch (b) {
    case block_id::pc: return "PC";
    case block_id::cna: return "CNA";
    case block_id::core: return "CORE";
    case block_id::dpu: return "DPU";
    case block_id::dpu_rdma: return "DPU_RDMA";
    case block_id::ppu: return "PPU";
    case block_id::ppu_rdma: return "PPU_RDMA";
  }
  return "?";
}

// Each block owns one 4 KiB window of register offsets (TRM Table 1-1, fact sheet §2.1).
constexpr std::uint16_t window_base(block_id b) {
  switch (b) {
    case block_id::pc: return 0x0000;
    case block_id::cna: return 0x1000;
    case block_id::core: return 0x3000;
    case block_id::dpu: return 0x4000;
    case block_id::dpu_rdma: return 0x5000;
    case block_id::ppu: return 0x6000;
    case block_id::ppu_rdma: return 0x7000;
  }
  return 0xffff;
}

constexpr bool offset_in_window(block_id b, std::uint16_t offset) {
  return offset >= window_base(b) && offset < window_base(b) + 0x1000;
}

constexpr std::optional<block_id> block_from_target(std::uint16_t target) {
  for (block_id b : all_blocks)
    if (static_cast<std::uint16_t>(b) == target) return b;
  return std::nullopt;
}

// Targets that are not blocks: the two special words of every task tail (TRM, fact sheet
// §2.1): 0x0041 "must be set before op_en", and 0x0081 (offset 0x0008) which sets the
// op_en of every block named in its value, the GLOBAL operation-enable mask.
inline constexpr std::uint16_t op_enable_preamble_target = 0x0041;
inline constexpr std::uint16_t op_enable_target = 0x0081;
inline constexpr std::uint16_t op_enable_offset = 0x0008;

// `entry{}` is the zero qword. The default constructor is trivial on purpose: a program's
// storage of thousands of entries then zero-initialises without a per-entry constructor
// call, which constant evaluation would count step by step.
class entry {
 public:
  entry() = default;

  static constexpr entry from_bits(std::uint64_t bits) { return entry{bits}; }

  static constexpr entry make(std::uint16_t target, std::uint32_t value, std::uint16_t offset) {
    return entry{std::uint64_t{target} << 48 | std::uint64_t{value} << 16 | offset};
  }

  static constexpr entry make(block_id block, std::uint32_t value, std::uint16_t offset) {
    return make(static_cast<std::uint16_t>(block), value, offset);
  }

  // The reference's (word0, word1) u32-pair view: word0 is the low half of the u64.
  static constexpr entry from_words(std::uint32_t word0, std::uint32_t word1) {
    return entry{std::uint64_t{word1} << 32 | word0};
  }

  // Serialized form: 8 bytes, little-endian, whatever the host byte order.
  static constexpr entry from_bytes(std::span<const std::uint8_t, 8> bytes) {
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < 8; ++i) bits |= std::uint64_t{bytes[i]} << (8 * i);
    return entry{bits};
  }

  constexpr std::array<std::uint8_t, 8> to_bytes() const {
    std::array<std::uint8_t, 8> out{};
    for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(bits_ >> (8 * i));
    return out;
  }

  constexpr std::uint64_t bits() const { return bits_; }
  constexpr std::uint32_t word0() const { return static_cast<std::uint32_t>(bits_); }
  constexpr std::uint32_t word1() const { return static_cast<std::uint32_t>(bits_ >> 32); }
  constexpr std::uint16_t offset() const { return static_cast<std::uint16_t>(word0() & 0xffff); }
  constexpr std::uint16_t target() const { return static_cast<std::uint16_t>(word1() >> 16); }
  constexpr std::uint32_t value() const { return (word1() & 0xffff) << 16 | word0() >> 16; }

  // Same target and offset, another value: how IOVAs are patched into a prepared program.
  constexpr entry with_value(std::uint32_t value) const { return make(target(), value, offset()); }

  friend constexpr bool operator==(entry, entry) = default;

 private:
  constexpr explicit entry(std::uint64_t bits) : bits_{bits} {}
  std::uint64_t bits_;
};
static_assert(std::is_trivially_copyable_v<entry> && sizeof(entry) == 8,
              "programs copy entries as bytes (program_writer::put_body, the regcmd buffer)");

// The word the TRM requires before the op-enable entry: 0x0041'0000'0000'0000.
constexpr entry op_enable_preamble() { return entry::make(op_enable_preamble_target, 0, 0); }

enum class entry_kind {
  register_write,      // target is one of the seven blocks
  op_enable_preamble,  // target 0x0041
  op_enable,           // target 0x0081
  zero,                // the all-zero qword some tails use as padding
  unknown_target,      // anything else: decoded raw, never an error
};

constexpr entry_kind kind_of(entry e) {
  if (e.bits() == 0) return entry_kind::zero;
  if (e.target() == op_enable_preamble_target) return entry_kind::op_enable_preamble;
  if (e.target() == op_enable_target) return entry_kind::op_enable;
  if (block_from_target(e.target())) return entry_kind::register_write;
  return entry_kind::unknown_target;
}

}  // namespace regcmd
