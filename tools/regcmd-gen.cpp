// regcmd-gen: write a regcmd program from the program library.
//
//   regcmd-gen matmul --in fp16 --out fp32 -M 64 -K 512 -N 256 [options]
//   regcmd-gen ew --op add --dtype fp16 -M 64 -N 256 --operand per-channel
//   regcmd-gen matmul --in fp16 --out fp16 -M 8 -K 128 -N 17 --then ew --op mul --operand per-channel
//
// Exit status: 0 written, 2 bad usage or a shape that breaks a rule (its message on stderr).

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/elementwise.hpp>
#include <regcmd/programs/fused.hpp>
#include <regcmd/programs/matmul.hpp>
#include <regcmd/programs/plan.hpp>
#include <regcmd/rules/program_rules.hpp>

#include "cli.hpp"
#include "io.hpp"

namespace {

constexpr const char* usage = R"(usage: regcmd-gen PROGRAM [options]

Programs:
  matmul    C[M][N] = A[M][K] . B[K][N] as one task (one op), or with --plan as many tasks
            as the shape needs (K-split, N-tiling, M-tiling) in one chained program; with
            --then ew, a fused chain: the matmul, then an SDP op on its fp16 result
  ew        out[M][N] = a (op) b on the SDP (DPU + DPU_RDMA)

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
  --then ew           fuse an SDP op after the matmul (with --op, --operand, --value)

ew options (and, after --then ew, of the fused op):
  --op O              add | mul | max | min                             (default add)
  --dtype P           fp16 | int8 | int16                               (default fp16)
  -M N, -N N          the shape (required)
  --operand K         per-element | per-channel | immediate             (default per-element)
  --value X           the immediate operand (a number)
  --layout L          surface | flat                                    (default surface)
  --no-pad            refuse an N that does not fill whole 16-byte atoms

Addresses (patched into the program's slots; default 0):
  --feature ADDR, --weight ADDR, --output ADDR, --ew-operand ADDR, --intermediate ADDR
  (a fused chain's matmul result), and --regcmd ADDR (the program's own buffer, which
  chained tasks' next-task addresses point into)

Output:
  --format F          hex (one 0x%016x entry per line) | bin (little-endian u64) |
                      json (the regcmd-dis --json schema)               (default hex)
  -o FILE             write to FILE instead of standard output
  -h, --help          this text
)";

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
  cli::request r{.elementwise = program_name == "ew"};
  const bool elementwise = r.elementwise;
  if (program_name != "matmul" && !elementwise) return fail_usage("unknown program '" + std::string(program_name) + "'");

  matmul_spec& spec = r.spec;
  std::optional<precision> weight;
  bool planned = false;
  operand_addresses addresses{};
  std::string format = "hex", out_path;

  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      return 0;
    }
    if (a == "--no-pad") {
      spec.pad = r.ew.pad = padding::none;
      continue;
    }
    if (a == "--plan" && !elementwise) { planned = true; continue; }
    if (a == "--delta" && !elementwise) { r.options.delta_tasks = true; continue; }
    if (i + 1 >= argc) return fail_usage("option '" + std::string(a) + "' needs a value");
    const std::string_view v = argv[++i];
    using namespace cli;
    auto set_address = [&](operand_role role) { return assign(addresses[static_cast<std::size_t>(role)], parse_number(v)); };
    bool ok = true;
    if (const std::optional<bool> applied = apply(r, a, v)) ok = *applied;
    else if (a == "--weight-precision" && !elementwise) ok = (weight = parse_precision(v)).has_value();
    else if (a == "--schedule" && !elementwise) {
      ok = v == "auto" || v == "template" || v == "bank";
      spec.sched = v == "template" ? schedule::template_split : v == "bank" ? schedule::bank_split : schedule::automatic;
    } else if (a == "--feature-pitch" && !elementwise) ok = assign(spec.feature_pitch, parse_u32(v));
    else if (a == "--output-pitch" && !elementwise) ok = assign(spec.output_pitch, parse_u32(v));
    else if (a == "--feature") ok = set_address(operand_role::feature);
    else if (a == "--weight") ok = set_address(operand_role::weight);
    else if (a == "--output") ok = set_address(operand_role::output);
    else if (a == "--ew-operand") ok = set_address(operand_role::ew_operand);
    else if (a == "--intermediate") ok = set_address(operand_role::intermediate);
    else if (a == "--regcmd") ok = set_address(operand_role::regcmd);
    else if (a == "--format") {
      ok = v == "hex" || v == "bin" || v == "json";
      format = v;
    } else if (a == "-o") out_path = v;
    else return fail_usage("unknown option '" + std::string(a) + "' for " + std::string(program_name));
    if (!ok) return fail_usage("bad value '" + std::string(v) + "' for " + std::string(a));
  }
  if (!r.complete()) return fail_usage(elementwise ? "ew needs -M and -N" : "matmul needs -M, -K and -N");
  if (weight) spec.in = input_precisions{spec.in.features, *weight};
  if (r.fused_ew && planned) return fail_usage("--then ew fuses one matmul task: drop --plan");

  struct {
    std::vector<entry> entries;
    std::vector<slot> slots;
  } p;
  auto keep = [&](const program_view& v) {
    p.entries.assign(v.entries.begin(), v.entries.end());
    p.slots.assign(v.slots.begin(), v.slots.end());
  };
  // Keeps the program a door built, or says which rule it broke.
  auto take = [&](const auto& built) {
    if (built) keep(built.value().view());
    return built ? status{} : status{built.err()};
  };
  const status built = elementwise ? take(build_ew(r.ew))
                       : r.fused_ew ? take(build_fused(r.fused()))
                       : planned    ? take(build_plan(spec, r.options))
                                    : take(build_matmul(spec));
  if (!built) return fail_rule(built.err());
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
  const bool written = out_path.empty() ? cli::write_out(stdout, text, "regcmd-gen")
                                         : cli::write_file(out_path, text, "regcmd-gen");
  return written ? 0 : 1;
}
