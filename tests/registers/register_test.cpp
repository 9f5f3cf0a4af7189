// Typed register writes against values written out from the reference and the recipes.
#include <regcmd/testing/doctest.hpp>

#include <cstdint>

#include <regcmd/registers/all.hpp>

using namespace regcmd;
using namespace regcmd::reg;

// regcmd-isa-reference "The M-tiling scheduler": 0xb1 = DATA_BANK 1, WEIGHT_BANK 11.
static_assert(encode(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11}) == entry::from_bits(0x0201'0000'00b1'1040));

// The precision enum on CNA_CONV_CON1 (reference "The precision enum").
static_assert(encode(CNA_CONV_CON1{.IN_PRECISION = precision::fp16, .PROC_PRECISION = precision::fp16})
                  .value()
                  .value() == 0x120);
static_assert(encode(CNA_CONV_CON1{.IN_PRECISION = precision::int4, .PROC_PRECISION = precision::int4})
                  .value()
                  .value() == 0x360);

TEST_CASE("DPU_DATA_FORMAT encodes the captured precision pairs") {
  auto format = [](precision out, precision in, precision proc) {
    return encode(DPU_DATA_FORMAT{.PROC_PRECISION = proc, .IN_PRECISION = in, .OUT_PRECISION = out})
        .value()
        .value();
  };
  // reference "DPU output stages" and matmul-recipe §1.1
  CHECK(format(precision::fp32, precision::fp16, precision::fp16) == 0xa800'0002);
  CHECK(format(precision::fp16, precision::fp16, precision::fp16) == 0x4800'0002);
  CHECK(format(precision::int32, precision::int8, precision::int8) == 0x8000'0000);
  CHECK(format(precision::int8, precision::int8, precision::int8) == 0x0000'0000);
  CHECK(format(precision::int16, precision::int4, precision::int4) == 0x3800'0006);
}

TEST_CASE("DPU_DATA_FORMAT decodes the captured values to their precision pairs") {
  struct row {
    std::uint32_t value;
    precision out, in, proc;
  };
  const row rows[] = {
      {0xa800'0002, precision::fp32, precision::fp16, precision::fp16},
      {0x4800'0002, precision::fp16, precision::fp16, precision::fp16},
      {0x8000'0000, precision::int32, precision::int8, precision::int8},
      {0x0000'0000, precision::int8, precision::int8, precision::int8},
      {0x3800'0006, precision::int16, precision::int4, precision::int4},
  };
  for (const row& r : rows) {
    CAPTURE(r.value);
    const auto f = unpack<DPU_DATA_FORMAT>(r.value);
    CHECK(f.OUT_PRECISION.value() == r.out);
    CHECK(f.IN_PRECISION.value() == r.in);
    CHECK(f.PROC_PRECISION.value() == r.proc);
  }
}

TEST_CASE("CNA_CONV_CON1 decodes 0x120 to fp16/fp16 and 0x360 to int4/int4") {
  CHECK(unpack<CNA_CONV_CON1>(0x120).PROC_PRECISION.value() == precision::fp16);
  CHECK(unpack<CNA_CONV_CON1>(0x120).IN_PRECISION.value() == precision::fp16);
  CHECK(unpack<CNA_CONV_CON1>(0x360).PROC_PRECISION.value() == precision::int4);
  CHECK(unpack<CNA_CONV_CON1>(0x360).IN_PRECISION.value() == precision::int4);
  // int8 capture: 0x20000000 = GROUP_LINE_OFF with int8/int8 (recipe B §2.2)
  const auto i8 = unpack<CNA_CONV_CON1>(0x2000'0000);
  CHECK(i8.GROUP_LINE_OFF.value() == 1);
  CHECK(i8.IN_PRECISION.value() == precision::int8);
}

TEST_CASE("recipe constants encode from named fields") {
  // matmul-recipe §1.1 (implementation A), fp16 x fp16 -> fp32
  CHECK(encode(DPU_S_POINTER{.POINTER_PP_EN = 1, .EXECUTER_PP_EN = 1, .POINTER_PP_MODE = 1}) ==
        entry::from_bits(0x1001'0000'000e'4004));
  CHECK(encode(CNA_CONV_CON3{.CONV_X_STRIDE = 1, .CONV_Y_STRIDE = 1}).value().value() == 0x9);
  CHECK(encode(CNA_CVT_CON0{.CVT_BYPASS = 1, .CVT_TYPE = 1, .DATA_SIGN = 1}).value().value() == 0xb);
  CHECK(encode(CNA_DMA_CON0{.DATA_BURST_LEN = 15, .WEIGHT_BURST_LEN = 15}).value().value() == 0x000f'000f);
  CHECK(encode(CORE_MISC_CFG{.QD_EN = 1, .PROC_PRECISION = precision::fp16}).value().value() == 0x201);
  CHECK(encode(DPU_FEATURE_MODE_CFG{.OUTPUT_MODE = 2, .BURST_LEN = 15}).value().value() == 0x1e4);
  CHECK(encode(DPU_BS_CFG{.BS_BYPASS = 1, .BS_ALU_BYPASS = 1, .BS_MUL_BYPASS = 1, .BS_RELU_BYPASS = 1})
            .value()
            .value() == 0x53);
  CHECK(encode(DPU_BS_OW_CFG{.OD_BYPASS = 1, .SIZE_E_0 = 3, .SIZE_E_1 = 3, .SIZE_E_2 = 3}).value().value() ==
        0x36e);
  CHECK(encode(DPU_EW_CFG{.EW_BYPASS = 1, .EW_OP_BYPASS = 1, .EW_LUT_BYPASS = 1, .EW_OP_CVT_BYPASS = 1,
                          .EW_RELU_BYPASS = 1})
            .value()
            .value() == 0x383);
  CHECK(encode(DPU_OUT_CVT_SCALE{.OUT_CVT_SCALE = 1, .FP32TOFP16_EN = 1}).value().value() == 0x1'0001);
  // CNA_DATA_SIZE1 for K = 64: ((K - 1) << 16) | K (reference "Key registers")
  CHECK(encode(CNA_DATA_SIZE1{.DATAIN_CHANNEL = 64, .DATAIN_CHANNEL_REAL = 63}) ==
        entry::from_bits(0x0201'003f'0040'1024));
}

TEST_CASE("the vendor's element-wise captures decode field by field") {
  // reference "0x4070 DPU_EW_CFG + 0x5034 ERDMA_CFG data-mode fields": fp16 per-element mul
  const auto ew = unpack<DPU_EW_CFG>(0x2080'0384);
  CHECK(ew.EW_DATA_MODE.value() == ew_data_mode::per_channel_by_pixel);
  CHECK(ew.EDATA_SIZE.value() == data_size::two_byte);
  CHECK(ew.EW_OP_TYPE.value() == ew_op_type::mul);
  CHECK(ew.EW_ALU_ALGO.value() == alu_algo::MAX);
  CHECK(ew.EW_RELU_BYPASS.value() == 1);
  CHECK(ew.EW_OP_CVT_BYPASS.value() == 1);
  CHECK(ew.EW_LUT_BYPASS.value() == 1);
  CHECK(ew.EW_OP_BYPASS.value() == 0);
  CHECK(ew.EW_BYPASS.value() == 0);
  const auto erdma = unpack<DPU_RDMA_RDMA_ERDMA_CFG>(0x8000'000a);
  CHECK(erdma.ERDMA_DATA_MODE.value() == ew_data_mode::per_channel_by_pixel);
  CHECK(erdma.ERDMA_DATA_SIZE.value() == data_size::two_byte);
  CHECK(erdma.ERDMA_DISABLE.value() == 0);
  // fact sheet §5.2: Mesa's element-wise add EW_CFG 0x904202c0
  const auto add = unpack<DPU_EW_CFG>(0x9042'02c0);
  CHECK(add.EW_ALU_ALGO.value() == alu_algo::SUM);
  CHECK(add.EW_OP_SRC.value() == operand_source::memory);
  CHECK(add.EW_DATA_MODE.value() == ew_data_mode::per_pixel);
  CHECK(add.EDATA_SIZE.value() == data_size::one_byte);
  CHECK(add.EW_CVT_TYPE.value() == 1);
}

TEST_CASE("the GLOBAL op-enable mask and the 0x0081 entry") {
  // fact sheet §2.2: matmul 0x0d = CNA | CORE | DPU; Mesa conv 0x1d adds DPU_RDMA.
  CHECK(op_enable({.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1}) ==
        entry::from_bits(0x0081'0000'000d'0008));
  CHECK(op_enable({.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1, .DPU_RDMA_OP_EN = 1}).value().value() ==
        0x1d);
  CHECK(op_enable({.DPU_OP_EN = 1, .DPU_RDMA_OP_EN = 1}).value().value() == 0x18);
}

TEST_CASE("address fields hold the byte address, aligned to their lowest bit") {
  CHECK(encode(PC_BASE_ADDRESS{.PC_SOURCE_ADDR = 0x4000'0190}) == entry::from_bits(0x0101'4000'0190'0010));
  CHECK(encode(CNA_FEATURE_DATA_ADDR{.FEATURE_BASE_ADDR = 0x1000'0004}) ==
        entry::from_bits(0x0201'1000'0004'1070));
  CHECK(unpack<PPU_DST_BASE_ADDR>(0x1234'5670).DST_BASE_ADDR.value() == 0x1234'5670);
}

TEST_CASE("run-time values get the same checks as constants, as errors") {
  volatile unsigned sixteen = 16;  // not a constant expression
  const auto bank = encode(CNA_CBUF_CON0{.DATA_BANK = sixteen});
  REQUIRE_FALSE(bank.ok());
  CHECK_BREAKS(bank, rules::field_range);
  CHECK(bank.err().subject == "CNA_CBUF_CON0");
  CHECK(bank.err().detail == "DATA_BANK");
  CHECK(bank.err().value == 16);

  volatile std::uint32_t unaligned = 0x4000'0198;
  const auto pc = encode(PC_BASE_ADDRESS{.PC_SOURCE_ADDR = unaligned});
  REQUIRE_FALSE(pc.ok());
  CHECK_BREAKS(pc, rules::address_alignment);
  CHECK(pc.err().detail == "PC_SOURCE_ADDR");

  volatile std::uint32_t one = 1;  // conv_mode 1 fits 4 bits but is reserved (TRM)
  const auto mode = encode(CNA_CONV_CON1{.CONV_MODE = static_cast<conv_mode>(one)});
  REQUIRE_FALSE(mode.ok());
  CHECK_BREAKS(mode, rules::enum_value);
  CHECK(mode.err().detail == "CONV_MODE");

  volatile int negative = -1;
  const auto neg = encode(CNA_CBUF_CON1{.DATA_ENTRIES = negative});
  REQUIRE_FALSE(neg.ok());
  CHECK_BREAKS(neg, rules::field_range);

  // A value wider than 32 bits does not fit a 32-bit field either.
  volatile std::uint64_t wide = 0x1'0000'0000;
  CHECK_BREAKS(encode(CNA_WEIGHT_SIZE0{.WEIGHT_BYTES = wide}), rules::field_range);
  CHECK_THROWS_AS((void)encode(CNA_WEIGHT_SIZE0{.WEIGHT_BYTES = wide}).value(), error_exception);

  // A precision left out (its 0 is int8) is an error, not a silent int8: it names the field.
  volatile std::uint32_t fp16 = 2;
  const auto format = encode(DPU_DATA_FORMAT{.PROC_PRECISION = static_cast<precision>(fp16),
                                             .OUT_PRECISION = precision::fp32});
  REQUIRE_FALSE(format.ok());
  CHECK_BREAKS(format, rules::field_unnamed);
  CHECK(format.err().detail == "IN_PRECISION");
  CHECK(encode(DPU_DATA_FORMAT::zeroed()).value().value() == 0);
}

TEST_CASE("precision traits: CBUF elements per entry, weight tiles, bytes per element, names and enum values") {
  CHECK(traits(precision::fp16).elements_per_cbuf_entry == 8);
  CHECK(traits(precision::int8).elements_per_cbuf_entry == 16);
  CHECK(traits(precision::int4).elements_per_cbuf_entry == 16);
  CHECK(traits(precision::fp16).weight_tile == tile_shape{16, 32});
  CHECK(traits(precision::int8).weight_tile == tile_shape{32, 32});
  CHECK(bytes_of(precision::fp16, 3) == 6);
  CHECK(bytes_of(precision::int4, 3) == 2);
  CHECK(bytes_of(precision::int32, 2) == 8);
  CHECK_FALSE(traits(precision::bf16).matmul_input);
  CHECK(name_of(precision::fp32) == "fp32");
  CHECK(static_cast<unsigned>(precision::int4) == 6);
  CHECK(static_cast<unsigned>(precision::int32) == 4);
}
