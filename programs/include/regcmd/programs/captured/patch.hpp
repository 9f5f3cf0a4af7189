#pragma once
// Patching a program's registers: a captured template replayed at another shape, or a
// generated program adjusted by hand.
//
//   patch(p, reg::CNA_DATA_SIZE1{.DATAIN_CHANNEL = 64, .DATAIN_CHANNEL_REAL = 63})
//
// writes the whole register value into every copy of that register in the task bodies and
// returns how many it wrote. Every copy, because a captured template may write a register
// more than once and the NPU takes the later copy: patching the first alone leaves a stale
// value (regcmd-isa-reference, the template driver's note on 0x1040). Refused: a register the
// program does not write (patch-absent), an address register (patch-address: bind writes
// it) and the task tails' PC registers (patch-task-tail). The value is checked like any
// typed write: at compile time a field that does not fit does not compile.
//
// After a patch the slots' extents are read again from the registers (rules/dma_extent.hpp),
// so bind asks of each buffer what the patched DMAs reach. The program rules are not run
// here: validate() runs every one of them on a patched program as on a generated one, and
// patched<>() does both at compile time.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include <regcmd/core/entry.hpp>
#include <regcmd/core/error.hpp>
#include <regcmd/core/layout.hpp>
#include <regcmd/core/soc.hpp>
#include <regcmd/task/heap_program.hpp>
#include <regcmd/task/program.hpp>
#include <regcmd/task/tail.hpp>
#include <regcmd/registers/all.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/rules/dma_extent.hpp>
#include <regcmd/rules/program_rules.hpp>

