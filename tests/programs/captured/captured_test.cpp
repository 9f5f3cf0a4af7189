// Captured templates: dumps of tests/data written as C++ by regcmd-dis --format cpp at build
// time (tests/CMakeLists.txt), compiled here, compared with the dumps they came from, patched
// to another shape and compared with regcmd's own program of that shape, register by
// register. Expected values are typed from the dumps and the matmul recipe's formulas.
#include <regcmd/testing/doctest.hpp>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <regcmd/decode/dump.hpp>
#include <regcmd/decode/lookup.hpp>
#include <regcmd/programs/captured/program.hpp>
#include <regcmd/programs/captured/patch.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/rules/program_rules.hpp>

#include "fused_add_per_channel.hpp"
#include "matmul_int4.hpp"
#include "matmul_surface.hpp"
#include "plan_ksplit_fp16.hpp"
#include "plan_mtile_int8_delta.hpp"
#include "captured_chain.hpp"
#include "captured_in_place.hpp"
#include "ew_add_channel.hpp"
#include "small.hpp"
#include "vendor_matmul.hpp"

using namespace regcmd;
using namespace regcmd::reg;

namespace {

std::vector<entry> dump_of(const std::string& name) {
  const dump d = read_dump(std::string(REGCMD_TEST_DATA_DIR) + "/" + name);
  REQUIRE_MESSAGE(d.ok(), d.error);
  return d.entries;
}

// A golden file's comment lines: "# task N first F count C enable 0xE int 0xI" and
// "# slot entry E role R offset O extent X", and its flags.
struct golden_layout {
  bool pingpong = true, delta_tasks = false;
  std::vector<task> tasks;
  std::vector<std::string> slots;  // "entry role offset extent"
};
golden_layout layout_of(const std::string& name) {
  std::ifstream in(std::string(REGCMD_TEST_DATA_DIR) + "/golden/" + name);
  REQUIRE(in.good());
  golden_layout g;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string hash, what, word;
    s >> hash >> what;
    if (what == "pingpong") {
      int pp = 0, delta = 0;
      s >> pp >> word >> delta;
      g.pingpong = pp != 0;
      g.delta_tasks = delta != 0;
    } else if (what == "task") {
      task t;
      std::string index, enable, interrupt;
      s >> index >> word >> t.first >> word >> t.count >> word >> enable >> word >> interrupt;
      t.enable_mask = static_cast<std::uint32_t>(std::stoul(enable, nullptr, 16));
      t.int_mask = static_cast<std::uint32_t>(std::stoul(interrupt, nullptr, 16));
      g.tasks.push_back(t);
    } else if (what == "slot") {
      std::string entry_index, role, offset, extent;
      s >> word >> entry_index >> word >> role >> word >> offset >> word >> extent;
      g.slots.push_back(entry_index + " " + role + " " + offset + " " + extent);
    }
  }
  return g;
}

std::vector<std::string> slots_of(const program_view& p) {
  std::vector<std::string> out;
  for (const slot& s : p.slots)
    out.push_back(std::to_string(s.entry) + " " + std::string(name_of(s.role)) + " " + std::to_string(s.offset) + " " +
                  std::to_string(s.extent));
  return out;
}

// A golden program, written as C++ and compiled, is the golden program: the same entries
// (regcmd's tails are the writer's), tasks, flags, slot entries and extents (read from the
// registers here, written by the emitters there). What a dump cannot show differs: its
// addresses are 0 until bound, so every offset is 0, and a golden `intermediate` slot takes
// the role its register implies (`intermediate_as`, by entry); and a task that leaves a
// register of a block it runs as an earlier task set it makes the template's tasks delta
// tasks (`delta_seen`), whether or not the op reads that register.
void check_round_trip(const program_view& p, const std::string& golden,
                      const std::map<std::uint32_t, std::string>& intermediate_as = {}, bool delta_seen = false) {
  CAPTURE(golden);
  const std::vector<entry> entries = dump_of("golden/" + golden);
  const golden_layout g = layout_of(golden);
  REQUIRE_REGCMD_EQ(p, entries);
  REQUIRE(p.tasks.size() == g.tasks.size());
  for (std::size_t t = 0; t < g.tasks.size(); ++t) CHECK(p.tasks[t] == g.tasks[t]);
  CHECK(p.pingpong == g.pingpong);
  CHECK(p.delta_tasks == (g.delta_tasks || delta_seen));
  std::vector<std::string> expected;
  for (const std::string& s : g.slots) {
    std::istringstream in(s);
    std::uint32_t entry_index = 0;
    std::string golden_role, offset, extent;
    in >> entry_index >> golden_role >> offset >> extent;
    const std::string& role = golden_role == "intermediate" ? intermediate_as.at(entry_index) : golden_role;
    const std::uint32_t shown_offset = role == "regcmd" ? static_cast<std::uint32_t>(std::stoul(offset)) : 0u;
    expected.push_back(std::to_string(entry_index) + " " + role + " " + std::to_string(shown_offset) + " " + extent);
  }
  CHECK(slots_of(p) == expected);
}

