// The model's SDP value path of the activation contract (issue 16, ops-reference §6): the BS
// and BN stages (ALU, MUL, MUL_PRELU, ReLU, ReLUX), the EW stage after them, the OUT_CVT
// (MINUS_EXP for fp16; scale, shift and offset for integers) and the lookup table: its
// memory filled as the entries stream, its interpolation, hybrid point, underflow and
// overflow. Programs are built here from the task skeleton alone (never programs/), and
// every expected value is computed by hand in a comment from the contract.
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <regcmd/core/half.hpp>
#include <regcmd/model/npu.hpp>
#include <regcmd/task/emit_task.hpp>
#include <regcmd/task/program.hpp>
#include <regcmd/task/task.hpp>

#include "model_board.hpp"

using namespace regcmd;
using namespace regcmd::reg;
using model::fault_kind;

namespace {

constexpr std::uint32_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }
constexpr std::uint32_t int_bits(std::int32_t v) { return static_cast<std::uint32_t>(v); }
constexpr std::uint32_t lut_entries = 513;

// One SDP task over n elements in one surface (W = ceil(n / C2) pixels of C2 = 16 bytes of
// channels), every DPU stage bypassed: the contract's geometry (flying mode, H = 1, the main
// input through the MRDMA, the output to memory; the shape of regcmd/programs/sdp/elementwise.hpp's
// sdp::make_task, typed here from the contract).
task_desc sdp_task_of(precision p, std::uint32_t n) {
  const bool fp16 = p == precision::fp16;
  const std::uint32_t C = p == precision::int8 ? 16 : 8, W = (n + C - 1) / C, bytes = W * 16;
  task_desc t;
  t.dpu = dpu_stage{.data_format = {.PROC_PRECISION = p, .IN_PRECISION = p, .OUT_PRECISION = p},
                    .output = {operand_role::output, 0, bytes}};
  dpu_stage& d = *t.dpu;
  d.feature_mode = {.FLYING_MODE = 1, .OUTPUT_MODE = 2, .BURST_LEN = 15};
  d.dst_surf_stride = {.DST_SURF_STRIDE = W};
  d.cube_width = {.WIDTH = W - 1};
  d.cube_channel = {.CHANNEL = C - 1, .ORIG_CHANNEL = C - 1};
  d.bs_ow_cfg = {.OD_BYPASS = 1};
  d.wdma_size_0 = {.CHANNEL_WDMA = C - 1};
  d.wdma_size_1 = {.WIDTH_WDMA = W - 1};
  d.out_convert = {.scale = {.OUT_CVT_SCALE = 1, .FP32TOFP16_EN = fp16}};
  d.surface_add = {.SURF_ADD = W};
  d.complete = false;
  t.dpu_rdma = dpu_rdma_stage{.cube_width = {.WIDTH = W - 1},
                              .cube_channel = {.CHANNEL = C - 1},
                              .source = address{operand_role::feature, 0, bytes},
                              .feature_mode = {.FLYING_MODE = 1, .MRDMA_FP16TOFP32_EN = fp16, .PROC_PRECISION = p,
                                               .BURST_LEN = 15, .IN_PRECISION = p}};
  return t;
}

// The contract's LUT configuration (its "LUT f" program): BN ALU SUM -0.0f, BN MUL
// fp16(index_scale), ReLU bypassed; EW_CFG 0x302; LUT_CFG 0x68; LE [-16384, 0], LO [0, 16384]
// (each 512 intervals at index select 5), the LE underflow and LO overflow slopes given; the
// other two slopes set to a large value that would show if the model took them.
task_desc lut_task(std::uint32_t n, std::uint16_t index_scale_fp16 = 0x3c00) {
  task_desc t = sdp_task_of(precision::fp16, n);
  dpu_stage& d = *t.dpu;
  d.bn = {.cfg = {.BN_RELU_BYPASS = 1, .BN_ALU_ALGO = alu_algo::SUM},
          .alu = {.BN_ALU_OPERAND = 0x80000000u},
          .mul = {.BN_MUL_OPERAND = index_scale_fp16}};
  d.ew.cfg = {.EW_OP_BYPASS = 1, .EW_OP_CVT_BYPASS = 1, .EW_RELU_BYPASS = 1};
  d.lut_config = true;
  d.lut = {.cfg = {.LUT_LO_LE_MUX = 2, .LUT_OFLOW_PRIORITY = 1, .LUT_HYBRID_PRIORITY = 1},
           .info = {.LUT_LE_INDEX_SELECT = 5, .LUT_LO_INDEX_SELECT = 5},
           .le_start = {.LUT_LE_START = int_bits(-16384)},
           .le_end = {.LUT_LE_END = 0},
           .lo_start = {.LUT_LO_START = 0},
           .lo_end = {.LUT_LO_END = 16384},
           // LE underflow: scale -2 (0xfffe), shift 2: -0.5; LE overflow 1000 (unused).
           .le_slope_scale = {.LUT_LE_SLOPE_UFLOW_SCALE = 0xfffe, .LUT_LE_SLOPE_OFLOW_SCALE = 1000},
           .le_slope_shift = {.LUT_LE_SLOPE_UFLOW_SHIFT = 2},
           // LO overflow: scale 5, shift 3: 0.625; LO underflow 1000 (unused).
           .lo_slope_scale = {.LUT_LO_SLOPE_UFLOW_SCALE = 1000, .LUT_LO_SLOPE_OFLOW_SCALE = 5},
           .lo_slope_shift = {.LUT_LO_SLOPE_OFLOW_SHIFT = 3}};
  return t;
}

