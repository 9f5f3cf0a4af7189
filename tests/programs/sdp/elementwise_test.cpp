// SDP element-wise programs against the register values of hardware-run programs, typed
// by hand: the reference's vendor fp16 mul capture ("0x4070 DPU_EW_CFG + 0x5034 ERDMA_CFG
// data-mode fields"), the vendor's standalone int8 add (captured, 64 channels x 8 pixels)
// and B's element-wise programs (docs/sdp-values.md lists each source).
#include <regcmd/testing/doctest.hpp>

#include <cstdint>
#include <span>

#include <regcmd/programs/sdp/elementwise.hpp>

using namespace regcmd;

namespace {
runtime_program<ew_geometry> built(const ew_spec& s) {
  auto r = build(s);
  REQUIRE_MESSAGE(r.ok(), r.err().id());
  return std::move(r).value();
}
}  // namespace

TEST_CASE("fp16 mul: the vendor capture's EW_CFG / ERDMA_CFG, per element and per channel") {
  const auto element = built({.op = ew_op::mul, .M = 16, .N = 64});
  CHECK_REGISTER(element.view(), reg::DPU_EW_CFG::from_bits(0x20800384));
  CHECK_REGISTER(element.view(), reg::DPU_RDMA_RDMA_ERDMA_CFG::from_bits(0x8000000a));
  CHECK_REGISTER(element.view(), reg::DPU_RDMA_RDMA_FEATURE_MODE_CFG::from_bits(0x00017849));
  const auto channel = built({.op = ew_op::mul, .M = 16, .N = 64, .operand = ew_operand::per_channel});
  CHECK_REGISTER(channel.view(), reg::DPU_EW_CFG::from_bits(0x00800384));
  CHECK_REGISTER(channel.view(), reg::DPU_RDMA_RDMA_ERDMA_CFG::from_bits(0x0000000a));
  // the vector is contiguous: one 16-byte atom per surface (B)
  CHECK_REGISTER(channel.view(), reg::DPU_RDMA_RDMA_EW_SURF_STRIDE::from_bits(0x10));
}

// PReLU: the mul above with EW_MUL_PRELU, bit 5 of DPU_EW_CFG (rknpu-uapi-and-register-map §4).
TEST_CASE("PReLU: the fp16 mul's EW_CFG with EW_MUL_PRELU, the same ERDMA_CFG") {
  const auto element = built({.op = ew_op::prelu, .M = 16, .N = 64});
  CHECK_REGISTER(element.view(), reg::DPU_EW_CFG::from_bits(0x208003a4));
  CHECK_REGISTER(element.view(), reg::DPU_RDMA_RDMA_ERDMA_CFG::from_bits(0x8000000a));
  const auto channel = built({.op = ew_op::prelu, .M = 16, .N = 64, .operand = ew_operand::per_channel});
  CHECK_REGISTER(channel.view(), reg::DPU_EW_CFG::from_bits(0x008003a4));
  CHECK_REGISTER(channel.view(), reg::DPU_RDMA_RDMA_ERDMA_CFG::from_bits(0x0000000a));
}

TEST_CASE("fp16 add, max, min per element (vendor add capture, B), EW_ALU_ALGO SUM = 2") {
  const auto add = built({.op = ew_op::add, .M = 8, .N = 64});
  CHECK_REGISTER(add.view(), reg::DPU_EW_CFG::from_bits(0x108202c0));
  CHECK_FIELD(add.view(), reg::DPU_EW_CFG::EW_ALU_ALGO, reg::alu_algo::SUM);  // bits 19:16 = 2
  CHECK_REGISTER(add.view(), reg::DPU_RDMA_RDMA_ERDMA_CFG::from_bits(0x40000008));
  CHECK_REGISTER(add.view(), reg::DPU_DATA_FORMAT::from_bits(0x48000002));
  CHECK_REGISTER(add.view(), reg::DPU_FEATURE_MODE_CFG::from_bits(0x1e5));
  CHECK_REGISTER(add.view(), reg::DPU_EW_CVT_SCALE_VALUE::from_bits(1));
  CHECK_REGISTER(add.view(), reg::DPU_OUT_CVT_SCALE::from_bits(0x00010001));
  CHECK_REGISTER(built({.op = ew_op::max, .M = 8, .N = 64}).view(), reg::DPU_EW_CFG::from_bits(0x108002c0));
  CHECK_REGISTER(built({.op = ew_op::min, .M = 8, .N = 64}).view(), reg::DPU_EW_CFG::from_bits(0x108102c0));
  // per channel: both DATA_MODE fields cleared (B's broadcast program: 0x008202C0 / 0x8)
  const auto channel = built({.op = ew_op::add, .M = 2, .N = 16, .operand = ew_operand::per_channel});
  CHECK_REGISTER(channel.view(), reg::DPU_EW_CFG::from_bits(0x008202c0));
  CHECK_REGISTER(channel.view(), reg::DPU_RDMA_RDMA_ERDMA_CFG::from_bits(0x00000008));
}

