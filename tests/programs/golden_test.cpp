// Golden programs: the exact bytes, slot tables and task descriptors of every program kind
// and variant the library builds, one file per program under tests/data/golden/. They pin
// what the builders emit, so that a change to how programs are assembled cannot change a
// byte unnoticed. They prove nothing about the hardware: the values are checked against
// the references by the hand-typed tests (matmul_test, elementwise_test, ...).
//
// A deliberate change of the emitted bytes rewrites the files with
//   REGCMD_WRITE_GOLDENS=1 build/clang/tests/regcmd_unit_tests -tc='golden*'
// and the diff of tests/data/golden/ is then the change to review.
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <regcmd/decode/decode.hpp>
#include <regcmd/decode/format.hpp>
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/graph/fused.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/plan.hpp>

using namespace regcmd;

namespace {

// The text of a golden file: the program's flags, tasks and slots as comments, then one
// entry per line with its register's name (a regcmd-dis text dump).
std::string render(const program_view& p) {
  std::ostringstream out;
  char line[160];
  out << "# pingpong " << p.pingpong << " delta_tasks " << p.delta_tasks << '\n';
  for (std::size_t t = 0; t < p.tasks.size(); ++t) {
    const task& k = p.tasks[t];
    std::snprintf(line, sizeof line, "# task %zu first %u count %u enable 0x%02x int 0x%03x\n", t, k.first, k.count,
                  k.enable_mask, k.int_mask);
    out << line;
  }
  for (const slot& s : p.slots) {
    std::snprintf(line, sizeof line, "# slot entry %u role %s offset %u extent %u\n", s.entry,
                  std::string(name_of(s.role)).c_str(), s.offset, s.extent);
    out << line;
  }
  for (const entry& e : p.entries) {
    std::snprintf(line, sizeof line, "0x%016llx  # %s\n", static_cast<unsigned long long>(e.bits()),
                  register_label(decode(e)).c_str());
    out << line;
  }
  return out.str();
}

std::string path_of(const std::string& name) { return std::string(REGCMD_GOLDEN_DIR) + "/" + name + ".txt"; }

// The comment lines of a golden text: the flags, tasks and slots.
std::vector<std::string> comment_lines(std::istream& in) {
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("#")) out.push_back(line);
  return out;
}

// Compares the program with its golden file (or rewrites the file, see the top): its
// flags, tasks and slots line by line, its entries register by register.
void check_golden(const std::string& name, const program_view& p) {
  CAPTURE(name);
  const std::string actual = render(p);
  if (std::getenv("REGCMD_WRITE_GOLDENS")) {
    std::ofstream(path_of(name)) << "# regcmd golden program: " << name << '\n' << actual;
    return;
  }
  std::ifstream in(path_of(name));
  REQUIRE_MESSAGE(in.good(), "no golden file " << path_of(name));
  std::string header;
  std::getline(in, header);
  std::istringstream got(actual);
  const std::vector<std::string> expected_comments = comment_lines(in), got_comments = comment_lines(got);
  for (std::size_t n = 0; n < std::max(expected_comments.size(), got_comments.size()); ++n) {
    CAPTURE(n);
    REQUIRE_MESSAGE(n < expected_comments.size(), "the program has more tasks or slots than its golden: " << got_comments[n]);
    REQUIRE_MESSAGE(n < got_comments.size(), "the program has fewer tasks or slots than its golden: " << expected_comments[n]);
    CHECK(got_comments[n] == expected_comments[n]);
  }
  CHECK_REGCMD_EQ(p, testing::golden_file{path_of(name)});
}

template <class Built>
program_view view_of(const Built& b) {
  if constexpr (requires { b.code.view(); }) return b.code.view();
  else return b.view();
}

template <class Result>
program_view built(const Result& r) {
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : to_string(r.err())));
  return view_of(r.value());
}

std::string shape_name(const matmul_spec& s) {
  auto p = [](precision v) { return std::string(name_of(v)); };
  std::string n = p(s.dtype.features) + "_" + p(s.out_dtype) + "_" + std::to_string(s.M) + "x" + std::to_string(s.K) + "x" +
                  std::to_string(s.N);
  if (s.layout == operand_layout::surface) n += "_surface";
  if (s.sched == schedule::template_split) n += "_template";
  if (s.sched == schedule::bank_split) n += "_banksplit";
  if (s.feature_pitch) n += "_fpitch" + std::to_string(s.feature_pitch);
  if (s.output_pitch) n += "_opitch" + std::to_string(s.output_pitch);
  return n;
}

constexpr precision fp16 = precision::fp16, fp32 = precision::fp32, int8 = precision::int8, int32 = precision::int32,
                    int4 = precision::int4, int16 = precision::int16;
constexpr operand_layout surface = operand_layout::surface;

