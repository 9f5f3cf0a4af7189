#pragma once
// A dump as a C++ header declaring the program as a constexpr template (what `regcmd-dis
// --format cpp` writes: regcmd/programs/captured/program.hpp), registers by name and fields by name.
//
// A task is the entries up to and including an op-enable entry. Its tail (up to three PC,
// zero or 0x0041 preamble entries just before the op-enable) is left to the program writer, which
// writes regcmd's linked tail; zero entries between tasks are padding and are left out; both
// are listed in the header's comment. Every address register becomes a slot of the role its
// register implies (feature, weight, output, ...), or `intermediate` where a later task reads
// bytes an earlier task wrote (the DMAs' extents as the registers give them); its offset is
// the captured address less the lowest non-zero captured address of its role (0 in a capture
// with its addresses zeroed).

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <regcmd/core/entry.hpp>
#include <regcmd/decode/dump.hpp>
#include <regcmd/decode/format.hpp>
#include <regcmd/decode/lookup.hpp>
#include <regcmd/task/program.hpp>
#include <regcmd/task/writer.hpp>
#include <regcmd/registers/all.hpp>
#include <regcmd/rules/dma_extent.hpp>
#include <regcmd/rules/program_rules.hpp>

namespace regcmd::cpp_header {

struct cpp_template_options {
  std::string name;        // the variable: a C++ identifier
  std::string name_space;  // the namespace it is declared in
  std::string source;      // where the dump came from, for the comment
  bool pingpong = true;    // how the captured program was submitted
  // A program regcmd built rather than a dump: its own slots (role and offset as built), which
  // then replace the ones the registers and the accesses would suggest.
  std::span<const slot> program_slots{};
  bool delta_tasks = false;  // such a program's own, instead of what the entries suggest
};

struct cpp_template {
  std::string text;   // the header, when error is empty
  std::string error;  // one line naming the reason
};

// C++20's keywords and alternative tokens: spelled like identifiers, usable as none.
constexpr bool is_keyword(std::string_view s) {
  constexpr std::string_view words[] = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
      "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
      "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
  for (std::string_view w : words)
    if (w == s) return true;
  return false;
}

constexpr bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9') || is_keyword(s)) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// Why the identifier `s` may not name the header's variable (or, `name_space`, its
// namespace), empty when it may: a name the implementation reserves ([lex.name]: any with
// "__", one starting with '_' at namespace scope, so _Pragma and __asm__ too; POSIX: one
// ending in "_t", as the includes' uint32_t), one spelled like a macro (NULL, EOF, INT32_MAX:
// all capitals, which a macro the includes define would replace; and the lowercase ones the
// C library and g++'s gnu++ modes define), a namespace the standard reserves (std, std
// followed by digits, posix), or main, a namespace of which meets ::main.
inline std::string reserved_reason(std::string_view s, bool name_space) {
  if (s.find("__") != std::string_view::npos) return "holds '__', which the implementation reserves";
  if (s.starts_with('_')) return "starts with '_', which the implementation reserves at namespace scope";
  if (s.ends_with("_t")) return "ends in '_t', which POSIX reserves for types (the includes declare uint32_t, size_t)";
  bool lower = false;
  for (char c : s) lower = lower || (c >= 'a' && c <= 'z');
  if (!lower) return "is all capitals, as macros are (NULL, EOF, INT32_MAX): a macro of that name would replace it";
  constexpr std::string_view lowercase_macros[] = {"errno",  "linux",  "unix",    "i386",   "assert",  "offsetof",
                                                   "stdin",  "stdout", "stderr",  "setjmp", "va_arg",  "va_copy",
                                                   "va_end", "va_start", "alloca", "major",  "minor",   "makedev"};
  for (std::string_view m : lowercase_macros)
    if (s == m) return "is a macro the C library or g++ (gnu++ modes) defines: it would replace the name";
  if (name_space && s == "main") return "is main: a namespace of that name meets the program's ::main";
  const bool std_digits = s.starts_with("std") && s.size() > 3 &&
                          s.substr(3).find_first_not_of("0123456789") == std::string_view::npos;
  if (name_space && (s == "std" || std_digits || s == "posix")) return "is a namespace the standard reserves";
  return {};
}

// A file's stem as an identifier: other characters become '_' (runs of them one), a leading
// digit or '_' gets "captured" before it, a name in capitals is lowered, a keyword gets
// "_program" after it: never a name is_identifier or reserved_reason refuses.
inline std::string identifier_from(std::string_view path) {
  std::string_view stem =
      path.substr(path.find_last_of('/') == std::string_view::npos ? 0 : path.find_last_of('/') + 1);
  stem = stem.substr(0, stem.find('.'));
  std::string out;
  for (char c : stem.empty() || stem == "-" ? std::string_view("captured_program") : stem) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (word) out += c;
    else if (out.empty() || out.back() != '_') out += '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(0, "captured_");
  if (out[0] == '_') out.insert(0, "captured");
  if (!reserved_reason(out, false).empty())
    for (char& c : out) c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  if (is_keyword(out) || !reserved_reason(out, false).empty()) out += "_program";  // errno, size_t
  return out;
}

// Text from outside (a file name) as it may stand in a // comment: printable ASCII as it is,
// the backslash and every other byte as \xNN, so no newline, line splice or bidirectional
// control character (Unicode's, in UTF-8) can end the comment or reorder what follows it.
inline std::string comment_text(std::string_view s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    }
  }
  return out;
}

