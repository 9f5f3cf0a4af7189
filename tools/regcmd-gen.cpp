// regcmd-gen: write a regcmd program from the program library.
//
//   regcmd-gen matmul --in fp16 --out fp32 -M 64 -K 512 -N 256 [options]
//   regcmd-gen ew --op add --dtype fp16 -M 64 -N 256 --operand per-channel
//   regcmd-gen matmul --in fp16 --out fp16 -M 8 -K 128 -N 17 --then ew --op mul --operand per-channel
//   regcmd-gen conv --in uint8 -H 20 -W 20 -C 80 --out-channels 40 --kernel 3 --pad same --bias
//   regcmd-gen act --fn sigmoid --dtype fp16 -M 64 -N 256
//   regcmd-gen pool --op max --dtype fp16 -H 16 -W 16 -C 64 --kernel 2 --stride 2
//   regcmd-gen graph examples/graphs/ffn.graph
//
// Exit status: 0 written; 2 bad usage, a shape or address that breaks a rule, or an
// unwritable output (one line on stderr). 1, a failed check, is regcmd-run's and
// regcmd-diff's.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/conv/emit.hpp>
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/graph/fused.hpp>
#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/programs/pooling/pooling.hpp>
#include <regcmd/rules/limits.hpp>
#include <regcmd/rules/program_rules.hpp>

#include "cli.hpp"
#include <regcmd/cli/graph_file.hpp>
#include "io.hpp"
#include "stats.hpp"