const matmul_spec one_op_shapes[] = {
    // every pair, both layouts (int4 has no surface layout)
    {.dtype = fp16, .out_dtype = fp32, .M = 64, .K = 512, .N = 256},
    {.dtype = fp16, .out_dtype = fp16, .M = 64, .K = 512, .N = 256},
    {.dtype = int8, .out_dtype = int32, .M = 64, .K = 512, .N = 256},
    {.dtype = int4, .out_dtype = int16, .M = 8, .K = 512, .N = 128},
    {.dtype = fp16, .out_dtype = fp32, .M = 4, .K = 64, .N = 64, .layout = surface},
    {.dtype = fp16, .out_dtype = fp16, .M = 16, .K = 512, .N = 128, .layout = surface},
    {.dtype = int8, .out_dtype = int32, .M = 64, .K = 512, .N = 64, .layout = surface},
    {.dtype = fp16, .out_dtype = fp32, .M = 128, .K = 1024, .N = 64, .layout = surface},
    // ragged K and N, decode M = 1, schedules, pitches
    {.dtype = fp16, .out_dtype = fp32, .M = 7, .K = 100, .N = 50},
    {.dtype = int8, .out_dtype = int32, .M = 3, .K = 70, .N = 40},
    {.dtype = int4, .out_dtype = int16, .M = 5, .K = 90, .N = 33},
    {.dtype = fp16, .out_dtype = fp16, .M = 1, .K = 4096, .N = 1024},
    {.dtype = fp16, .out_dtype = fp32, .M = 1, .K = 4096, .N = 1024, .layout = surface},
    {.dtype = int8, .out_dtype = int32, .M = 1, .K = 10752, .N = 64},
    {.dtype = fp16, .out_dtype = fp32, .M = 300, .K = 512, .N = 64, .sched = schedule::bank_split},
    {.dtype = fp16, .out_dtype = fp32, .M = 16, .K = 1024, .N = 64, .sched = schedule::template_split},
    {.dtype = int8, .out_dtype = int32, .M = 700, .K = 512, .N = 64},
    {.dtype = fp16, .out_dtype = fp32, .M = 64, .K = 512, .N = 64, .feature_pitch = 4096},
    {.dtype = int8, .out_dtype = int32, .M = 32, .K = 256, .N = 64, .feature_pitch = 1024},
    {.dtype = fp16, .out_dtype = fp32, .M = 8, .K = 64, .N = 32, .output_pitch = 1024},
};

struct plan_case {
  const char* name;
  matmul_spec spec;
  plan_options options;
};
const plan_case plan_cases[] = {
    {"plan_ksplit_fp16", {.dtype = fp16, .out_dtype = fp32, .M = 32, .K = 16384, .N = 128}, {}},
    {"plan_ksplit_fp16_fp16", {.dtype = fp16, .out_dtype = fp16, .M = 16, .K = 12288, .N = 64}, {}},
    {"plan_ksplit_int8", {.dtype = int8, .out_dtype = int32, .M = 16, .K = 12288, .N = 64}, {}},
    {"plan_ksplit_ragged_slice", {.dtype = fp16, .out_dtype = fp32, .M = 4, .K = 5000, .N = 32}, {.k_slice = 2048}},
    {"plan_ntile_fp16", {.dtype = fp16, .out_dtype = fp32, .M = 4, .K = 256, .N = 9000}, {}},
    {"plan_decode_1x4096x11008", {.dtype = fp16, .out_dtype = fp16, .M = 1, .K = 4096, .N = 11008}, {}},
    {"plan_mtile_fp16", {.dtype = fp16, .out_dtype = fp32, .M = 1000, .K = 512, .N = 64}, {}},
    {"plan_mtile_int8_delta", {.dtype = int8, .out_dtype = int32, .M = 2000, .K = 512, .N = 64}, {.delta_tasks = true}},
    {"plan_ksplit_mtile_delta", {.dtype = fp16, .out_dtype = fp32, .M = 512, .K = 4096, .N = 256}, {.delta_tasks = true}},
    {"plan_surface_ksplit", {.dtype = fp16, .out_dtype = fp32, .M = 256, .K = 2048, .N = 64, .layout = surface}, {}},
    {"plan_int4_mtile", {.dtype = int4, .out_dtype = int16, .M = 100, .K = 512, .N = 64}, {}},
};

struct fused_case {
  const char* name;
  fused_spec spec;
};
const fused_case fused_cases[] = {
    {"fused_scaled_matmul_1x4096x1", per_channel_scaled_matmul(1, 4096, 1)},
    {"fused_scaled_matmul_8x128x17", per_channel_scaled_matmul(8, 128, 17)},
    {"fused_add_per_element_64x512x256",
     {.matmul = {.dtype = fp16, .out_dtype = fp16, .M = 64, .K = 512, .N = 256}, .op = ew_op::add,
      .operand = ew_operand::per_element}},
    {"fused_max_immediate_4x64x32",
     {.matmul = {.dtype = fp16, .out_dtype = fp16, .M = 4, .K = 64, .N = 32}, .op = ew_op::max,
      .operand = ew_operand::immediate, .immediate = 0.5f}},
    {"fused_add_per_channel_700x256x128",
     {.matmul = {.dtype = fp16, .out_dtype = fp16, .M = 700, .K = 256, .N = 128}, .op = ew_op::add,
      .operand = ew_operand::per_channel}},
};