namespace detail {

using regcmd::hex;
inline std::string number(std::uint64_t v) { return v < 65536 ? std::to_string(v) : hex(v, 1); }

// The role a captured address register's slot takes, by its register.
inline operand_role role_of_register(std::uint16_t offset) {
  using namespace reg;
  switch (offset) {
    case CNA_DCOMP_ADDR0::offset:
      return operand_role::weight;
    case DPU_DST_BASE_ADDR::offset:
    case PPU_DST_BASE_ADDR::offset:
      return operand_role::output;
    case DPU_RDMA_RDMA_BS_BASE_ADDR::offset:
      return operand_role::bias;
    case DPU_RDMA_RDMA_BN_BASE_ADDR::offset:
    case DPU_RDMA_RDMA_EW_BASE_ADDR::offset:
      return operand_role::ew_operand;
    case PC_BASE_ADDRESS::offset:
    case PC_TASK_DMA_BASE_ADDR::offset:
      return operand_role::next_program;
    default:
      return operand_role::feature;  // CNA_FEATURE_DATA_ADDR, the RDMAs' sources
  }
}
// A DMA that may read what an earlier task wrote (not the weights, not a bias).
inline bool may_read_intermediate(std::uint16_t offset) {
  using namespace reg;
  return offset == CNA_FEATURE_DATA_ADDR::offset || offset == DPU_RDMA_RDMA_SRC_BASE_ADDR::offset ||
         offset == DPU_RDMA_RDMA_EW_BASE_ADDR::offset || offset == PPU_RDMA_RDMA_SRC_BASE_ADDR::offset;
}

// One register write as C++: `w.put(R{.F = v, ...});`, with the fields whose value is not 0
// and every enum field (some enums' 0 is a value that must be named: precision's int8); an
// all-zero register as R::zeroed(). None when a field holds a value its enum does not declare.
inline std::optional<std::string> typed_put(const register_info& r, std::uint32_t value) {
  std::string init;
  if (value == 0) {
    init = std::string(r.declared_as) + "::zeroed()";
  } else {
    init = std::string(r.declared_as) + "{";
    bool first = true;
    for (const field_info& f : r.declared_fields) {
      const std::uint64_t v = f.shape.extract(value);
      if (v == 0 && f.shape.kind != field_kind::enumeration) continue;  // enums by name, 0 included
      init += first ? "." : ", .";
      first = false;
      init += std::string(f.name) + " = ";
      if (f.shape.kind == field_kind::enumeration && !f.shape.enumeration->contains(static_cast<std::uint32_t>(v)))
        return std::nullopt;  // no enumerator to name it by
      if (f.shape.kind == field_kind::enumeration)
        init += std::string(f.shape.enumeration->name) +
                "::" + std::string(f.shape.enumeration->name_of(static_cast<std::uint32_t>(v)));
      else if (f.shape.kind == field_kind::address)
        init += hex(v, 8);
      else
        init += number(v);
    }
    init += "}";
  }
  if (r.declared_as != r.name) return "w.put(" + init + ", " + std::to_string(r.element) + ");";
  return "w.put(" + init + ");";
}

// Whether a task enabling `blocks` runs the block register write `r` belongs to.
inline bool enables(const reg::GLOBAL_OPERATION_ENABLE& blocks, entry r) {
  switch (*block_from_target(r.target())) {
    case block_id::cna:
      return blocks.CNA_OP_EN.value();
    case block_id::core:
      return blocks.CORE_OP_EN.value();
    case block_id::dpu:
      return blocks.DPU_OP_EN.value();
    case block_id::dpu_rdma:
      return blocks.DPU_RDMA_OP_EN.value();
    case block_id::ppu:
      return blocks.PPU_OP_EN.value();
    case block_id::ppu_rdma:
      return blocks.PPU_RDMA_OP_EN.value();
    default:
      return false;  // the PC's
  }
}

// Whether `name` is an identifier of `code` outside its comments: a variable or namespace of
// that name would hide, or make ambiguous, what the code means by it.
inline bool names_in_code(std::string_view code, std::string_view name) {
  auto word_char = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; };
  for (std::size_t i = 0; i < code.size();) {
    if (code.substr(i, 2) == "//") {
      i = code.find('\n', i);
      if (i == std::string_view::npos) break;
    } else if (word_char(code[i])) {
      const std::size_t start = i;
      while (i < code.size() && word_char(code[i])) ++i;
      if (code.substr(start, i - start) == name) return true;
    } else {
      ++i;
    }
  }
  return false;
}

