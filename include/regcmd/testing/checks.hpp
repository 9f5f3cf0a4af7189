#pragma once
// Field-level checks of a program's encoded registers, for tests of encoded bytes: every
// copy of a register (or those of one task) against a value, one field against a value.
//
//   has_register(prog, reg::CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11})
//   has_field(prog, &reg::CNA_DATA_SIZE1::DATAIN_CHANNEL, 512, in_task{1})
//   has_register(prog, reg::DPU_EW_OP_VALUE{.EW_OPERAND = 0x40000000}, element{3})
//   has_register(prog, reg::GLOBAL_OPERATION_ENABLE{.CNA_OP_EN = true, ...}, in_task{0})
//   has_register(prog, entry::make(0x1001, 0x53, 0x4040))   // a capture's (target, value, offset)
//
// A register array's element is named by its number (element{3}: DPU_EW_OP_VALUE_3); the
// op-enable mask is the task tail's 0x0081 entry; an entry names its register by the map.
// The bool forms are constexpr, for static_assert on programs built as constants; the
// report forms say what was found where (register, field, task, entry, value), for a
// test's failure message (regcmd/testing/doctest.hpp). A register written more than once
// is checked copy by copy: the NPU uses the later copy, so a stale one is a finding
// (regcmd-isa-reference, the 0x1040 note). A check of a register the program never writes
// fails: there is nothing to hold the value.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <regcmd/core/entry.hpp>
#include <regcmd/core/layout.hpp>
#include <regcmd/decode/diff.hpp>
#include <regcmd/decode/format.hpp>
#include <regcmd/decode/lookup.hpp>
#include <regcmd/task/program.hpp>
#include <regcmd/registers/global.hpp>

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

// An element of a register array, by its number as the register's name has it.
struct element {
  unsigned number = 0;
};

// How many tasks the program has.
constexpr std::size_t task_count(const program_ref& p) {
  if (!p.tasks.empty()) return p.tasks.size();
  std::size_t n = 0;
  for (entry e : p.entries) n += kind_of(e) == entry_kind::op_enable;
  return n;
}

// Calls f(index, task, entry) for every entry in order; `task` is task_count(p) for an
// entry in no task (zero padding, entries after the last op-enable). Tasks are in program
// order (program_view's invariant), so the task is carried along, not searched.
template <class F>
constexpr void each_entry(const program_ref& p, F&& f) {
  std::size_t k = 0;
  for (std::size_t i = 0; i < p.entries.size(); ++i) {
    std::size_t task = k;
    if (!p.tasks.empty()) {
      while (k < p.tasks.size() && i >= std::size_t{p.tasks[k].first} + p.tasks[k].count) ++k;
      task = k < p.tasks.size() && i >= p.tasks[k].first ? k : p.tasks.size();
    }
    f(i, task, p.entries[i]);
    if (p.tasks.empty()) k += kind_of(p.entries[i]) == entry_kind::op_enable;
  }
}

// The task entry `i` belongs to, as each_entry says it.
constexpr std::size_t task_of(const program_ref& p, std::size_t i) {
  std::size_t found = task_count(p);
  each_entry(p, [&](std::size_t j, std::size_t task, entry) {
    if (j == i) found = task;
  });
  return found;
}

// Where a register is written and how its value reads: its entry's target and offset, its
// name and fields (a register array's element has its own names).
struct register_site {
  std::uint16_t target = 0, offset = 0;
  std::string_view name;
  std::span<const field_info> fields;

  constexpr bool written_by(entry e) const { return e.target() == target && e.offset() == offset; }
  // The field whose bits are `mask`.
  constexpr const field_info* field_by_mask(std::uint64_t mask) const {
    for (const field_info& f : fields)
      if (f.shape.mask() == mask) return &f;
    return nullptr;
  }
};

// A register's site and the value expected there, or why the value does not encode.
struct expected_value {
  register_site site;
  result<std::uint32_t> bits;
};

// A register the checks take by its type: one of the map, or the op-enable mask (written
// through the task tail's 0x0081 entry, registers/global.hpp).
template <class R>
concept checked_register = register_type<R> || std::is_same_v<R, reg::GLOBAL_OPERATION_ENABLE>;