// The value each register holds when a one-task program's op-enable runs: its last copy.
std::map<std::string, std::uint32_t> registers_of(const program_view& p) {
  std::map<std::string, std::uint32_t> out;
  for (std::uint32_t i = p.tasks[0].first; i < body_end(p.tasks[0]); ++i) {
    const entry e = p.entries[i];
    const register_info* r =
        kind_of(e) == entry_kind::register_write ? find_register(*block_from_target(e.target()), e.offset()) : nullptr;
    if (r) out[std::string(r->name)] = e.value();
  }
  return out;
}

// A one-task template with CNA_CBUF_CON0 written twice, as the reference warns templates do.
inline constexpr auto twice = captured_program<12, 1, 1>({.pingpong = true}, [](program_writer& w) {
  w.begin_task();
  w.put(CNA_CBUF_CON0{.DATA_BANK = 11, .WEIGHT_BANK = 1});
  w.put(CNA_DATA_SIZE1{.DATAIN_CHANNEL = 64, .DATAIN_CHANNEL_REAL = 63});
  w.put_slot<CNA_FEATURE_DATA_ADDR>(operand_role::feature, 0, 0);
  w.put(CNA_CBUF_CON0{.DATA_BANK = 11, .WEIGHT_BANK = 1});
  w.end_task(GLOBAL_OPERATION_ENABLE{.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1}, dpu_done_interrupts);
});

// What regcmd's rules ask of the capture before it may run: the DPU processing in the
// features' precision (the capture's DPU_DATA_FORMAT says fp32: precision-consistent) and the
// 0xb1 bank split at K < 96 (the capture's 0x1b: small-k-bank-split).
constexpr void patch_to_rules(patcher& p) {
  p.patch(DPU_DATA_FORMAT{
      .PROC_PRECISION = precision::fp16, .IN_PRECISION = precision::fp16, .OUT_PRECISION = precision::fp32});
  p.patch(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});  // 0xb1
}

// The vendor capture replayed at M 4, K 64, N 64: the registers its shape sets, each from
// the matmul recipe's formulas (fp16: 2 bytes an element), then the rules' two.
constexpr void patch_to_4x64x64(patcher& p) {
  p.patch(CNA_DATA_SIZE1{.DATAIN_CHANNEL = 64, .DATAIN_CHANNEL_REAL = 63});                // K, K - 1
  p.patch(CNA_FC_DATA_SIZE1{.DMA_CHANNEL = 64});                                           // K
  p.patch(CNA_WEIGHT_SIZE0{.WEIGHT_BYTES = 8192});                                         // K * N * 2
  p.patch(CNA_WEIGHT_SIZE1{.WEIGHT_BYTES_PER_KERNEL = 128});                               // K * 2
  p.patch(CNA_WEIGHT_SIZE2{.WEIGHT_KERNELS = 64, .WEIGHT_HEIGHT = 1, .WEIGHT_WIDTH = 1});  // N
  p.patch(CORE_DATAOUT_SIZE_1{.DATAOUT_CHANNEL = 64});                // N, as the capture writes it
  p.patch(DPU_DATA_CUBE_CHANNEL{.CHANNEL = 63, .ORIG_CHANNEL = 63});  // N - 1
  p.patch(DPU_WDMA_SIZE_0{.CHANNEL_WDMA = 63});                       // N - 1
  patch_to_rules(p);
}

}  // namespace