struct captured_task {
  std::size_t first = 0, body_end = 0, op_enable = 0;  // entry indices
};

struct captured_slot {
  std::size_t entry;
  operand_role role;
  std::uint32_t address;  // as captured
};

// What one task's DMA touches through a slot: [begin, end) of the captured addresses.
struct captured_access {
  std::size_t slot = 0, task = 0;
  std::uint64_t begin = 0, end = 0;
  bool writes = false;
};

// Every access of a non-zero captured address, task by task: each DMA a task runs, through
// the slot its register group last wrote, over the extent the group's registers give it
// (rules/dma_extent.hpp).
inline std::vector<captured_access> accesses_of(std::span<const entry> entries, std::span<const captured_task> tasks,
                                                bool pingpong, std::span<const captured_slot> slots) {
  std::vector<captured_access> out;
  std::size_t next = 0;  // slots are in entry order
  regcmd::detail::each_task_dma(
      entries, tasks.size(), pingpong,
      [&](std::size_t t) {
        return regcmd::detail::dma_task_body{tasks[t].first, tasks[t].body_end, entries[tasks[t].op_enable].value()};
      },
      [&](std::size_t i) -> std::uint32_t {
        while (next < slots.size() && slots[next].entry < i) ++next;
        return next < slots.size() && slots[next].entry == i ? static_cast<std::uint32_t>(next + 1) : 0;
      },
      [&](std::size_t t, std::size_t a, std::size_t s, std::uint64_t extent) {
        if (slots[s].address == 0 || extent == 0 || slots[s].role == operand_role::next_program) return;
        const bool writes = slots[s].role == operand_role::output;
        if (!writes && !may_read_intermediate(address_registers[a].offset)) return;
        out.push_back({s, t, slots[s].address, slots[s].address + extent, writes});
      });
  return out;
}

