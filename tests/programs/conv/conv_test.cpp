// Convolution programs against register values evaluated by hand: Mesa's worked examples
// (ops-reference §2.1 table, §2.2 splits, §3 depthwise), the vendor's fp16 conv template
// (§4.2), and the formulas of docs/conv-values.md for what no source shows (row tasks,
// kernel groups, ReLU6, the residual add).
#include <regcmd/testing/doctest.hpp>

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include <regcmd/task/tail.hpp>
#include <regcmd/programs/conv/emit.hpp>
#include <regcmd/programs/conv/packing.hpp>

using namespace regcmd;

namespace {

constexpr std::uint16_t cna = 0x0201, core = 0x0801, dpu = 0x1001, rdma = 0x2001;

struct expected_write {
  std::uint16_t target, offset;
  std::uint32_t value;
};

runtime_program<conv_plan> built(const conv_spec& s) {
  const auto r = build(s);
  REQUIRE_MESSAGE(r.ok(), r.err().id());
  return r.value();
}


// The slot of task t with `role`: its offset and extent.
slot slot_of(const program_view& p, std::uint32_t t, operand_role role) {
  const task& k = p.tasks[t];
  for (const slot& s : p.slots)
    if (s.role == role && s.entry >= k.first && s.entry < k.first + k.count) return s;
  FAIL("no slot of that role in the task");
  return {};
}

template <std::size_t N>
void check_writes(const program_view& p, std::uint32_t t, const std::array<expected_write, N>& expected) {
  for (const expected_write& w : expected) {
    CAPTURE(w.target);
    CAPTURE(w.offset);
    const entry expected = entry::make(w.target, w.value, w.offset);
    CHECK_REGISTER(p, expected, testing::in_task{t});
    CHECK(testing::copies_of(testing::program_of(p), testing::site_of(expected), testing::in_task{t}) == 1);
  }
}

// Mesa's worked example A (ops-reference §2.1): uint8 20x20x80 -> 40, 3x3, stride 1, SAME,
// zero points 100 / 140 / 90, scales 0.02 / 0.005 / 0.04.
constexpr conv_spec example_a{.dtype = conv_data::uint8, .H = 20, .W = 20, .C = 80, .out_channels = 40,
                              .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::same,
                              .input = {0.02f, 100}, .weights = {0.005f, 140}, .output = {0.04f, 90}, .bias = true};

}  // namespace

TEST_CASE("example A, one task: every register Mesa's table gives, and the skeleton's zeros") {
  static constexpr auto a = fixed<example_a>();
  const program_view p = a.view();
  REQUIRE(p.tasks.size() == 1);
  // 48 CNA + 5 CORE + 51 DPU + 14 DPU_RDMA (Mesa's 18 less the unused SRC, BN and EW
  // addresses and the EW stride) + the 4-entry tail
  CHECK(p.tasks[0].count == 122);
  check_writes(p, 0, std::array<expected_write, 40>{{
      {cna, 0x100c, 0},          {cna, 0x1010, 0x340},      {cna, 0x1014, 0x9},        {cna, 0x1020, 0x140014},
      {cna, 0x1024, 0x4f0050},   {cna, 0x1028, 20},         {cna, 0x102c, 400},        {cna, 0x1030, 28800},
      {cna, 0x1034, 720},        {cna, 0x1038, 0x3030028},  {cna, 0x1040, 0xa2},       {cna, 0x1044, 25},
      {cna, 0x104c, 0xb},        {cna, 0x1050, 0x10000},    {cna, 0x1068, 0x11},       {cna, 0x1078, 0xf000f},
      {cna, 0x107c, 80},         {cna, 0x1080, 320},        {cna, 0x1084, 0x140014},   {cna, 0x1088, 80},
      {cna, 0x1180, 0},          {cna, 0x1184, 0xffffffe4}, {core, 0x3010, 0x1},       {core, 0x3014, 0x130013},
      {core, 0x3018, 63},        {core, 0x301c, 0},         {dpu, 0x4004, 0xe},        {dpu, 0x400c, 0x1e4},
      {dpu, 0x4010, 0},          {dpu, 0x4024, 0x1900},     {dpu, 0x403c, 0x27003f},   {dpu, 0x4040, 0x20150},
      {dpu, 0x4050, 0x124},      {dpu, 0x4054, 0xfff4},     {dpu, 0x405c, 0x130013},   {dpu, 0x4080, 0xffffffda},
      {dpu, 0x4084, 0x51ec},     {dpu, 0x4088, 23},         {dpu, 0x40c0, 0x3200},     {dpu, 0x4070, 0x383},
  }});
  check_writes(p, 0, std::array<expected_write, 9>{{
      {rdma, 0x5004, 0xe}, {rdma, 0x500c, 19}, {rdma, 0x5010, 19}, {rdma, 0x5014, 63}, {rdma, 0x501c, 0x2},
      {rdma, 0x5034, 0x1}, {rdma, 0x5044, 0x7810}, {rdma, 0x5068, 0x01010101}, {dpu, 0x4060, 0x53},
  }});
  CHECK_REGISTER(p, reg::GLOBAL_OPERATION_ENABLE::from_bits(0x1d), testing::in_task{0});  // CNA | CORE | DPU | DPU_RDMA
  // operand extents: 5 input surfaces of 20x20 atoms; 28800 weight bytes; 4 output
  // surfaces (64 computed channels) of 20x20 atoms; 64 int32 biases
  CHECK(slot_of(p, 0, operand_role::feature).extent == 5 * 400 * 16);
  CHECK(slot_of(p, 0, operand_role::weight).extent == 28800);
  CHECK(slot_of(p, 0, operand_role::output).extent == 4 * 400 * 16);
  CHECK(slot_of(p, 0, operand_role::bias).extent == 64 * 4);
  CHECK(conv::output_bytes(a.geometry.conv) == 4 * 400 * 16);
  CHECK(conv::bias_bytes(a.geometry.conv) == 256);
}