TEST_CASE(
    "captured: the vendor capture compiles to its entries, with regcmd's tail and slots read from its registers") {
  const program_view p = captured::vendor_matmul.view();
  const std::vector<entry> dump = dump_of("vendor_matmul_fp16_fp32_4x40x16.txt");
  REQUIRE(dump.size() == 112);
  REQUIRE(p.entries.size() == 108);  // the 4 zero entries of padding are left out
  for (std::size_t i = 0; i < 104; ++i) {
    CAPTURE(i);
    CHECK(p.entries[i] == dump[i]);
  }
  // The tail: PC_BASE_ADDRESS 0 (no next task) where the capture writes PC register 0x0000;
  // then PC_REGISTER_AMOUNTS, the preamble and the op-enable as captured.
  CHECK(dump[104].bits() == 0x0101000000000000u);
  CHECK(p.entries[104].bits() == 0x0101000000000010u);
  for (std::size_t i = 105; i < 108; ++i) CHECK(p.entries[i] == dump[i]);
  REQUIRE(p.tasks.size() == 1);
  CHECK(p.tasks[0] == task{0, 108, 0x0d, 0x300});
  CHECK(p.pingpong);
  CHECK_FALSE(p.delta_tasks);
  // Extents: the feature in surfaces, ceil(40 / 8) = 5 of them (SURF_STRIDE 0 + LINE_STRIDE
  // 16) * 16 = 256 bytes apart, the last one M = 4 rows LINE_STRIDE * 4 = 64 bytes apart of
  // one 16-byte atom: 4 * 256 + 3 * 64 + 16 = 1232; the weights WEIGHT_BYTES = 1280; the
  // output ceil(16 * 4 / 16) = 4 surfaces DST_SURF_STRIDE 4 * 16 = 64 bytes apart of
  // W * H = 4 atoms: 3 * 64 + 64 = 256.
  CHECK(slots_of(p) == std::vector<std::string>{"21 feature 0 1232", "30 weight 0 1280", "57 output 0 256"});
}

TEST_CASE("captured: every program rule applies to a template, and to a patched one") {
  // As captured, its DPU processes in fp32 (precision-consistent); with that patched, its
  // 0x1b split (DATA_BANK 11) at K = 40 breaks the small-K rule; with both, it passes.
  auto m = captured::vendor_matmul;
  CHECK_BREAKS(validate(m.view()), rules::precision_consistent);
  REQUIRE(patch(m, DPU_DATA_FORMAT{.PROC_PRECISION = precision::fp16,
                                   .IN_PRECISION = precision::fp16,
                                   .OUT_PRECISION = precision::fp32})
              .ok());
  CHECK_BREAKS(validate(m.view()), rules::small_k_bank_split);
  REQUIRE(patch(m, CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11}).ok());
  CHECK(validate(m.view()).ok());

  m = captured::vendor_matmul;
  patcher p{patch_target_of(m)};
  patch_to_4x64x64(p);
  REQUIRE_MESSAGE(p.ok(), p.outcome().err().id());
  CHECK(p.copies() == 10);  // one copy of each of the 10 registers
  CHECK(validate(m.view()).ok());
  // Patched to a K past the single-op cap, it is refused like a generated program.
  CHECK(patch(m, CNA_DATA_SIZE1{.DATAIN_CHANNEL = 10784, .DATAIN_CHANNEL_REAL = 10783}).value() == 1);
  CHECK_BREAKS(validate(m.view()), rules::k_single_op_max);
}

TEST_CASE(
    "captured: the vendor capture patched to 4x64x64 is regcmd's surface matmul but for the capture's own choices") {
  auto m = captured::vendor_matmul;
  patcher p{patch_target_of(m)};
  patch_to_4x64x64(p);
  REQUIRE(p.ok());
  constexpr auto ours = fixed<matmul_spec{
      .dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64, .layout = operand_layout::surface}>();
  const auto theirs = registers_of(m.view()), mine = registers_of(ours.code.view());
  // The registers the capture writes differently from regcmd (matmul-recipe §5, "vendor
  // capture vs both implementations"): capture value, then regcmd's.
  const std::map<std::string, std::pair<std::uint32_t, std::uint32_t>> differences = {
      {"CNA_CONV_CON2", {0x10, 0x50}},      // FEATURE_GRAINS 1 vs M + 1 = 5
      {"CNA_CVT_CON0", {0x1, 0xb}},         // CVT_TYPE and DATA_SIGN clear in the capture
      {"CNA_DMA_CON1", {0x10, 0x4}},        // LINE_STRIDE 16 vs 4
      {"CNA_PAD_CON1", {0xffffff80, 0x0}},  // PAD_VALUE -128 vs 0
      {"CORE_DATAOUT_SIZE_1", {64, 63}},    // N vs N - 1
      {"DPU_EW_CVT_SCALE_VALUE", {0x0, 0x1}}, {"DPU_OUT_CVT_SCALE", {0x0, 0x1}},
  };
  std::map<std::string, std::pair<std::uint32_t, std::uint32_t>> found;
  for (const auto& [register_name, value] : mine) {
    const std::string name = register_name;  // (a structured binding cannot be captured)
    CAPTURE(name);
    REQUIRE(theirs.count(name) == 1);  // the capture writes every register regcmd does
    if (theirs.at(name) != value) found[name] = {theirs.at(name), value};
  }
  CHECK(found == differences);
  CHECK(theirs.size() == mine.size());
}