TEST_CASE("a register immediate: EW_OP_SRC register, ERDMA disabled, the value as fp32 bits (B)") {
  const auto imm = built({.op = ew_op::add, .M = 1, .N = 8, .operand = ew_operand::immediate, .immediate = 2.0f});
  CHECK_REGISTER(imm.view(), reg::DPU_EW_CFG::from_bits(0x10820280));
  CHECK_REGISTER(imm.view(), reg::DPU_RDMA_RDMA_ERDMA_CFG::from_bits(0x40000009));
  for (unsigned n = 0; n < 8; ++n)  // DPU_EW_OP_VALUE_0..7 at 0x4090..0x40ac
    CHECK_REGISTER(imm.view(), reg::DPU_EW_OP_VALUE{.EW_OPERAND = 0x40000000}, testing::element{n});
  CHECK(testing::copies_of<reg::DPU_RDMA_RDMA_EW_BASE_ADDR>(imm.view()) == 0);  // no operand address
  CHECK(imm.view().slots.size() == 2);
}

TEST_CASE("int8 and int16 element-wise ops encode implementation B's EW, ERDMA, feature mode and format values") {
  const auto i8 = built({.op = ew_op::add, .dtype = precision::int8, .M = 8, .N = 64});
  CHECK_REGISTER(i8.view(), reg::DPU_EW_CFG::from_bits(0x104202c0));
  CHECK_REGISTER(i8.view(), reg::DPU_RDMA_RDMA_ERDMA_CFG::from_bits(0x40000004));
  CHECK_REGISTER(i8.view(), reg::DPU_RDMA_RDMA_FEATURE_MODE_CFG::from_bits(0x7801));
  CHECK_REGISTER(i8.view(), reg::DPU_DATA_FORMAT::from_bits(0));
  CHECK_REGISTER(i8.view(), reg::DPU_OUT_CVT_SCALE::from_bits(1));
  const auto i16max = built({.op = ew_op::max, .dtype = precision::int16, .M = 8, .N = 64});
  CHECK_REGISTER(i16max.view(), reg::DPU_EW_CFG::from_bits(0x10a002c0));
  CHECK_REGISTER(i16max.view(), reg::DPU_DATA_FORMAT::from_bits(0x24000001));
  CHECK_REGISTER(i16max.view(), reg::DPU_RDMA_RDMA_FEATURE_MODE_CFG::from_bits(0xf821));
  CHECK_REGISTER(built({.op = ew_op::min, .dtype = precision::int8, .M = 8, .N = 64}).view(), reg::DPU_EW_CFG::from_bits(0x106102c0));
  CHECK_REGISTER(built({.op = ew_op::mul, .dtype = precision::int16, .M = 8, .N = 64}).view(), reg::DPU_EW_CFG::from_bits(0x108002c4));
}

TEST_CASE("surface geometry: the vendor's int8 add of 64 channels x 8 pixels") {
  const auto p = built({.op = ew_op::add, .dtype = precision::int8, .M = 8, .N = 64});
  const auto v = p.view();
  CHECK_REGISTER(v, reg::DPU_DST_SURF_STRIDE::from_bits(0x80));  // DST_SURF_STRIDE = M * 16
  CHECK_REGISTER(v, reg::DPU_DATA_CUBE_WIDTH::from_bits(7));
  CHECK_REGISTER(v, reg::DPU_DATA_CUBE_HEIGHT::from_bits(0));
  CHECK_REGISTER(v, reg::DPU_DATA_CUBE_NOTCH_ADDR::from_bits(0));
  CHECK_REGISTER(v, reg::DPU_DATA_CUBE_CHANNEL::from_bits(0x003f003f));
  CHECK_REGISTER(v, reg::DPU_BS_OW_CFG::from_bits(0x2));
  CHECK_REGISTER(v, reg::DPU_WDMA_SIZE_0::from_bits(0x3f));
  CHECK_REGISTER(v, reg::DPU_WDMA_SIZE_1::from_bits(7));
  CHECK_REGISTER(v, reg::DPU_BN_CFG::from_bits(0x53));
  CHECK_REGISTER(v, reg::DPU_SURFACE_ADD::from_bits(0x80));
  CHECK_REGISTER(v, reg::DPU_RDMA_RDMA_S_POINTER::from_bits(0xe));
  CHECK_REGISTER(v, reg::DPU_S_POINTER::from_bits(0xe));
  CHECK_REGISTER(v, reg::DPU_RDMA_RDMA_DATA_CUBE_WIDTH::from_bits(7));
  CHECK_REGISTER(v, reg::DPU_RDMA_RDMA_DATA_CUBE_HEIGHT::from_bits(0));
  CHECK_REGISTER(v, reg::DPU_RDMA_RDMA_DATA_CUBE_CHANNEL::from_bits(0x3f));
  CHECK_REGISTER(v, reg::DPU_RDMA_RDMA_EW_SURF_STRIDE::from_bits(0x80));
  CHECK_REGISTER(v, reg::DPU_RDMA_RDMA_WEIGHT::from_bits(0x01010101));
  CHECK(v.tasks.size() == 1);
  CHECK(v.tasks[0].enable_mask == 0x18);
  CHECK(v.tasks[0].int_mask == 0x300);
  CHECK_FALSE(v.pingpong);
  CHECK(p.geometry.tensor_bytes() == 8 * 64);
}