TEST_CASE("example B, 88x88x80 stride 2: two row tasks, the second reusing the weights") {
  conv_spec b = example_a;
  b.H = b.W = 88;
  b.stride_y = b.stride_x = 2;
  const auto built_b = built(b);
  const program_view p = built_b.view();
  const conv_plan& plan = built_b.geometry;
  // a row is 55 CBUF entries (5 atoms: ceil(5·88/8)); 88 rows need 19 banks; weights
  // 28800 bytes take 1 + 1 banks, leaving 10: 2560 / 55 = 46 rows a task
  CHECK(plan.row_entries == 55);
  CHECK(plan.data_banks == 10);
  REQUIRE(p.tasks.size() == 2);
  // task 0: output rows 0..21 read input rows 0..44 (row 2·21 + 2, no top padding); Mesa
  // reads 46; task 1: output rows 22..43 from input row 44 to the end (44 rows)
  CHECK_REGISTER(p, reg::CNA_DATA_SIZE0::from_bits((88u << 16 | 45)), testing::in_task{0});
  CHECK_REGISTER(p, reg::CNA_DATA_SIZE0::from_bits((88u << 16 | 44)), testing::in_task{1});
  CHECK_REGISTER(p, reg::CNA_CBUF_CON0::from_bits(0x2a), testing::in_task{0});
  CHECK_REGISTER(p, reg::CNA_CBUF_CON0::from_bits(0x202a), testing::in_task{1});
  CHECK_REGISTER(p, reg::CNA_CONV_CON2::from_bits(53u << 4), testing::in_task{0});  // 50 + stride + 1
  CHECK_REGISTER(p, reg::CNA_CONV_CON3::from_bits(0x12), testing::in_task{0});
  CHECK_REGISTER(p, reg::CNA_PAD_CON0::from_bits(0), testing::in_task{0});  // SAME at stride 2 on 88: top 0, bottom 1
  CHECK_REGISTER(p, reg::CNA_DMA_CON1::from_bits(352), testing::in_task{1});
  CHECK_REGISTER(p, reg::CNA_DMA_CON2::from_bits(88 * 88 - 352), testing::in_task{1});  // the whole cube's surface, every task
  CHECK_REGISTER(p, reg::CNA_DATA_SIZE3::from_bits(44 * 22), testing::in_task{0});
  CHECK_REGISTER(p, reg::CORE_DATAOUT_SIZE_0::from_bits((21u << 16 | 43)), testing::in_task{0});
  CHECK_REGISTER(p, reg::CORE_DATAOUT_SIZE_0::from_bits((21u << 16 | 43)), testing::in_task{1});
  CHECK_REGISTER(p, reg::DPU_DST_SURF_STRIDE::from_bits(44u * 44 << 4), testing::in_task{1});      // full-height surfaces
  CHECK_REGISTER(p, reg::DPU_SURFACE_ADD::from_bits(2u * 44 * 44 << 4), testing::in_task{1});
  CHECK(slot_of(p, 0, operand_role::feature).offset == 0);
  CHECK(slot_of(p, 1, operand_role::feature).offset == 61952);  // 44 rows of 88 atoms (Mesa's)
  CHECK(slot_of(p, 1, operand_role::output).offset == 15488);   // 22 rows of 44 atoms (Mesa's)
  CHECK(slot_of(p, 1, operand_role::weight).offset == 0);
  // 45 + 44 rows read for 88: one row read twice (Mesa's split: 46 + 44, two)
  CHECK(plan.reread_rows() == 1);
}

