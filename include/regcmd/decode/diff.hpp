#pragma once
// Comparing two regcmd dumps register by register: the diff half of the reference's
// capture -> diff -> decode method.
//
// Entries are matched by (target, offset, occurrence): the n-th write of a register in A
// against its n-th write in B, not index against index, so an inserted entry does not
// cascade, and a register written twice (the reference's 0x1040 lesson: the NPU uses the
// later copy) is compared copy by copy.
//
// Captures run to millions of entries and boards have 4 GB, so a comparison keeps two
// 32-bit numbers an entry besides the entries (registers are grouped by a counting sort:
// linear, whatever the dumps hold), and makes its findings one at a time for a report
// written as it goes (dump_comparison, write_diff_text, write_diff_json). diff_dumps
// collects them for callers that want them all.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <regcmd/core/entry.hpp>
#include <regcmd/decode/decode.hpp>
#include <regcmd/decode/format.hpp>

namespace regcmd {

struct register_key {
  std::uint16_t target = 0;
  std::uint16_t offset = 0;
  std::uint32_t occurrence = 0;  // 0 for the first write of this register in the dump
  friend constexpr auto operator<=>(const register_key&, const register_key&) = default;
};

struct field_change {
  const field_info* field;
  std::uint64_t a, b;
};

struct register_difference {
  register_key key;
  std::size_t index_a, index_b;
  entry a, b;
  std::vector<field_change> fields;  // empty for a register the map does not know
};

struct one_side {
  register_key key;
  std::size_t index;
  entry value;
};

struct dump_diff {
  std::vector<register_difference> differences;
  std::vector<one_side> only_a, only_b;
  std::size_t entries_a = 0, entries_b = 0;
  bool equal() const { return differences.empty() && only_a.empty() && only_b.empty(); }
};

struct diff_options {
  std::set<std::pair<std::uint16_t, std::uint16_t>> ignored;  // (target, offset)
  bool ignore_addresses = false;  // every register with an address field, PC_BASE_ADDRESS too
};

// What a report says before and after its findings.
struct diff_summary {
  std::size_t differing = 0, only_a = 0, only_b = 0;
  std::size_t entries_a = 0, entries_b = 0;
  std::string first_divergence;  // empty when equal
  bool equal() const { return differing == 0 && only_a == 0 && only_b == 0; }
};

// "CNA_CBUF_CON0", or "CNA_CBUF_CON0#1" for a second copy.
inline std::string key_label(const register_key& k) {
  std::string name = register_label(decode(entry::make(k.target, 0, k.offset)));
  if (k.occurrence) {
    name += '#';
    name += std::to_string(k.occurrence);
  }
  return name;
}

inline std::string field_text(const field_info& f, std::uint64_t v) {
  if (f.shape.kind == field_kind::enumeration)
    if (const std::string_view name = f.shape.enumeration->name_of(static_cast<std::uint32_t>(v)); !name.empty())
      return std::string(name);
  if (f.shape.kind == field_kind::address) return hex(v, 8);
  return std::to_string(v);
}

// Appends parts to a string. (Chains of operator+ on literals trip a false -Wrestrict in
// g++ 12 at -O3.)
template <class... Parts>
void append(std::string& out, const Parts&... parts) {
  (out.append(std::string_view(parts)), ...);
}

// Where the dumps part, as the first line of a report says it.
inline std::string divergence_at(const register_difference& x) {
  std::string line;
  append(line, "A[", std::to_string(x.index_a), "] / B[", std::to_string(x.index_b), "] ", key_label(x.key));
  return line;
}
inline std::string divergence_at(const one_side& x, bool in_a) {
  std::string line;
  append(line, in_a ? "A[" : "B[", std::to_string(x.index), "] ", key_label(x.key), in_a ? " (not in B)" : " (not in A)");
  return line;
}

// Two dumps paired register by register; the findings are made on request, in the order a
// report lists them. The dumps must outlive the comparison and hold fewer than 2^32 entries
// each (read_dump stops at 64 Mi).
class dump_comparison {
 public:
  dump_comparison(std::span<const entry> a, std::span<const entry> b, diff_options options = {})
      : a_(a), b_(b), options_(std::move(options)) {
    pair();
    summarize();
  }