template <checked_register R>
constexpr register_site site_of() {
  if constexpr (std::is_same_v<R, reg::GLOBAL_OPERATION_ENABLE>) {
    return {op_enable_target, op_enable_offset, R::name, fields_of<R>};
  } else {
    const entry key = entry::make(R::block, 0, R::offset);
    return {key.target(), key.offset(), R::name, fields_of<R>};
  }
}
// Whether array A has an element of that number.
template <register_array A>
constexpr bool has_element(element n) {
  return n.number >= A::first_number && n.number - A::first_number < A::count;
}
// Element `number` of array A, or its first one (for the name) when there is no such element.
template <register_array A>
constexpr register_site site_of(element n) {
  const bool in_range = has_element<A>(n);
  const auto& info = array_elements<A>[in_range ? n.number - A::first_number : 0];
  const entry key = entry::make(A::block, 0, info.offset);
  return {key.target(), key.offset(), in_range ? info.name : A::name, info.fields};
}

// The register an entry writes, as the register map knows it (unnamed, without fields,
// when it does not).
constexpr register_site site_of(entry e) {
  if (kind_of(e) == entry_kind::op_enable) return site_of<reg::GLOBAL_OPERATION_ENABLE>();
  if (kind_of(e) == entry_kind::register_write)
    if (const register_info* r = find_register(*block_from_target(e.target()), e.offset()))
      return {e.target(), e.offset(), r->name, r->fields};
  return {e.target(), e.offset(), {}, {}};
}

// An entry as typed from a capture or a listing: its register must hold its value.
constexpr expected_value expected_of(entry e) { return {site_of(e), e.value()}; }
template <checked_register R>
constexpr expected_value expected_of(const R& value) {
  return {site_of<R>(), pack(value)};
}
template <register_array A>
constexpr expected_value expected_of(const A& value, element n) {
  const result<entry> e = encode(value, n.number);
  if (!e) return {site_of<A>(n), e.err()};
  return {site_of<A>(n), e.value().value()};
}

// Calls f(index, task, entry) for each copy of the site's register in the chosen task(s).
template <class F>
constexpr void each_copy(const program_ref& p, const register_site& site, in_task t, F&& f) {
  each_entry(p, [&](std::size_t i, std::size_t task, entry e) {
    if (site.written_by(e) && (t.all() || task == t.index)) f(i, task, e);
  });
}

constexpr std::size_t copies_of(const program_ref& p, const register_site& site, in_task t = {}) {
  std::size_t n = 0;
  each_copy(p, site, t, [&](std::size_t, std::size_t, entry) { ++n; });
  return n;
}
// How many copies of register R the chosen task(s) of a program hold.
template <register_type R, class P>
constexpr std::size_t copies_of(const P& prog, in_task t = {}) {
  return copies_of(program_of(prog), site_of<R>(), t);
}

// Each copy holds the expected value, and there is one.
constexpr bool holds(const program_ref& p, const expected_value& want, in_task t) {
  if (!want.bits) return false;
  bool found = false, all_equal = true;
  each_copy(p, want.site, t, [&](std::size_t, std::size_t, entry e) {
    found = true;
    all_equal = all_equal && e.value() == want.bits.value();
  });
  return found && all_equal;
}

template <class P, class R>
  requires requires(const R& r) { expected_of(r); }
constexpr bool has_register(const P& prog, const R& expected, in_task t = {}) {
  return holds(program_of(prog), expected_of(expected), t);
}
template <class P, register_array A>
constexpr bool has_register(const P& prog, const A& expected, element n, in_task t = {}) {
  return holds(program_of(prog), expected_of(expected, n), t);
}

// The bits of `value` as field F of a register places them (F's own checks apply: a value
// that does not fit does not compile in a constant expression).
template <class F, class V>
constexpr std::uint64_t field_bits(const V& value) {
  return F(value).raw_value();
}

// Each copy of the site's register has field F equal to `want`, and there is one.
template <class F>
constexpr bool field_holds(const program_ref& p, const register_site& site, std::uint64_t want, in_task t) {
  bool found = false, all_equal = true;
  each_copy(p, site, t, [&](std::size_t, std::size_t, entry e) {
    found = true;
    all_equal = all_equal && F::shape.extract(e.value()) == want;
  });
  return found && all_equal;
}

