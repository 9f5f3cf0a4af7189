// Pooling programs against values typed from the references: the vendor's maxpool capture
// in the ISA reference (64 x 16 x 16, 2 x 2 stride 2: 18 PPU + 8 PPU_RDMA writes), AB-POOL's
// worked example (6 x 7 x 8, ops-reference §5.2) and its row tiling of a 3000 x 6 image;
// where regcmd's choice differs from a source (DST_SURF_STRIDE, RECIP) the test says which.
#include <regcmd/testing/doctest.hpp>

#include <cstdint>
#include <vector>

#include <regcmd/programs/pooling/pooling.hpp>
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;

namespace {
constexpr std::uint16_t ppu = 0x4001, ppu_rdma = 0x8001;

std::uint32_t writes_to(const program_view& p, std::uint16_t target, std::size_t t = 0) {
  std::uint32_t n = 0;
  for (std::uint32_t i = p.tasks[t].first; i < p.tasks[t].first + p.tasks[t].count; ++i) n += p.entries[i].target() == target;
  return n;
}

runtime_program<pool_geometry> built(const pool_spec& s) {
  auto r = build(s);
  REQUIRE_MESSAGE(r.ok(), r.err().id());
  return std::move(r).value();
}
}  // namespace

TEST_CASE("the vendor's maxpool: 64 x 16 x 16, 2 x 2 stride 2") {
  const auto p = built({.op = pool_op::max, .H = 16, .W = 16, .C = 64});
  const program_view v = p.view();
  REQUIRE(v.tasks.size() == 1);
  CHECK(writes_to(v, ppu) == 18);
  CHECK(writes_to(v, ppu_rdma) == 8);
  CHECK_REGISTER(v, reg::PPU_S_POINTER::from_bits(0xe));
  CHECK_REGISTER(v, reg::PPU_DATA_CUBE_IN_WIDTH::from_bits(15));
  CHECK_REGISTER(v, reg::PPU_DATA_CUBE_IN_HEIGHT::from_bits(15));
  CHECK_REGISTER(v, reg::PPU_DATA_CUBE_IN_CHANNEL::from_bits(63));
  CHECK_REGISTER(v, reg::PPU_DATA_CUBE_OUT_WIDTH::from_bits(7));
  CHECK_REGISTER(v, reg::PPU_DATA_CUBE_OUT_HEIGHT::from_bits(7));
  CHECK_REGISTER(v, reg::PPU_DATA_CUBE_OUT_CHANNEL::from_bits(63));
  CHECK_REGISTER(v, reg::PPU_POOLING_KERNEL_CFG::from_bits(0x00110101));
  CHECK_REGISTER(v, reg::PPU_MISC_CTRL::from_bits(3));
  CHECK(v.tasks[0].enable_mask == 0x60);
  CHECK(v.tasks[0].int_mask == 0xc00);
}