  const diff_summary& summary() const { return summary_; }

  // f(register_difference) for each register whose value differs, in A's order.
  template <class F>
  void each_difference(F&& f) const {
    for (std::size_t i = 0; i < a_.size(); ++i)
      if (!ignored(a_[i]) && partner_a_[i] != unpaired && a_[i] != b_[partner_a_[i]]) f(difference(i));
  }
  // f(one_side) for each write A has and B has not, in A's order.
  template <class F>
  void each_only_a(F&& f) const {
    for (std::size_t i = 0; i < a_.size(); ++i)
      if (!ignored(a_[i]) && partner_a_[i] == unpaired) f(one_side{key(a_[i], occurrence_a_[i]), i, a_[i]});
  }
  // f(one_side) for each write B has and A has not, in B's order.
  template <class F>
  void each_only_b(F&& f) const {
    for (std::size_t j = 0; j < b_.size(); ++j)
      if (!ignored(b_[j]) && partner_b_[j] == unpaired) f(one_side{key(b_[j], occurrence_b_[j]), j, b_[j]});
  }

 private:
  static constexpr std::uint32_t unpaired = UINT32_MAX;

  static std::uint32_t register_of(entry e) { return std::uint32_t{e.target()} << 16 | e.offset(); }
  static register_key key(entry e, std::uint32_t occurrence) { return {e.target(), e.offset(), occurrence}; }

  // Indices of `d` grouped by register, each register's writes in dump order: two stable
  // counting-sort passes, by offset, then by target.
  static std::vector<std::uint32_t> grouped_by_register(std::span<const entry> d) {
    std::vector<std::uint32_t> by_offset(d.size()), grouped(d.size()), start(65537);
    for (entry e : d) ++start[e.offset() + 1u];
    std::partial_sum(start.begin(), start.end(), start.begin());
    for (std::uint32_t i = 0; i < d.size(); ++i) by_offset[start[d[i].offset()]++] = i;
    std::fill(start.begin(), start.end(), 0);
    for (entry e : d) ++start[e.target() + 1u];
    std::partial_sum(start.begin(), start.end(), start.begin());
    for (std::uint32_t i : by_offset) grouped[start[d[i].target()]++] = i;
    return grouped;
  }

  // Walks both dumps' groups in register order, numbering each register's writes and
  // pairing the n-th in A with the n-th in B.
  void pair() {
    const std::vector<std::uint32_t> ga = grouped_by_register(a_), gb = grouped_by_register(b_);
    occurrence_a_.resize(a_.size());
    occurrence_b_.resize(b_.size());
    partner_a_.assign(a_.size(), unpaired);
    partner_b_.assign(b_.size(), unpaired);
    std::size_t i = 0, j = 0;
    while (i < ga.size() || j < gb.size()) {
      const std::uint32_t r = i == ga.size()   ? register_of(b_[gb[j]])
                              : j == gb.size() ? register_of(a_[ga[i]])
                                               : std::min(register_of(a_[ga[i]]), register_of(b_[gb[j]]));
      for (std::uint32_t n = 0;; ++n) {
        const bool in_a = i < ga.size() && register_of(a_[ga[i]]) == r;
        const bool in_b = j < gb.size() && register_of(b_[gb[j]]) == r;
        if (!in_a && !in_b) break;
        if (in_a) occurrence_a_[ga[i]] = n;
        if (in_b) occurrence_b_[gb[j]] = n;
        if (in_a && in_b) {
          partner_a_[ga[i]] = gb[j];
          partner_b_[gb[j]] = ga[i];
        }
        i += in_a;
        j += in_b;
      }
    }
  }

