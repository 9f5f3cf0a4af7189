#pragma once
// Field-level checks of a program's encoded registers, for tests of encoded bytes: every
// copy of a register (or those of one task) against a value, one field against a value.
//
//   has_register(prog, reg::CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11})
//   has_field(prog, &reg::CNA_DATA_SIZE1::DATAIN_CHANNEL, 512, in_task{1})
//
// The bool forms are constexpr, for static_assert on programs built as constants; the
// report forms say what was found where (register, field, task, entry, value), for a
// test's failure message (regcmd/testing/doctest.hpp). A register written more than once
// is checked copy by copy: the NPU uses the later copy, so a stale one is a finding
// (regcmd-isa-reference, the 0x1040 note). A check of a register the program never
// writes fails: there is nothing to hold the value.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include <regcmd/core/entry.hpp>
#include <regcmd/core/layout.hpp>
#include <regcmd/decode/diff.hpp>
#include <regcmd/program/program.hpp>

namespace regcmd::testing {

// The entries and tasks of anything holding a program. `tasks` empty: entries alone, whose
// tasks end at each op-enable entry.
struct program_ref {
  std::span<const entry> entries;
  std::span<const task> tasks;
};

// A program<> value, a program_view, heap_code (anything with view()), or entries alone (a
// span, a vector, an array of entry).
template <class P>
constexpr program_ref program_of(const P& p) {
  if constexpr (std::is_same_v<P, program_ref>)
    return p;
  else if constexpr (std::is_same_v<P, program_view>)
    return {p.entries, p.tasks};
  else if constexpr (requires { p.view(); })
    return program_of(p.view());
  else
    return {std::span<const entry>(p), {}};
}

// A task chosen by index; the default, every task.
struct in_task {
  static constexpr std::size_t every = static_cast<std::size_t>(-1);
  std::size_t index = every;
  constexpr bool all() const { return index == every; }
};

// How many tasks the program has.
constexpr std::size_t task_count(const program_ref& p) {
  if (!p.tasks.empty()) return p.tasks.size();
  std::size_t n = 0;
  for (entry e : p.entries) n += kind_of(e) == entry_kind::op_enable;
  return n;
}

// The task entry `i` belongs to; task_count(p) for one in no task (zero padding, entries
// after the last op-enable).
constexpr std::size_t task_of(const program_ref& p, std::size_t i) {
  if (!p.tasks.empty()) {
    for (std::size_t k = 0; k < p.tasks.size(); ++k)
      if (i >= p.tasks[k].first && i < std::size_t{p.tasks[k].first} + p.tasks[k].count) return k;
    return p.tasks.size();
  }
  std::size_t t = 0;
  for (std::size_t j = 0; j < i && j < p.entries.size(); ++j) t += kind_of(p.entries[j]) == entry_kind::op_enable;
  return t;
}

// Whether entry `e` is a write of register R.
template <register_type R>
constexpr bool writes(entry e) {
  constexpr entry key = entry::make(R::block, 0, R::offset);
  return e.target() == key.target() && e.offset() == key.offset();
}

// Calls f(index, entry) for each copy of R in the chosen task(s), in program order.
template <register_type R, class F>
constexpr void each_copy(const program_ref& p, in_task t, F&& f) {
  for (std::size_t i = 0; i < p.entries.size(); ++i)
    if (writes<R>(p.entries[i]) && (t.all() || task_of(p, i) == t.index)) f(i, p.entries[i]);
}

// How many copies of R the chosen task(s) hold.
template <register_type R>
constexpr std::size_t copies_of(const program_ref& p, in_task t) {
  std::size_t n = 0;
  each_copy<R>(p, t, [&](std::size_t, entry) { ++n; });
  return n;
}

// Each copy of R holds `expected`, and there is one.
template <class P, register_type R>
constexpr bool has_register(const P& prog, const R& expected, in_task t = {}) {
  const result<std::uint32_t> bits = pack(expected);
  if (!bits) return false;
  bool found = false, all_equal = true;
  each_copy<R>(program_of(prog), t, [&](std::size_t, entry e) {
    found = true;
    all_equal = all_equal && e.value() == bits.value();
  });
  return found && all_equal;
}

// The bits of `value` as field F of a register places them (F's own checks apply: a value
// that does not fit does not compile in a constant expression).
template <class F, class V>
constexpr std::uint64_t field_bits(const V& value) {
  return F(value).raw_value();
}

// Each copy of the register holding `field` has it equal to `value`, and there is one.
template <class P, register_type R, class F, class V>
constexpr bool has_field(const P& prog, F R::*field, const V& value, in_task t = {}) {
  (void)field;
  const std::uint64_t want = field_bits<F>(value);
  bool found = false, all_equal = true;
  each_copy<R>(program_of(prog), t, [&](std::size_t, entry e) {
    found = true;
    all_equal = all_equal && F::shape.extract(e.value()) == want;
  });
  return found && all_equal;
}

// What a check found: ok, or one line per finding.
struct check_report {
  bool ok = true;
  std::string message;
  // A finding: its parts (strings, string views, literals) as one line.
  template <class... Parts>
  void add(const Parts&... parts) {
    ok = false;
    if (!message.empty()) message += '\n';
    append(message, parts...);
  }
};

namespace detail {
// "entry 12 (task 0, copy 2 of 2)"
inline std::string where(const program_ref& p, std::size_t index, std::size_t copy, std::size_t copies) {
  const std::size_t task = task_of(p, index);
  std::string s;
  if (task < task_count(p))
    append(s, "entry ", std::to_string(index), " (task ", std::to_string(task));
  else
    append(s, "entry ", std::to_string(index), " (in no task");
  append(s, ", copy ", std::to_string(copy), " of ", std::to_string(copies), ")");
  return s;
}

inline std::string scope(const program_ref& p, in_task t) {
  if (t.all()) return "the program";
  const std::size_t n = task_count(p);
  std::string s;
  append(s, "task ", std::to_string(t.index), " (the program has ", std::to_string(n), n == 1 ? " task)" : " tasks)");
  return s;
}

// The field of R whose bits are `mask`.
template <register_type R>
constexpr const field_info* field_by_mask(std::uint32_t mask) {
  for (const field_info& f : R::field_table)
    if (f.shape.mask() == mask) return &f;
  return nullptr;
}

// "DATA_BANK=1 WEIGHT_BANK=11": the fields of a value, the zero ones left out.
template <register_type R>
std::string fields_text(std::uint32_t bits) {
  std::string s;
  for (const field_info& f : R::field_table)
    if (const std::uint64_t v = f.shape.extract(bits); v != 0)
      append(s, s.empty() ? "" : " ", f.name, "=", field_text(f, v));
  return s.empty() ? "all fields 0" : s;
}
}  // namespace detail

// has_register, saying each copy that differs: its differing fields, found and expected.
template <class P, register_type R>
check_report register_report(const P& prog, const R& expected, in_task t = {}) {
  const program_ref p = program_of(prog);
  check_report r;
  const result<std::uint32_t> bits = pack(expected);
  if (!bits) {
    r.add(R::name, ": the expected value does not encode: ", bits.err().message());
    return r;
  }
  const std::size_t copies = copies_of<R>(p, t);
  if (copies == 0) {
    r.add(R::name, " is not written in ", detail::scope(p, t), " (expected ", detail::fields_text<R>(bits.value()),
          ")");
    return r;
  }
  std::size_t copy = 0;
  each_copy<R>(p, t, [&](std::size_t i, entry e) {
    ++copy;
    if (e.value() == bits.value()) return;
    std::string line;
    append(line, R::name, " at ", detail::where(p, i, copy, copies), ":");
    bool first = true;
    for (const field_info& f : R::field_table) {
      const std::uint64_t found = f.shape.extract(e.value()), want = f.shape.extract(bits.value());
      if (found == want) continue;
      append(line, first ? " " : "; ", f.name, " ", field_text(f, found), ", expected ", field_text(f, want));
      first = false;
    }
    if (first) append(line, " reserved bits ", hex(e.value() & ~defined_mask<R>(), 8), ", expected 0");
    r.add(line);
  });
  return r;
}

// has_field, saying each copy whose field differs: the value found and the one expected.
template <class P, register_type R, class F, class V>
check_report field_report(const P& prog, F R::*field, const V& value, in_task t = {}) {
  (void)field;
  const program_ref p = program_of(prog);
  const field_info* info = detail::field_by_mask<R>(F::shape.mask());
  std::string name;
  append(name, R::name, ".", info ? info->name : "?");
  check_report r;
  const std::uint64_t want = field_bits<F>(value);
  if (*check_field(F::shape, want) != no_violation) {
    r.add(name, ": the expected value ", std::to_string(want), " does not fit the field (bits ",
          std::to_string(F::shape.msb), ":", std::to_string(F::shape.lsb), ")");
    return r;
  }
  const std::size_t copies = copies_of<R>(p, t);
  if (copies == 0) {
    r.add(R::name, " is not written in ", detail::scope(p, t), " (expected ", name, " ", field_text(*info, want), ")");
    return r;
  }
  std::size_t copy = 0;
  each_copy<R>(p, t, [&](std::size_t i, entry e) {
    ++copy;
    const std::uint64_t found = F::shape.extract(e.value());
    if (found == want) return;
    r.add(name, " at ", detail::where(p, i, copy, copies), ": ", field_text(*info, found), ", expected ",
          field_text(*info, want));
  });
  return r;
}

}  // namespace regcmd::testing
