// regcmd-diff: compare two regcmd dumps register by register.
//
//   regcmd-diff [--ignore REG]... [--addresses] [--json] [--binary | --text] A B
//
// Both dumps are held as their entries (8 bytes each) and the comparison as two numbers an
// entry; the report is written as it is made.
//
// Exit status, like diff and cmp: 0 equal, 1 different, 2 bad usage, an unreadable or
// malformed dump, or an unwritable output.

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

#include <regcmd/decode/diff.hpp>
#include <regcmd/decode/dump.hpp>
#include <regcmd/decode/lookup.hpp>

#include "io.hpp"

namespace {

constexpr const char* help =
    "usage: regcmd-diff [--ignore REG]... [--addresses] [--json] [--binary | --text] A B\n"
    "Compare two regcmd dumps (the regcmd-dis formats, detected the same way; '-' reads\n"
    "standard input) register by register, matching the n-th write of a register in A with\n"
    "its n-th write in B.\n"
    "  --ignore REG   leave register REG out (a rocket_registers.h name); repeatable\n"
    "  --addresses    leave every address register out (IOVAs differ run to run)\n"
    "  --json         print the comparison as JSON\n"
    "  --binary, --text  read both dumps in that format instead of detecting it\n"
    "  --version      print the version (-h, --help: this text)\n"
    "Each option but --ignore is given once. Each error is one line on standard error,\n"
    "naming the file and the reason.\n"
    "Exit status: 0 equal, 1 different; 2 bad usage, an unreadable or malformed dump, or an\n"
    "unwritable output.\n";

// Every error is one line; the usage is printed for --help and for no arguments only.
int fail(const std::string& message) {
  std::fprintf(stderr, "regcmd-diff: %s\n", message.c_str());
  return 2;
}

// The tool, under guarded_main.
int tool_main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(help, stderr);
    return 2;
  }
  regcmd::diff_options options;
  regcmd::dump_format format = regcmd::dump_format::detect;
  bool json = false;
  std::string paths[2];
  int given = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (const int done = regcmd::cli::help_or_version(a, help, "regcmd-diff"); done >= 0) return done;
    if (a == "--json" || a == "--addresses") {
      bool& flag = a == "--json" ? json : options.ignore_addresses;
      if (flag) return fail(std::string(a) + " is given twice: give it once");
      flag = true;
    } else if (a == "--binary" || a == "--text") {
      const regcmd::dump_format asked = a == "--binary" ? regcmd::dump_format::binary : regcmd::dump_format::text;
      if (format == asked) return fail(std::string(a) + " is given twice: give it once");
      if (format != regcmd::dump_format::detect) return fail("--binary and --text exclude each other: give one");
      format = asked;
    } else if (a == "--ignore") {
      if (i + 1 >= argc) return fail("--ignore needs a register name");
      const regcmd::register_info* r = regcmd::find_register(argv[++i]);
      if (!r) return fail(std::string("unknown register '") + argv[i] + "' for --ignore (a rocket_registers.h name)");
      options.ignored.insert({static_cast<std::uint16_t>(r->block), r->offset});
    } else if (a.starts_with("-") && a != "-") {
      return fail("unknown option '" + std::string(a) + "' (regcmd-diff --help lists them)");
    } else if (given == 2) {
      return fail("two dumps at a time: '" + std::string(a) + "' is a third");
    } else {
      paths[given++] = a;
    }
  }
  if (given != 2) return fail("two dumps are needed: A and B");
  if (paths[0] == "-" && paths[1] == "-") return fail("standard input can be read once: give one of the dumps as a file");
  const regcmd::dump a = regcmd::read_dump(paths[0], format);
  if (!a.ok()) return fail(a.error);
  const regcmd::dump b = regcmd::read_dump(paths[1], format);
  if (!b.ok()) return fail(b.error);
  const regcmd::dump_comparison comparison(a.entries, b.entries, std::move(options));
  regcmd::cli::output_stream out(stdout, "regcmd-diff");
  auto write = [&](std::string_view s) { out.write(s); };
  if (json) regcmd::write_diff_json(comparison, write);
  else regcmd::write_diff_text(comparison, write);
  if (!out.finish()) return 2;
  return comparison.summary().equal() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return regcmd::cli::guarded_main("regcmd-diff", argc, argv, tool_main); }
