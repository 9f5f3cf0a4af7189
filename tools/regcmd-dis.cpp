// regcmd-dis: decode a regcmd dump, one line (or JSON object) per entry.
//
//   regcmd-dis [--json | --all-entries] [--binary | --text] FILE      ('-' reads standard input)
//   regcmd-dis --stats [--json] [--no-pingpong] [rate options] FILE     (what it costs)
//   regcmd-dis --format cpp [--name NAME] [--namespace NS] [--no-pingpong] FILE  (a template)
//
// Decoding streams: a file is read twice, once to check it (a bad dump prints nothing) and
// once to print it a piece at a time, so memory stays the same whatever the dump's size.
// Standard input can be read once: its entries are kept (8 bytes each) until it ends. A LUT
// upload in the text listing is held as a count and two values until its run ends.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <regcmd/decode/dump.hpp>
#include <regcmd/decode/format.hpp>

#include <regcmd/decode/cpp_template.hpp>
#include "io.hpp"
#include "stats.hpp"

namespace {

const std::string help =
    std::string(
        "usage: regcmd-dis [--json | --all-entries] [--binary | --text] FILE\n"
        "       regcmd-dis --stats [--json] [--no-pingpong] [rate options] [--binary | --text] FILE\n"
        "       regcmd-dis --format cpp [--name NAME] [--namespace NS] [--no-pingpong] [--binary | --text] FILE\n"
        "Decode a regcmd dump, one line per entry (--json: an array of objects). FILE '-' reads\n"
        "standard input.\n"
        "  binary  little-endian u64 entries, as the capture shim writes them\n"
        "  text    one hex entry per line, '0x' optional, '#' comments, blank lines skipped;\n"
        "          UTF-8 with an optional byte-order mark, LF or CRLF line ends, form feeds, and\n"
        "          ANSI escape sequences (grep --color), which are dropped\n"
        "The first 8 bytes decide the format: binary if they hold a control byte other than tab,\n"
        "LF, VT, FF, CR and ESC (every entry holds a 0x00 or 0x01 byte in its target), text\n"
        "otherwise; --binary or --text forces it. Any other byte in a text dump is an error\n"
        "naming its byte offset.\n"
        "A LUT upload (DPU_LUT_ACCESS_CFG writing a table, then the run of DPU_LUT_ACCESS_DATA\n"
        "writes after it) prints as one line, from its first entry's index to its last, with its\n"
        "entries as signed 16-bit values:\n"
        "  0-513 DPU LUT upload: table LE (0), 513 entries, first -3, last 16384\n"
        "--all-entries prints each of its entries on a line of its own; --json lists every entry.\n"
        "--stats prints what the program asks of the hardware instead, read from its registers:\n"
        "the bytes each DMA moves (and the distinct bytes, re-reads removed), the MACs, the DPU's\n"
        "and PPU's elements, the tasks (each ends at an op-enable entry) and a lower bound on its\n"
        "time on RK3588 (docs/cost.md); with --json as one JSON object. Tasks are taken to\n"
        "alternate the two register groups (RKNPU_JOB_PINGPONG, as the vendor runtime submits);\n"
        "--no-pingpong: every task finds the registers of the task before it (rocket). The bound's\n"
        "rates:\n") +
    regcmd::cli::rate_options_help +
    std::string(
        "--format cpp writes the dump as a C++ header instead: the program as a constexpr template\n"
        "(regcmd/programs/captured/program.hpp) to patch with regcmd/programs/captured/patch.hpp, one typed register\n"
        "write per entry (fields and enums by name; an entry no register of the map describes\n"
        "stays raw, with a comment), every address register a slot (role from the register,\n"
        "'intermediate' where a task reads bytes an earlier task wrote, by the DMAs' extents; offset\n"
        "from the role's lowest non-zero captured address), each task closed by the writer's tail (the captured\n"
        "tail and zero padding are listed as left out). --name: the variable (default: the file's\n"
        "stem); --namespace: its namespace (default: captured); --no-pingpong: the capture was\n"
        "submitted with one register group. --format text and --format json are the listings.\n"
        "--version prints the version, -h or --help this text.\n"
        "Each option is given once. Each error is one line on standard error, naming the file\n"
        "and the reason.\n"
        "Exit status: 0 decoded; 2 bad usage, an unreadable or malformed dump, or an unwritable\n"
        "output.\n");

// Every error is one line; the usage is printed for --help and for no arguments only.
int fail(const std::string& message) {
  std::fprintf(stderr, "regcmd-dis: %s\n", message.c_str());
  return 2;
}

// The tool, under guarded_main.
int tool_main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(help.c_str(), stderr);
    return 2;
  }
  bool json = false, all_entries = false, stats = false, pingpong = true, cpp = false;
  std::string format_value;  // --format's, once given
  std::optional<std::string> name, name_space;
  regcmd::roofline_params rates = regcmd::soc_roofline();
  std::vector<std::string> rate_given;
  regcmd::dump_format format = regcmd::dump_format::detect;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (const int done = regcmd::cli::help_or_version(a, help.c_str(), "regcmd-dis"); done >= 0) return done;
    if (a == "--json") {
      if (!format_value.empty())
        return fail("--json and --format " + format_value + (format_value == "json" ? " say the same" : " disagree") +
                    ": give one");
      if (json) return fail("--json is given twice: give it once");
      json = true;
    } else if (a == "--stats" || a == "--no-pingpong") {
      bool& flag = a == "--stats" ? stats : pingpong;
      if (flag != (a == "--stats" ? false : true)) return fail(std::string(a) + " is given twice: give it once");
      flag = !flag;
    } else if (regcmd::cli::is_rate_option(a)) {
      if (std::find(rate_given.begin(), rate_given.end(), a) != rate_given.end())
        return fail(std::string(a) + " is given twice: give it once");
      rate_given.emplace_back(a);
      if (i + 1 >= argc) return fail(std::string(a) + " needs a value");
      if (const regcmd::cli::problem p = regcmd::cli::apply_rate_option(rates, a, argv[++i]); !p.empty())
        return fail(p);
    } else if (a == "--format" || a == "--name" || a == "--namespace") {
      if (i + 1 >= argc) return fail(std::string(a) + " needs a value");
      const std::string v = argv[++i];
      if (a == "--format") {
        if (!format_value.empty()) return fail("--format is given twice: give it once");
        format_value = v;
        if (v != "text" && v != "json" && v != "cpp") return fail("--format takes text, json or cpp, not '" + v + "'");
        if (json) return fail("--json and --format " + v + (v == "json" ? " say the same" : " disagree") + ": give one");
        json = json || v == "json";
        cpp = v == "cpp";
      } else {
        std::optional<std::string>& given = a == "--name" ? name : name_space;
        if (given) return fail(std::string(a) + " is given twice: give it once");
        given = v;
      }
    } else if (a == "--all-entries") {
      if (all_entries) return fail("--all-entries is given twice: give it once");
      all_entries = true;
    } else if (a == "--binary" || a == "--text") {
      const regcmd::dump_format asked = a == "--binary" ? regcmd::dump_format::binary : regcmd::dump_format::text;
      if (format == asked) return fail(std::string(a) + " is given twice: give it once");
      if (format != regcmd::dump_format::detect) return fail("--binary and --text exclude each other: give one");
      format = asked;
    } else if (a.starts_with("-") && a != "-") {
      return fail("unknown option '" + std::string(a) + "' (regcmd-dis --help lists them)");
    } else if (!path.empty()) {
      return fail("one dump at a time: '" + std::string(a) + "' is a second");
    } else {
      path = a;
    }
  }
  if (path.empty()) return fail("no dump given: FILE, or '-' for standard input");
  if (json && all_entries) return fail("--all-entries does not apply with --json (JSON lists every entry)");
  if ((name || name_space) && !cpp)
    return fail(std::string(name ? "--name" : "--namespace") + " applies with --format cpp only");
  if (cpp && (all_entries || stats))
    return fail(std::string(all_entries ? "--all-entries" : "--stats") + " does not apply with --format cpp");
  if (!stats && !rate_given.empty()) return fail(rate_given.front() + " applies with --stats only");
  if (!stats && !cpp && !pingpong) return fail("--no-pingpong applies with --stats or --format cpp only");
  if (cpp) {
    for (const auto& [option, given] : {std::pair{"--name", name}, std::pair{"--namespace", name_space}})
      if (given) {
        if (!regcmd::cpp_header::is_identifier(*given))
          return fail(std::string(option) + " '" + regcmd::cpp_header::comment_text(*given) + "' is not a C++ identifier");
        if (const std::string why = regcmd::cpp_header::reserved_reason(*given, option == std::string_view("--namespace")); !why.empty())
          return fail(std::string(option) + " '" + *given + "' " + why + ": choose another");
      }
    const regcmd::dump d = regcmd::read_dump(path, format);
    if (!d.error.empty()) return fail(d.error);
    const std::string label = path == "-" ? "standard input" : std::filesystem::path(path).filename().string();
    const regcmd::cpp_header::cpp_template t =
        regcmd::cpp_header::make_cpp_template(d.entries, {.name = name.value_or(regcmd::cpp_header::identifier_from(path)),
                                                   .name_space = name_space.value_or("captured"),
                                                   .source = label,
                                                   .pingpong = pingpong});
    if (!t.error.empty()) return fail(label + ": " + t.error);
    regcmd::cli::output_stream out(stdout, "regcmd-dis");
    out.write(t.text);
    return out.finish() ? 0 : 2;
  }
  if (stats) {
    if (all_entries) return fail("--all-entries does not apply with --stats");
    const regcmd::dump d = regcmd::read_dump(path, format);
    if (!d.error.empty()) return fail(d.error);
    // as --format cpp: bytes that are no program of whole tasks have no cost to report
    if (const std::string problem = regcmd::task_structure_problem(d.entries); !problem.empty())
      return fail((path == "-" ? "standard input" : std::filesystem::path(path).filename().string()) + ": " + problem);
    const regcmd::cli::stats_report r = regcmd::cli::report_of_dump(d.entries, pingpong, rates);
    regcmd::cli::output_stream out(stdout, "regcmd-dis");
    out.write(json ? regcmd::cli::format_stats_json(r) : regcmd::cli::format_stats_text(r));
    return out.finish() ? 0 : 2;
  }

  regcmd::cli::output_stream out(stdout, "regcmd-dis");
  std::size_t index = 0;
  std::string text;
  std::optional<regcmd::lut_upload_run> upload;  // the LUT upload being read, in the short listing
  // The upload as its line, or its config as every other entry when no data followed it.
  auto end_upload = [&]() {
    if (!upload) return true;
    text = upload->entries ? regcmd::format_lut_upload(*upload)
                           : regcmd::format_text(regcmd::decode(upload->config), upload->index);
    text += '\n';
    upload.reset();
    return out.write(text);
  };
  auto print = [&](regcmd::entry e) {
    const regcmd::decoded_entry d = regcmd::decode(e);
    if (!json && !all_entries) {
      if (upload && regcmd::lut_upload_run::continues(d)) {
        upload->add(d);
        ++index;
        return true;
      }
      if (!end_upload()) return false;
      if (regcmd::lut_upload_run::starts(d)) {
        upload = regcmd::lut_upload_run{.config = e, .index = index++};
        return true;
      }
    }
    if (json) {
      text = index ? ",\n " : "[\n ";
      text += regcmd::format_json(d, index);
    } else {
      text = regcmd::format_text(d, index);
      text += '\n';
    }
    ++index;
    return out.write(text);
  };

  std::string error;
  std::error_code ec;
  if (path != "-" && std::filesystem::is_regular_file(path, ec)) {
    error = regcmd::scan_dump(path, format, [](regcmd::entry) { return true; });
    if (error.empty()) error = regcmd::scan_dump(path, format, print);
  } else {
    const regcmd::dump d = regcmd::read_dump(path, format);
    error = d.error;
    for (regcmd::entry e : d.entries)
      if (!print(e)) break;
  }
  end_upload();
  if (!error.empty()) return fail(error);
  if (json) out.write(index ? "\n]\n" : "[]\n");
  return out.finish() ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) { return regcmd::cli::guarded_main("regcmd-dis", argc, argv, tool_main); }