// The test tables: LE[i] = 2i - 1024 (LE[0] = -1024, LE[512] = 0), LO[i] = 3i + 5 (LO[0] = 5,
// LO[512] = 1541).
std::vector<std::int16_t> le_table() {
  std::vector<std::int16_t> t(lut_entries);
  for (std::uint32_t i = 0; i < lut_entries; ++i) t[i] = static_cast<std::int16_t>(2 * static_cast<int>(i) - 1024);
  return t;
}
std::vector<std::int16_t> lo_table() {
  std::vector<std::int16_t> t(lut_entries);
  for (std::uint32_t i = 0; i < lut_entries; ++i) t[i] = static_cast<std::int16_t>(3 * static_cast<int>(i) + 5);
  return t;
}

// The upload, written by hand: DPU_LUT_ACCESS_CFG (write, table, address 0) and the entries
// as DPU_LUT_ACCESS_DATA writes, LE then LO (ops-reference §6.2).
void put_upload(program_writer& w, std::span<const std::int16_t> le, std::span<const std::int16_t> lo) {
  for (const auto& [table, id] : {std::pair{le, false}, std::pair{lo, true}}) {
    w.put(DPU_LUT_ACCESS_CFG{.LUT_TABLE_ID = id, .LUT_ACCESS_TYPE = 1});
    for (const std::int16_t v : table) w.put(DPU_LUT_ACCESS_DATA{.LUT_ACCESS_DATA = static_cast<std::uint16_t>(v)});
  }
}

using prefix = std::function<void(program_writer&)>;
using test_program = program<4096, 4, 64>;

// A program of the tasks, ping-pong off (the reference runs SDP so), each task emitted by
// the skeleton and preceded by its prefix (an upload) inside the task, before its registers.
std::unique_ptr<test_program> make_program(const std::vector<task_desc>& tasks, const std::vector<prefix>& prefixes = {}) {
  auto p = std::make_unique<test_program>();
  p->pingpong = false;
  const status s = fill(*p, [&](program_writer& w) {
    for (std::size_t k = 0; k < tasks.size(); ++k) {
      program<256, 1> one;
      REQUIRE(fill(one, [&](program_writer& v) { emit_task(v, tasks[k]); }).ok());
      const std::uint32_t body = one.tasks[0].count - task_tail_entries;
      w.begin_task();
      if (k < prefixes.size() && prefixes[k]) prefixes[k](w);
      w.put_body(std::span<const entry>(one.entries.data(), body), std::span<const slot>(one.slots.data(), one.slot_count));
      w.end_task(one.entries[one.tasks[0].count - 1], one.tasks[0].int_mask);
    }
  });
  REQUIRE(s.ok());
  return p;
}
std::unique_ptr<test_program> make_program(const task_desc& t, const prefix& before = {}) {
  return make_program(std::vector<task_desc>{t}, std::vector<prefix>{before});
}

prefix upload(const std::vector<std::int16_t>& le, const std::vector<std::int16_t>& lo) {
  return [le, lo](program_writer& w) { put_upload(w, le, lo); };
}

std::uint32_t element_bytes(precision p) { return p == precision::int8 ? 1 : 2; }

void put_element(std::uint8_t* at, precision p, double v) {
  if (p == precision::fp16) {
    const std::uint16_t h = float_to_half(static_cast<float>(v));
    at[0] = static_cast<std::uint8_t>(h);
    at[1] = static_cast<std::uint8_t>(h >> 8);
  } else if (p == precision::int8) {
    at[0] = static_cast<std::uint8_t>(static_cast<std::int8_t>(v));
  } else {
    const auto i = static_cast<std::uint16_t>(static_cast<std::int16_t>(v));
    at[0] = static_cast<std::uint8_t>(i);
    at[1] = static_cast<std::uint8_t>(i >> 8);
  }
}

double get_element(const std::uint8_t* at, precision p) {
  if (p == precision::int8) return static_cast<std::int8_t>(at[0]);
  const auto h = static_cast<std::uint16_t>(at[0] | at[1] << 8);
  return p == precision::fp16 ? double{half_to_float(h)} : static_cast<double>(static_cast<std::int16_t>(h));
}

// A board running SDP programs over n elements: x into the feature buffer, the output buffer
// filled with 0xee before each run.
struct sdp_board : testing::model_board {
  precision p;
  model::run_result last;

  explicit sdp_board(precision dtype) : p(dtype) {}