  // Counts the findings and finds the first: the lowest index on A's side, else on B's.
  void summarize() {
    summary_.entries_a = a_.size();
    summary_.entries_b = b_.size();
    for (std::size_t i = 0; i < a_.size(); ++i) {
      if (ignored(a_[i])) continue;
      const std::uint32_t p = partner_a_[i];
      if (p == unpaired) ++summary_.only_a;
      else if (a_[i] != b_[p]) ++summary_.differing;
      else continue;
      if (summary_.first_divergence.empty())
        summary_.first_divergence = p == unpaired ? divergence_at(one_side{key(a_[i], occurrence_a_[i]), i, a_[i]}, true)
                                                  : divergence_at(difference(i));
    }
    for (std::size_t j = 0; j < b_.size(); ++j) {
      if (ignored(b_[j]) || partner_b_[j] != unpaired) continue;
      if (summary_.only_b++ == 0 && summary_.first_divergence.empty())
        summary_.first_divergence = divergence_at(one_side{key(b_[j], occurrence_b_[j]), j, b_[j]}, false);
    }
  }

  bool ignored(entry e) const {
    return options_.ignored.count({e.target(), e.offset()}) || (options_.ignore_addresses && address_register_of(e));
  }

  register_difference difference(std::size_t i) const {
    const std::size_t j = partner_a_[i];
    register_difference d{key(a_[i], occurrence_a_[i]), i, j, a_[i], b_[j], {}};
    const decoded_entry da = decode(a_[i]), db = decode(b_[j]);
    for (std::size_t f = 0; f < da.field_count && f < db.field_count; ++f)
      if (da.fields()[f].value != db.fields()[f].value)
        d.fields.push_back({da.fields()[f].info, da.fields()[f].value, db.fields()[f].value});
    return d;
  }