TEST_CASE("AB-POOL's 6 x 7 example: max, average, global") {
  // H 6 x W 7 x C 8 fp16, 2 x 2 stride 1: out 5 x 6.
  const auto max = built({.op = pool_op::max, .H = 6, .W = 7, .C = 8, .stride_y = 1, .stride_x = 1});
  const program_view v = max.view();
  CHECK_REGISTER(v, reg::PPU_DATA_CUBE_IN_WIDTH::from_bits(6));  // CUBE_IN_WIDTH
  CHECK_REGISTER(v, reg::PPU_DATA_CUBE_IN_HEIGHT::from_bits(5));
  CHECK_REGISTER(v, reg::PPU_DATA_CUBE_IN_CHANNEL::from_bits(7));
  CHECK_REGISTER(v, reg::PPU_DATA_CUBE_OUT_WIDTH::from_bits(5));  // CUBE_OUT_WIDTH
  CHECK_REGISTER(v, reg::PPU_DATA_CUBE_OUT_HEIGHT::from_bits(4));
  CHECK_REGISTER(v, reg::PPU_OPERATION_MODE_CFG::from_bits(0x11));
  CHECK_REGISTER(v, reg::PPU_POOLING_KERNEL_CFG::from_bits(0x101));
  CHECK_REGISTER(v, reg::PPU_RDMA_RDMA_SRC_LINE_STRIDE::from_bits(0x70));   // 7 atoms a line
  CHECK_REGISTER(v, reg::PPU_RDMA_RDMA_SRC_SURF_STRIDE::from_bits(0x2a0));  // 42 atoms a surface
  CHECK_REGISTER(v, reg::PPU_RDMA_RDMA_DATA_FORMAT::from_bits(2));      // 16-bit storage
  CHECK_REGISTER(v, reg::PPU_RECIP_KERNEL_WIDTH::from_bits(0));
  // DST_SURF_STRIDE: the output surface, 5 * 6 = 30 atoms (RU's bytes / 16); AB-POOL618
  // writes 7 * 5 = 35, which a single surface never reads. INDEX_ADD the same, PROC fp16.
  CHECK_REGISTER(v, reg::PPU_DST_SURF_STRIDE::from_bits(30u << 4));
  CHECK_REGISTER(v, reg::PPU_DATA_FORMAT::from_bits((30u << 4 | 2)));
  const auto avg = built({.op = pool_op::average, .H = 6, .W = 7, .C = 8, .stride_y = 1, .stride_x = 1});
  CHECK_REGISTER(avg.view(), reg::PPU_OPERATION_MODE_CFG::from_bits(0x10));
  CHECK_REGISTER(avg.view(), reg::PPU_RECIP_KERNEL_WIDTH::from_bits(0x7800));  // fp16(65536 / 2) = 32768: AB-POOL's value
  CHECK_REGISTER(avg.view(), reg::PPU_RECIP_KERNEL_HEIGHT::from_bits(0x7800));
  const auto global = built({.op = pool_op::global_max, .H = 6, .W = 7, .C = 8});
  CHECK_REGISTER(global.view(), reg::PPU_DATA_CUBE_OUT_WIDTH::from_bits(0));
  CHECK_REGISTER(global.view(), reg::PPU_DATA_CUBE_OUT_HEIGHT::from_bits(0));
  CHECK_REGISTER(global.view(), reg::PPU_POOLING_KERNEL_CFG::from_bits(0x560506));
  CHECK_REGISTER(global.view(), reg::PPU_DST_SURF_STRIDE::from_bits(0x10));  // AB-POOL618's global values
  CHECK_REGISTER(global.view(), reg::PPU_DATA_FORMAT::from_bits(0x12));
  const auto global_avg = built({.op = pool_op::global_average, .H = 6, .W = 7, .C = 8});
  CHECK_REGISTER(global_avg.view(), reg::PPU_RECIP_KERNEL_WIDTH::from_bits(0x7092));  // fp16(65536 / 7 = 9362.3) = 9360
  CHECK_REGISTER(global_avg.view(), reg::PPU_RECIP_KERNEL_HEIGHT::from_bits(0x7155));  // fp16(65536 / 6 = 10922.7) = 10920
}

TEST_CASE("AB-POOL's row tiling: 3000 x 6 in tasks of 1365, 1365 and 269 output rows") {
  const auto p = built({.op = pool_op::max, .H = 3000, .W = 6, .C = 8, .stride_y = 1, .stride_x = 1});
  const program_view v = p.view();
  REQUIRE(v.tasks.size() == 3);
  const std::uint32_t rows[] = {1365, 1365, 269};
  for (std::size_t t = 0; t < 3; ++t) {
    CHECK_REGISTER(v, reg::PPU_DATA_CUBE_OUT_HEIGHT::from_bits(rows[t] - 1), testing::in_task{t});  // output rows
    CHECK_REGISTER(v, reg::PPU_DATA_CUBE_IN_HEIGHT::from_bits(rows[t]), testing::in_task{t});      // r + 1 input rows
    CHECK_REGISTER(v, reg::PPU_RDMA_RDMA_CUBE_IN_HEIGHT::from_bits(rows[t]), testing::in_task{t});
    CHECK(v.tasks[t].count == 30);
  }
  // input at out_start * 6 * 16 bytes, output at out_start * 5 * 16
  int input_slots = 0, output_slots = 0;
  for (const slot& s : v.slots) {
    if (s.role == operand_role::feature) CHECK(s.offset == std::uint32_t(input_slots++) * 1365 * 96);
    if (s.role == operand_role::output) CHECK(s.offset == std::uint32_t(output_slots++) * 1365 * 80);
  }
  CHECK(input_slots == 3);
  CHECK(output_slots == 3);
}

TEST_CASE("an image of 20000 rows: row tasks each reading at most 8192 (CUBE_IN_HEIGHT's 13 bits)") {
  // 20000 x 1, kernel 16 x 1 stride 16: 1250 output rows; a task of r rows reads 16 r, so
  // 512 a task (8192 input rows): 512, 512 and 226 rows (3616 input rows)
  const auto p = built({.op = pool_op::max, .H = 20000, .W = 1, .C = 8, .kernel_h = 16, .kernel_w = 1, .stride_y = 16,
                        .stride_x = 1});
  const program_view v = p.view();
  REQUIRE(v.tasks.size() == 3);
  const std::uint32_t rows[] = {512, 512, 226};
  for (std::size_t t = 0; t < 3; ++t) {
    CHECK_REGISTER(v, reg::PPU_DATA_CUBE_OUT_HEIGHT::from_bits(rows[t] - 1), testing::in_task{t});
    CHECK_REGISTER(v, reg::PPU_DATA_CUBE_IN_HEIGHT::from_bits(16 * rows[t] - 1), testing::in_task{t});
    CHECK_REGISTER(v, reg::PPU_RDMA_RDMA_CUBE_IN_HEIGHT::from_bits(16 * rows[t] - 1), testing::in_task{t});
  }
}

