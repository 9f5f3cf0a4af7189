// regcmd-diff: compare two regcmd dumps register by register.
//
//   regcmd-diff [--ignore REG]... [--addresses] [--json] [--binary | --text] A B
//
// Exit status, like diff and cmp: 0 equal, 1 different, 2 bad input, usage or an unwritable
// output.

#include <cstdio>
#include <string>
#include <string_view>

#include <regcmd/decode/diff.hpp>
#include <regcmd/decode/dump.hpp>
#include <regcmd/decode/lookup.hpp>

#include "io.hpp"

namespace {

constexpr const char* usage =
    "usage: regcmd-diff [--ignore REG]... [--addresses] [--json] [--binary | --text] A B\n"
    "Compare two regcmd dumps (the regcmd-dis formats; '-' reads standard input) register by\n"
    "register, matching the n-th write of a register in A with its n-th write in B.\n"
    "  --ignore REG   leave register REG out (a rocket_registers.h name); repeatable\n"
    "  --addresses    leave every address register out (IOVAs differ run to run)\n"
    "  --json         print the comparison as JSON\n"
    "Exit status: 0 equal, 1 different, 2 bad input.\n";

// A usage mistake prints the usage too; a bad dump only says what is wrong with it.
int bad_usage(const std::string& message) {
  std::fprintf(stderr, "regcmd-diff: %s\n%s", message.c_str(), usage);
  return 2;
}
int bad_input(const std::string& message) {
  std::fprintf(stderr, "regcmd-diff: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  regcmd::diff_options options;
  regcmd::dump_format format = regcmd::dump_format::detect;
  bool json = false;
  std::string paths[2];
  int given = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      return 0;
    }
    if (a == "--json") json = true;
    else if (a == "--addresses") options.ignore_addresses = true;
    else if (a == "--binary") format = regcmd::dump_format::binary;
    else if (a == "--text") format = regcmd::dump_format::text;
    else if (a == "--ignore") {
      if (i + 1 >= argc) return bad_usage("--ignore needs a register name");
      const regcmd::register_info* r = regcmd::find_register(argv[++i]);
      if (!r) return bad_usage(std::string("unknown register '") + argv[i] + "'");
      options.ignored.insert({static_cast<std::uint16_t>(r->block), r->offset});
    } else if ((a == "-" || !a.starts_with("-")) && given < 2) paths[given++] = a;
    else return bad_usage("unexpected argument '" + std::string(a) + "'");
  }
  if (given != 2) return bad_usage("two dumps are needed");
  if (paths[0] == "-" && paths[1] == "-") return bad_usage("standard input can be read once: give one of the dumps as a file");
  const regcmd::dump a = regcmd::read_dump(paths[0], format);
  if (!a.ok()) return bad_input(a.error);
  const regcmd::dump b = regcmd::read_dump(paths[1], format);
  if (!b.ok()) return bad_input(b.error);
  const regcmd::dump_diff d = regcmd::diff_dumps(a.entries, b.entries, options);
  const std::string out = json ? regcmd::format_diff_json(d) : regcmd::format_diff_text(d);
  if (!regcmd::cli::write_out(stdout, out, "regcmd-diff")) return 2;
  return d.equal() ? 0 : 1;
}
