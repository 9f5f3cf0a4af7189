// Matmul programs against the register values of the recipes and the reference, typed by
// hand from matmul-recipe §1.1 (implementation A), §2.2 (B) and the reference's tables.
#include <regcmd/testing/doctest.hpp>

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;

namespace {
struct expected_write {
  std::uint16_t target, offset;
  std::uint32_t value;
};

runtime_program<matmul_geometry> built(const matmul_spec& s) {
  const auto r = build(s);
  REQUIRE_MESSAGE(r.ok(), r.err().id());
  return r.value();
}

}  // namespace

TEST_CASE("implementation A, fp16 x fp16 -> fp32, M=4 K=64 N=64: all 104 register writes") {
  // matmul-recipe §1.1, evaluated for M=4, K=64, N=64 (addresses 0 until bind)
  constexpr std::array<expected_write, 104> a{{
      {0x1001, 0x4004, 0xe},        {0x0201, 0x100c, 0x120},      {0x0201, 0x1010, 0x50},
      {0x0201, 0x1014, 0x9},        {0x0201, 0x1020, 0x10004},    {0x0201, 0x1024, 0x3f0040},
      {0x0201, 0x1028, 0x1},        {0x0201, 0x102c, 0x4},        {0x0201, 0x1030, 0x2000},
      {0x0201, 0x1034, 0x80},       {0x0201, 0x1038, 0x1010040},  {0x0201, 0x1040, 0xb1},
      {0x0201, 0x1044, 0x2},        {0x0201, 0x104c, 0xb},        {0x0201, 0x1050, 0x10000},
      {0x0201, 0x1054, 0x10000},    {0x0201, 0x1058, 0x10000},    {0x0201, 0x105c, 0x10000},
      {0x0201, 0x1060, 0},          {0x0201, 0x1064, 0},          {0x0201, 0x1068, 0},
      {0x0201, 0x1070, 0},          {0x0201, 0x1074, 0},          {0x0201, 0x1078, 0xf000f},
      {0x0201, 0x107c, 0x4},        {0x0201, 0x1080, 0x0},        {0x0201, 0x1084, 0x10004},
      {0x0201, 0x1088, 0x40},       {0x0201, 0x1100, 0},          {0x0201, 0x1104, 0},
      {0x0201, 0x1110, 0},          {0x0201, 0x1140, 0},          {0x0201, 0x1144, 0},
      {0x0201, 0x1148, 0},          {0x0201, 0x114c, 0},          {0x0201, 0x1150, 0},
      {0x0201, 0x1154, 0},          {0x0201, 0x1158, 0},          {0x0201, 0x115c, 0},
      {0x0201, 0x1160, 0},          {0x0201, 0x1164, 0},          {0x0201, 0x1168, 0},
      {0x0201, 0x116c, 0},          {0x0201, 0x1170, 0},          {0x0201, 0x1174, 0},
      {0x0201, 0x1178, 0},          {0x0201, 0x117c, 0},          {0x0201, 0x1180, 0},
      {0x0201, 0x1184, 0},          {0x0801, 0x3010, 0x201},      {0x0801, 0x3014, 0x30000},
      {0x0801, 0x3018, 0x3f},       {0x0801, 0x301c, 0},          {0x0801, 0x3030, 0},
      {0x1001, 0x400c, 0x1e4},      {0x1001, 0x4010, 0xa8000002}, {0x1001, 0x4014, 0},
      {0x1001, 0x4020, 0},          {0x1001, 0x4024, 0x40},       {0x1001, 0x4030, 0},
      {0x1001, 0x4034, 0x3},        {0x1001, 0x4038, 0},          {0x1001, 0x403c, 0x3f003f},
      {0x1001, 0x4040, 0x53},       {0x1001, 0x4044, 0},          {0x1001, 0x4048, 0},
      {0x1001, 0x404c, 0},          {0x1001, 0x4050, 0x36e},      {0x1001, 0x4054, 0},
      {0x1001, 0x4058, 0x3f},       {0x1001, 0x405c, 0x30000},    {0x1001, 0x4060, 0x53},
      {0x1001, 0x4064, 0},          {0x1001, 0x4068, 0},          {0x1001, 0x406c, 0},
      {0x1001, 0x4070, 0x383},      {0x1001, 0x4074, 0},          {0x1001, 0x4078, 0x1},
      {0x1001, 0x407c, 0},          {0x1001, 0x4080, 0},          {0x1001, 0x4084, 0x1},
      {0x1001, 0x4088, 0},          {0x1001, 0x4090, 0},          {0x1001, 0x4094, 0},
      {0x1001, 0x4098, 0},          {0x1001, 0x409c, 0},          {0x1001, 0x40a0, 0},
      {0x1001, 0x40a4, 0},          {0x1001, 0x40a8, 0},          {0x1001, 0x40ac, 0},
      {0x1001, 0x40c0, 0x100},      {0x1001, 0x40c4, 0},          {0x1001, 0x4100, 0},
      {0x1001, 0x4104, 0},          {0x1001, 0x4108, 0},          {0x1001, 0x410c, 0},
      {0x1001, 0x4110, 0},          {0x1001, 0x4114, 0},          {0x1001, 0x4118, 0},
      {0x1001, 0x411c, 0},          {0x1001, 0x4120, 0},          {0x1001, 0x4124, 0},
      {0x1001, 0x4128, 0},          {0x1001, 0x412c, 0},
  }};
  constexpr auto mm = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64,
                                         .layout = operand_layout::surface}>();
  // Compared register by register: a failure names the register and its fields.
  std::vector<entry> expected;
  for (const expected_write& w : a) expected.push_back(entry::make(w.target, w.value, w.offset));
  // The tail: PC_BASE_ADDRESS 0 and PC_REGISTER_AMOUNTS 0 (no next task), 0x0041, op-enable 0x0d.
  for (std::uint64_t bits : {0x0101'0000'0000'0010ull, 0x0101'0000'0000'0014ull, 0x0041'0000'0000'0000ull,
                             0x0081'0000'000d'0008ull})
    expected.push_back(entry::from_bits(bits));
  CHECK_REGCMD_EQ(mm, expected);
  // A few whole words, as they sit in the regcmd buffer.
  CHECK(mm.code.entries[0].bits() == 0x1001'0000'000e'4004);
  CHECK(mm.code.entries[11].bits() == 0x0201'0000'00b1'1040);
  CHECK(mm.code.entries[55].bits() == 0x1001'a800'0002'4010);
}

TEST_CASE("the slot table names the three operand addresses, and the task what rknpu_task needs") {
  constexpr auto mm = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64,
                                         .layout = operand_layout::surface}>();
  // A patches the IOVAs at qword indices 21, 30 and 57 (matmul-recipe §0.4).
  REQUIRE(mm.code.slot_count == 3);
  CHECK(mm.code.slots[0] == slot{21, operand_role::feature, 0, 4 * 64 * 2});
  CHECK(mm.code.slots[1] == slot{30, operand_role::weight, 0, 64 * 64 * 2});
  CHECK(mm.code.slots[2] == slot{57, operand_role::output, 0, 4 * 64 * 4});
  REQUIRE(mm.code.task_count == 1);
  const task& t = mm.code.tasks[0];
  CHECK(t.first == 0);
  CHECK(t.count == 108);
  CHECK(t.regcfg_amount() == 104);  // A: regcfg_amount = 112 - (4 + 4)
  CHECK(t.enable_mask == 0xd);
  CHECK(t.int_mask == 0x300);
}

TEST_CASE("implementation A's values: fp16 -> fp16, fp16 64 x 512 x 256 and int8 64 x 512 x 64 registers by formula") {
  // fp16 -> fp16 differs only in #55, #67, #80 and #90 (M=4, K=64, N=64)
  const auto h = built({.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 64,
                        .layout = operand_layout::surface});
  CHECK_REGISTER(h, reg::DPU_DATA_FORMAT::from_bits(0x48000002));
  CHECK_REGISTER(h, reg::DPU_BS_OW_CFG::from_bits(0x126));
  CHECK_REGISTER(h, reg::DPU_OUT_CVT_SCALE::from_bits(0x10001));
  CHECK_REGISTER(h, reg::DPU_SURFACE_ADD::from_bits(0x80));

  // fp16 (64, 512, 256)
  const auto f = built({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 64, .K = 512, .N = 256,
                        .layout = operand_layout::surface});
  CHECK_REGISTER(f, reg::CNA_CONV_CON2::from_bits(0x410));       // (M + 1) << 4
  CHECK_REGISTER(f, reg::CNA_DATA_SIZE1::from_bits(0x01ff0200));  // (K - 1) << 16 | K
  CHECK_REGISTER(f, reg::CNA_WEIGHT_SIZE0::from_bits(262144));      // K * 2 * N
  CHECK_REGISTER(f, reg::CNA_WEIGHT_SIZE1::from_bits(1024));        // K * 2
  CHECK_REGISTER(f, reg::CNA_WEIGHT_SIZE2::from_bits(0x01010100));  // 1 << 24 | 1 << 16 | N
  CHECK_REGISTER(f, reg::CNA_CBUF_CON0::from_bits(0xa2));        // ceil(64 * 512 * 2 / 32768) = 2 data banks
  CHECK_REGISTER(f, reg::CNA_CBUF_CON1::from_bits(16));          // ceil(K / 32)
  CHECK_REGISTER(f, reg::CNA_DMA_CON2::from_bits(60));          // 4 * (M / 4 - 1)
  CHECK_REGISTER(f, reg::DPU_DST_SURF_STRIDE::from_bits(0x400));       // M << 4
  CHECK_REGISTER(f, reg::DPU_DATA_CUBE_CHANNEL::from_bits(0x00ff00ff));  // (N - 1) << 16 | (N - 1)
  CHECK_REGISTER(f, reg::DPU_SURFACE_ADD::from_bits(0x1000));      // (M * 4) << 4

  // int8 (64, 512, 64)
  const auto i = built({.dtype = precision::int8, .out_dtype = precision::int32, .M = 64, .K = 512, .N = 64,
                        .layout = operand_layout::surface});
  CHECK_REGISTER(i, reg::CNA_CONV_CON1::from_bits(0x0));
  CHECK_REGISTER(i, reg::CNA_WEIGHT_SIZE0::from_bits(32768));  // K * N
  CHECK_REGISTER(i, reg::CNA_WEIGHT_SIZE1::from_bits(512));    // K
  CHECK_REGISTER(i, reg::CNA_CBUF_CON0::from_bits(0xb1));   // ceil(64 * 512 / 32768) = 1
  CHECK_REGISTER(i, reg::CNA_CBUF_CON1::from_bits(8));      // ceil(K / 64)
  CHECK_REGISTER(i, reg::CORE_MISC_CFG::from_bits(0x0));
  CHECK_REGISTER(i, reg::DPU_DATA_FORMAT::from_bits(0x80000000));
  CHECK_REGISTER(i, reg::DPU_BS_OW_CFG::from_bits(0x7fe));
  CHECK_REGISTER(i, reg::DPU_OUT_CVT_SCALE::from_bits(0x1));
  CHECK_REGISTER(i, reg::DPU_SURFACE_ADD::from_bits(0x2000));  // (M * 8) << 4

  // M = 1: A's signed surface stride, -3 masked to 28 bits
  const auto one = built({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 4096, .N = 1024,
                          .layout = operand_layout::surface});
  CHECK_REGISTER(one, reg::CNA_DMA_CON2::from_bits(0x0fff'fffd));
  CHECK_REGISTER(one, reg::CNA_CONV_CON2::from_bits(0x20));
}

TEST_CASE("row-major fp16 x fp16 -> fp32 (reference path, recipe B's geometry)") {
  const auto r = built({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 64, .K = 256, .N = 128});
  CHECK_REGISTER(r, reg::CNA_CONV_CON1::from_bits(0x20000120));  // B: GROUP_LINE_OFF | fp16/fp16
  CHECK_REGISTER(r, reg::CNA_CONV_CON2::from_bits(0x410));       // 16 * min(M + 1, 32768 / K)
  CHECK_REGISTER(r, reg::CNA_DATA_SIZE0::from_bits(0x10040));     // 0x10000 | M
  CHECK_REGISTER(r, reg::CNA_DATA_SIZE1::from_bits(0x00ff0100));  // (K - 1) << 16 | K
  CHECK_REGISTER(r, reg::CNA_DATA_SIZE3::from_bits(64));          // M
  CHECK_REGISTER(r, reg::CNA_WEIGHT_SIZE0::from_bits(65536));       // K * N * 2
  CHECK_REGISTER(r, reg::CNA_WEIGHT_SIZE1::from_bits(512));         // K * 2
  CHECK_REGISTER(r, reg::CNA_WEIGHT_SIZE2::from_bits(0x01010080));  // 0x1010000 | N
  CHECK_REGISTER(r, reg::CNA_CBUF_CON0::from_bits(0xb1));
  CHECK_REGISTER(r, reg::CNA_CBUF_CON1::from_bits(8));    // K / 32
  CHECK_REGISTER(r, reg::CNA_DMA_CON1::from_bits(32));   // K / 8: one row in 16-byte units
  CHECK_REGISTER(r, reg::CNA_DMA_CON2::from_bits(0));    // B: "surf_stride = 0"
  CHECK_REGISTER(r, reg::CNA_FC_DATA_SIZE0::from_bits(0x10040));
  CHECK_REGISTER(r, reg::CNA_FC_DATA_SIZE1::from_bits(256));  // K
  CHECK_REGISTER(r, reg::CORE_MISC_CFG::from_bits(0x201));
  CHECK_REGISTER(r, reg::CORE_DATAOUT_SIZE_0::from_bits(0x3f0000));  // (M - 1) << 16
  CHECK_REGISTER(r, reg::CORE_DATAOUT_SIZE_1::from_bits(127));       // N - 1
  CHECK_REGISTER(r, reg::DPU_DST_SURF_STRIDE::from_bits(0x10));      // B: 1 << 4
  CHECK_REGISTER(r, reg::DPU_DATA_CUBE_HEIGHT::from_bits(63));        // M - 1
  CHECK_REGISTER(r, reg::DPU_DATA_CUBE_NOTCH_ADDR::from_bits(0x001f001f));  // N/4 - 1 in both halves
  CHECK_REGISTER(r, reg::DPU_DATA_CUBE_CHANNEL::from_bits(0x007f007f));
  CHECK_REGISTER(r, reg::DPU_BS_OW_CFG::from_bits(0x36e));
  CHECK_REGISTER(r, reg::DPU_WDMA_SIZE_0::from_bits(127));
  CHECK_REGISTER(r, reg::DPU_WDMA_SIZE_1::from_bits(0x3f0000));  // (M - 1) << 16
  CHECK_REGISTER(r, reg::DPU_OUT_CVT_SCALE::from_bits(0x0));       // B: fp32 out 0
  CHECK_REGISTER(r, reg::DPU_SURFACE_ADD::from_bits(0x40));      // B: 0x40
}

TEST_CASE("row-major int8 -> int32, fp16 -> fp16 and int4 -> int16") {
  const auto i = built({.dtype = precision::int8, .out_dtype = precision::int32, .M = 64, .K = 256, .N = 64});
  CHECK_REGISTER(i, reg::CNA_CONV_CON1::from_bits(0x20000000));  // B and the vendor's int8 capture
  CHECK_REGISTER(i, reg::CNA_WEIGHT_SIZE0::from_bits(16384));       // K * N
  CHECK_REGISTER(i, reg::CNA_CBUF_CON1::from_bits(4));           // ceil(K / 64)
  CHECK_REGISTER(i, reg::CNA_DMA_CON1::from_bits(16));          // K / 16
  CHECK_REGISTER(i, reg::CORE_MISC_CFG::from_bits(0x1));         // B: QD_EN
  CHECK_REGISTER(i, reg::DPU_DATA_FORMAT::from_bits(0x80000000));
  CHECK_REGISTER(i, reg::DPU_DATA_CUBE_NOTCH_ADDR::from_bits(0x000f000f));
  CHECK_REGISTER(i, reg::DPU_BS_OW_CFG::from_bits(0x7fc));  // the "int32 pair" (reference, B, ork)
  CHECK_REGISTER(i, reg::DPU_OUT_CVT_SCALE::from_bits(0x1));
  CHECK_REGISTER(i, reg::DPU_SURFACE_ADD::from_bits(0x80));

  // reference "fp16 matmul -> fp16 output stage": BS 0x53, 0x40c0 = 0x20, 0x4084 = 0x10001
  const auto h = built({.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 16, .K = 512, .N = 512});
  CHECK_REGISTER(h, reg::DPU_DATA_FORMAT::from_bits(0x48000002));
  CHECK_REGISTER(h, reg::DPU_BS_CFG::from_bits(0x53));
  CHECK_REGISTER(h, reg::DPU_BS_OW_CFG::from_bits(0x126));
  CHECK_REGISTER(h, reg::DPU_OUT_CVT_SCALE::from_bits(0x00010001));
  CHECK_REGISTER(h, reg::DPU_SURFACE_ADD::from_bits(0x20));

  // int4: the reference's capture values (0x100c int4/int4, 0x4010 0x38000006, 0x4050 0x7fe),
  // 0x107c = K/16 like int8
  const auto q = built({.dtype = precision::int4, .out_dtype = precision::int16, .M = 8, .K = 512, .N = 64});
  CHECK_FIELD(q, reg::CNA_CONV_CON1::CONV_MODE, reg::conv_mode::direct);  // 0x100c & 0x3ff = 0x360
  CHECK_FIELD(q, reg::CNA_CONV_CON1::IN_PRECISION, precision::int4);
  CHECK_FIELD(q, reg::CNA_CONV_CON1::PROC_PRECISION, precision::int4);
  CHECK_REGISTER(q, reg::DPU_DATA_FORMAT::from_bits(0x38000006));
  CHECK_REGISTER(q, reg::DPU_BS_OW_CFG::from_bits(0x7fe));
  CHECK_REGISTER(q, reg::CNA_DMA_CON1::from_bits(32));        // K / 16
  CHECK_REGISTER(q, reg::CNA_WEIGHT_SIZE0::from_bits(512 * 64 / 2));  // K * N / 2
  CHECK_REGISTER(q, reg::CNA_WEIGHT_SIZE1::from_bits(512 / 2));       // K / 2 bytes a kernel
  CHECK_REGISTER(q, reg::CNA_CBUF_CON1::from_bits(8));             // ceil(K / 64): int4 reuses the int8 entry
  // N = 40 pads to one 64-wide int4 weight tile (N32 tiles would give 64 too, but N = 80
  // tells them apart: 128, not 96)
  const auto r = built({.dtype = precision::int4, .out_dtype = precision::int16, .M = 8, .K = 512, .N = 40});
  CHECK_REGISTER(r, reg::CNA_WEIGHT_SIZE2::from_bits((0x1010000 | 64)));  // WEIGHT_SIZE2: 64 kernels
  CHECK_REGISTER(r, reg::CNA_WEIGHT_SIZE0::from_bits(512 * 64 / 2));
  const auto w = built({.dtype = precision::int4, .out_dtype = precision::int16, .M = 8, .K = 512, .N = 80});
  CHECK_REGISTER(w, reg::CNA_WEIGHT_SIZE2::from_bits((0x1010000 | 128)));
  CHECK_REGISTER(w, reg::CNA_WEIGHT_SIZE0::from_bits(512 * 128 / 2));
}

TEST_CASE("strided features: LINE_STRIDE = pitch / 16") {
  // reference "0x107c": a pitch of 2x/4x/8x the row reads the rows at that pitch
  const auto s = built({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 64, .K = 512, .N = 64,
                        .feature_pitch = 4 * 1024});
  CHECK_REGISTER(s, reg::CNA_DMA_CON1::from_bits(256));
  CHECK(s.code.slots[0].extent == 63 * 4096 + 1024);
}

TEST_CASE("ragged K and N are padded to the weight tile") {
  const auto p = built({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 3, .K = 100, .N = 40});
  CHECK(p.geometry.K == 128);
  CHECK(p.geometry.N == 48);
  CHECK_REGISTER(p, reg::CNA_DATA_SIZE1::from_bits(0x007f0080));
  CHECK_REGISTER(p, reg::CORE_DATAOUT_SIZE_1::from_bits(47));
}

TEST_CASE("every precision pair builds over a grid of shapes in both layouts") {
  struct pair {
    precision in, out;
  };
  const pair pairs[] = {{precision::fp16, precision::fp32}, {precision::fp16, precision::fp16},
                        {precision::int8, precision::int32}, {precision::int4, precision::int16}};
  const std::uint32_t Ms[] = {1, 4, 8, 16}, Ks[] = {32, 64, 256, 512, 1024}, Ns[] = {32, 64, 256, 1024};
  std::size_t programs = 0;
  for (const pair& p : pairs)
    for (operand_layout layout : {operand_layout::row_major, operand_layout::surface})
      for (std::uint32_t M : Ms)
        for (std::uint32_t K : Ks)
          for (std::uint32_t N : Ns) {
            if (p.in == precision::int4 && layout == operand_layout::surface) continue;  // no source
            const matmul_spec s{.dtype = p.in, .out_dtype = p.out, .M = M, .K = K, .N = N, .layout = layout};
            const auto r = build(s);
            if (!r) {
              // the only refusals in this grid: int4's rows x K budget
              CHECK_BREAKS(r, rules::m_ceiling_int4);
              continue;
            }
            CHECK(r.value().view().entries.size() == matmul::task_entries);
            ++programs;
          }
  CHECK(programs > 500);
}

TEST_CASE("every request rule refuses its shape at run time with its id") {
  using P = precision;
  struct row {
    matmul_spec spec;
    const regcmd::rule* broken;
  };
  const row rows[] = {
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 0, .K = 64, .N = 64}, &rules::shape_nonzero},
      {{.dtype = {P::fp16, P::int8}, .out_dtype = P::fp32, .M = 1, .K = 64, .N = 64}, &rules::precision_symmetric},
      {{.dtype = {P::int8, P::int4}, .out_dtype = P::int32, .M = 1, .K = 64, .N = 64}, &rules::precision_symmetric},
      {{.dtype = P::int8, .out_dtype = P::int8, .M = 1, .K = 64, .N = 64}, &rules::int8_output_int32},
      {{.dtype = P::int8, .out_dtype = P::int16, .M = 1, .K = 64, .N = 64}, &rules::int8_output_int32},
      {{.dtype = P::fp16, .out_dtype = P::int32, .M = 1, .K = 64, .N = 64}, &rules::precision_pair},
      {{.dtype = P::bf16, .out_dtype = P::fp32, .M = 1, .K = 64, .N = 64}, &rules::precision_pair},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 1, .K = 10784, .N = 64}, &rules::k_single_op_max},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 1, .K = 64, .N = 8208}, &rules::n_max},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 1, .K = 40, .N = 64, .tile_pad = tile_padding::none}, &rules::k_alignment},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 1, .K = 64, .N = 40, .tile_pad = tile_padding::none}, &rules::n_alignment},
      {{.dtype = P::int8, .out_dtype = P::int32, .M = 1, .K = 64, .N = 48, .tile_pad = tile_padding::none}, &rules::n_alignment},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 512, .K = 64, .N = 64, .sched = schedule::bank_split}, &rules::small_k_bank_split},
      {{.dtype = P::int8, .out_dtype = P::int32, .M = 512, .K = 128, .N = 64, .sched = schedule::bank_split}, &rules::small_k_bank_split},
      {{.dtype = P::int4, .out_dtype = P::int16, .M = 1, .K = 64, .N = 64, .sched = schedule::bank_split}, &rules::int4_bank_split},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 320, .K = 128, .N = 64}, &rules::fp16_k128_cap},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 353, .K = 512, .N = 64}, &rules::m_ceiling_fp16},
      {{.dtype = P::int8, .out_dtype = P::int32, .M = 321, .K = 1024, .N = 64}, &rules::m_ceiling_int8},
      {{.dtype = P::int4, .out_dtype = P::int16, .M = 33, .K = 512, .N = 64}, &rules::m_ceiling_int4},
      {{.dtype = P::int8, .out_dtype = P::int32, .M = 1023, .K = 32, .N = 64}, &rules::m_register_limit},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 6, .K = 64, .N = 64, .layout = operand_layout::surface}, &rules::surface_m},
      {{.dtype = P::int4, .out_dtype = P::int16, .M = 4, .K = 64, .N = 64, .layout = operand_layout::surface}, &rules::int4_surface},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 4, .K = 64, .N = 64, .layout = operand_layout::surface,
        .sched = schedule::template_split},
       &rules::surface_schedule},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 4, .K = 64, .N = 64, .layout = operand_layout::surface,
        .feature_pitch = 256},
       &rules::pitch_row_major},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 4, .K = 64, .N = 64, .feature_pitch = 100}, &rules::feature_pitch},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 4, .K = 64, .N = 64, .feature_pitch = 64}, &rules::feature_pitch},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 4, .K = 64, .N = 64, .output_pitch = 100}, &rules::output_pitch},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 4, .K = 64, .N = 64, .output_pitch = 32768 * 4 + 16}, &rules::output_pitch},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 4, .K = 64, .N = 64, .feature_pitch = 0x6000'0000}, &rules::operand_size},
      {{.dtype = P::fp16, .out_dtype = P::fp32, .M = 4, .K = 64, .N = 64, .activation = output_activation::relu},
       &rules::matmul_activation_precision},
      {{.dtype = P::int8, .out_dtype = P::int32, .M = 4, .K = 64, .N = 64, .activation = output_activation::relu6},
       &rules::matmul_activation_precision},
      {{.dtype = P::fp16, .out_dtype = P::fp16, .M = 4, .K = 64, .N = 64, .activation = output_activation::leaky_relu,
        .leaky_slope = 1.0f},
       &rules::act_leaky_slope},
  };
  for (const row& r : rows) {
    CAPTURE(r.broken->id);
    const auto built = build(r.spec);
    REQUIRE_FALSE(built.ok());
    CHECK_BREAKS(built, *r.broken);
    CHECK_FALSE(built.err().message().empty());
  }
}

