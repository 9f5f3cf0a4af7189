// libFuzzer target: any bytes as a dump, in each format, decoded, printed, accounted and
// written as a C++ template. Every input must parse to entries or give an error; decoding
// and accounting never fail; the template is a header with a task per op-enable, or an error.
#include <cstddef>
#include <cstdint>
#include <span>

#include <regcmd/decode/accounting.hpp>
#include <regcmd/decode/dump.hpp>
#include <regcmd/decode/format.hpp>
#include <regcmd/decode/lookup.hpp>

#include <regcmd/decode/cpp_template.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  for (regcmd::dump_format f : {regcmd::dump_format::detect, regcmd::dump_format::binary, regcmd::dump_format::text}) {
    const regcmd::dump d = regcmd::parse_dump(bytes, f);
    if (!d.ok() && d.error.empty()) __builtin_trap();
    // accounting: a task per op-enable entry, the totals the sum of the tasks, the distinct
    // bytes never above the bytes moved
    std::size_t op_enables = 0;
    for (regcmd::entry e : d.entries) op_enables += regcmd::kind_of(e) == regcmd::entry_kind::op_enable;
    for (bool pingpong : {true, false}) {
      regcmd::distinct_bytes once;
      regcmd::program_cost sum;
      const regcmd::program_cost c =
          regcmd::account_dump(d.entries, pingpong, [&](std::size_t, const regcmd::task_cost& t) {
            once.add(t);
            sum.add(t);
          });
      if (c.tasks != op_enables || c.bytes != sum.bytes || c.macs != sum.macs) __builtin_trap();
      const regcmd::stream_bytes distinct = once.bytes();
      for (std::size_t s = 0; s < regcmd::stream_count; ++s)
        if (distinct[s] > c.bytes[s]) __builtin_trap();
    }
    const regcmd::cpp_header::cpp_template t = regcmd::cpp_header::make_cpp_template(
        d.entries, {.name = "fuzzed", .name_space = "captured", .pingpong = op_enables % 2 == 0});
    if (t.error.empty() == t.text.empty()) __builtin_trap();
    std::size_t ends = 0;
    for (std::size_t at = t.text.find("w.end_task("); at != std::string::npos; at = t.text.find("w.end_task(", at + 1))
      ++ends;
    if (t.error.empty() && ends != op_enables) __builtin_trap();
    for (std::size_t i = 0; i < d.entries.size(); ++i) {
      const regcmd::decoded_entry e = regcmd::decode(d.entries[i]);
      if (e.field_count > regcmd::max_fields_per_register) __builtin_trap();
      (void)regcmd::format_text(e, i);
      (void)regcmd::format_json(e, i);
      // re-encoding a known register's decoded fields by name gives the entry back,
      // unless reserved bits were set
      if (e.reg && e.reserved_bits == 0) {
        std::vector<regcmd::field_assignment> fields;
        for (const auto& f2 : e.fields()) fields.push_back({f2.info->name, f2.value});
        const auto back = regcmd::encode_by_name(e.reg->name, fields);
        const bool enum_ok = [&] {
          for (const auto& f2 : e.fields())
            if (f2.info->shape.kind == regcmd::field_kind::enumeration && f2.enum_name.empty()) return false;
          return true;
        }();
        if (enum_ok && !(back.ok() && back.value() == d.entries[i])) __builtin_trap();
      }
    }
  }
  return 0;
}