  // Runs `prog` on x; the faults are in `last`.
  std::vector<double> run_raw(const test_program& prog, const std::vector<double>& x) {
    const std::uint32_t atom = 16 / element_bytes(p);
    const std::size_t bytes = (x.size() + atom - 1) / atom * 16;
    auto& in = allocate(operand_role::feature, bytes);
    auto& out = allocate(operand_role::output, bytes, 0xee);
    for (std::size_t i = 0; i < x.size(); ++i) put_element(in.data() + i * element_bytes(p), p, x[i]);
    last = run(prog.view());
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = get_element(out.data() + i * element_bytes(p), p);
    return y;
  }
  // The same, requiring a clean run of every task.
  std::vector<double> run_clean(const test_program& prog, const std::vector<double>& x) {
    std::vector<double> y = run_raw(prog, x);
    REQUIRE_MESSAGE(last.faults.empty(), last.faults.front().what);
    REQUIRE(last.tasks_completed == prog.task_count);
    return y;
  }
  bool output_untouched() {
    const auto& out = (*this)[operand_role::output];
    return std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0xee; });
  }
};

// Runs the one-task program of `t` on x and checks every output against `want`.
void check_task(const task_desc& t, precision p, const std::vector<double>& x, const std::vector<double>& want,
                const prefix& before = {}) {
  REQUIRE(x.size() == want.size());
  sdp_board board(p);
  const std::vector<double> y = board.run_clean(*make_program(t, before), x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    CAPTURE(i);
    CAPTURE(x[i]);
    CHECK(y[i] == want[i]);
  }
}

// Runs `t` expecting one unmodelled fault whose message holds `what`, and no output.
void check_unmodelled(const task_desc& t, precision p, const std::string& what, const prefix& before = {}) {
  sdp_board board(p);
  board.run_raw(*make_program(t, before), {1, 2, 3});
  REQUIRE(board.last.faults.size() == 1);
  CHECK(board.last.faults[0].kind == fault_kind::unmodelled);
  CHECK_MESSAGE(board.last.faults[0].what.find(what) != std::string::npos, board.last.faults[0].what);
  CHECK(board.output_untouched());
}

// The ReLU family's BN stages (the contract's "programs" list).
bn_stage relu_bn() { return {.cfg = {.BN_ALU_BYPASS = 1, .BN_MUL_BYPASS = 1}}; }
bn_stage clip0_bn(std::uint32_t hi_bits) {
  return {.cfg = {.BN_ALU_BYPASS = 1, .BN_MUL_BYPASS = 1, .BN_RELUX_EN = 1}, .relux = {.BN_RELUX_CMP_DAT = hi_bits}};
}
bn_stage clip_bn(std::uint32_t minus_lo_bits, std::uint32_t span_bits) {
  return {.cfg = {.BN_MUL_BYPASS = 1, .BN_RELUX_EN = 1, .BN_ALU_ALGO = alu_algo::SUM},
          .alu = {.BN_ALU_OPERAND = minus_lo_bits},
          .relux = {.BN_RELUX_CMP_DAT = span_bits}};
}
bn_stage leaky_bn(std::uint16_t multiplier, std::uint32_t shift) {
  return {.cfg = {.BN_ALU_BYPASS = 1, .BN_MUL_PRELU = 1, .BN_RELU_BYPASS = 1},
          .mul = {.BN_MUL_SHIFT_VALUE = shift, .BN_MUL_OPERAND = multiplier}};
}

// fp16 clip(lo, hi)'s second half: the EW stage adds the register immediate lo (fp32 bits),
// as the existing immediate add does.
void add_immediate(task_desc& t, float value) {
  t.dpu->ew = {.cfg = {.EW_OP_SRC = operand_source::immediate,
                       .EW_LUT_BYPASS = 1,
                       .EW_RELU_BYPASS = 1,
                       .EW_ALU_ALGO = alu_algo::SUM,
                       .EDATA_SIZE = data_size::two_byte,
                       .EW_DATA_MODE = ew_data_mode::per_pixel},
               .operands = every_element(DPU_EW_OP_VALUE{.EW_OPERAND = bits_of(value)})};
}

task_desc with_bn(precision p, std::uint32_t n, const bn_stage& bn) {
  task_desc t = sdp_task_of(p, n);
  t.dpu->bn = bn;
  return t;
}

}  // namespace