// The fused activation's BN stage, typed from DPU_BN_CFG's fields (rknpu-uapi-and-register-map
// §4: BN_BYPASS 0, BN_ALU_BYPASS 1, BN_MUL_BYPASS 4, BN_MUL_PRELU 5, BN_RELU_BYPASS 6,
// BN_RELUX_EN 7; fully bypassed 0x53) and fp16(0.1) = 0x2e66.
TEST_CASE("a matmul's fused ReLU, ReLU6 and leaky ReLU: the BN stage in the same task") {
  struct row {
    output_activation fn;
    float slope;
    std::uint32_t bn_cfg, bn_mul_cfg, bn_relux_cmp;
  };
  for (const row& r : {row{output_activation::none, 0, 0x53, 0, 0},
                       row{output_activation::relu, 0, 0x12, 0, 0},            // ALU, MUL bypassed; ReLU on
                       row{output_activation::relu6, 0, 0x92, 0, 0x40c00000},  // and ReLUX at 6.0f
                       row{output_activation::leaky_relu, 0.1f, 0x62, 0x2e660000, 0}})  // PReLU, ReLU off
    for (operand_layout layout : {operand_layout::row_major, operand_layout::surface}) {
      CAPTURE(static_cast<int>(r.fn));
      const auto built = build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 64,
                                       .layout = layout, .activation = r.fn, .leaky_slope = r.slope});
      REQUIRE(built.ok());
      const program_view v = built.value().view();
      CHECK(v.tasks.size() == 1);
      CHECK_REGISTER(v, reg::DPU_BN_CFG::from_bits(r.bn_cfg));
      CHECK_REGISTER(v, reg::DPU_BN_MUL_CFG::from_bits(r.bn_mul_cfg));
      CHECK_REGISTER(v, reg::DPU_BN_RELUX_CMP_VALUE::from_bits(r.bn_relux_cmp));
      CHECK_REGISTER(v, reg::DPU_BS_CFG::from_bits(0x53));  // BS stays bypassed (rule fp16-output-stage)
      CHECK(validate(v).ok());
    }
}