TEST_CASE("example C, depthwise 100x100x48 SAME: Mesa's five row tasks exactly") {
  const auto c = built({.dtype = conv_data::uint8, .H = 100, .W = 100, .C = 48, .out_channels = 48, .kernel_h = 3,
                        .kernel_w = 3, .padding = conv_padding::same, .depthwise = true, .input = {0.02f, 100},
                        .weights = {0.005f, 140}, .output = {0.04f, 90}, .bias = true});
  const program_view p = c.view();
  REQUIRE(p.tasks.size() == 5);
  // rows 0-24, 23-47, 46-70, 69-93, 92-99 with 24, 23, 23, 23, 7 output rows (ops-reference §2.2)
  constexpr std::array<std::uint32_t, 5> tops{0, 23, 46, 69, 92}, rows{25, 25, 25, 25, 8}, outs{24, 23, 23, 23, 7};
  for (std::uint32_t t = 0; t < 5; ++t) {
    CAPTURE(t);
    CHECK_REGISTER(p, reg::CNA_DATA_SIZE0::from_bits((100u << 16 | rows[t])), testing::in_task{t});
    CHECK_REGISTER(p, reg::CORE_DATAOUT_SIZE_0::from_bits(((outs[t] - 1) << 16 | 99)), testing::in_task{t});
    CHECK(slot_of(p, t, operand_role::feature).offset == tops[t] * 100 * 16);
    CHECK_REGISTER(p, reg::CNA_PAD_CON0::from_bits((t == 0 ? 0x11u : 0x10u)), testing::in_task{t});
    CHECK_REGISTER(p, reg::CNA_CBUF_CON0::from_bits((t == 0 ? 0x2au : 0x202au)), testing::in_task{t});
  }
  CHECK_REGISTER(p, reg::CNA_CONV_CON1::from_bits(0x3), testing::in_task{0});        // CONV_MODE depthwise
  CHECK_REGISTER(p, reg::CNA_WEIGHT_SIZE0::from_bits(432), testing::in_task{0});        // 9 taps x 48 channels, one kernel
  CHECK_REGISTER(p, reg::CNA_WEIGHT_SIZE1::from_bits(432), testing::in_task{0});
  CHECK_REGISTER(p, reg::CNA_WEIGHT_SIZE2::from_bits(0x3030001), testing::in_task{0});
  CHECK_REGISTER(p, reg::CORE_MISC_CFG::from_bits(0x3), testing::in_task{0});       // QD_EN | DW_EN
  CHECK_REGISTER(p, reg::CORE_DATAOUT_SIZE_1::from_bits(63), testing::in_task{0});        // 64 computed channels
  CHECK_REGISTER(p, reg::DPU_FEATURE_MODE_CFG::from_bits(0x1fc), testing::in_task{0});
  CHECK_REGISTER(p, reg::DPU_DATA_CUBE_CHANNEL::from_bits(0x2f003f), testing::in_task{0});
  CHECK_REGISTER(p, reg::DPU_BS_OW_CFG::from_bits(0x36c), testing::in_task{0});
  CHECK_REGISTER(p, reg::DPU_SURFACE_ADD::from_bits(100u * 100 * 4 << 4), testing::in_task{0});
  CHECK_REGISTER(p, reg::DPU_RDMA_RDMA_FEATURE_MODE_CFG::from_bits(0x7816), testing::in_task{0});
}