TEST_CASE("act model: fp16 ReLU, ReLU6, clip and leaky on the BN stage, hand-computed") {
  const precision f = precision::fp16;
  // ReLU: max(x, 0).
  check_task(with_bn(f, 6, relu_bn()), f, {-3.5, 0, 2.25, 65504, -65504, -0.5}, {0, 0, 2.25, 65504, 0, 0});
  // ReLU6: min(max(x, 0), 6), RELUX_CMP = 6.0f.
  check_task(with_bn(f, 5, clip0_bn(bits_of(6.0f))), f, {-1, 3, 6, 7.5, 100}, {0, 3, 6, 6, 6});
  // clip(-2.5, 3): BN ALU +2.5, ReLU, ReLUX 5.5, EW + (-2.5):
  //   -4 -> -1.5 -> 0 -> 0 -> -2.5;  1.75 -> 4.25 -> 4.25 -> 1.75;  10 -> 12.5 -> 5.5 -> 3.
  task_desc clip = with_bn(f, 6, clip_bn(bits_of(2.5f), bits_of(5.5f)));
  add_immediate(clip, -2.5f);
  check_task(clip, f, {-4, -2.5, 0, 1.75, 3, 10}, {-2.5, -2.5, 0, 1.75, 3, 3});
  // leaky(0.125): MUL_OPERAND fp16 0x3000 on the negatives only: -8 -> -1, -1 -> -0.125.
  check_task(with_bn(f, 4, leaky_bn(0x3000, 0)), f, {-8, -1, 0, 5}, {-1, -0.125, 0, 5});
  // leaky(0.1): fp16(0.1) = 0x2e66 = 1638/16384. -10 · 1638/16384 = -(1 - 2^-12) in fp32,
  // halfway between fp16 -(1 - 2^-11) and -1: nearest even gives -1. -2 -> -0.199951171875
  // (3276/16384, exact in fp16: 1.599609375 · 2^-3 holds 10 fraction bits).
  check_task(with_bn(f, 3, leaky_bn(0x2e66, 0)), f, {-10, -2, 3}, {-1, -0.199951171875, 3});
}

TEST_CASE("act model: int16 and int8 ReLU, ReLU6, clip and leaky with the MUL shift rounding") {
  const precision s = precision::int16, b = precision::int8;
  check_task(with_bn(s, 5, relu_bn()), s, {-32768, -1, 0, 1, 32767}, {0, 0, 0, 1, 32767});
  check_task(with_bn(b, 4, relu_bn()), b, {-128, -1, 0, 127}, {0, 0, 0, 127});
  // ReLU6: RELUX_CMP int32 6.
  check_task(with_bn(s, 5, clip0_bn(6)), s, {-5, 3, 6, 7, 1000}, {0, 3, 6, 6, 6});
  check_task(with_bn(b, 4, clip0_bn(6)), b, {-5, 3, 7, 127}, {0, 3, 6, 6});
  // clip(-300, 1000): ALU +300, ReLU, ReLUX 1300, OUT_CVT_OFFSET -300:
  //   -32768 -> 0 -> -300;  -1 -> 299 -> -1;  32767 -> 33067 -> 1300 -> 1000.
  task_desc clip16 = with_bn(s, 6, clip_bn(300, 1300));
  clip16.dpu->out_convert.offset = {.OUT_CVT_OFFSET = int_bits(-300)};
  check_task(clip16, s, {-32768, -300, -1, 999, 1000, 32767}, {-300, -300, -1, 999, 1000, 1000});
  // clip(-20, 50) on int8: ALU +20, ReLU, ReLUX 70, OUT_CVT_OFFSET -20.
  task_desc clip8 = with_bn(b, 7, clip_bn(20, 70));
  clip8.dpu->out_convert.offset = {.OUT_CVT_OFFSET = int_bits(-20)};
  check_task(clip8, b, {-128, -21, -20, 0, 50, 51, 127}, {-20, -20, -20, 0, 50, 50, 50});
  // leaky(0.1) on int16: m = round(0.1 · 2^15) = 3277, shift 15, rounding half up:
  //   -1000 · 3277 / 32768 = -100.0061 -> -100;  -16384 · 3277 / 32768 = -1638.5 -> -1638 (half up);
  //   -5 · 3277 / 32768 = -0.50003 -> -1;  -32768 -> -3277 exactly;  100 unchanged.
  check_task(with_bn(s, 5, leaky_bn(3277, 15)), s, {-1000, -16384, -5, -32768, 100}, {-100, -1638, -1, -3277, 100});
  // leaky(0.25) on int8: m = 8192, shift 15: -128 -> -32;  -3 -> -0.75 -> -1;
  //   -2 -> -0.5 -> 0 (half up);  -6 -> -1.5 -> -1 (half up);  7 unchanged.
  check_task(with_bn(b, 5, leaky_bn(8192, 15)), b, {-128, -3, -2, -6, 7}, {-32, -1, 0, -1, 7});
}

TEST_CASE("act model: the truncating rounding parameter applies to the MUL shift") {
  // leaky(0.5): m = 16384, shift 15, npu::requantization_rounding = truncate (floor):
  //   -3 -> -1.5 -> -2;  -1 -> -0.5 -> -1;  -16384 · 3277 / 32768 = -1638.5 -> -1639 (m = 3277).
  sdp_board board(precision::int16);
  board.npu.requantization_rounding = model::rounding::truncate;
  std::vector<double> y = board.run_clean(*make_program(with_bn(precision::int16, 3, leaky_bn(16384, 15))), {-3, -1, 4});
  CHECK(y == std::vector<double>{-2, -1, 4});
  y = board.run_clean(*make_program(with_bn(precision::int16, 1, leaky_bn(3277, 15))), {-16384});
  CHECK(y == std::vector<double>{-1639});
}

