// Pinning a program's encoded bytes in a unit test (regcmd/testing/doctest.hpp): a program
// built at compile time, compared with its hex golden register by register, a few of its
// registers and fields checked by name, the same checks as static_asserts, and one check
// that fails on purpose to show what a failure prints. Copy it next to your tests; it needs
// doctest and a main (DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN in one file).
#include <doctest/doctest.h>

#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/testing/doctest.hpp>

using namespace regcmd;
using namespace regcmd::reg;
using regcmd::testing::golden_file;

namespace {

// y = x + 0.75 over 8 x 40 fp16 as one flat vector: one SDP task.
constexpr ew_spec add_spec{.op = ew_op::add,
                           .dtype = precision::fp16,
                           .M = 8,
                           .N = 40,
                           .operand = ew_operand::immediate,
                           .layout = operand_layout::row_major,
                           .immediate = 0.75f};
constexpr auto add = fixed<add_spec>();

// The same op adding 0.5.
constexpr ew_spec add_half_spec = [] {
  ew_spec s = add_spec;
  s.immediate = 0.5f;
  return s;
}();

// Its golden: hex entries with comments (regcmd's own, tests/data/golden/).
const golden_file add_golden{REGCMD_GOLDEN_DIR "/ew_add_fp16_immediate_flat.txt"};

// The flat layout: 8 x 40 = 320 fp16 values in one surface of 8 channels, 40 pixels wide;
// the cube registers hold sizes minus one. The immediate as fp32: 0.75 = 0x3f400000.
static_assert(testing::has_field(add, &DPU_DATA_CUBE_WIDTH::WIDTH, 39));
static_assert(testing::has_register(add, DPU_DATA_CUBE_CHANNEL{.CHANNEL = 7, .ORIG_CHANNEL = 7}));

}  // namespace

TEST_CASE("pinned: the program is its golden, register by register") { CHECK_REGCMD_EQ(add, add_golden); }

TEST_CASE("pinned: its registers and fields by name") {
  CHECK_REGISTER(add, DPU_DATA_CUBE_CHANNEL{.CHANNEL = 7, .ORIG_CHANNEL = 7});
  CHECK_FIELD(add, DPU_DATA_CUBE_WIDTH::WIDTH, 39);
  CHECK_REGISTER(add, DPU_EW_OP_VALUE{.EW_OPERAND = 0x3f400000}, testing::element{0});  // an array's element
  CHECK_FIELD(add, GLOBAL_OPERATION_ENABLE::DPU_RDMA_OP_EN, 1);                         // the op-enable mask
  CHECK(add.view().tasks.size() == 1);
}

// Fails on purpose (doctest::should_fail): the width written as the pixel count, not the
// count minus one, and a program built with another immediate against the golden.
TEST_CASE("pinned: what a failing check prints" * doctest::should_fail()) {
  CHECK_FIELD(add, DPU_DATA_CUBE_WIDTH::WIDTH, 40);
  constexpr auto add_half = fixed<add_half_spec>();
  CHECK_REGCMD_EQ(add_half, add_golden);
}