TEST_CASE("example D, depthwise 24x24x16: one task, Mesa's values") {
  static constexpr auto d = fixed<conv_spec{.dtype = conv_data::uint8, .H = 24, .W = 24, .C = 16, .out_channels = 16,
                                           .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::same, .depthwise = true,
                                           .input = {0.5f, 128}, .weights = {0.5f, 128}, .output = {1.0f, 128}}>();
  const program_view p = d.view();
  REQUIRE(p.tasks.size() == 1);
  check_writes(p, 0, std::array<expected_write, 9>{{
      {cna, 0x1040, 0xb1}, {cna, 0x1024, 0xf0010}, {cna, 0x1030, 144}, {cna, 0x1034, 144}, {cna, 0x1038, 0x3030001},
      {cna, 0x1044, 6}, {core, 0x3018, 63}, {dpu, 0x403c, 0xf003f}, {dpu, 0x4024, 0x2400},
  }});
  CHECK_REGISTER(p, reg::DPU_SURFACE_ADD::from_bits(0x9000), testing::in_task{0});
  // zero points at 128: no padding offset, no weight correction, output offset 0
  CHECK_REGISTER(p, reg::CNA_PAD_CON1::from_bits(0), testing::in_task{0});
  CHECK_REGISTER(p, reg::DPU_BS_OW_OP::from_bits(0), testing::in_task{0});
  CHECK_REGISTER(p, reg::DPU_OUT_CVT_OFFSET::from_bits(0), testing::in_task{0});
  // multiplier 0.25: 16384 / 2^16
  CHECK_REGISTER(p, reg::DPU_OUT_CVT_SCALE::from_bits(16384), testing::in_task{0});
  CHECK_REGISTER(p, reg::DPU_OUT_CVT_SHIFT::from_bits(16), testing::in_task{0});
}

TEST_CASE("the vendor's fp16 conv template: 14x14x32 -> 128, 3x3 VALID, fp16 out") {
  static constexpr auto f = fixed<conv_spec{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 14, .W = 14, .C = 32,
                                           .out_channels = 128, .kernel_h = 3, .kernel_w = 3}>();
  const program_view p = f.view();
  REQUIRE(p.tasks.size() == 1);
  CHECK(p.tasks[0].count == 108);  // 104 registers (the template's 108 less its 4 repeated CNA writes) + 4
  check_writes(p, 0, std::array<expected_write, 36>{{
      {cna, 0x100c, 0x120},       {cna, 0x1010, 0x110},      {cna, 0x1014, 0x9},        {cna, 0x1020, 0xe000e},
      {cna, 0x1024, 0x1f0020},    {cna, 0x1028, 0xc},        {cna, 0x102c, 0x90},       {cna, 0x1030, 0x12000},
      {cna, 0x1034, 0x240},       {cna, 0x1038, 0x3030080},  {cna, 0x1040, 0xb1},       {cna, 0x1044, 0xe},
      {cna, 0x104c, 0xb},         {cna, 0x1068, 0},          {cna, 0x107c, 0x38},       {cna, 0x1080, 0x8c},
      {cna, 0x1084, 0xe000e},     {cna, 0x1088, 0x20},       {cna, 0x1180, 0},          {cna, 0x1184, 0},
      {core, 0x3010, 0x200},      {core, 0x3014, 0xb000b},   {core, 0x3018, 0x7f},      {core, 0x301c, 0},
      {dpu, 0x400c, 0x1e4},       {dpu, 0x4010, 0x48000002}, {dpu, 0x4024, 0x900},      {dpu, 0x403c, 0x7f007f},
      {dpu, 0x4040, 0x53},        {dpu, 0x4050, 0x126},      {dpu, 0x4054, 0},          {dpu, 0x4058, 0x7f},
      {dpu, 0x4084, 0x10001},     {dpu, 0x4088, 0},          {dpu, 0x40c0, 0x1200},     {dpu, 0x4060, 0x53},
  }});
  CHECK_REGISTER(p, reg::GLOBAL_OPERATION_ENABLE::from_bits(0x0d), testing::in_task{0});
  CHECK(testing::copies_of<reg::DPU_RDMA_RDMA_S_POINTER>(p, testing::in_task{0}) == 0);
}