TEST_CASE("captured: a patch writes every copy of its register and says how many") {
  auto t = twice;
  const result<std::uint32_t> n = patch(t, CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
  REQUIRE(n.ok());
  CHECK(n.value() == 2);
  CHECK(t.entries[0].value() == 0xb1);
  CHECK(t.entries[3].value() == 0xb1);  // the later copy, the one the NPU uses
  CHECK(t.entries[1] == twice.entries[1]);
}

TEST_CASE("captured: patches that are refused, with the rule each breaks") {
  auto t = twice;
  const auto before = t.entries;
  CHECK_BREAKS(patch(t, CNA_CONV_CON2{.FEATURE_GRAINS = 5}), rules::patch_absent);
  CHECK_BREAKS(patch(t, CNA_FEATURE_DATA_ADDR{.FEATURE_BASE_ADDR = 0x1000}), rules::patch_address);
  CHECK_BREAKS(patch(t, PC_REGISTER_AMOUNTS{.PC_DATA_AMOUNT = 3}), rules::patch_task_tail);
  // A value past its field, given at run time, is refused by the field check.
  const std::uint32_t channels = 1u << 16;
  CHECK_BREAKS(patch(t, CNA_DATA_SIZE1{.DATAIN_CHANNEL = channels, .DATAIN_CHANNEL_REAL = 1}), rules::field_range);
  CHECK(t.entries == before);
  // The patcher keeps the first refusal and ignores what follows.
  patcher p{patch_target_of(t)};
  p.patch(CNA_CONV_CON2{.FEATURE_GRAINS = 5});
  CHECK(p.patch(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11}) == 0);
  CHECK_BREAKS(p.outcome(), rules::patch_absent);
  CHECK(t.entries == before);
}

TEST_CASE("captured: patching reads the slots' extents again from the registers") {
  // The vendor capture at M = 8 rather than 4: its feature's last surface holds 8 rows
  // 64 bytes apart, 4 * 256 + 7 * 64 + 16 = 1488 bytes (1232 at M = 4, first test case).
  auto m = captured::vendor_matmul;
  REQUIRE(patch(m, CNA_DATA_SIZE0{.DATAIN_HEIGHT = 8, .DATAIN_WIDTH = 1}).ok());
  CHECK(m.slots[0].extent == 1488);
  CHECK(m.slots[1].extent == 1280);  // the weights' registers are as they were
}

// At compile time: patched<> applies the patches and every program rule.
inline constexpr auto vendor_4x64x64 = patched<captured::vendor_matmul, [](patcher& p) { patch_to_4x64x64(p); }>();
static_assert(vendor_4x64x64.entry_count == 108);

TEST_CASE("captured: patched<> at compile time equals the same patches at run time") {
  auto m = captured::vendor_matmul;
  patcher p{patch_target_of(m)};
  patch_to_4x64x64(p);
  CHECK(m.entries == vendor_4x64x64.entries);
  CHECK(m.slots == vendor_4x64x64.slots);
}