// The slots through which a task reads what an earlier task wrote. Accesses of overlapping
// bytes (a write and a later read; two writes) are one buffer, whatever their addresses: a
// row tile written at an offset and read whole, a task writing in place. A buffer read after
// its last write is an intermediate; one whose last write nothing reads after is an output
// (its readers included: the output buffer holds both).
inline void find_intermediates(std::span<const entry> entries, std::span<const captured_task> tasks, bool pingpong,
                               std::span<captured_slot> slots) {
  const std::vector<captured_access> access = accesses_of(entries, tasks, pingpong, slots);
  std::vector<std::size_t> parent(slots.size());
  for (std::size_t i = 0; i < parent.size(); ++i) parent[i] = i;
  auto root = [&](std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::vector<bool> read_back(slots.size(), false);
  for (const captured_access& w : access) {
    if (!w.writes) continue;
    for (const captured_access& o : access) {
      const bool overlap = o.begin < w.end && w.begin < o.end;
      if (!overlap || (o.writes ? false : o.task <= w.task)) continue;
      if (!o.writes) read_back[o.slot] = true;
      parent[root(o.slot)] = root(w.slot);
    }
  }
  // Per buffer: the last task that writes it, the last that reads it back.
  std::vector<std::size_t> last_write(slots.size(), 0), last_read(slots.size(), 0);
  std::vector<bool> is_read(slots.size(), false);
  for (const captured_access& a : access) {
    const std::size_t r = root(a.slot);
    if (a.writes) last_write[r] = std::max(last_write[r], a.task);
    if (read_back[a.slot]) {
      is_read[r] = true;
      last_read[r] = std::max(last_read[r], a.task);
    }
  }
  for (std::size_t s = 0; s < slots.size(); ++s) {
    const std::size_t r = root(s);
    if (is_read[r]) slots[s].role = last_read[r] > last_write[r] ? operand_role::intermediate : operand_role::output;
  }
}

}  // namespace detail