TEST_CASE("kernel groups: 512 kernels of 3x3x512 int8 do not fit the CBUF at once") {
  const auto r = built({.dtype = conv_data::int8, .H = 14, .W = 14, .C = 512, .out_channels = 512, .kernel_h = 3,
                        .kernel_w = 3, .padding = conv_padding::same, .input = {0.1f, 0}, .weights = {0.1f, 0},
                        .output = {0.1f, 0}});
  const conv_plan& plan = r.geometry;
  // a kernel is 9 x 512 = 4608 bytes; 64 kernels take 294912 bytes = 9 banks + 1, leaving 2
  // data banks: 512 entries / 56 a row (32 atoms: 4 x 14) = 9 rows, so task 0 makes 8
  // output rows (9 + 1 - 3 + 1) and task 1 the other 6: 8 groups x 2 tasks = 16. Groups of
  // 32 (6 weight banks, 1 task each) also give 16; the larger groups win the tie.
  CHECK(plan.group_kernels == 64);
  CHECK(plan.groups == 8);
  CHECK(plan.row_tasks == 2);
  CHECK(plan.data_banks == 2);
  const program_view p = r.view();
  REQUIRE(p.tasks.size() == 16);
  // group 1, its first row task: kernels 64..127 from byte 64 x 4608, channels 64..127 at
  // output surface 64 / 16 = 4 (of 196 atoms), biases from byte 256; a fresh weight load
  CHECK(slot_of(p, 2, operand_role::weight).offset == 294912);
  CHECK(slot_of(p, 2, operand_role::weight).extent == 294912);
  CHECK(slot_of(p, 2, operand_role::output).offset == 4 * 196 * 16);
  CHECK(slot_of(p, 2, operand_role::bias).offset == 256);
  CHECK_REGISTER(p, reg::CNA_CBUF_CON0::from_bits(0xa2), testing::in_task{2});
  CHECK_REGISTER(p, reg::CNA_CBUF_CON0::from_bits(0x20a2), testing::in_task{3});
  CHECK_REGISTER(p, reg::CNA_WEIGHT_SIZE2::from_bits((3u << 24 | 3u << 16 | 64)), testing::in_task{3});
  CHECK_REGISTER(p, reg::DPU_DATA_CUBE_CHANNEL::from_bits((63u << 16 | 63)), testing::in_task{3});
  CHECK(slot_of(p, 3, operand_role::output).offset == 4 * 196 * 16 + 8 * 14 * 16);
}

TEST_CASE("ReLU6 clamps in the BN stage at 6 in accumulator units, and a residual add moves it to EW") {
  conv_spec s{.dtype = conv_data::int8, .H = 8, .W = 8, .C = 16, .out_channels = 16, .kernel_h = 1, .kernel_w = 1,
              .input = {0.5f, 3}, .weights = {0.25f, -2}, .output = {1.0f, 5}, .activation = output_activation::relu6};
  {
    const auto r = built(s);
    // BN: ALU and MUL bypassed, ReLU on, ReLUX at 6 / (0.5 · 0.25) = 48
    CHECK_REGISTER(r.view(), reg::DPU_BN_CFG::from_bits(0x92), testing::in_task{0});
    CHECK_REGISTER(r.view(), reg::DPU_BN_RELUX_CMP_VALUE::from_bits(48), testing::in_task{0});
    CHECK_REGISTER(r.view(), reg::DPU_EW_CFG::from_bits(0x383), testing::in_task{0});
    // int8 needs no shift: padding value 3, OW_OP 0 - (-2) = 2, output offset 5
    CHECK_REGISTER(r.view(), reg::CNA_PAD_CON1::from_bits(3), testing::in_task{0});
    CHECK_REGISTER(r.view(), reg::DPU_BS_OW_OP::from_bits(2), testing::in_task{0});
    CHECK_REGISTER(r.view(), reg::DPU_OUT_CVT_OFFSET::from_bits(5), testing::in_task{0});
  }
  s.residual_add = true;
  s.residual = {0.5f, -4};
  const auto r = built(s);
  const program_view p = r.view();
  CHECK_REGISTER(p, reg::DPU_BN_CFG::from_bits(0x53), testing::in_task{0});
  // EW: memory operand per pixel, one byte, SUM, converted (type 1), ReLU + ReLUX, LUT bypassed:
  // bits 6, 7, 10, 16-19 = 2, 22-23 = 1, 28-29 = 1, 31
  CHECK_REGISTER(p, reg::DPU_EW_CFG::from_bits(0x904204c0), testing::in_task{0});
  // the residual in accumulator units: 0.5 / 0.125 = 4 = 16384 / 2^12, offset 0 - (-4)
  CHECK_REGISTER(p, reg::DPU_EW_CVT_SCALE_VALUE::from_bits((12u << 16 | 16384)), testing::in_task{0});
  CHECK_REGISTER(p, reg::DPU_EW_CVT_OFFSET_VALUE::from_bits(4), testing::in_task{0});
  CHECK_REGISTER(p, reg::DPU_EW_RELUX_CMP_VALUE::from_bits(48), testing::in_task{0});
  CHECK_REGISTER(p, reg::DPU_RDMA_RDMA_ERDMA_CFG::from_bits(0x40000004), testing::in_task{0});  // per pixel, one byte
  CHECK_REGISTER(p, reg::DPU_RDMA_RDMA_EW_SURF_STRIDE::from_bits(64u << 4), testing::in_task{0});    // residual surfaces of 8x8 atoms
  CHECK(slot_of(p, 0, operand_role::residual).extent == 2 * 64 * 16);  // 32 computed channels
}

