// regcmd-gen: write a regcmd program from the program library.
//
//   regcmd-gen matmul --in fp16 --out fp32 -M 64 -K 512 -N 256 [options]
//
// Exit status: 0 written, 2 bad usage or a shape that breaks a rule (its message on stderr).

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/matmul.hpp>
#include <regcmd/programs/plan.hpp>
#include <regcmd/rules/program_rules.hpp>

namespace {

constexpr const char* usage = R"(usage: regcmd-gen PROGRAM [options]

Programs:
  matmul    C[M][N] = A[M][K] . B[K][N] as one task (one op), or with --plan as many tasks
            as the shape needs (K-split, N-tiling, M-tiling) in one chained program

matmul options:
  --in P              input precision: fp16 | int8 | int4              (default fp16)
  --weight-precision P  the weights' precision if it differs from --in (RK3588 refuses)
  --out P             output precision: fp32 | fp16 | int32 | int16    (default fp32)
  -M N, -K N, -N N    the shape (required)
  --layout L          row_major | surface                              (default row_major)
  --schedule S        auto | template | bank (the CBUF split; default auto)
  --no-pad            refuse K and N that are not multiples of the weight tile
  --feature-pitch B   bytes between feature rows (row_major; default: a packed row)
  --output-pitch B    bytes between output rows (row_major; default: a packed row)
  --plan              plan the operation (K-split, N/M tiling) instead of one op
  --k-slice N         with --plan: K-split slice (multiple of 32, <= 2048; default: chosen)
  --delta             with --plan: tasks after the first two carry only what changed

Addresses (patched into the program's slots; default 0):
  --feature ADDR, --weight ADDR, --output ADDR, and --regcmd ADDR (the program's own
  buffer, which chained tasks' next-task addresses point into)

Output:
  --format F          hex (one 0x%016x entry per line) | bin (little-endian u64) |
                      json (the regcmd-dis --json schema)               (default hex)
  -o FILE             write to FILE instead of standard output
  -h, --help          this text
)";

std::optional<regcmd::precision> parse_precision(std::string_view s) {
  if (const regcmd::enumerator_info* e = regcmd::info_of<regcmd::precision>().find(s))
    return static_cast<regcmd::precision>(e->value);
  return std::nullopt;
}

std::optional<std::uint64_t> parse_number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  for (char c : s) {
    int d = c >= '0' && c <= '9' ? c - '0' : base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10
            : base == 16 && c >= 'A' && c <= 'F'                                  ? c - 'A' + 10
                                                                                  : -1;
    if (d < 0 || v > (UINT64_MAX - static_cast<unsigned>(d)) / static_cast<unsigned>(base)) return std::nullopt;
    v = v * static_cast<unsigned>(base) + static_cast<unsigned>(d);
  }
  return v;
}

int fail_usage(const std::string& message) {
  std::fprintf(stderr, "regcmd-gen: %s\n(regcmd-gen --help lists the programs and options)\n", message.c_str());
  return 2;
}

int fail_rule(const regcmd::error& e) {
  std::fprintf(stderr, "regcmd-gen: %s\n", regcmd::to_string(e).c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace regcmd;
  if (argc < 2) return fail_usage("no program given");
  const std::string_view program_name = argv[1];
  if (program_name == "-h" || program_name == "--help") {
    std::fputs(usage, stdout);
    return 0;
  }
  if (program_name != "matmul") return fail_usage("unknown program '" + std::string(program_name) + "'");

  matmul_spec spec{};
  std::optional<precision> weight;
  plan_options options{};
  bool planned = false;
  operand_addresses addresses{};
  std::string format = "hex", out_path;
  bool have_m = false, have_k = false, have_n = false;

  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      return 0;
    }
    if (a == "--no-pad") { spec.pad = padding::none; continue; }
    if (a == "--plan") { planned = true; continue; }
    if (a == "--delta") { options.delta_tasks = true; continue; }
    if (i + 1 >= argc) return fail_usage("option '" + std::string(a) + "' needs a value");
    const std::string_view v = argv[++i];
    auto number = [&](std::uint64_t max) -> std::optional<std::uint32_t> {
      const auto n = parse_number(v);
      if (!n || *n > max) return std::nullopt;
      return static_cast<std::uint32_t>(*n);
    };
    auto set_number = [&](std::uint32_t& field) {
      const auto n = number(0xffff'ffffu);
      if (n) field = *n;
      return n.has_value();
    };
    auto set_address = [&](operand_role role) {
      const auto n = parse_number(v);
      if (n) addresses[static_cast<std::size_t>(role)] = *n;
      return n.has_value();
    };
    bool ok = true;
    if (a == "--in") {
      const auto p = parse_precision(v);
      ok = p.has_value();
      if (ok) spec.in = *p;
    } else if (a == "--weight-precision") {
      weight = parse_precision(v);
      ok = weight.has_value();
    } else if (a == "--out") {
      const auto p = parse_precision(v);
      ok = p.has_value();
      if (ok) spec.out = *p;
    } else if (a == "-M") ok = have_m = set_number(spec.M);
    else if (a == "-K") ok = have_k = set_number(spec.K);
    else if (a == "-N") ok = have_n = set_number(spec.N);
    else if (a == "--layout") {
      ok = v == "row_major" || v == "surface";
      spec.layout = v == "surface" ? operand_layout::surface : operand_layout::row_major;
    } else if (a == "--schedule") {
      ok = v == "auto" || v == "template" || v == "bank";
      spec.sched = v == "template" ? schedule::template_split : v == "bank" ? schedule::bank_split : schedule::automatic;
    } else if (a == "--feature-pitch") ok = set_number(spec.feature_pitch);
    else if (a == "--output-pitch") ok = set_number(spec.output_pitch);
    else if (a == "--k-slice") ok = set_number(options.k_slice);
    else if (a == "--feature") ok = set_address(operand_role::feature);
    else if (a == "--weight") ok = set_address(operand_role::weight);
    else if (a == "--output") ok = set_address(operand_role::output);
    else if (a == "--regcmd") ok = set_address(operand_role::regcmd);
    else if (a == "--format") {
      ok = v == "hex" || v == "bin" || v == "json";
      format = v;
    } else if (a == "-o") out_path = v;
    else return fail_usage("unknown option '" + std::string(a) + "'");
    if (!ok) return fail_usage("bad value '" + std::string(v) + "' for " + std::string(a));
  }
  if (!have_m || !have_k || !have_n) return fail_usage("matmul needs -M, -K and -N");
  if (weight) spec.in = input_precisions{spec.in.features, *weight};

  plan_program p;  // one op is stored the same way
  if (planned) {
    result<plan_program> built = build_plan(spec, options);
    if (!built) return fail_rule(built.err());
    p = std::move(built).value();
  } else {
    const result<matmul_program> mm = build_matmul(spec);
    if (!mm) return fail_rule(mm.err());
    const program_view v = mm.value().code.view();
    p.entries.assign(v.entries.begin(), v.entries.end());
    p.slots.assign(v.slots.begin(), v.slots.end());
    p.tasks.assign(v.tasks.begin(), v.tasks.end());
  }
  if (status s = patch_slots(p.entries, p.slots, addresses); !s) return fail_rule(s.err());

  std::string text;
  if (format == "hex") {
    char line[24];
    for (const entry& e : p.entries) {
      std::snprintf(line, sizeof line, "0x%016llx\n", static_cast<unsigned long long>(e.bits()));
      text += line;
    }
  } else if (format == "json") {
    text = "[";
    for (std::size_t i = 0; i < p.entries.size(); ++i)
      text += (i ? ",\n " : "\n ") + format_json(decode(p.entries[i]), i);
    text += p.entries.empty() ? "]\n" : "\n]\n";
  } else {
    for (const entry& e : p.entries)
      for (std::uint8_t b : e.to_bytes()) text += static_cast<char>(b);
  }
  if (out_path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::ferror(stdout) ? 1 : 0;
  }
  std::ofstream out(out_path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) {
    std::fprintf(stderr, "regcmd-gen: cannot write '%s'\n", out_path.c_str());
    return 1;
  }
  return 0;
}