const char* op_name(ew_op o) {
  switch (o) {
    case ew_op::add: return "add";
    case ew_op::mul: return "mul";
    case ew_op::max: return "max";
    case ew_op::min: return "min";
    case ew_op::prelu: return "prelu";
  }
  return "?";
}
const char* operand_name(ew_operand o) {
  switch (o) {
    case ew_operand::per_element: return "element";
    case ew_operand::per_channel: return "channel";
    case ew_operand::immediate: return "immediate";
  }
  return "?";
}

}  // namespace

TEST_CASE("golden: one matmul op, every pair, both layouts, ragged, decode, schedules and pitches") {
  for (const matmul_spec& s : one_op_shapes) check_golden("matmul_" + shape_name(s), built(build(s)));
}

TEST_CASE("golden: plans (K-split, N-tiling, M tiles, delta tasks, surface)") {
  for (const plan_case& c : plan_cases) check_golden(c.name, built(build(plan_request{c.spec, c.options})));
}

TEST_CASE("golden: every SDP op x dtype x operand x layout that builds, and a chained flat op") {
  std::size_t count = 0;
  for (const ew_op op : {ew_op::add, ew_op::mul, ew_op::max, ew_op::min})
    for (const precision dtype : {fp16, int8, int16})
      for (const ew_operand operand : {ew_operand::per_element, ew_operand::per_channel, ew_operand::immediate})
        for (const operand_layout layout : {operand_layout::surface, operand_layout::row_major}) {
          const ew_spec s{.op = op, .dtype = dtype, .M = 8, .N = 40, .operand = operand, .layout = layout,
                          .immediate = 0.75f};
          const auto r = build(s);
          if (!r.ok()) continue;  // the rules' refusals have their own tests
          ++count;
          check_golden(std::string("ew_") + op_name(op) + "_" + std::string(name_of(dtype)) + "_" +
                           operand_name(operand) + (layout == operand_layout::row_major ? "_flat" : "_surface"),
                       view_of(r.value()));
        }
  // 4 ops x 3 dtypes x (per element in 2 layouts + per channel in surface) + fp16 add/max/min immediates in 2
  CHECK(count == 4 * 3 * 3 + 3 * 2);
  check_golden("ew_mul_fp16_element_flat_300x500",
               built(build(ew_spec{.op = ew_op::mul, .M = 300, .N = 500, .layout = operand_layout::row_major})));
}

TEST_CASE("golden: fused chains and the per-channel scaled matmul") {
  for (const fused_case& c : fused_cases) check_golden(c.name, built(build(c.spec)));
}

TEST_CASE("golden: the allocation-free run-time door writes the same bytes into storage of its caller") {
  std::array<entry, 2 * matmul::task_entries> entries{};
  std::array<slot, 8> slots{};
  std::array<task, 2> tasks{};
  program_writer w{entries, slots, tasks};
  const auto g = build_into(w, plan_request{{.dtype = fp16, .out_dtype = fp32, .M = 4, .K = 256, .N = 9000}});
  REQUIRE(g.ok());
  CHECK(g.value().n_tiles == 2);
  check_golden("plan_ntile_fp16", {w.entries(), w.slots(), w.tasks()});
  // storage too small is the rule program-capacity, not a write past its end
  std::array<entry, 100> few{};
  program_writer small{few, slots, tasks};
  CHECK_BREAKS(build_into(small, matmul_spec{.dtype = fp16, .out_dtype = fp32, .M = 4, .K = 64, .N = 64}),
               rules::program_capacity);
}

TEST_CASE("golden: the compile-time doors build the same bytes as the run-time doors") {
  constexpr auto mm = fixed<matmul_spec{.dtype = fp16, .out_dtype = fp32, .M = 64, .K = 512, .N = 256}>();
  check_golden("matmul_fp16_fp32_64x512x256", mm.code.view());
  constexpr auto surf = fixed<matmul_spec{.dtype = fp16, .out_dtype = fp32, .M = 4, .K = 64, .N = 64, .layout = surface}>();
  check_golden("matmul_fp16_fp32_4x64x64_surface", surf.code.view());
  constexpr auto p = fixed<plan_request{matmul_spec{.dtype = int8, .out_dtype = int32, .M = 2000, .K = 512, .N = 64}, plan_options{.delta_tasks = true}}>();
  check_golden("plan_mtile_int8_delta", p.code.view());
  constexpr auto e = fixed<ew_spec{.op = ew_op::max, .dtype = int8, .M = 8, .N = 40, .operand = ew_operand::per_channel,
                                .immediate = 0.75f}>();
  check_golden("ew_max_int8_channel_surface", e.code.view());
  constexpr auto f = fixed<per_channel_scaled_matmul(8, 128, 17)>();
  check_golden("fused_scaled_matmul_8x128x17", f.code.view());
}