TEST_CASE("an fp16 conv's bias is the EW stage's per-channel operand, its clamp after it") {
  const auto r = built({.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 6, .W = 6, .C = 16, .out_channels = 40,
                        .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::same, .bias = true,
                        .activation = output_activation::relu6});
  const program_view p = r.view();
  CHECK_REGISTER(p, reg::DPU_BS_CFG::from_bits(0x53), testing::in_task{0});  // BS and BN bypassed
  CHECK_REGISTER(p, reg::DPU_BN_CFG::from_bits(0x53), testing::in_task{0});
  // EW: memory operand (bit 6), LUT and CVT bypassed (7, 8), ReLU on (9 clear), ReLUX (10),
  // SUM (16-19 = 2), two bytes (22-23 = 2), per channel (28-29 = 0)
  CHECK_REGISTER(p, reg::DPU_EW_CFG::from_bits(0x008205c0), testing::in_task{0});
  CHECK_REGISTER(p, reg::DPU_EW_RELUX_CMP_VALUE::from_bits(0x40c00000), testing::in_task{0});  // 6.0f
  // the ERDMA per channel, two bytes (regcmd-isa-reference: fp16 per-channel 0x00000008), contiguous
  CHECK_REGISTER(p, reg::DPU_RDMA_RDMA_ERDMA_CFG::from_bits(0x8), testing::in_task{0});
  CHECK_REGISTER(p, reg::DPU_RDMA_RDMA_EW_SURF_STRIDE::from_bits(1u << 4), testing::in_task{0});
  CHECK(slot_of(p, 0, operand_role::bias).extent == 48 * 2);  // 48 computed channels of fp16
  // what the EW stage cannot also do
  conv_spec both{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 4, .W = 4, .C = 16, .out_channels = 16,
                 .bias = true, .residual_add = true};
  CHECK_BREAKS(build(both), rules::conv_fp16_bias);
  both.residual_add = false;
  both.activation = output_activation::leaky_relu;
  CHECK_BREAKS(build(both), rules::conv_fp16_bias);
}

TEST_CASE("leaky ReLU in the BN multiplier: PReLU on, ReLU bypassed, and refused after a residual add") {
  const auto q = built({.dtype = conv_data::int8, .H = 4, .W = 4, .C = 16, .out_channels = 16, .input = {0.05f, 0},
                        .weights = {0.01f, 0}, .output = {1.0f, 0}, .activation = output_activation::leaky_relu,
                        .leaky_slope = 0.1f});
  // BN: ALU_BYPASS | MUL_PRELU | RELU_BYPASS; the multiplier round(0.1 * 2^15), shift 15
  CHECK_REGISTER(q.view(), reg::DPU_BN_CFG::from_bits(0x62), testing::in_task{0});
  CHECK_REGISTER(q.view(), reg::DPU_BN_MUL_CFG::from_bits(3277u << 16 | 15u << 8), testing::in_task{0});
  const auto f = built({.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 4, .W = 4, .C = 16, .out_channels = 16,
                        .activation = output_activation::leaky_relu, .leaky_slope = 0.1f});
  CHECK_REGISTER(f.view(), reg::DPU_BN_CFG::from_bits(0x62), testing::in_task{0});
  CHECK_REGISTER(f.view(), reg::DPU_BN_MUL_CFG::from_bits(0x2e660000), testing::in_task{0});  // fp16(0.1)
  CHECK_REGISTER(f.view(), reg::DPU_BS_CFG::from_bits(0x53), testing::in_task{0});  // bypassed for a fp16 output
  auto residual = build(conv_spec{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 4, .W = 4, .C = 16, .out_channels = 16,
                              .residual_add = true, .activation = output_activation::leaky_relu});
  REQUIRE_FALSE(residual.ok());
  CHECK_BREAKS(residual, rules::conv_leaky_residual);
  auto slope = build(conv_spec{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 4, .W = 4, .C = 16, .out_channels = 16,
                           .activation = output_activation::leaky_relu, .leaky_slope = -0.5f});
  REQUIRE_FALSE(slope.ok());
  CHECK_BREAKS(slope, rules::act_leaky_slope);
}