  std::span<const entry> a_, b_;
  diff_options options_;
  std::vector<std::uint32_t> occurrence_a_, occurrence_b_;  // n-th write of its register in its dump
  std::vector<std::uint32_t> partner_a_, partner_b_;        // index of the paired entry, or unpaired
  diff_summary summary_;
};

inline dump_diff diff_dumps(std::span<const entry> a, std::span<const entry> b, const diff_options& options = {}) {
  const dump_comparison c(a, b, options);
  dump_diff out;
  out.entries_a = a.size();
  out.entries_b = b.size();
  c.each_difference([&](register_difference x) { out.differences.push_back(std::move(x)); });
  c.each_only_a([&](one_side x) { out.only_a.push_back(x); });
  c.each_only_b([&](one_side x) { out.only_b.push_back(x); });
  return out;
}

// The first place the dumps part: the lowest index on A's side, else on B's.
inline std::string first_divergence(const dump_diff& d) {
  const register_difference* difference = d.differences.empty() ? nullptr : &d.differences.front();
  const one_side* only_a = d.only_a.empty() ? nullptr : &d.only_a.front();
  if (difference && (!only_a || difference->index_a < only_a->index)) return divergence_at(*difference);
  if (only_a) return divergence_at(*only_a, true);
  if (!d.only_b.empty()) return divergence_at(d.only_b.front(), false);
  return {};
}

// The text report, handed to write(std::string_view) a line at a time.
template <class Findings, class Write>
void write_diff_text(const Findings& d, Write&& write) {
  const diff_summary& s = d.summary();
  std::string line;
  if (s.equal()) {
    append(line, "equal: ", std::to_string(s.entries_a), " entries\n");
    write(std::string_view(line));
    return;
  }
  append(line, "first divergence: ", s.first_divergence, "\n");
  write(std::string_view(line));
  d.each_difference([&](const register_difference& x) {
    line.clear();
    append(line, key_label(x.key), ":");
    if (x.fields.empty()) append(line, " ", hex(x.a.value(), 8), " -> ", hex(x.b.value(), 8));
    for (std::size_t i = 0; i < x.fields.size(); ++i) {
      const field_change& f = x.fields[i];
      append(line, i ? ", " : " ", f.field->name, " ", field_text(*f.field, f.a), " -> ", field_text(*f.field, f.b));
    }
    append(line, "  [A ", std::to_string(x.index_a), ", B ", std::to_string(x.index_b), "]\n");
    write(std::string_view(line));
  });
  auto side = [&](const char* label) {
    return [&write, &line, label](const one_side& x) {
      line.clear();
      append(line, label, format_text(decode(x.value), x.index), "\n");
      write(std::string_view(line));
    };
  };
  d.each_only_a(side("only in A: "));
  d.each_only_b(side("only in B: "));
  line.clear();
  append(line, "summary: ", std::to_string(s.differing), " registers differ, ", std::to_string(s.only_a),
         " only in A, ", std::to_string(s.only_b), " only in B (", std::to_string(s.entries_a), " vs ",
         std::to_string(s.entries_b), " entries)\n");
  write(std::string_view(line));
}

// The JSON report, one object on one line, handed to write(std::string_view) a finding at a time.
template <class Findings, class Write>
void write_diff_json(const Findings& d, Write&& write) {
  const diff_summary& s = d.summary();
  auto key_json = [](std::string& out, const register_key& k) {
    append(out, "\"register\":", json_string(key_label(k)), ",\"target\":", std::to_string(k.target),
           ",\"offset\":", std::to_string(k.offset), ",\"occurrence\":", std::to_string(k.occurrence));
  };
  std::string out;
  bool first = true;
  append(out, "{\"equal\":", s.equal() ? "true" : "false", ",\"first_divergence\":", json_string(s.first_divergence),
         ",\"differences\":[");
  write(std::string_view(out));
  d.each_difference([&](const register_difference& x) {
    out.clear();
    append(out, first ? "{" : ",{");
    first = false;
    key_json(out, x.key);
    append(out, ",\"index_a\":", std::to_string(x.index_a), ",\"index_b\":", std::to_string(x.index_b),
           ",\"value_a\":", std::to_string(x.a.value()), ",\"value_b\":", std::to_string(x.b.value()), ",\"fields\":[");
    for (std::size_t f = 0; f < x.fields.size(); ++f)
      append(out, f ? ",{" : "{", "\"name\":", json_string(x.fields[f].field->name), ",\"a\":",
             std::to_string(x.fields[f].a), ",\"b\":", std::to_string(x.fields[f].b), "}");
    out += "]}";
    write(std::string_view(out));
  });
  auto side = [&](const one_side& x) {
    out.clear();
    append(out, first ? "{" : ",{");
    first = false;
    key_json(out, x.key);
    append(out, ",\"index\":", std::to_string(x.index), ",\"value\":", std::to_string(x.value.value()), "}");
    write(std::string_view(out));
  };
  write(std::string_view("],\"only_a\":["));
  first = true;
  d.each_only_a(side);
  write(std::string_view("],\"only_b\":["));
  first = true;
  d.each_only_b(side);
  out.clear();
  append(out, "],\"summary\":{\"differing\":", std::to_string(s.differing), ",\"only_a\":", std::to_string(s.only_a),
         ",\"only_b\":", std::to_string(s.only_b), ",\"entries_a\":", std::to_string(s.entries_a),
         ",\"entries_b\":", std::to_string(s.entries_b), "}}\n");
  write(std::string_view(out));
}

namespace detail {
// A collected comparison, as the report writers read findings.
struct collected_findings {
  const dump_diff& d;
  diff_summary s;
  const diff_summary& summary() const { return s; }
  template <class F>
  void each_difference(F&& f) const {
    for (const register_difference& x : d.differences) f(x);
  }
  template <class F>
  void each_only_a(F&& f) const {
    for (const one_side& x : d.only_a) f(x);
  }
  template <class F>
  void each_only_b(F&& f) const {
    for (const one_side& x : d.only_b) f(x);
  }
};

inline collected_findings collected(const dump_diff& d) {
  return {d, {d.differences.size(), d.only_a.size(), d.only_b.size(), d.entries_a, d.entries_b, first_divergence(d)}};
}
}  // namespace detail

inline std::string format_diff_text(const dump_diff& d) {
  std::string out;
  write_diff_text(detail::collected(d), [&](std::string_view s) { out += s; });
  return out;
}

inline std::string format_diff_json(const dump_diff& d) {
  std::string out;
  write_diff_json(detail::collected(d), [&](std::string_view s) { out += s; });
  return out;
}

}  // namespace regcmd