TEST_CASE("captured: the hand-made and regcmd-written dumps of tests/data compile to their entries") {
  // small.txt: one task of three register writes (one of an offset no register owns, kept
  // raw) and a tail.
  // small.txt: one task of 7 register writes (one of an offset no register owns, kept raw)
  // and a 3-entry tail (zero, preamble, op-enable), which becomes regcmd's 4 entries.
  const std::vector<entry> small_dump = dump_of("small.txt");
  const program_view s = captured::small.view();
  REQUIRE(small_dump.size() == 10);
  REQUIRE(s.tasks.size() == 1);
  REQUIRE(s.entries.size() == 11);
  for (std::size_t i = 0; i < 7; ++i) CHECK(s.entries[i] == (i == 3 ? small_dump[3].with_value(0) : small_dump[i]));
  CHECK(small_dump[3].value() == 0x10000000);  // CNA_FEATURE_DATA_ADDR: a slot, 0 until bound
  CHECK(s.entries[10] == small_dump[9]);
  check_round_trip(captured::matmul_surface.view(), "matmul_fp16_fp32_4x64x64_surface.txt");
  check_round_trip(captured::plan_mtile_int8_delta.view(), "plan_mtile_int8_delta.txt");
  check_round_trip(captured::plan_ksplit_fp16.view(), "plan_ksplit_fp16.txt");
  check_round_trip(captured::matmul_int4.view(), "matmul_int4_int16_5x90x33.txt");
  check_round_trip(captured::ew_add_channel.view(), "ew_add_fp16_channel_surface.txt");
  // The chain's intermediate, written by DPU_DST_BASE_ADDR (entries 57, 169) and read by
  // DPU_RDMA_RDMA_SRC_BASE_ADDR (149, 207). Its SDP tasks leave 14 DPU registers (the LUT's,
  // 0x4014, 0x40c4) as the matmul task set them: delta tasks, for all a dump can tell.
  check_round_trip(captured::fused_add_per_channel.view(), "fused_add_per_channel_700x256x128.txt",
                   {{57, "output"}, {149, "feature"}, {169, "output"}, {207, "feature"}}, true);
}

TEST_CASE("captured: a bound dump's addresses give the slots' offsets, and an address read back is an intermediate") {
  const program_view p = captured::captured_chain.view();
  REQUIRE(p.tasks.size() == 3);
  CHECK_FALSE(p.pingpong);
  // Each task of 3 body entries and regcmd's 4-entry tail, from an even entry: 0, 8, 16.
  CHECK(p.tasks[1].first == 8);
  CHECK(p.tasks[2].first == 16);
  std::vector<std::string> roles;
  for (const slot& s : p.slots)
    roles.push_back(std::to_string(s.entry) + " " + std::string(name_of(s.role)) + " " + std::to_string(s.offset));
  CHECK(roles == std::vector<std::string>{"0 feature 0", "1 weight 0", "2 intermediate 0",
                                          "3 regcmd 64",  // the link to task 1
                                          "8 intermediate 0", "9 ew_operand 0", "10 output 64", "11 regcmd 128",
                                          "16 feature 1024", "17 weight 0", "18 output 0"});
}

TEST_CASE("captured: bytes read after their last write are an intermediate, written in place or row by row") {
  const program_view p = captured::captured_in_place.view();
  REQUIRE(p.tasks.size() == 5);
  std::vector<std::string> roles;
  for (const slot& s : p.slots)
    roles.push_back(std::to_string(s.entry) + " " + std::string(name_of(s.role)) + " " + std::to_string(s.offset));
  // Tasks of 2 body entries start at 0, 6, 12, 18 (each with regcmd's 4-entry tail), task 4
  // at 24. Intermediates from 0x00300000: 0x00500000 is 2097152 on, 0x00500010 2097168.
  CHECK(roles == std::vector<std::string>{"0 feature 0", "1 intermediate 0", "2 regcmd 48",          // task 0
                                          "6 intermediate 0", "7 intermediate 0", "8 regcmd 96",      // in place
                                          "12 intermediate 0", "13 intermediate 2097152", "14 regcmd 144",
                                          "18 feature 16", "19 intermediate 2097168", "20 regcmd 192",
                                          "25 intermediate 2097152", "26 ew_operand 0", "27 ew_operand 0",
                                          "28 output 0"});
}

TEST_CASE("captured: a program built at run time patches the same way, on the heap") {
  auto built = build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64});
  REQUIRE(built.ok());
  heap_code& code = built.value().code;
  // Row-major features, rows K * 2 = 128 bytes apart: (M - 1) * 128 + 128 bytes.
  REQUIRE(code.slots[0].role == operand_role::feature);
  CHECK(code.slots[0].extent == 512);
  const result<std::uint32_t> n = patch(patch_target_of(code), CNA_DATA_SIZE0{.DATAIN_HEIGHT = 8, .DATAIN_WIDTH = 1});
  REQUIRE(n.ok());
  CHECK(n.value() == 1);
  CHECK(code.slots[0].extent == 1024);
  CHECK(validate(code.view()).ok());
}
