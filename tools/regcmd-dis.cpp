// regcmd-dis: decode a regcmd dump, one line (or JSON object) per entry.
//
//   regcmd-dis [--json] [--binary | --text] FILE      ('-' reads standard input)
//
// Exit status: 0 decoded, 1 an unreadable or malformed dump or an unwritable output, 2 bad usage.

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <regcmd/decode/dump.hpp>
#include <regcmd/decode/format.hpp>

#include "io.hpp"

namespace {

constexpr const char* usage =
    "usage: regcmd-dis [--json] [--binary | --text] FILE\n"
    "Decode a regcmd dump (raw little-endian u64 entries, or text with one hex entry per\n"
    "line, '#' comments). FILE '-' reads standard input.\n";

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  regcmd::dump_format format = regcmd::dump_format::detect;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--json") json = true;
    else if (a == "--binary") format = regcmd::dump_format::binary;
    else if (a == "--text") format = regcmd::dump_format::text;
    else if (a == "-h" || a == "--help") { std::fputs(usage, stdout); return 0; }
    else if (path.empty() && (a == "-" || !a.starts_with("-"))) path = a;
    else { std::fprintf(stderr, "regcmd-dis: unexpected argument '%s'\n%s", argv[i], usage); return 2; }
  }
  if (path.empty()) { std::fputs(usage, stderr); return 2; }

  const regcmd::dump d = regcmd::read_dump(path, format);
  if (!d.ok()) {
    std::fprintf(stderr, "regcmd-dis: %s\n", d.error.c_str());
    return 1;
  }
  std::string out;
  if (json) out += "[";
  for (std::size_t i = 0; i < d.entries.size(); ++i) {
    const regcmd::decoded_entry e = regcmd::decode(d.entries[i]);
    if (json) out += (i ? ",\n " : "\n ") + regcmd::format_json(e, i);
    else out += regcmd::format_text(e, i) + '\n';
  }
  if (json) out += d.entries.empty() ? "]\n" : "\n]\n";
  return regcmd::cli::write_out(stdout, out, "regcmd-dis") ? 0 : 1;
}
