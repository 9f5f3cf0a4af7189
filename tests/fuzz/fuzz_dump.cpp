// libFuzzer target: any bytes as a dump, in each format, decoded and printed. Every input
// must parse to entries or give an error; decoding never fails.
#include <cstddef>
#include <cstdint>
#include <span>

#include <regcmd/decode/dump.hpp>
#include <regcmd/decode/format.hpp>
#include <regcmd/decode/lookup.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  for (regcmd::dump_format f : {regcmd::dump_format::detect, regcmd::dump_format::binary, regcmd::dump_format::text}) {
    const regcmd::dump d = regcmd::parse_dump(bytes, f);
    if (!d.ok() && d.error.empty()) __builtin_trap();
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
