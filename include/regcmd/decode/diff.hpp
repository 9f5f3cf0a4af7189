#pragma once
// Comparing two regcmd dumps register by register: the diff half of the reference's
// capture -> diff -> decode method.
//
// Entries are matched by (target, offset, occurrence): the n-th write of a register in A
// against its n-th write in B, not index against index, so an inserted entry does not
// cascade, and a register written twice (the reference's 0x1040 lesson: the NPU uses the
// later copy) is compared copy by copy.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
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

inline std::vector<register_key> keys_of(std::span<const entry> dump) {
  std::map<std::pair<std::uint16_t, std::uint16_t>, std::uint32_t> seen;
  std::vector<register_key> keys;
  keys.reserve(dump.size());
  for (entry e : dump) keys.push_back({e.target(), e.offset(), seen[{e.target(), e.offset()}]++});
  return keys;
}

inline dump_diff diff_dumps(std::span<const entry> a, std::span<const entry> b, const diff_options& options = {}) {
  dump_diff out;
  out.entries_a = a.size();
  out.entries_b = b.size();
  auto ignored = [&](entry e) {
    return options.ignored.count({e.target(), e.offset()}) || (options.ignore_addresses && address_register_of(e));
  };
  const std::vector<register_key> ka = keys_of(a), kb = keys_of(b);
  std::map<register_key, std::size_t> in_b;
  for (std::size_t j = 0; j < b.size(); ++j) in_b[kb[j]] = j;
  std::set<register_key> matched;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ignored(a[i])) continue;
    const auto it = in_b.find(ka[i]);
    if (it == in_b.end()) {
      out.only_a.push_back({ka[i], i, a[i]});
      continue;
    }
    matched.insert(ka[i]);
    const entry eb = b[it->second];
    if (a[i] == eb) continue;
    register_difference d{ka[i], i, it->second, a[i], eb, {}};
    const decoded_entry da = decode(a[i]), db = decode(eb);
    for (std::size_t f = 0; f < da.field_count && f < db.field_count; ++f)
      if (da.fields()[f].value != db.fields()[f].value)
        d.fields.push_back({da.fields()[f].info, da.fields()[f].value, db.fields()[f].value});
    out.differences.push_back(std::move(d));
  }
  for (std::size_t j = 0; j < b.size(); ++j)
    if (!ignored(b[j]) && !matched.count(kb[j])) out.only_b.push_back({kb[j], j, b[j]});
  return out;
}

// "CNA_CBUF_CON0", or "CNA_CBUF_CON0#1" for a second copy.
inline std::string key_label(const register_key& k) {
  std::string name = register_label(decode(entry::make(k.target, 0, k.offset)));
  if (k.occurrence) name += "#" + std::to_string(k.occurrence);
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

// The first place the dumps part: the lowest index on A's side, else on B's.
inline std::string first_divergence(const dump_diff& d) {
  std::size_t best = SIZE_MAX;
  std::string line;
  for (const auto& x : d.differences)
    if (x.index_a < best) {
      best = x.index_a;
      line.clear();
      append(line, "A[", std::to_string(x.index_a), "] / B[", std::to_string(x.index_b), "] ", key_label(x.key));
    }
  for (const auto& x : d.only_a)
    if (x.index < best) {
      best = x.index;
      line.clear();
      append(line, "A[", std::to_string(x.index), "] ", key_label(x.key), " (not in B)");
    }
  if (best == SIZE_MAX && !d.only_b.empty())
    append(line, "B[", std::to_string(d.only_b.front().index), "] ", key_label(d.only_b.front().key), " (not in A)");
  return line;
}

inline std::string format_diff_text(const dump_diff& d) {
  std::string out;
  if (d.equal()) {
    append(out, "equal: ", std::to_string(d.entries_a), " entries\n");
    return out;
  }
  append(out, "first divergence: ", first_divergence(d), "\n");
  for (const auto& x : d.differences) {
    append(out, key_label(x.key), ":");
    if (x.fields.empty()) append(out, " ", hex(x.a.value(), 8), " -> ", hex(x.b.value(), 8));
    for (std::size_t i = 0; i < x.fields.size(); ++i) {
      const field_change& f = x.fields[i];
      append(out, i ? ", " : " ", f.field->name, " ", field_text(*f.field, f.a), " -> ", field_text(*f.field, f.b));
    }
    append(out, "  [A ", std::to_string(x.index_a), ", B ", std::to_string(x.index_b), "]\n");
  }
  for (const auto& x : d.only_a) append(out, "only in A: ", format_text(decode(x.value), x.index), "\n");
  for (const auto& x : d.only_b) append(out, "only in B: ", format_text(decode(x.value), x.index), "\n");
  append(out, "summary: ", std::to_string(d.differences.size()), " registers differ, ", std::to_string(d.only_a.size()),
         " only in A, ", std::to_string(d.only_b.size()), " only in B (", std::to_string(d.entries_a), " vs ",
         std::to_string(d.entries_b), " entries)\n");
  return out;
}

inline std::string format_diff_json(const dump_diff& d) {
  auto key_json = [](std::string& out, const register_key& k) {
    append(out, "\"register\":", json_string(key_label(k)), ",\"target\":", std::to_string(k.target),
           ",\"offset\":", std::to_string(k.offset), ",\"occurrence\":", std::to_string(k.occurrence));
  };
  auto sides = [&](std::string& out, const std::vector<one_side>& v) {
    out += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      append(out, i ? ",{" : "{");
      key_json(out, v[i].key);
      append(out, ",\"index\":", std::to_string(v[i].index), ",\"value\":", std::to_string(v[i].value.value()), "}");
    }
    out += ']';
  };
  std::string out;
  append(out, "{\"equal\":", d.equal() ? "true" : "false", ",\"first_divergence\":", json_string(first_divergence(d)),
         ",\"differences\":[");
  for (std::size_t i = 0; i < d.differences.size(); ++i) {
    const auto& x = d.differences[i];
    append(out, i ? ",{" : "{");
    key_json(out, x.key);
    append(out, ",\"index_a\":", std::to_string(x.index_a), ",\"index_b\":", std::to_string(x.index_b),
           ",\"value_a\":", std::to_string(x.a.value()), ",\"value_b\":", std::to_string(x.b.value()), ",\"fields\":[");
    for (std::size_t f = 0; f < x.fields.size(); ++f)
      append(out, f ? ",{" : "{", "\"name\":", json_string(x.fields[f].field->name), ",\"a\":",
             std::to_string(x.fields[f].a), ",\"b\":", std::to_string(x.fields[f].b), "}");
    out += "]}";
  }
  out += "],\"only_a\":";
  sides(out, d.only_a);
  out += ",\"only_b\":";
  sides(out, d.only_b);
  append(out, ",\"summary\":{\"differing\":", std::to_string(d.differences.size()), ",\"only_a\":",
         std::to_string(d.only_a.size()), ",\"only_b\":", std::to_string(d.only_b.size()), ",\"entries_a\":",
         std::to_string(d.entries_a), ",\"entries_b\":", std::to_string(d.entries_b), "}}\n");
  return out;
}

}  // namespace regcmd