TEST_CASE("act model: BS then BN in the stage order ALU, MUL, ReLU, ReLUX") {
  {
    // fp16. BS: ALU SUM +1, MUL x2 (fp16 0x4000, every value), ReLU bypassed, ReLUX 5;
    // BN: ALU MAX with -3, nothing else.
    //   1 -> 2 -> 4 -> 4 -> max(4, -3) = 4   (MUL before the ALU would give 3)
    //   3 -> 4 -> 8 -> 5 -> 5;   -4 -> -3 -> -6 -> -6 -> -3;   -1 -> 0 -> 0 -> 0 -> 0
    task_desc t = sdp_task_of(precision::fp16, 4);
    t.dpu->bs = {.cfg = {.BS_RELU_BYPASS = 1, .BS_RELUX_EN = 1, .BS_ALU_ALGO = alu_algo::SUM},
                 .alu = {.BS_ALU_OPERAND = bits_of(1.0f)},
                 .mul = {.BS_MUL_OPERAND = 0x4000},
                 .relux = {.BS_RELUX_CMP_DAT = bits_of(5.0f)}};
    t.dpu->bn = {.cfg = {.BN_MUL_BYPASS = 1, .BN_RELU_BYPASS = 1, .BN_ALU_ALGO = alu_algo::MAX},
                 .alu = {.BN_ALU_OPERAND = bits_of(-3.0f)}};
    check_task(t, precision::fp16, {1, 3, -4, -1}, {4, 5, -3, 0});
  }
  {
    // int16. BS: ALU MIN 100, MUL by int16 -3 (0xfffd) >> 1 half up, ReLU; BN: ALU SUM 7, ReLUX 50.
    //   10 -> 10 -> -15 -> 0 -> 7 -> 7;      -10 -> -10 -> 15 -> 15 -> 22 -> 22
    //   -5 -> -5 -> 7.5 -> 8 -> 8 -> 15;     500 -> 100 -> -150 -> 0 -> 7 -> 7
    //   -100 -> -100 -> 150 -> 150 -> 157 -> 50
    task_desc t = sdp_task_of(precision::int16, 5);
    t.dpu->bs = {.cfg = {.BS_ALU_ALGO = alu_algo::MIN},
                 .alu = {.BS_ALU_OPERAND = 100},
                 .mul = {.BS_MUL_SHIFT_VALUE = 1, .BS_MUL_OPERAND = 0xfffd}};
    t.dpu->bn = {.cfg = {.BN_MUL_BYPASS = 1, .BN_RELU_BYPASS = 1, .BN_RELUX_EN = 1, .BN_ALU_ALGO = alu_algo::SUM},
                 .alu = {.BN_ALU_OPERAND = 7},
                 .relux = {.BN_RELUX_CMP_DAT = 50}};
    check_task(t, precision::int16, {10, -10, -5, 500, -100}, {7, 22, 15, 7, 50});
  }
}

TEST_CASE("act model: the OUT_CVT write-out, MINUS_EXP for fp16 and scale, shift, offset for integers") {
  {
    // ReLU then CVT_TYPE 1, MINUS_EXP 2: out = relu(x) / 4: -1 -> 0, 10 -> 2.5, 0.5 -> 0.125.
    task_desc t = with_bn(precision::fp16, 3, relu_bn());
    t.dpu->out_convert.shift = {.MINUS_EXP = 2, .CVT_TYPE = 1};
    check_task(t, precision::fp16, {-1, 10, 0.5}, {0, 2.5, 0.125});
  }
  {
    // int16, every stage bypassed: out = sat(round_shift(3x, 2) + (-10)), half up:
    //   10 -> 7.5 -> 8 -> -2;  -10 -> -7.5 -> -7 -> -17;  30000 -> 22500 -> 22490;  -32768 -> -24576 -> -24586
    task_desc t = sdp_task_of(precision::int16, 4);
    t.dpu->out_convert = {.offset = {.OUT_CVT_OFFSET = int_bits(-10)}, .scale = {.OUT_CVT_SCALE = 3}, .shift = {.OUT_CVT_SHIFT = 2}};
    check_task(t, precision::int16, {10, -10, 30000, -32768}, {-2, -17, 22490, -24586});
  }
  {
    // int8, scale 5: saturates on the write: 100 -> 500 -> 127;  -100 -> -128;  3 -> 15.
    task_desc t = sdp_task_of(precision::int8, 3);
    t.dpu->out_convert.scale = {.OUT_CVT_SCALE = 5};
    check_task(t, precision::int8, {100, -100, 3}, {127, -128, 15});
  }
}