// The header for `entries`; `o.name` and `o.name_space` must be identifiers (is_identifier).
inline cpp_template make_cpp_template(std::span<const entry> entries, const cpp_template_options& o) {
  using detail::hex;

  // Tasks, tails and padding.
  std::vector<detail::captured_task> tasks;
  std::vector<std::string> left_out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (kind_of(entries[i]) != entry_kind::op_enable) continue;
    std::size_t first = start;
    while (first < i && kind_of(entries[first]) == entry_kind::zero) ++first;
    if (first > start)
      left_out.push_back("entries " + std::to_string(start) + "-" + std::to_string(first - 1) + ": zero padding");
    std::size_t end = i;
    while (end > first && i - end < task_tail_entries - 1 &&
           (kind_of(entries[end - 1]) == entry_kind::op_enable_preamble ||
            kind_of(entries[end - 1]) == entry_kind::zero ||
            entries[end - 1].target() == static_cast<std::uint16_t>(block_id::pc)))
      --end;
    if (end < i)
      left_out.push_back("entries " + std::to_string(end) + "-" + std::to_string(i - 1) + ": task " +
                         std::to_string(tasks.size()) + "'s tail, which the writer writes");
    tasks.push_back({first, end, i});
    start = i + 1;
  }
  if (const std::string problem = task_structure_problem(entries); !problem.empty()) return {{}, problem};
  if (start < entries.size())
    left_out.push_back("entries " + std::to_string(start) + "-" + std::to_string(entries.size() - 1) +
                       ": zero padding");

  // Slots: the body's address registers, each of its register's role until the accesses
  // show it holds what an earlier task wrote (a built program's: its own).
  std::vector<detail::captured_slot> slots;
  const bool built = !o.program_slots.empty();
  for (const detail::captured_task& k : tasks)
    for (std::size_t i = k.first; i < k.body_end; ++i)
      if (kind_of(entries[i]) == entry_kind::register_write && is_address_register(entries[i])) {
        if (!built) {
          slots.push_back({i, detail::role_of_register(entries[i].offset()), entries[i].value()});
          continue;
        }
        // a built program's slot as it was built; an address register it gave no slot holds a value
        for (const slot& x : o.program_slots)
          if (x.entry == i) slots.push_back({i, x.role, x.offset});
      }
  if (built && slots.size() != o.program_slots.size())
    return {{}, "a slot of the program is no address register of a task's body"};
  if (!built) detail::find_intermediates(entries, tasks, o.pingpong, slots);
  // Offsets from each role's lowest non-zero address (a zero address is an unused register).
  std::array<std::uint32_t, operand_role_count> lowest;
  lowest.fill(0xffff'ffffu);
  for (const detail::captured_slot& s : slots)
    if (s.address != 0 && !built)
      lowest[static_cast<std::size_t>(s.role)] = std::min(lowest[static_cast<std::size_t>(s.role)], s.address);

  // Whether a task relies on a register an earlier task of its register group wrote: one of
  // a block the task enables that it does not write itself.
  bool delta = built && o.delta_tasks;
  if (!built) {
    std::array<std::vector<entry>, 2> seen;  // a register write of each, per group
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      const auto blocks = unpack<reg::GLOBAL_OPERATION_ENABLE>(entries[tasks[t].op_enable].value());
      const std::span<const entry> mine = entries.subspan(tasks[t].first, tasks[t].body_end - tasks[t].first);
      auto writes = [](std::span<const entry> in, entry r) {
        return std::any_of(in.begin(), in.end(),
                           [&](entry e) { return e.target() == r.target() && e.offset() == r.offset(); });
      };
      std::vector<entry>& group = seen[o.pingpong ? t % 2 : 0];
      for (entry r : group)
        if (detail::enables(blocks, r) && !writes(mine, r)) delta = true;
      for (entry r : mine)
        if (kind_of(r) == entry_kind::register_write && !writes(group, r)) group.push_back(r);
    }
  }

  // Capacity: the entries as the writer lays them out (tasks start 16-byte aligned).
  std::size_t capacity = 0;
  for (const detail::captured_task& k : tasks) capacity += capacity % 2 + (k.body_end - k.first) + task_tail_entries;
  const std::size_t slot_capacity = slots.size() + tasks.size() - 1;

  std::string out;
  out += "#pragma once\n";
  out += "// " + o.name + (built ? ": a regcmd program" : ": a captured regcmd program") +
         ", as a template to patch (regcmd/programs/captured/patch.hpp).\n";
  out += std::string(built ? "// Written from " : "// Written by regcmd-dis --format cpp from ") +
         (o.source.empty() ? std::string("a dump") : comment_text(o.source)) + ": " +
         std::to_string(entries.size()) + " entries, " + std::to_string(tasks.size()) +
         (tasks.size() == 1 ? " task" : " tasks") +
         (o.pingpong ? ", register groups alternating (ping-pong)" : ", one register group (no ping-pong)") +
         (delta ? ", delta tasks" : "") + ".\n";
  if (built) {
    out += "// Address registers are the program's slots, role and offset as it was built; extents are read\n";
    out += "// from the registers. Entry numbers are the program's.\n";
  } else {
    out += "// Address registers are slots (role from the register, or intermediate where a later task reads\n";
    out += "// bytes an earlier one wrote; offset from the role's lowest non-zero captured address); extents\n";
    out += "// are read from the registers. Entry numbers are the dump's.\n";
  }
  if (!left_out.empty()) {
    out += "// Left out:\n";
    for (const std::string& l : left_out) out += "//   " + l + "\n";
  }
  out += "\n#include <regcmd/programs/captured.hpp>\n\nnamespace " + o.name_space + " {\n\n";
  out += "inline constexpr auto " + o.name;
  const std::size_t initializer = out.size();
  out += " = regcmd::captured_program<" + std::to_string(capacity) + ", " +
         std::to_string(tasks.size()) + ", " + std::to_string(std::max<std::size_t>(slot_capacity, 1)) + ">(\n";
  out += std::string("    regcmd::submit_options{.pingpong = ") + (o.pingpong ? "true" : "false") +
         ", .delta_tasks = " + (delta ? "true" : "false") + "}, [](regcmd::program_writer& w) {\n";
  out += "      using namespace regcmd;\n      using namespace regcmd::reg;\n";
  std::size_t next_slot = 0;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    out += "      w.begin_task();  // task " + std::to_string(t) + "\n";
    for (std::size_t i = tasks[t].first; i < tasks[t].body_end; ++i) {
      const entry e = entries[i];
      const std::string where = "  // " + std::to_string(i);
      const register_info* r = kind_of(e) == entry_kind::register_write
                                   ? find_register(*block_from_target(e.target()), e.offset())
                                   : nullptr;
      if (next_slot < slots.size() && slots[next_slot].entry == i) {
        const detail::captured_slot& s = slots[next_slot++];
        out += "      w.put_slot<" + std::string(r->declared_as) + ">(operand_role::" + std::string(name_of(s.role)) +
               ", " + detail::number(built ? s.address : s.address ? s.address - lowest[static_cast<std::size_t>(s.role)] : 0) +
               ", 0);" + where + "\n";
      } else if (const auto typed =
                     r && (e.value() & ~r->defined_mask) == 0 ? detail::typed_put(*r, e.value()) : std::nullopt) {
        out += "      " + *typed + where + "\n";
      } else {
        const std::string why =
            kind_of(e) == entry_kind::zero ? std::string("a zero entry")
            : !r ? "target " + hex(e.target(), 4) + ", offset " + hex(e.offset(), 4) + ": no register of the map"
            : (e.value() & ~r->defined_mask) != 0
                ? std::string(r->name) + " with reserved bits " + hex(e.value() & ~r->defined_mask, 8) + " set"
                : std::string(r->name) + " with a value its field's enum does not declare";
        out += "      w.put_raw(entry::from_bits(" + hex(e.bits(), 16) + "));" + where + ": " + why + "\n";
      }
    }
    const std::uint32_t mask = entries[tasks[t].op_enable].value();
    if ((mask & ~defined_mask<reg::GLOBAL_OPERATION_ENABLE>()) != 0)
      return {{},
              "entry " + std::to_string(tasks[t].op_enable) + ": the op-enable mask " + hex(mask, 8) +
                  " sets bits no block of the map owns"};
    const auto enable = unpack<reg::GLOBAL_OPERATION_ENABLE>(mask);
    std::string blocks;
    for (const field_info& f : op_enable_fields)
      if (f.shape.extract(mask) != 0) blocks += (blocks.empty() ? "." : ", .") + std::string(f.name) + " = 1";
    out += "      w.end_task(GLOBAL_OPERATION_ENABLE{" + blocks + "}, " +
           (enable.PPU_OP_EN.value() ? "ppu_done_interrupts" : "dpu_done_interrupts") + ");  // " +
           std::to_string(tasks[t].op_enable) + "\n";
  }
  out += "    });\n\n}  // namespace " + o.name_space + "\n";
  // The code after the variable's own name: what the name and the namespace must not hide.
  for (const std::string& n : {o.name, o.name_space})
    if (detail::names_in_code(std::string_view(out).substr(initializer), n))
      return {{}, "the name '" + n + "' is one the header's code uses (a register, an enum, one of regcmd's names)" +
                      ": choose another"};
  return {out, {}};
}

}  // namespace regcmd::cpp_header