namespace regcmd {

// The storage a patch writes into, whoever owns it.
struct patch_target {
  std::span<entry> entries;
  std::span<slot> slots;
  std::span<const task> tasks;
  bool pingpong = true;
};

template <std::size_t E, std::size_t T, std::size_t S>
constexpr patch_target patch_target_of(program<E, T, S>& p) {
  return {std::span<entry>(p.entries.data(), p.entry_count), std::span<slot>(p.slots.data(), p.slot_count),
          std::span<const task>(p.tasks.data(), p.task_count), p.pingpong};
}
inline patch_target patch_target_of(heap_code& p) { return {p.entries, p.slots, p.tasks, p.options.pingpong}; }

namespace detail {
// The PC fetches regcmd through these slots; their extents are the chain links', not a DMA's.
constexpr bool fetched_role(operand_role r) { return r == operand_role::regcmd || r == operand_role::next_program; }

// Each slot's extent: the most any task's DMA reaches through it, with the register groups
// alternating task by task (`alternate`) or one group throughout.
constexpr void widen_extents(const patch_target& t, bool alternate) {
  slot_cursor cursor{t.slots};
  each_task_dma(
      t.entries, t.tasks.size(), alternate,
      [&](std::size_t n) { return dma_task_body{t.tasks[n].first, body_end(t.tasks[n]), t.tasks[n].enable_mask}; },
      [&](std::size_t i) -> std::uint32_t {
        const slot* s = cursor.slot_at(static_cast<std::uint32_t>(i));
        return s ? static_cast<std::uint32_t>(s - t.slots.data()) + 1 : 0;
      },
      [&](std::size_t, std::size_t, std::size_t index, std::uint64_t reach) {
        slot& s = t.slots[index];
        if (fetched_role(s.role)) return;
        const std::uint64_t widest = std::max<std::uint64_t>(s.extent, reach);
        s.extent = static_cast<std::uint32_t>(std::min<std::uint64_t>(widest, 0xffff'ffffu));
      });
}
}  // namespace detail

// Sets every operand slot's extent to what the program's DMAs reach through it, whether
// the tasks alternate the two register groups (rknpu ping-pong) or share one (rocket).
constexpr void read_extents(const patch_target& t) {
  for (slot& s : t.slots)
    if (!detail::fetched_role(s.role)) s.extent = 0;
  detail::widen_extents(t, t.pingpong);
  if (t.pingpong) detail::widen_extents(t, false);
}

namespace detail {
constexpr bool in_a_body(std::span<const task> tasks, std::size_t index) {
  for (const task& k : tasks)
    if (index >= k.first && index < body_end(k)) return true;
  return false;
}

// Writes `value` over every body entry with its target and offset.
constexpr result<std::uint32_t> patch_copies(const patch_target& t, const result<entry>& value, std::string_view name) {
  if (!value) return value.err();
  const entry v = value.value();
  if (v.target() == static_cast<std::uint16_t>(block_id::pc)) return make_error(rules::patch_task_tail, name);
  if (is_address_register(v)) return make_error(rules::patch_address, name);
  std::uint32_t copies = 0;
  for (std::size_t i = 0; i < t.entries.size(); ++i) {
    const entry e = t.entries[i];
    if (e.target() != v.target() || e.offset() != v.offset() || !in_a_body(t.tasks, i)) continue;
    t.entries[i] = v;
    ++copies;
  }
  if (copies == 0) return make_error(rules::patch_absent, name);
  read_extents(t);
  return copies;
}
}  // namespace detail

// Writes `value` into every copy of register R in the program's task bodies; the number of
// copies written, or the rule it breaks.
template <register_type R>
constexpr result<std::uint32_t> patch(const patch_target& t, const R& value) {
  return detail::patch_copies(t, encode(value), R::name);
}
// Element `number` of a register array (CNA_CVT_CON, 3: CNA_CVT_CON3).
template <register_array A>
constexpr result<std::uint32_t> patch(const patch_target& t, const A& value, unsigned number) {
  return detail::patch_copies(t, encode(value, number), A::name);
}
template <std::size_t E, std::size_t T, std::size_t S, class R>
constexpr result<std::uint32_t> patch(program<E, T, S>& p, const R& value) {
  return patch(patch_target_of(p), value);
}
template <std::size_t E, std::size_t T, std::size_t S, register_array A>
constexpr result<std::uint32_t> patch(program<E, T, S>& p, const A& value, unsigned number) {
  return patch(patch_target_of(p), value, number);
}

// Several patches in a row, keeping the first failure (everything after it is ignored) and
// the copies each wrote, like the program writer: straight-line code, one check at the end.
class patcher {
 public:
  constexpr explicit patcher(const patch_target& t) : target_{t} {}

  template <class R>
  constexpr std::uint32_t patch(const R& value) {
    return keep(ok() ? regcmd::patch(target_, value) : result<std::uint32_t>{0u});
  }
  template <register_array A>
  constexpr std::uint32_t patch(const A& value, unsigned number) {
    return keep(ok() ? regcmd::patch(target_, value, number) : result<std::uint32_t>{0u});
  }
  constexpr bool ok() const { return outcome_.ok(); }
  constexpr const status& outcome() const { return outcome_; }
  // Copies written by every patch so far.
  constexpr std::uint32_t copies() const { return copies_; }

 private:
  constexpr std::uint32_t keep(const result<std::uint32_t>& r) {
    if (!r) {
      if (outcome_.ok()) outcome_ = r.err();
      return 0;
    }
    copies_ += r.value();
    return r.value();
  }
  patch_target target_;
  status outcome_{};
  std::uint32_t copies_ = 0;
};

// A program patched at compile time, then checked by every program rule:
//
//   inline constexpr auto m8 = patched<captured::vendor_matmul, [](patcher& p) {
//     p.patch(reg::CNA_DATA_SIZE0{.DATAIN_HEIGHT = 8, .DATAIN_WIDTH = 1});
//   }>();
//
// A refused patch fails with its rule's message, then a broken program rule with its own.
template <const auto& Program, auto Edit, class Soc = soc::rk3588>
constexpr auto patched() {
  using program_type = std::remove_cvref_t<decltype(Program)>;
  struct patched_program {
    program_type code;
    status patches, rules;
  };
  constexpr patched_program built = [] {
    patched_program b{Program, {}, {}};
    patcher p{patch_target_of(b.code)};
    Edit(p);
    b.patches = p.outcome();
    if (b.patches) b.rules = validate<Soc>(b.code.view(), "patched program");
    return b;
  }();
  static_assert(report<violated_rule(built.patches)>());
  static_assert(report<violated_rule(built.rules)>());
  return built.code;
}

}  // namespace regcmd