TEST_CASE("act model: the lookup table interpolates, takes LO at the hybrid point and extrapolates with the given slopes") {
  // Index scale 1.0 (BN MUL fp16 0x3c00, ALU + -0.0): v = x. Index select 5: 32 v units an entry.
  //   48      LO, p = 48/32 = 1.5:               LO[1] + 0.5·(LO[2] - LO[1]) = 8 + 1.5 = 9.5
  //   100     LO, p = 3.125:                     14 + 0.125·3 = 14.375
  //   0       both tables' point: LO (hybrid priority 1): LO[0] = 5   (LE would give LE[512] = 0)
  //   -40     LE, p = (16384 - 40)/32 = 510.75:  LE[510] + 0.75·2 = -4 + 1.5 = -2.5
  //   -16384  LE_START: LE[0] = -1024
  //   16384   LO_END (inside LO): LO[512] = 1541
  //   -16448  underflow: LE[0] + (-16448 + 16384)·(-2·2^-2) = -1024 + (-64)(-0.5) = -992
  //   16512   overflow: LO[512] + (16512 - 16384)·(5·2^-3) = 1541 + 128·0.625 = 1621
  check_task(lut_task(8), precision::fp16, {48, 100, 0, -40, -16384, 16384, -16448, 16512},
             {9.5, 14.375, 5, -2.5, -1024, 1541, -992, 1621}, upload(le_table(), lo_table()));
}

TEST_CASE("act model: the LUT's index scale and per-table index select") {
  // BN MUL fp16(0.5) = 0x3800: v = x/2. LO index select 4 over [0, 8192] (512 intervals),
  // LE index select 5 over [-16384, 0]:
  //   100  -> v = 50,  LO p = 50/16 = 3.125:              14 + 0.125·3 = 14.375
  //   -80  -> v = -40, LE p = 510.75:                     -2.5
  //   16   -> v = 8,   LO p = 0.5:                        5 + 0.5·3 = 6.5
  //   17008 -> v = 8504 > LO_END 8192: overflow:          LO[512] + 312·0.625 = 1541 + 195 = 1736
  task_desc t = lut_task(4, 0x3800);
  t.dpu->lut.info = {.LUT_LE_INDEX_SELECT = 5, .LUT_LO_INDEX_SELECT = 4};
  t.dpu->lut.lo_end = {.LUT_LO_END = 8192};
  check_task(t, precision::fp16, {100, -80, 16, 17008}, {14.375, -2.5, 6.5, 1736}, upload(le_table(), lo_table()));
}

TEST_CASE("act model: MINUS_EXP scales a LUT's output") {
  // CVT_TYPE 1, MINUS_EXP 3: 48 -> 9.5/8 = 1.1875;  -40 -> -2.5/8 = -0.3125.
  // MINUS_EXP 15 (the sigmoid's Q0.15): 0 -> LO[0]·2^-15 = 5·2^-15 = 1.52587890625e-4 (fp16 normal).
  task_desc t = lut_task(2);
  t.dpu->out_convert.shift = {.MINUS_EXP = 3, .CVT_TYPE = 1};
  check_task(t, precision::fp16, {48, -40}, {1.1875, -0.3125}, upload(le_table(), lo_table()));
  t.dpu->out_convert.shift = {.MINUS_EXP = 15, .CVT_TYPE = 1};
  check_task(t, precision::fp16, {0}, {5.0 / 32768}, upload(le_table(), lo_table()));
}

TEST_CASE("act model: the LUT memory fills as the entries stream") {
  sdp_board board(precision::fp16);
  // Access type 0 writes nothing; LO from address 10 on; a negative entry written with bits
  // 31:16 = 0xffff as the sources write it (ops-reference §6.2).
  const task_desc t = lut_task(1);
  auto prog = make_program(t, [](program_writer& w) {
    w.put(DPU_LUT_ACCESS_CFG{.LUT_ACCESS_TYPE = 0});
    w.put(DPU_LUT_ACCESS_DATA{.LUT_ACCESS_DATA = 0x1234});
    w.put(DPU_LUT_ACCESS_CFG{.LUT_ADDR = 10, .LUT_TABLE_ID = 1, .LUT_ACCESS_TYPE = 1});
    w.put(DPU_LUT_ACCESS_DATA{.LUT_ACCESS_DATA = 7});
    w.put_raw(entry::make(block_id::dpu, 0xfffffff6u, DPU_LUT_ACCESS_DATA::offset));  // -10
    w.put(DPU_LUT_ACCESS_DATA{.LUT_ACCESS_DATA = 0x8000});                              // -32768
  });
  board.run_clean(*prog, {0});
  CHECK(board.npu.lut(0)[0] == 0);
  CHECK(board.npu.lut(1)[9] == 0);
  CHECK(board.npu.lut(1)[10] == 7);
  CHECK(board.npu.lut(1)[11] == -10);
  CHECK(board.npu.lut(1)[12] == -32768);
  CHECK(board.npu.lut(1)[13] == 0);
}