TEST_CASE("the CBUF rules refuse what no plan fits") {
  // three rows of 2047 pixels x 512 channels need far more than 11 banks
  CHECK_BREAKS(build(conv_spec{.dtype = conv_data::int8, .H = 8, .W = 2047, .C = 512, .out_channels = 16, .kernel_h = 3, .kernel_w = 3,
                 .input = {0.1f, 0}, .weights = {0.1f, 0}, .output = {0.1f, 0}}), rules::conv_cbuf_row);
  // one group of 32 kernels of 3x3x4096 is 1179648 bytes: 36 banks
  CHECK_BREAKS(build(conv_spec{.dtype = conv_data::int8, .H = 8, .W = 8, .C = 4096, .out_channels = 32, .kernel_h = 3, .kernel_w = 3,
                 .input = {0.1f, 0}, .weights = {0.1f, 0}, .output = {0.1f, 0}}), rules::conv_cbuf_weights);
}

TEST_CASE("the output-stage rules: fp16 bias with a residual, the residual's scale, ReLU6's bound") {
  CHECK_BREAKS(build(conv_spec{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 4, .W = 4, .C = 16, .out_channels = 16, .bias = true, .residual_add = true}), rules::conv_fp16_bias);
  // residual 1.0 over an accumulator scale of 1e-6: a multiplier of 10^6 > 32767
  CHECK_BREAKS(build(conv_spec{.dtype = conv_data::int8, .H = 4, .W = 4, .C = 16, .out_channels = 16, .input = {0.001f, 0},
                 .weights = {0.001f, 0}, .output = {0.1f, 0}, .residual_add = true, .residual = {1.0f, 0}}), rules::conv_residual_scale);
  CHECK_BREAKS(build(conv_spec{.dtype = conv_data::int8, .H = 4, .W = 4, .C = 16, .out_channels = 16, .input = {0.001f, 0},
                 .weights = {0.001f, 0}, .output = {0.001f, 0}, .residual_add = true, .residual = {1.0f, 200}}), rules::conv_zero_point);
  CHECK_BREAKS(build(conv_spec{.dtype = conv_data::int8, .H = 4, .W = 4, .C = 16, .out_channels = 16, .input = {1e-6f, 0},
                 .weights = {1e-6f, 0}, .output = {1e-6f, 0}, .activation = output_activation::relu6}), rules::conv_activation_range);
}

TEST_CASE("conv-cbuf-row on a program: a task whose input rows overflow its data banks is refused") {
  // example A's 20 rows of 13 entries need 2 data banks; a hand edit giving it 1 breaks the rule
  const auto a = built(example_a);
  std::vector<entry> entries(a.view().entries.begin(), a.view().entries.end());
  for (entry& e : entries)
    if (e.target() == cna && e.offset() == 0x1040) e = e.with_value(0xb1);
  program_view edited = a.view();
  edited.entries = entries;
  const status s = validate<soc::rk3588>(edited, "edited");
  REQUIRE_FALSE(s.ok());
  CHECK_BREAKS(s, rules::conv_cbuf_row);
  CHECK(validate<soc::rk3588>(a.view(), "as built").ok());
}

TEST_CASE("an operand beyond 4 GiB is refused, not wrapped: 2047x2047 pixels of 16383 fp32 channels") {
  CHECK_BREAKS(build(conv_spec{.dtype = conv_data::fp16, .out_dtype = precision::fp32, .H = 2047, .W = 2047, .C = 16, .out_channels = 16383}), rules::operand_size);
}