template <class P, checked_register R, class F, class V>
constexpr bool has_field(const P& prog, F R::*, const V& value, in_task t = {}) {
  return field_holds<F>(program_of(prog), site_of<R>(), field_bits<F>(value), t);
}
template <class P, register_array A, class F, class V>
constexpr bool has_field(const P& prog, F A::*, const V& value, element n, in_task t = {}) {
  return has_element<A>(n) && field_holds<F>(program_of(prog), site_of<A>(n), field_bits<F>(value), t);
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
inline std::string where(const program_ref& p, std::size_t index, std::size_t task, std::size_t copy,
                         std::size_t copies) {
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

// "DATA_BANK=1 WEIGHT_BANK=11": the fields of a value, the zero ones left out.
inline std::string fields_text(const register_site& site, std::uint32_t bits) {
  std::string s;
  for (const field_info& f : site.fields)
    if (const std::uint64_t v = f.shape.extract(bits); v != 0)
      append(s, s.empty() ? "" : " ", f.name, "=", field_text(f, v));
  if (site.fields.empty()) return hex(bits, 8);
  return s.empty() ? "all fields 0" : s;
}

// The register's name, or its target and offset when the map has none.
inline std::string label(const register_site& site) {
  if (!site.name.empty()) return std::string(site.name);
  std::string s;
  append(s, "register ", hex(site.offset, 4), " of target ", hex(site.target, 4));
  return s;
}

inline check_report register_report(const program_ref& p, const expected_value& want, in_task t) {
  check_report r;
  const register_site& site = want.site;
  if (!want.bits) {
    r.add(label(site), ": the expected value does not encode: ", to_string(want.bits.err()));
    return r;
  }
  const std::uint32_t bits = want.bits.value();
  const std::size_t copies = copies_of(p, site, t);
  if (copies == 0) {
    r.add(label(site), " is not written in ", scope(p, t), " (expected ", fields_text(site, bits), ")");
    return r;
  }
  std::size_t copy = 0;
  each_copy(p, site, t, [&](std::size_t i, std::size_t task, entry e) {
    ++copy;
    if (e.value() == bits) return;
    std::string line;
    append(line, label(site), " at ", where(p, i, task, copy, copies), ":");
    bool first = true;
    for (const field_info& f : site.fields) {
      const std::uint64_t found = f.shape.extract(e.value()), expected = f.shape.extract(bits);
      if (found == expected) continue;
      append(line, first ? " " : "; ", f.name, " ", field_text(f, found), ", expected ", field_text(f, expected));
      first = false;
    }
    if (const std::uint32_t rest = ~defined_mask(site.fields); (e.value() & rest) != (bits & rest))
      append(line, first ? " " : "; ", site.fields.empty() ? "value " : "bits no field defines ",
             hex(e.value() & rest, 8), ", expected ", hex(bits & rest, 8));
    r.add(line);
  });
  return r;
}

template <class F>
check_report field_report(const program_ref& p, const register_site& site, std::uint64_t want, in_task t) {
  const field_info* info = site.field_by_mask(F::shape.mask());
  std::string name;
  append(name, site.name, ".", info ? info->name : "?");
  check_report r;
  if (*check_field(F::shape, want) != no_violation) {
    r.add(name, ": the expected value ", std::to_string(want), " does not fit the field (bits ",
          std::to_string(F::shape.msb), ":", std::to_string(F::shape.lsb), ")");
    return r;
  }
  const std::size_t copies = copies_of(p, site, t);
  if (copies == 0) {
    r.add(site.name, " is not written in ", scope(p, t), " (expected ", name, " ", field_text(*info, want), ")");
    return r;
  }
  std::size_t copy = 0;
  each_copy(p, site, t, [&](std::size_t i, std::size_t task, entry e) {
    ++copy;
    const std::uint64_t found = F::shape.extract(e.value());
    if (found == want) return;
    r.add(name, " at ", where(p, i, task, copy, copies), ": ", field_text(*info, found), ", expected ",
          field_text(*info, want));
  });
  return r;
}
}  // namespace detail

// has_register, saying each copy that differs: its differing fields, found and expected.
template <class P, class R>
  requires requires(const R& r) { expected_of(r); }
check_report register_report(const P& prog, const R& expected, in_task t = {}) {
  return detail::register_report(program_of(prog), expected_of(expected), t);
}
template <class P, register_array A>
check_report register_report(const P& prog, const A& expected, element n, in_task t = {}) {
  return detail::register_report(program_of(prog), expected_of(expected, n), t);
}

// has_field, saying each copy whose field differs: the value found and the one expected.
template <class P, checked_register R, class F, class V>
check_report field_report(const P& prog, F R::*, const V& value, in_task t = {}) {
  return detail::field_report<F>(program_of(prog), site_of<R>(), field_bits<F>(value), t);
}
template <class P, register_array A, class F, class V>
check_report field_report(const P& prog, F A::*, const V& value, element n, in_task t = {}) {
  if (!has_element<A>(n)) {
    check_report r;
    r.add(A::name, " has no element ", std::to_string(n.number), " (elements ", std::to_string(A::first_number), " to ",
          std::to_string(A::first_number + A::count - 1), ")");
    return r;
  }
  return detail::field_report<F>(program_of(prog), site_of<A>(n), field_bits<F>(value), t);
}

}  // namespace regcmd::testing
