#pragma once
// What a program costs, as plain counts: the bytes of each memory stream, the MACs of each
// precision class, the DPU's and PPU's elements, tasks, submits and regcmd entries. Filled
// from the registers by decode/accounting.hpp and estimated from a plan's shape by
// regcmd/programs/matmul/plan.hpp; core/roofline.hpp turns it into a lower bound on time. Every count is
// summed saturating at 2^64 - 1 (a hostile dump's registers may claim more): a count that
// reached it is marked so, never wrapped to a small number.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <regcmd/core/math.hpp>
#include <regcmd/core/precision.hpp>

namespace regcmd {

// The streams a task moves through memory: the PC's fetch, the read DMAs, the write DMAs.
enum class stream : std::uint8_t { regcmd, feature, weight, rdma_source, ew_operand, bias, bn, ppu_source, output, ppu_output };
inline constexpr std::size_t stream_count = 10;

constexpr bool writes_memory(stream s) { return s == stream::output || s == stream::ppu_output; }

constexpr std::string_view name_of(stream s) {
  constexpr std::string_view names[stream_count] = {"regcmd", "feature", "weight", "rdma_source", "ew_operand",
                                                    "bias",   "bn",      "ppu_source", "output", "ppu_output"};
  return names[static_cast<std::size_t>(s)];
}

using stream_bytes = std::array<std::uint64_t, stream_count>;

constexpr std::uint64_t total_bytes(const stream_bytes& b) {
  std::uint64_t n = 0;
  for (std::uint64_t x : b) n = saturating_add(n, x);
  return n;
}
constexpr std::uint64_t read_bytes(const stream_bytes& b) {
  std::uint64_t n = 0;
  for (std::size_t s = 0; s < stream_count; ++s) n = saturating_add(n, writes_memory(static_cast<stream>(s)) ? 0 : b[s]);
  return n;
}
// The bytes written: what is left of the total once the reads are taken (both saturated:
// 0 rather than a wrapped difference).
constexpr std::uint64_t written_bytes(const stream_bytes& b) {
  std::uint64_t n = 0;
  for (std::size_t s = 0; s < stream_count; ++s) n = saturating_add(n, writes_memory(static_cast<stream>(s)) ? b[s] : 0);
  return n;
}

// The MACs of one precision class: the peak rates differ (core/soc.hpp).
enum class mac_class : std::uint8_t { fp16, int8, int4 };
inline constexpr std::size_t mac_class_count = 3;
constexpr mac_class mac_class_of(precision in) {
  return in == precision::int4 ? mac_class::int4 : in == precision::int8 ? mac_class::int8 : mac_class::fp16;
}
constexpr std::string_view name_of(mac_class c) {
  return c == mac_class::int4 ? "int4" : c == mac_class::int8 ? "int8" : "fp16";
}

struct task_cost {
  stream_bytes bytes{};
  // Where each stream starts: the address register's value in a dump; a slot's role and
  // offset ((role + 1) << 32 | offset) in a program, whose address registers hold 0.
  std::array<std::uint64_t, stream_count> where{};
  // The span each stream reaches from there (rules/dma_extent.hpp): what a re-read covers.
  std::array<std::uint64_t, stream_count> extent{};
  std::uint64_t macs = 0;
  mac_class macs_in = mac_class::fp16;
  std::uint64_t dpu_elements = 0, ppu_operations = 0;
  std::uint32_t entries = 0, lut_entries = 0;
  std::uint32_t enable_mask = 0;

  constexpr std::uint64_t reads() const { return read_bytes(bytes); }
  constexpr std::uint64_t writes() const { return written_bytes(bytes); }
};

struct program_cost {
  stream_bytes bytes{};
  std::array<std::uint64_t, mac_class_count> macs{};
  std::uint64_t dpu_elements = 0, ppu_operations = 0;
  std::uint64_t tasks = 0, submits = 1, entries = 0, lut_entries = 0;

  constexpr std::uint64_t reads() const { return read_bytes(bytes); }
  constexpr std::uint64_t writes() const { return written_bytes(bytes); }
  constexpr std::uint64_t traffic() const { return total_bytes(bytes); }
  constexpr std::uint64_t all_macs() const { return saturating_add(saturating_add(macs[0], macs[1]), macs[2]); }
  constexpr void add(const task_cost& t) {
    for (std::size_t s = 0; s < stream_count; ++s) bytes[s] = saturating_add(bytes[s], t.bytes[s]);
    std::uint64_t& m = macs[static_cast<std::size_t>(t.macs_in)];
    m = saturating_add(m, t.macs);
    dpu_elements = saturating_add(dpu_elements, t.dpu_elements);
    ppu_operations = saturating_add(ppu_operations, t.ppu_operations);
    ++tasks;
    entries += t.entries;
    lut_entries += t.lut_entries;
  }
  // Programs run one after another: their costs add, submits included.
  constexpr program_cost& operator+=(const program_cost& o) {
    for (std::size_t s = 0; s < stream_count; ++s) bytes[s] = saturating_add(bytes[s], o.bytes[s]);
    for (std::size_t c = 0; c < mac_class_count; ++c) macs[c] = saturating_add(macs[c], o.macs[c]);
    dpu_elements = saturating_add(dpu_elements, o.dpu_elements);
    ppu_operations = saturating_add(ppu_operations, o.ppu_operations);
    tasks += o.tasks;
    submits += o.submits;
    entries += o.entries;
    lut_entries += o.lut_entries;
    return *this;
  }
  // Whether a count stopped at 2^64 - 1: the registers claim more work than 64 bits count.
  constexpr bool saturated() const {
    for (std::uint64_t x : bytes)
      if (x == UINT64_MAX) return true;
    for (std::uint64_t x : macs)
      if (x == UINT64_MAX) return true;
    return dpu_elements == UINT64_MAX || ppu_operations == UINT64_MAX;
  }
};

}  // namespace regcmd