TEST_CASE("the flat layout: B's vector tiles of 8000 pixels, chained") {
  // 131072 fp16 elements: B's largest test, three tasks (8000, 8000, 384 pixels)
  const auto p = built({.op = ew_op::add, .M = 512, .N = 256, .layout = operand_layout::row_major});
  const auto v = p.view();
  REQUIRE(v.tasks.size() == 3);
  CHECK_REGISTER(v, reg::DPU_DATA_CUBE_WIDTH::from_bits(7999), testing::in_task{0});
  CHECK_REGISTER(v, reg::DPU_DATA_CUBE_WIDTH::from_bits(383), testing::in_task{2});
  CHECK_REGISTER(v, reg::DPU_DATA_CUBE_CHANNEL::from_bits(0x00070007), testing::in_task{0});  // one surface of 8 channels
  CHECK_REGISTER(v, reg::DPU_RDMA_RDMA_DATA_CUBE_CHANNEL::from_bits(7), testing::in_task{1});
  // each task reads and writes its own 128000-byte slice
  for (const slot& s : v.slots)
    if (s.role == operand_role::output) CHECK(s.offset % 128000 == 0);
  CHECK(p.geometry.tensor_bytes() == 131072 * 2);
  CHECK(p.geometry.tasks() == 3);
}

TEST_CASE("every element-wise rule refuses its spec at run time with its id") {
  struct row {
    ew_spec spec;
    const regcmd::rule* broken;
  };
  const row rows[] = {
      {{.dtype = precision::int32, .M = 4, .N = 8}, &rules::ew_precision},
      {{.M = 4, .N = 8, .input_pitch = 64}, &rules::ew_line_stride},
      {{.M = 4, .N = 12, .tile_pad = tile_padding::none}, &rules::ew_n_alignment},
      {{.dtype = precision::int8, .M = 4, .N = 8, .tile_pad = tile_padding::none}, &rules::ew_n_alignment},
      {{.M = 8193, .N = 8}, &rules::ew_width},
      {{.M = 4, .N = 8200}, &rules::ew_width},
      {{.M = 4, .N = 8, .operand = ew_operand::per_channel, .layout = operand_layout::row_major}, &rules::ew_per_channel_layout},
      {{.op = ew_op::mul, .M = 4, .N = 8, .operand = ew_operand::immediate}, &rules::ew_immediate},
      {{.dtype = precision::int8, .M = 4, .N = 16, .operand = ew_operand::immediate}, &rules::ew_immediate},
      {{.op = ew_op::prelu, .M = 4, .N = 8, .operand = ew_operand::immediate}, &rules::ew_immediate},
      {{.op = ew_op::prelu, .dtype = precision::int8, .M = 4, .N = 16, .operand = ew_operand::per_channel}, &rules::ew_prelu_precision},
      {{.op = ew_op::prelu, .dtype = precision::int16, .M = 4, .N = 16}, &rules::ew_prelu_precision},
      {{.M = 0, .N = 8}, &rules::shape_nonzero},
  };
  for (const row& r : rows) {
    CAPTURE(r.broken->id);
    const auto b = build(r.spec);
    REQUIRE_FALSE(b.ok());
    CHECK_BREAKS(b, *r.broken);
  }
  // the flat layout takes any number of rows
  CHECK(build(ew_spec{.M = 100000, .N = 8, .layout = operand_layout::row_major}).ok());
  // sizes near 2^32, bounded before they are rounded: N = 2^32 - 1 rounded to the atom
  // wrapped to 0; 2^32 - 1 int8 elements padded to 2^32 fill the address space but not a
  // 32-bit count (it read 0)
  CHECK_BREAKS(build(ew_spec{.M = 1, .N = 4294967295u}), rules::ew_width);
  CHECK_BREAKS(build(ew_spec{.dtype = precision::int8, .M = 1, .N = 4294967295u, .layout = operand_layout::row_major}), rules::operand_size);
  CHECK_BREAKS(build(ew_spec{.M = 65536, .N = 65536, .layout = operand_layout::row_major}), rules::operand_size);
}

TEST_CASE("an element-wise op at compile time: one task of 57 entries, ping-pong off, B's DPU_EW_CFG") {
  constexpr auto p = fixed<ew_spec{.op = ew_op::mul, .M = 16, .N = 64}>();
  static_assert(p.code.task_count == 1);
  static_assert(!p.code.pingpong);
  CHECK(p.code.entry_count == 57);
  CHECK_REGISTER(p.code.view(), reg::DPU_EW_CFG::from_bits(0x20800384));
}