TEST_CASE("act model: an upload past 513 entries is reported and ignored") {
  sdp_board board(precision::fp16);
  std::vector<std::int16_t> le = le_table();
  le.push_back(777);  // entry 513: past the table
  const std::vector<double> y = board.run_raw(*make_program(lut_task(2), upload(le, lo_table())), {48, -16384});
  REQUIRE(board.last.faults.size() == 1);
  CHECK(board.last.faults[0].kind == fault_kind::unmodelled);
  CHECK(board.last.faults[0].task == 0);
  CHECK(board.last.faults[0].what.find("past the table's 513 entries") != std::string::npos);
  CHECK(board.last.tasks_completed == 1);  // not a stopping fault: the op runs
  CHECK(board.npu.lut(0)[512] == 0);       // LE[512] = 2·512 - 1024, not 777
  CHECK(board.npu.lut(0)[0] == -1024);
  CHECK(board.npu.lut(1)[0] == 5);  // the LO table after it from its own address 0
  CHECK(y == std::vector<double>{9.5, -1024});
}

TEST_CASE("act model: the tables persist across tasks and submits, and reset clears them") {
  sdp_board board(precision::fp16);
  // Two tasks, the upload in the first only: the second uses the same tables (its input
  // and output are the same buffers: the same results).
  auto both = make_program(std::vector<task_desc>{lut_task(2), lut_task(2)}, {upload(le_table(), lo_table())});
  CHECK(board.run_clean(*both, {48, -40}) == std::vector<double>{9.5, -2.5});
  // A second submit without an upload.
  auto plain = make_program(lut_task(2));
  CHECK(board.run_clean(*plain, {48, -40}) == std::vector<double>{9.5, -2.5});
  // reset(): every entry 0. In range y = 0; below LE_START y = LE[0] + (-64)(-0.5) = 32.
  board.npu.reset();
  for (unsigned table : {0u, 1u})
    CHECK(std::all_of(board.npu.lut(table).begin(), board.npu.lut(table).end(), [](std::int16_t v) { return v == 0; }));
  CHECK(board.run_clean(*plain, {48, -16448}) == std::vector<double>{0, 32});
}

TEST_CASE("act model: register values outside the contract are reported unmodelled") {
  const auto tables = upload(le_table(), lo_table());
  {
    // A LUT on an int8 SDP.
    task_desc t = lut_task(3);
    const task_desc i8 = sdp_task_of(precision::int8, 3);
    t.dpu->data_format = i8.dpu->data_format;
    t.dpu->out_convert.scale = {.OUT_CVT_SCALE = 1};
    t.dpu_rdma->feature_mode = i8.dpu_rdma->feature_mode;
    t.dpu->cube_channel = i8.dpu->cube_channel;
    t.dpu->wdma_size_0 = i8.dpu->wdma_size_0;
    t.dpu_rdma->cube_channel = i8.dpu_rdma->cube_channel;
    check_unmodelled(t, precision::int8, "a LUT on an int8/int16 SDP", tables);
  }
  {
    task_desc t = lut_task(3);
    t.dpu->lut.cfg = {.LUT_LO_LE_MUX = 2, .LUT_OFLOW_PRIORITY = 1};  // 0x28: hybrid priority LE
    check_unmodelled(t, precision::fp16, "DPU_LUT_CFG other than 0x68", tables);
  }
  {
    task_desc t = lut_task(3);
    t.dpu->lut.lo_start = {.LUT_LO_START = 32};  // LE_END 0 != LO_START 32
    check_unmodelled(t, precision::fp16, "not contiguous", tables);
  }
  {
    task_desc t = lut_task(3);
    t.dpu->lut.lo_end = {.LUT_LO_END = 16383};  // 16383 / 32 intervals: not whole
    check_unmodelled(t, precision::fp16, "a LUT LO table", tables);
  }
  {
    task_desc t = lut_task(3);
    t.dpu->lut.info = {.LUT_LE_INDEX_SELECT = 4, .LUT_LO_INDEX_SELECT = 5};  // 16384 / 16 = 1024 intervals
    check_unmodelled(t, precision::fp16, "a LUT LE table", tables);
  }
  {
    task_desc t = lut_task(3);
    t.dpu->ew.cfg = {.EW_OP_CVT_BYPASS = 1, .EW_RELU_BYPASS = 1};  // the LUT and an EW op together
    check_unmodelled(t, precision::fp16, "EW_CFG 0x302", tables);
  }
  {
    task_desc t = with_bn(precision::fp16, 3, relu_bn());
    t.dpu->bn.cfg = {.BN_MUL_BYPASS = 1, .BN_ALU_SRC = operand_source::memory, .BN_ALU_ALGO = alu_algo::SUM};
    check_unmodelled(t, precision::fp16, "BN stage: an ALU operand from memory", {});
  }
  {
    task_desc t = with_bn(precision::int16, 3, relu_bn());
    t.dpu->bn.cfg = {.BN_MUL_BYPASS = 1, .BN_ALU_ALGO = alu_algo::EQL};
    check_unmodelled(t, precision::int16, "an ALU function other than SUM, MAX and MIN", {});
  }
  {
    task_desc t = with_bn(precision::int16, 3, leaky_bn(3277, 15));
    t.dpu->bn.mul.BN_MUL_SRC = operand_source::memory;
    check_unmodelled(t, precision::int16, "a multiplier operand from memory", {});
  }
  {
    task_desc t = with_bn(precision::fp16, 3, relu_bn());
    t.dpu->out_convert.offset = {.OUT_CVT_OFFSET = 1};  // the sigmoid of AB-OPS: not in the contract
    check_unmodelled(t, precision::fp16, "OUT_CVT offset", {});
  }
  {
    task_desc t = with_bn(precision::int8, 3, relu_bn());
    t.dpu->out_convert.shift = {.MINUS_EXP = 2, .CVT_TYPE = 1};
    check_unmodelled(t, precision::int8, "an integer SDP with CVT_TYPE", {});
  }
}