namespace {

const std::string usage = R"(usage: regcmd-gen PROGRAM [options]
       regcmd-gen graph FILE [address and output options]

Programs:
  matmul    C[M][N] = A[M][K] . B[K][N] as one task (one op), or with --plan as many tasks
            as the shape needs (K-split, N-tiling, M-tiling) in one chained program; with
            --then ew, a fused chain: the matmul, then an SDP op on its fp16 result
  ew        out[M][N] = a (op) b on the SDP (DPU + DPU_RDMA)
  conv      a 2-D convolution of one H x W x C image (conv2d, depthwise, pointwise), as
            many tasks as the CBUF plan needs (row tasks, kernel groups) in one program
  act       out[M][N] = f(x[M][N]) on the SDP: the ReLU family on the DPU's BN stage, the
            smooth functions through its lookup table (fp16; the first task uploads it)
  pool      max, average, global max or global average pooling of one H x W x C image on
            the PPU, tall images in row tasks (at most 8191 / W output rows each)
  graph FILE  the ops a graph file describes, one program ('-': standard input): one op
            a line, 'OUT = PROGRAM IN... OPTIONS' with the options above (docs/graph.md,
            "Graph files"); only the address, output and cost options follow FILE

matmul options:
  --in P              input precision: fp16 | int8 | int4              (default fp16)
  --weight-precision P  the weights' precision if it differs from --in (RK3588 refuses)
  --out P             output precision: fp32 | fp16 | int32 | int16    (default fp32)
  -M N, -K N, -N N    the shape (required; 1 to 4294967295, the rules narrow it)
  --layout L          row_major | surface                              (default row_major)
  --schedule S        auto | template | bank (the CBUF split; default auto)
  --no-pad            refuse K and N that are not multiples of the weight tile
  --feature-pitch B   bytes between feature rows (row_major; default 0: a packed row)
  --output-pitch B    bytes between output rows (row_major; default 0: a packed row)
  --plan              plan the operation (K-split, N/M tiling) instead of one op
  --k-slice N         with --plan: K-split slice, a multiple of 32 from 32 to 2048
                      (default: chosen)
  --delta             with --plan: tasks after the first two carry only what changed
  --fewest-tasks      with --plan: the grid with the fewest tasks (the choice before
                      costs were weighed) instead of the lowest time bound
  --explain           with --plan: print the grids the planner weighed and why it took
                      one (traffic, tasks, the bound) instead of the program
  --then ew           fuse an SDP op after the matmul (with --op, --operand, --value)
  --relu, --relu6, --leaky A  a fused activation on a fp16 output (the BN stage, same task)

ew options (and, after --then ew, of the fused op):
  --op O              add | mul | max | min | prelu                     (default add)
  --dtype P           fp16 | int8 | int16                               (default fp16)
  -M N, -N N          the shape (required)
  --operand K         per-element | per-channel | immediate             (default per-element)
  --value X           with --operand immediate: the operand, -65504 to 65504 (fp16)
  --layout L          surface | flat                                    (default surface)
  --no-pad            refuse an N that does not fill whole 16-byte atoms

conv options:
  --in P              uint8 | int8 | fp16                              (default int8)
  --out P             int8 (uint8 and int8 inputs) | fp16 | fp32 (fp16 input)
                      (default int8 for uint8 and int8, fp16 for fp16)
  -H N, -W N, -C N    the input's height, width and channels (required)
  --out-channels N    the output channels (required; with --depthwise, C)
  --kernel K|KHxKW    the kernel: K x K, or KH x KW                    (default 1)
  --stride S|SYxSX    the stride: both axes, or y then x               (default 1)
  --dilation D|DYxDX  the dilation: both axes, or y then x             (default 1)
  --pad P             valid | same (TFLite's) | T,B,L,R                (default valid)
  --depthwise         one kernel per channel (channel multiplier 1)
  --bias              a bias per output channel (int32 quantized, fp16 for fp16)
  --relu, --relu6     clamp the output at 0, or to [0, 6] (real values)
  --leaky A           leaky ReLU: negatives times A, 0 <= A < 1 (not with --add); one of
                      --relu, --relu6, --leaky
  --add               add a residual tensor of the output's shape (before the clamp)
  quantization, for uint8 and int8 (real = scale * (q - zero point)); zero points default
  to 0 for int8 and 128 for uint8:
  --input-zero-point Z, --input-scale S      (default scale 0.05)
  --weight-zero-point Z, --weight-scale S    (default scale 0.02)
  --output-zero-point Z, --output-scale S    (default scale input * weight * 128 *
                      sqrt(KH * KW * C), C 1 for depthwise: random full-range data mostly
                      within the output's range)
  --add-zero-point Z, --add-scale S          with --add: the residual's (default scale the
                      output's)

act options:
  --fn F              relu | relu6 | clip | leaky | sigmoid | tanh | silu | gelu |
                      gelu-erf | hardswish | hardsigmoid | exp | mish | elu | selu |
                      softplus (required); gelu is the tanh approximation, gelu-erf the
                      exact x Phi(x); selu is PyTorch's (alpha 1.6733, scale 1.0507)
  --dtype P           fp16 | int8 | int16 (the table functions: fp16)  (default fp16)
  -M N, -N N          the shape (-M and -N, or --elements)
  --elements N        a vector of N elements: -M 1 -N N in the flat layout
  --layout L          flat | surface (not with --elements)              (default flat)
  --lo X, --hi X      clip only: the bounds, lo < hi, integers for int8 and int16
                      (default 0 and 6)
  --slope A           leaky only: the slope for x < 0, 0 <= A < 1       (default 0.01)
  --alpha A           elu only: negatives saturate at -A, -65504 to 65504 (default 1)
  --range LO,HI       table functions only: the inputs the table follows f over (default
                      the function's own: sigmoid -8,8, tanh -5,5, silu and mish -12,12,
                      gelu -6,6, hardswish and hardsigmoid -4,4, exp -16,0, elu, selu and
                      softplus -8,8); outside it f is held at the nearer bound, and beyond
                      the table's end (max(|LO|, |HI|) a side) held or, with the function's
                      linear tail (silu, gelu, hardswish, mish, elu, selu, softplus
                      above), continued along f's secant over
                      [end, 2 end]: a range narrower than the function's own changes the
                      values beyond it. A range whose entries lie too far apart for the
                      tolerance regcmd-run checks f to is written with a warning
  --no-pad            refuse a shape that does not fill whole 16-byte atoms

pool options (the image and the output NC1HWC2: 8 fp16 or 16 int8 channels per 16-byte
atom, channels padded to whole atoms):
  --op O              max | avg | global-max | global-avg (required); the global ops'
                      kernel is the whole image (H and W at most 16)
  --dtype P           fp16 | int8 (avg and global-avg: fp16)             (default fp16)
  -H N, -W N, -C N    the input's height, width and channels (required)
  --kernel K|KHxKW    the window, 1 to 16 along each axis (avg: 2 to 16)  (default 2)
  --stride S|SYxSX    the stride, 1 to 16: both axes, or y then x     (default the kernel)
  --pad P             valid | same (TFLite's) | T,B,L,R, each side at most 7 and below
                      the kernel; padded taps are -inf for max and 0 for avg, which
                      divides by the whole window (PyTorch's count_include_pad=True)
                      (default valid)
  --kernel, --stride and --pad do not apply to the global ops.

SoC:
  --soc S             rk3588 | rk3576 | rk3568 | rk3566 | rk3562         (default rk3588)
                      the SoC whose numbers the program is built with (include/regcmd/
                      core/soc.hpp); a SoC no source gives the CBUF and limits of builds
                      no program (rule soc-value-unknown): today every one but rk3588.
                      Graph files are built for rk3588.

Addresses (patched into the program's slots; default 0), each for an operand the
program has, 0 to 0xffffffff with every byte its DMA reaches below 4 GiB:
  --feature ADDR, --weight ADDR, --output ADDR, --ew-operand ADDR, --intermediate ADDR
  (a fused chain's matmul result), --bias-address ADDR (a quantized conv's int32 bias,
  which it always reads), --add-address ADDR (a conv's --add residual), and --regcmd ADDR
  (the program's own buffer, which chained tasks' next-task addresses point into)

Cost:
  --stats             print what the program asks of the hardware instead of the program:
                      bytes per DMA, the distinct bytes, the operation's minimum (matmul
                      and plans), MACs, and a lower bound on its time (regcmd-dis --stats;
                      docs/cost.md); --format json for one JSON object
)" + std::string(regcmd::cli::rate_options_help) + R"(
Output:
  --format F          hex (one 0x%016x entry per line) | bin (little-endian u64) |
                      json (the regcmd-dis --json schema)               (default hex)
  -o FILE             write to FILE instead of standard output
  -h, --help          this text
  --version           print the version

Each option is given once, and only where it applies. Each error is one line on standard
error.
Exit status: 0 written; 2 bad usage, a shape or address that breaks a rule, or an
unwritable output. (1, a failed check, is regcmd-run's and regcmd-diff's.)
)";

// Every error is one line; the usage is printed for --help and for no arguments only.
int fail(const std::string& message) {
  std::fprintf(stderr, "regcmd-gen: %s\n", message.c_str());
  return regcmd::cli::exit_error;
}

// The address options and the operand each patches.
struct address_option {
  std::string_view name;
  regcmd::operand_role role;
};
constexpr address_option address_options[] = {
    {"--feature", regcmd::operand_role::feature},       {"--weight", regcmd::operand_role::weight},
    {"--output", regcmd::operand_role::output},         {"--ew-operand", regcmd::operand_role::ew_operand},
    {"--intermediate", regcmd::operand_role::intermediate}, {"--regcmd", regcmd::operand_role::regcmd},
    {"--bias-address", regcmd::operand_role::bias}, {"--add-address", regcmd::operand_role::residual}};

constexpr std::pair<std::string_view, std::string_view> formats[] = {{"hex", "hex"}, {"bin", "bin"}, {"json", "json"}};

// Patches the addresses given into the program and writes it in `format`.
int write_program(std::vector<regcmd::entry>& entries, const std::vector<regcmd::slot>& slots,
                  const regcmd::operand_addresses& addresses, const regcmd::cli::given_options& given,
                  std::string_view format, const std::string& out_path) {
  using namespace regcmd;
  // An address for an operand the program does not read or write would be dropped.
  for (const address_option& o : address_options)
    if (given.has(o.name) && std::none_of(slots.begin(), slots.end(), [&](const slot& s) { return s.role == o.role; }))
      return fail(std::string(o.name) + " does not apply: the program has no " + std::string(name_of(o.role)) + " slot");
  if (status s = patch_slots(entries, slots, addresses); !s) return fail(cli::describe(s.err()));
  // Every byte a slot's DMA reaches needs a 32-bit address, not only its first (fact sheet
  // §1.5): the extent counted from address 0, as the plans count an operand's.
  for (const slot& s : slots) {
    const std::uint64_t first = addresses[static_cast<std::size_t>(s.role)] + s.offset;  // fits: patch_slots checked it
    if (fits_address_space<soc::rk3588>(first + s.extent)) continue;
    const auto option = std::find_if(std::begin(address_options), std::end(address_options),
                                     [&](const address_option& o) { return o.role == s.role; });
    const std::string what = (option != std::end(address_options) ? std::string(option->name) + " " : std::string()) +
                             regcmd::hex(addresses[static_cast<std::size_t>(s.role)], 1) + ": " + std::to_string(s.extent) +
                             " bytes at offset " + regcmd::hex(s.offset, 1) + " end at " + regcmd::hex(first + s.extent, 1);
    return fail(cli::describe(make_error(rules::iova_32bit, name_of(s.role)).with_note(what)));
  }

  std::string text;
  if (format == "hex") {
    char line[24];
    for (const entry& e : entries) {
      std::snprintf(line, sizeof line, "0x%016llx\n", static_cast<unsigned long long>(e.bits()));
      text += line;
    }
  } else if (format == "json") {
    text = "[";
    for (std::size_t i = 0; i < entries.size(); ++i)
      text += (i ? ",\n " : "\n ") + format_json(decode(entries[i]), i);
    text += entries.empty() ? "]\n" : "\n]\n";
  } else {
    for (const entry& e : entries)
      for (std::uint8_t b : e.to_bytes()) text += static_cast<char>(b);
  }
  const bool written = out_path.empty() ? cli::write_out(stdout, text, "regcmd-gen")
                                         : cli::write_file(out_path, text, "regcmd-gen");
  return written ? cli::exit_success : cli::exit_error;
}

// regcmd-gen graph FILE [output options]: the graph the file describes, as one program.
int write_graph(int argc, char** argv) {
  using namespace regcmd;
  if (cli::problem p = cli::graph_file_argument(argc, argv); !p.empty()) return fail(p);
  const std::string path = argv[2];
  operand_addresses addresses{};
  std::string_view format = "hex";
  std::string out_path;
  cli::given_options given;
  bool stats = false;
  roofline_params rates = soc_roofline();
  for (int i = 3; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (const int done = cli::help_or_version(a, usage.c_str(), "regcmd-gen"); done >= 0) return done;
    if (cli::problem twice = given.add(a); !twice.empty()) return fail(twice);
    if (a == "--stats") {
      stats = true;
      continue;
    }
    const auto address = std::find_if(std::begin(address_options), std::end(address_options),
                                       [&](const address_option& o) { return o.name == a; });
    if (address == std::end(address_options) && a != "--format" && a != "-o" && !cli::is_rate_option(a))
      return fail("option '" + std::string(a) + "' does not apply to graph (its ops' options are in the file)");
    if (i + 1 >= argc) return fail(std::string(a) + " needs a value");
    const std::string_view v = argv[++i];
    cli::problem bad;
    if (address != std::end(address_options)) bad = cli::address_in(addresses[static_cast<std::size_t>(address->role)], a, v);
    else if (a == "--format") bad = cli::one_of(format, a, v, formats);
    else if (cli::is_rate_option(a)) bad = cli::apply_rate_option(rates, a, v);
    else if (v.empty()) bad = cli::takes(a, "a file name", v);
    else out_path = v;
    if (!bad.empty()) return fail(bad);
  }
  if (!stats) {
    if (cli::problem p = given.refuse_any({"--cores", "--bandwidth", "--submit-us"}, "without --stats"); !p.empty()) return fail(p);
  }
  const cli::loaded_graph file = cli::load_graph_file(path);
  if (!file.problem.empty()) return fail(file.problem);
  const program_view v = file.built->view();
  if (stats) {
    const cli::stats_report report = cli::report_of(v, rates);
    const std::string text = format == "json" ? cli::format_stats_json(report) : cli::format_stats_text(report);
    const bool written = out_path.empty() ? cli::write_out(stdout, text, "regcmd-gen") : cli::write_file(out_path, text, "regcmd-gen");
    return written ? cli::exit_success : cli::exit_error;
  }
  std::vector<entry> entries(v.entries.begin(), v.entries.end());
  const std::vector<slot> slots(v.slots.begin(), v.slots.end());
  return write_program(entries, slots, addresses, given, format, out_path);
}

// The tool, under guarded_main.
int tool_main(int argc, char** argv) {
  using namespace regcmd;
  if (argc < 2) {
    std::fputs(usage.c_str(), stderr);
    return cli::exit_error;
  }
  const std::string_view program_name = argv[1];
  if (program_name == "-h" || program_name == "--help") {
    std::fputs(usage.c_str(), stdout);
    return cli::exit_success;
  }
  if (program_name == "--version") return cli::print_version("regcmd-gen");
  if (program_name == "graph") return write_graph(argc, argv);
  cli::request r{.elementwise = program_name == "ew", .convolution = program_name == "conv", .activation = program_name == "act",
                 .pooling = program_name == "pool"};
  const bool elementwise = r.elementwise;
  if (program_name != "matmul" && !elementwise && !r.convolution && !r.activation && !r.pooling)
    return fail("unknown program '" + std::string(program_name) + "': matmul, ew, conv, act, pool or graph");

  matmul_spec& spec = r.spec;
  std::optional<precision> weight;
  bool planned = false, stats = false, explain = false;
  roofline_params rates = soc_roofline();
  soc::soc_info chip = soc::family[0];
  operand_addresses addresses{};
  std::string_view format = "hex";
  std::string out_path;
  cli::given_options given;

  static constexpr std::pair<std::string_view, schedule> schedules[] = {
      {"auto", schedule::automatic}, {"template", schedule::template_split}, {"bank", schedule::bank_split}};
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (const int done = cli::help_or_version(a, usage.c_str(), "regcmd-gen"); done >= 0) return done;
    if (cli::problem twice = given.add(a); !twice.empty()) return fail(twice);
    if (a == "--plan") { planned = true; continue; }
    if (a == "--fewest-tasks") { r.options.objective = plan_objective::fewest_tasks; continue; }
    if (a == "--stats") { stats = true; continue; }
    if (a == "--explain") { explain = true; continue; }
    if (cli::apply_flag(r, a)) continue;
    const auto address = std::find_if(std::begin(address_options), std::end(address_options),
                                       [&](const address_option& o) { return o.name == a; });
    const bool known = cli::is_request_option(a) || a == "--weight-precision" || a == "--schedule" || a == "--feature-pitch" ||
                       a == "--output-pitch" || address != std::end(address_options) || a == "--format" || a == "-o" ||
                       a == "--soc" || cli::is_rate_option(a);
    if (!known) return fail("unknown option '" + std::string(a) + "' (regcmd-gen --help lists them)");
    if (i + 1 >= argc) return fail(std::string(a) + " needs a value");
    const std::string_view v = argv[++i];
    cli::problem bad;
    if (const std::optional<cli::problem> applied = cli::apply(r, a, v)) bad = *applied;
    else if (a == "--weight-precision") {
      precision w{};
      if ((bad = cli::named(w, a, v)).empty()) weight = w;
    }
    else if (a == "--schedule") bad = cli::one_of(spec.sched, a, v, schedules);
    else if (a == "--feature-pitch") bad = cli::number_in(spec.feature_pitch, a, v, 0, 0xffff'ffffu);
    else if (a == "--output-pitch") bad = cli::number_in(spec.output_pitch, a, v, 0, 0xffff'ffffu);
    else if (address != std::end(address_options)) bad = cli::address_in(addresses[static_cast<std::size_t>(address->role)], a, v);
    else if (a == "--format") bad = cli::one_of(format, a, v, formats);
    else if (a == "--soc") bad = cli::soc_in(chip, a, v);
    else if (cli::is_rate_option(a)) bad = cli::apply_rate_option(rates, a, v);
    else if (v.empty()) bad = cli::takes(a, "a file name", v);  // -o, the option left
    else out_path = v;
    if (!bad.empty()) return fail(bad);
  }
  if (cli::problem p = cli::check_request(r, given); !p.empty()) return fail(p);
  cli::complete_request(r, given);
  if (r.convolution) {
    cli::problem p = given.refuse_any({"--plan", "--weight-precision", "--schedule", "--feature-pitch", "--output-pitch"},
                                      "to conv (a matmul option)");
    if (p.empty()) p = cli::complete_conv(r, given);
    if (!p.empty()) return fail(p);
  } else if (r.pooling) {
    cli::problem p = given.refuse_any({"--plan", "--weight-precision", "--schedule", "--feature-pitch", "--output-pitch"},
                                      "to pool (a matmul option)");
    if (!p.empty()) return fail(p);
  } else if (elementwise || r.activation) {
    if (cli::problem p = given.refuse_any({"--plan", "--weight-precision", "--schedule", "--feature-pitch", "--output-pitch"},
                                          elementwise ? "to ew (a matmul option)" : "to act (a matmul option)");
        !p.empty())
      return fail(p);
  } else if (r.fused_ew) {
    if (cli::problem p = given.refuse_any({"--plan"}, "with --then ew (the fused chain's matmul is one task, not a plan)"); !p.empty())
      return fail(p);
  } else if (!planned) {
    if (cli::problem p = given.refuse_any({"--k-slice", "--delta", "--fewest-tasks", "--explain"}, "without --plan"); !p.empty())
      return fail(p);
  }
  if (!planned) {
    if (cli::problem p = given.refuse_any({"--fewest-tasks", "--explain"}, "without --plan"); !p.empty()) return fail(p);
  }
  if (!stats) {
    if (cli::problem p = given.refuse_any({"--cores", "--bandwidth", "--submit-us"}, "without --stats"); !p.empty()) return fail(p);
  }
  if (explain && format != "hex") return fail("--explain prints text: --format does not apply");
  if (weight) spec.dtype = input_precisions{spec.dtype.features, *weight};

  struct {
    std::vector<entry> entries;
    std::vector<slot> slots;
  } p;
  cli::stats_report report;
  auto keep = [&](const program_view& v) {
    p.entries.assign(v.entries.begin(), v.entries.end());
    p.slots.assign(v.slots.begin(), v.slots.end());
    if (stats) report = cli::report_of(v, rates);
  };
  // Keeps the program a door built, or says which rule it broke; a matmul's and a plan's
  // operands once are the minimum its traffic is measured against.
  auto take = [&](const auto& built) {
    if (!built) return status{built.err()};
    keep(built.value().view());
    using geometry = std::decay_t<decltype(built.value().geometry)>;
    if constexpr (std::is_same_v<geometry, matmul_geometry>) report.minimum = matmul::minimum_traffic(built.value().geometry);
    if constexpr (std::is_same_v<geometry, plan_shape>) report.minimum = matmul::minimum_traffic(built.value().geometry.whole);
    // A table whose range is too wide for its step is a legal program far from f: said,
    // with the error, on stderr (regcmd-run refuses to check it).
    if constexpr (std::is_same_v<geometry, act_geometry>)
      if (built.value().geometry.lut)
        if (const std::string problem = cli::table_accuracy_problem(r.act, built.value().geometry.table); !problem.empty())
          std::fprintf(stderr, "regcmd-gen: warning: %s\n", problem.c_str());
    return status{};
  };
  // Built for the SoC of --soc: one without the numbers programs need is refused by the door
  // (soc-value-unknown).
  const status built = soc::with_soc(chip.id, [&](auto chip_traits) {
    using Soc = decltype(chip_traits);
    return r.convolution ? take(build<Soc>(r.conv))
           : r.activation  ? take(build<Soc>(r.act))
           : r.pooling     ? take(build<Soc>(r.pool))
           : elementwise   ? take(build<Soc>(r.ew))
           : r.fused_ew    ? take(build<Soc>(r.fused()))
           : planned       ? take(build<Soc>(plan_request{spec, r.options}))
                           : take(build<Soc>(spec));
  });
  if (!built) return fail(cli::describe(built.err()));
  if (stats || explain) {
    std::string text;
    if (explain) {
      plan_explanation why;
      (void)plan(spec, r.options, &why);  // built above: it resolves
      text = cli::format_explanation(why);
    }
    if (stats) text += format == "json" ? cli::format_stats_json(report) : cli::format_stats_text(report);
    const bool written = out_path.empty() ? cli::write_out(stdout, text, "regcmd-gen") : cli::write_file(out_path, text, "regcmd-gen");
    return written ? cli::exit_success : cli::exit_error;
  }
  return write_program(p.entries, p.slots, addresses, given, format, out_path);
}

}  // namespace

int main(int argc, char** argv) { return regcmd::cli::guarded_main("regcmd-gen", argc, argv, tool_main); }
