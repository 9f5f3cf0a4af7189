#pragma once
// Printing decoded entries and errors: the text line and JSON object of regcmd-dis.
//
//   text:  index block REGISTER value field=value ...
//          first-last block LUT upload: table LE (0), 513 entries, first -3, last 16384
//   json:  {"index":N,"block":"CNA","target":513,"offset":4160,"register":"CNA_CBUF_CON0",
//           "value":177,"fields":{"DATA_BANK":1,...},"enums":{"IN_PRECISION":"fp16"}}
//
// Fields are printed in declaration order (lowest bit first): numbers in decimal, addresses
// in hex, enums by name (an undeclared enum value prints as its number). Bits that no field
// defines print as reserved=0x...; an entry the map does not know prints as
// UNKNOWN_0x<offset> with its raw value.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include <regcmd/core/error.hpp>
#include <regcmd/decode/decode.hpp>

namespace regcmd {

inline std::string hex(std::uint64_t v, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return buf;
}

inline std::string register_label(const decoded_entry& d) {
  if (d.known()) return std::string(d.name);
  return "UNKNOWN_" + hex(d.raw.offset(), 4);
}

inline std::string format_text(const decoded_entry& d, std::size_t index) {
  std::string line = std::to_string(index) + ' ' + std::string(label_of_target(d.raw.target()).view()) +
                     ' ' + register_label(d) + ' ' + hex(d.raw.value(), 8);
  const bool special = d.kind == entry_kind::op_enable || d.kind == entry_kind::op_enable_preamble;
  if (special && d.raw.offset() != (d.kind == entry_kind::op_enable ? op_enable_offset : 0))
    line += " offset=" + hex(d.raw.offset(), 4);
  for (const decoded_field& f : d.fields()) {
    line += ' ';
    line += f.info->name;
    line += '=';
    if (!f.enum_name.empty())
      line += f.enum_name;
    else if (f.info->shape.kind == field_kind::address)
      line += hex(f.value, 8);
    else
      line += std::to_string(f.value);
  }
  if (d.reserved_bits != 0) line += " reserved=" + hex(d.reserved_bits, 8);
  return line;
}

inline std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

inline std::string format_json(const decoded_entry& d, std::size_t index) {
  std::string o = "{\"index\":" + std::to_string(index) +
                  ",\"block\":" + json_string(label_of_target(d.raw.target()).view()) +
                  ",\"target\":" + std::to_string(d.raw.target()) +
                  ",\"offset\":" + std::to_string(d.raw.offset()) +
                  ",\"register\":" + json_string(register_label(d)) +
                  ",\"value\":" + std::to_string(d.raw.value()) + ",\"fields\":{";
  std::string enums;
  bool first = true;
  // Appends only: g++ 12 -O2 misreports `"literal" + std::string` under -Wrestrict.
  for (const decoded_field& f : d.fields()) {
    if (!first) o += ',';
    o += json_string(f.info->name);
    o += ':';
    o += std::to_string(f.value);
    if (!f.enum_name.empty()) {
      if (!enums.empty()) enums += ',';
      enums += json_string(f.info->name);
      enums += ':';
      enums += json_string(f.enum_name);
    }
    first = false;
  }
  o += "},\"enums\":{" + enums + "}";
  if (d.reserved_bits != 0) o += ",\"reserved\":" + std::to_string(d.reserved_bits);
  return o + '}';
}

// A LUT upload in short: DPU_LUT_ACCESS_CFG set to write a table, then the run of
// DPU_LUT_ACCESS_DATA writes that fill it (the 2 x 514 entries that open a LUT program), as
// one text line. Entries are signed 16-bit values in bits 15:0 (docs/activation-values.md);
// data writes with other bits set are counted, and the full listing shows them.
struct lut_upload_run {
  entry config{};
  std::size_t index = 0;  // the config's
  std::size_t entries = 0;
  std::int16_t first = 0, last = 0;
  std::size_t reserved = 0;  // data writes with bits beyond 15:0

  // A config that opens an upload: a table write, no bit outside its fields.
  static constexpr bool starts(const decoded_entry& d) {
    if (d.name != "DPU_LUT_ACCESS_CFG" || d.reserved_bits != 0) return false;
    const decoded_field* type = d.field("LUT_ACCESS_TYPE");
    return type && type->value == 1;
  }
  static constexpr bool continues(const decoded_entry& d) { return d.name == "DPU_LUT_ACCESS_DATA"; }

  constexpr void add(const decoded_entry& data) {
    const auto value = static_cast<std::int16_t>(static_cast<std::uint16_t>(data.raw.value() & 0xffffu));
    if (entries++ == 0) first = value;
    last = value;
    if (data.reserved_bits != 0) ++reserved;
  }
};

inline std::string format_lut_upload(const lut_upload_run& u) {
  const decoded_entry d = decode(u.config);
  const decoded_field* table = d.field("LUT_TABLE_ID");
  const decoded_field* address = d.field("LUT_ADDR");
  const bool lo = table && table->value != 0;
  std::string line = std::to_string(u.index) + '-' + std::to_string(u.index + u.entries) + ' ' +
                     std::string(label_of_target(u.config.target()).view()) + " LUT upload: table " + (lo ? "LO (1)" : "LE (0)");
  if (address && address->value != 0) line += ", from entry " + std::to_string(address->value);
  line += ", " + std::to_string(u.entries) + (u.entries == 1 ? " entry" : " entries") + ", first " + std::to_string(u.first) +
          ", last " + std::to_string(u.last);
  if (u.reserved != 0) line += ", " + std::to_string(u.reserved) + " with bits 31:16 set";
  return line;
}

// "field-range: <message> (CNA_CBUF_CON0.DATA_BANK = 16) [fact sheet §4]"
inline std::string to_string(const error& e) {
  std::string s = std::string(e.id()) + ": " + std::string(e.message());
  if (!e.subject.empty() || e.has_value) {
    s += " (";
    s += e.subject;
    if (!e.detail.empty()) {
      if (!e.subject.empty()) s += '.';
      s += e.detail;
    }
    if (e.has_value) s += " = " + std::to_string(e.value);
    s += ')';
  }
  if (!e.violated->reference.empty()) s += " [" + std::string(e.violated->reference) + ']';
  if (!e.note().empty()) {
    s += ": ";
    s += e.note();
  }
  if (e.os_errno != 0) {
    s += " (errno ";
    s += std::to_string(e.os_errno);
    s += ": ";
    s += std::strerror(e.os_errno);
    s += ')';
  }
  return s;
}

}  // namespace regcmd