// The ReLU family on random data against a host computation: every stage of the contract's
// program list, for fp16 (fp32 arithmetic, one rounding to fp16), int16 and int8 (exact,
// the MUL shift rounding half up, saturated).
TEST_CASE("act model: the ReLU family on random data against the host") {
  std::mt19937 rng(16);
  const std::uint32_t n = 200;
  const auto fp16 = [](double v) { return double{half_to_float(float_to_half(static_cast<float>(v)))}; };
  {
    std::vector<double> x(n);
    for (double& v : x) v = fp16(std::uniform_real_distribution<double>(-12, 12)(rng));
    const precision f = precision::fp16;
    const float a = half_to_float(0x2e66);  // fp16(0.1)
    struct row {
      task_desc t;
      std::function<double(double)> host;
    };
    task_desc clip = with_bn(f, n, clip_bn(bits_of(2.5f), bits_of(5.5f)));
    add_immediate(clip, -2.5f);
    const row rows[] = {
        {with_bn(f, n, relu_bn()), [](double v) { return std::max(v, 0.0); }},
        {with_bn(f, n, clip0_bn(bits_of(6.0f))), [](double v) { return std::clamp(v, 0.0, 6.0); }},
        // (x + 2.5f), ReLU, ReLUX 5.5f, then + (-2.5f), in fp32.
        {clip,
         [&](double v) {
           return fp16(static_cast<double>(std::min(std::max(static_cast<float>(v) + 2.5f, 0.0f), 5.5f) + -2.5f));
         }},
        {with_bn(f, n, leaky_bn(0x2e66, 0)),
         [&](double v) { return v >= 0 ? v : fp16(static_cast<double>(static_cast<float>(v) * a)); }},
    };
    for (const row& r : rows) {
      sdp_board board(f);
      const std::vector<double> y = board.run_clean(*make_program(r.t), x);
      for (std::uint32_t i = 0; i < n; ++i) {
        CAPTURE(x[i]);
        REQUIRE(y[i] == r.host(x[i]));
      }
    }
  }
  for (const precision p : {precision::int16, precision::int8}) {
    CAPTURE(static_cast<int>(p));
    const bool wide = p == precision::int16;
    const std::int64_t lo = wide ? -32768 : -128, hi = wide ? 32767 : 127;
    const std::int64_t clip_lo = wide ? -300 : -20, clip_hi = wide ? 1000 : 50;
    std::vector<double> x(n);
    for (double& v : x) v = static_cast<double>(std::uniform_int_distribution<std::int64_t>(lo, hi)(rng));
    // leaky(0.1): m = 3277, (x·m + 2^14) >> 15 (half up, arithmetic shift = floor).
    const auto leaky = [](double v) {
      const auto i = static_cast<std::int64_t>(v);
      if (i >= 0) return v;
      const std::int64_t sum = i * 3277 + 16384;
      return static_cast<double>(sum >= 0 ? sum / 32768 : -((-sum + 32767) / 32768));
    };
    task_desc clip = with_bn(p, n, clip_bn(int_bits(static_cast<std::int32_t>(-clip_lo)),
                                           int_bits(static_cast<std::int32_t>(clip_hi - clip_lo))));
    clip.dpu->out_convert.offset = {.OUT_CVT_OFFSET = int_bits(static_cast<std::int32_t>(clip_lo))};
    struct row {
      task_desc t;
      std::function<double(double)> host;
    };
    const row rows[] = {
        {with_bn(p, n, relu_bn()), [](double v) { return std::max(v, 0.0); }},
        {with_bn(p, n, clip0_bn(6)), [](double v) { return std::clamp(v, 0.0, 6.0); }},
        {clip, [&](double v) { return std::clamp(v, double(clip_lo), double(clip_hi)); }},
        {with_bn(p, n, leaky_bn(3277, 15)), leaky},
    };
    for (const row& r : rows) {
      sdp_board board(p);
      const std::vector<double> y = board.run_clean(*make_program(r.t), x);
      for (std::uint32_t i = 0; i < n; ++i) {
        CAPTURE(x[i]);
        REQUIRE(y[i] == std::clamp(r.host(x[i]), double(lo), double(hi)));
      }
    }
  }
}