TEST_CASE("padding: SAME max pooling pads with -inf, on the edge tasks only") {
  // 5 x 5, 3 x 3 stride 2, SAME: out 3 x 3, total padding 2 per axis (1 before, 1 after).
  const auto p = built({.op = pool_op::max, .H = 5, .W = 5, .C = 8, .kernel_h = 3, .kernel_w = 3, .stride_y = 2,
                        .stride_x = 2, .padding = conv_padding::same});
  CHECK_REGISTER(p.view(), reg::PPU_POOLING_PADDING_CFG::from_bits(0x1111));  // left 1, top 1, right 1, bottom 1
  CHECK_REGISTER(p.view(), reg::PPU_PADDING_VALUE_1_CFG::from_bits(0xfc00));
  CHECK_REGISTER(p.view(), reg::PPU_DATA_CUBE_OUT_WIDTH::from_bits(2));
  const auto i8 = built({.op = pool_op::max, .dtype = precision::int8, .H = 5, .W = 5, .C = 16, .kernel_h = 3,
                         .kernel_w = 3, .stride_y = 2, .stride_x = 2, .padding = conv_padding::same});
  CHECK_REGISTER(i8.view(), reg::PPU_PADDING_VALUE_1_CFG::from_bits(0xffffff80));  // -128 in 35 bits
  CHECK_REGISTER(i8.view(), reg::PPU_PADDING_VALUE_2_CFG::from_bits(7));
  CHECK_REGISTER(i8.view(), reg::PPU_RDMA_RDMA_DATA_FORMAT::from_bits(1));
  CHECK_REGISTER(i8.view(), reg::PPU_DATA_FORMAT::from_bits(9u << 4));  // int8 = 0, 3 x 3 outputs
}

TEST_CASE("every pooling rule refuses its spec at run time with its id") {
  auto fails = [](const pool_spec& s, const rule& r) {
    auto b = build(s);
    REQUIRE_FALSE(b.ok());
    CHECK_BREAKS(b, r);
  };
  fails({.H = 0, .W = 4, .C = 8}, rules::shape_nonzero);
  fails({.dtype = precision::int16, .H = 4, .W = 4, .C = 8}, rules::pool_precision);
  fails({.op = pool_op::average, .dtype = precision::int8, .H = 4, .W = 4, .C = 16}, rules::pool_int8_average);
  fails({.H = 4, .W = 8193, .C = 8}, rules::pool_size);
  fails({.H = 4, .W = 4, .C = 8200}, rules::pool_size);
  fails({.H = 4, .W = 4, .C = 4294967295u}, rules::pool_size);  // rounded to the atom it wrapped to 0
  fails({.dtype = precision::int8, .H = 4, .W = 4, .C = 4294967290u}, rules::pool_size);
  fails({.H = 40, .W = 40, .C = 8, .kernel_h = 17, .kernel_w = 2}, rules::pool_kernel);
  fails({.op = pool_op::global_max, .H = 20, .W = 20, .C = 8}, rules::pool_kernel);
  fails({.H = 4, .W = 4, .C = 8, .kernel_h = 5, .kernel_w = 2}, rules::pool_kernel);
  fails({.op = pool_op::average, .H = 4, .W = 4, .C = 8, .kernel_h = 1, .kernel_w = 2}, rules::pool_average_kernel);
  fails({.op = pool_op::global_average, .H = 1, .W = 6, .C = 8}, rules::pool_average_kernel);
  fails({.H = 9, .W = 9, .C = 8, .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::explicit_sides, .pad = {3, 0, 0, 0}},
        rules::pool_padding);
}

TEST_CASE("the PPU's DMA reach: a slot claiming less than its registers read or write is refused") {
  // 6 x 7 x 24 fp16: 3 surfaces of 42 atoms in, 3 of 30 (5 x 6) out.
  const auto p = built({.op = pool_op::max, .H = 6, .W = 7, .C = 24, .stride_y = 1, .stride_x = 1});
  for (const operand_role role : {operand_role::feature, operand_role::output}) {
    std::vector<slot> slots(p.view().slots.begin(), p.view().slots.end());
    for (slot& s : slots)
      if (s.role == role) {
        CHECK(s.extent == (role == operand_role::feature ? 3 * 42 * 16 : 3 * 30 * 16));
        s.extent -= 16;
      }
    program_view v = p.view();
    v.slots = slots;
    const status checked = validate(v);
    REQUIRE_FALSE(checked.ok());
    CHECK_BREAKS(checked, rules::slot_extent);
  }
}
