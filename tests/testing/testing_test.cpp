// regcmd/testing: the reports a failing check prints, line by line, typed from the diff's
// format and the registers' declarations (registers/cna.hpp), and the constexpr checks.
#include <regcmd/testing/doctest.hpp>

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <regcmd/programs/captured/program.hpp>
#include <regcmd/registers/all.hpp>
#include <regcmd/testing/checks.hpp>
#include <regcmd/testing/compare.hpp>

using namespace regcmd;
using namespace regcmd::reg;
using regcmd::testing::in_task;

namespace {

entry put(const auto& r) { return encode(r).value(); }
// GLOBAL op-enable of CNA, CORE and DPU (0x0081 entry, value 0x0d).
constexpr entry enable_entry = entry::make(std::uint16_t{0x0081}, 0x0000000du, std::uint16_t{0x0008});

// CNA_CBUF_CON0 0x0201'000000b1'1040, CNA_DATA_SIZE1 0x0201'003f0040'1024, the op-enable.
const std::vector<entry> golden = {put(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11}),
                                   put(CNA_DATA_SIZE1{.DATAIN_CHANNEL = 64, .DATAIN_CHANNEL_REAL = 63}), enable_entry};

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    out.emplace_back(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
  }
  return out;
}

// A program of two tasks built as a constant: task 1 has another channel count.
constexpr auto two_tasks = captured_program<24, 2, 2>({.pingpong = true}, [](program_writer& w) {
  for (std::uint32_t channels : {64u, 128u}) {
    w.begin_task();
    w.put(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
    w.put(CNA_DATA_SIZE1{.DATAIN_CHANNEL = channels, .DATAIN_CHANNEL_REAL = channels - 1});
    w.end_task(GLOBAL_OPERATION_ENABLE{.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1}, dpu_done_interrupts);
  }
});

// The checks at compile time.
static_assert(testing::has_register(two_tasks, CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11}));
static_assert(!testing::has_register(two_tasks, CNA_CBUF_CON0{.DATA_BANK = 2, .WEIGHT_BANK = 10}));
static_assert(!testing::has_register(two_tasks, CNA_WEIGHT_SIZE0{.WEIGHT_BYTES = 4096}));  // never written
static_assert(testing::has_field(two_tasks, &CNA_DATA_SIZE1::DATAIN_CHANNEL, 64, in_task{0}));
static_assert(testing::has_field(two_tasks, &CNA_DATA_SIZE1::DATAIN_CHANNEL, 128, in_task{1}));
static_assert(!testing::has_field(two_tasks, &CNA_DATA_SIZE1::DATAIN_CHANNEL, 64));              // task 1's copy is 128
static_assert(!testing::has_field(two_tasks, &CNA_DATA_SIZE1::DATAIN_CHANNEL, 64, in_task{2}));  // no task 2
static_assert(testing::task_count(testing::program_of(two_tasks)) == 2);
static_assert(testing::has_register(two_tasks, GLOBAL_OPERATION_ENABLE{.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1},
                                    in_task{1}));
static_assert(!testing::has_field(two_tasks, &GLOBAL_OPERATION_ENABLE::PPU_OP_EN, 1));

// Two elements of a register array (DPU_EW_OP_VALUE_0 and _1: fp32 2.0 and fp16 1.0), then
// the op-enable.
constexpr std::array<entry, 3> ew_operands = {encode(DPU_EW_OP_VALUE{.EW_OPERAND = 0x40000000}, 0).value(),
                                              encode(DPU_EW_OP_VALUE{.EW_OPERAND = 0x3c00}, 1).value(), enable_entry};
static_assert(testing::has_register(ew_operands, DPU_EW_OP_VALUE{.EW_OPERAND = 0x3c00}, testing::element{1}));
static_assert(!testing::has_register(ew_operands, DPU_EW_OP_VALUE{.EW_OPERAND = 0x3c00}, testing::element{0}));
static_assert(!testing::has_register(ew_operands, DPU_EW_OP_VALUE{.EW_OPERAND = 0x3c00}, testing::element{8}));
static_assert(testing::has_field(ew_operands, &DPU_EW_OP_VALUE::EW_OPERAND, 0x40000000, testing::element{0}));
static_assert(!testing::has_field(ew_operands, &DPU_EW_OP_VALUE::EW_OPERAND, 0x40000000, testing::element{2}));

}  // namespace

TEST_CASE("testing: an inserted entry is reported on its side, decoded, not as a cascade") {
  std::vector<entry> actual = golden;
  actual.insert(actual.begin() + 1, put(CNA_CONV_CON2{.FEATURE_GRAINS = 5}));
  const testing::comparison c = testing::compare(actual, golden);
  CHECK_FALSE(c.equal);
  CHECK(lines_of(c.report) ==
        std::vector<std::string>{
            "A is the actual program, B the expected",
            "first divergence: A[1] CNA_CONV_CON2 (not in B)",
            "only in A: 1 CNA CNA_CONV_CON2 0x00000050 CMD_FIFO_SRST=0 CSC_DO_EN=0 CSC_WO_EN=0 FEATURE_GRAINS=5 "
            "KERNEL_GROUP=0",
            "summary: 0 registers differ, 1 only in A, 0 only in B (4 vs 3 entries)",
        });
}

TEST_CASE("testing: a changed field is named with both values") {
  std::vector<entry> actual = golden;
  actual[0] = put(CNA_CBUF_CON0{.DATA_BANK = 2, .WEIGHT_BANK = 10});
  const testing::comparison c = testing::compare(actual, golden);
  CHECK(lines_of(c.report) == std::vector<std::string>{
                                  "A is the actual program, B the expected",
                                  "first divergence: A[0] / B[0] CNA_CBUF_CON0",
                                  "CNA_CBUF_CON0: DATA_BANK 2 -> 1, WEIGHT_BANK 10 -> 11  [A 0, B 0]",
                                  "summary: 1 registers differ, 0 only in A, 0 only in B (3 vs 3 entries)",
                              });
}

TEST_CASE("testing: a register written twice is compared copy by copy") {
  std::vector<entry> expected = golden, actual = golden;
  expected.insert(expected.begin() + 2, put(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11}));
  actual.insert(actual.begin() + 2, put(CNA_CBUF_CON0{.DATA_BANK = 2, .WEIGHT_BANK = 10}));  // a stale copy
  const testing::comparison c = testing::compare(actual, expected);
  CHECK(lines_of(c.report) == std::vector<std::string>{
                                  "A is the actual program, B the expected",
                                  "first divergence: A[2] / B[2] CNA_CBUF_CON0#1",
                                  "CNA_CBUF_CON0#1: DATA_BANK 2 -> 1, WEIGHT_BANK 10 -> 11  [A 2, B 2]",
                                  "summary: 1 registers differ, 0 only in A, 0 only in B (4 vs 4 entries)",
                              });
  // The check of the register names the copy that differs, and only it.
  const testing::check_report r = testing::register_report(actual, CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
  CHECK_FALSE(r.ok);
  CHECK(r.message ==
        "CNA_CBUF_CON0 at entry 2 (task 0, copy 2 of 2): DATA_BANK 2, expected 1; WEIGHT_BANK 10, expected 11");
}

TEST_CASE("testing: a program of another length: the entries only one side has") {
  const std::vector<entry> shorter = {golden[0], golden[2]};
  CHECK(lines_of(testing::compare(shorter, golden).report) ==
        std::vector<std::string>{
            "A is the actual program, B the expected",
            "first divergence: B[1] CNA_DATA_SIZE1 (not in A)",
            "only in B: 1 CNA CNA_DATA_SIZE1 0x003f0040 DATAIN_CHANNEL=64 DATAIN_CHANNEL_REAL=63",
            "summary: 0 registers differ, 0 only in A, 1 only in B (2 vs 3 entries)",
        });
  // Longer: a second task's entries only in A.
  std::vector<entry> longer = golden;
  longer.insert(longer.end(), golden.begin(), golden.end());
  CHECK(lines_of(testing::compare(longer, golden).report) ==
        std::vector<std::string>{
            "A is the actual program, B the expected",
            "first divergence: A[3] CNA_CBUF_CON0#1 (not in B)",
            "only in A: 3 CNA CNA_CBUF_CON0 0x000000b1 DATA_BANK=1 WEIGHT_BANK=11 FC_DATA_BANK=0 DATA_REUSE=0 "
            "WEIGHT_REUSE=0",
            "only in A: 4 CNA CNA_DATA_SIZE1 0x003f0040 DATAIN_CHANNEL=64 DATAIN_CHANNEL_REAL=63",
            "only in A: 5 0x0081 OP_ENABLE 0x0000000d CNA_OP_EN=1 CORE_OP_EN=1 DPU_OP_EN=1 DPU_RDMA_OP_EN=0 "
            "PPU_OP_EN=0 PPU_RDMA_OP_EN=0",
            "summary: 0 registers differ, 3 only in A, 0 only in B (6 vs 3 entries)",
        });
}

TEST_CASE("testing: the expected program as hex text, comments allowed") {
  constexpr std::string_view text = R"(# CNA_CBUF_CON0 1 / 11, CNA_DATA_SIZE1 64 / 63, op-enable CNA CORE DPU
0x0201000000b11040
0x0201003f00401024   # DATAIN_CHANNEL 64
0x00810000000d0008
)";
  CHECK(testing::compare(golden, text).equal);
  CHECK(testing::compare(golden, text).report.empty());
  CHECK(testing::compare(two_tasks, golden).report.starts_with("A is the actual program, B the expected\n"));
  const testing::comparison bad = testing::compare(golden, "0x0201000000b11040\nDATA_BANK=1\n");
  CHECK_FALSE(bad.equal);
  CHECK(bad.report.starts_with("the expected hex text is not a dump: "));
}

TEST_CASE("testing: register and field checks say register, field, task, entry and value") {
  using testing::field_report;
  using testing::register_report;
  CHECK(register_report(two_tasks, CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11}).ok);
  CHECK(register_report(two_tasks, CNA_WEIGHT_SIZE0{.WEIGHT_BYTES = 4096}).message ==
        "CNA_WEIGHT_SIZE0 is not written in the program (expected WEIGHT_BYTES=4096)");
  CHECK(register_report(golden, CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11}, in_task{1}).message ==
        "CNA_CBUF_CON0 is not written in task 1 (the program has 1 task) (expected DATA_BANK=1 WEIGHT_BANK=11)");
  // Task 1 of the constant program starts at entry 6, after task 0's 2 body entries and 4-entry tail.
  CHECK(field_report(two_tasks, &CNA_DATA_SIZE1::DATAIN_CHANNEL, 64).message ==
        "CNA_DATA_SIZE1.DATAIN_CHANNEL at entry 7 (task 1, copy 2 of 2): 128, expected 64");
  CHECK(field_report(two_tasks, &CNA_DATA_SIZE1::DATAIN_CHANNEL, 128, in_task{1}).ok);
  CHECK(field_report(two_tasks, &CNA_DATA_SIZE1::DATAIN_CHANNEL, 128, in_task{0}).message ==
        "CNA_DATA_SIZE1.DATAIN_CHANNEL at entry 1 (task 0, copy 1 of 1): 64, expected 128");
  // Enumerations by name; a value that does not fit (at run time) said so.
  const std::vector<entry> conv = {
      put(CNA_CONV_CON1{.IN_PRECISION = precision::fp16, .PROC_PRECISION = precision::fp16}), enable_entry};
  CHECK(field_report(conv, &CNA_CONV_CON1::IN_PRECISION, precision::int8).message ==
        "CNA_CONV_CON1.IN_PRECISION at entry 0 (task 0, copy 1 of 1): fp16, expected int8");
  const std::uint32_t sixteen = 16;
  CHECK(field_report(golden, &CNA_CBUF_CON0::DATA_BANK, sixteen).message ==
        "CNA_CBUF_CON0.DATA_BANK: the expected value 16 does not fit the field (bits 3:0)");
  CHECK(field_report(golden, &CNA_WEIGHT_SIZE0::WEIGHT_BYTES, 4096).message ==
        "CNA_WEIGHT_SIZE0 is not written in the program (expected CNA_WEIGHT_SIZE0.WEIGHT_BYTES 4096)");
}

TEST_CASE("testing: a register array's element and the op-enable mask are checked by their names") {
  using testing::element;
  using testing::field_report;
  using testing::register_report;
  CHECK(register_report(ew_operands, DPU_EW_OP_VALUE{.EW_OPERAND = 0x3c00}, element{1}).ok);
  CHECK(register_report(ew_operands, DPU_EW_OP_VALUE{.EW_OPERAND = 0x3c00}, element{0}).message ==
        "DPU_EW_OP_VALUE_0 at entry 0 (task 0, copy 1 of 1): EW_OPERAND_0 1073741824, expected 15360");
  CHECK(field_report(ew_operands, &DPU_EW_OP_VALUE::EW_OPERAND, 15360, element{0}).message ==
        "DPU_EW_OP_VALUE_0.EW_OPERAND_0 at entry 0 (task 0, copy 1 of 1): 1073741824, expected 15360");
  CHECK(register_report(ew_operands, DPU_EW_OP_VALUE{.EW_OPERAND = 1}, element{2}).message ==
        "DPU_EW_OP_VALUE_2 is not written in the program (expected EW_OPERAND_2=1)");
  const std::string no_element = register_report(ew_operands, DPU_EW_OP_VALUE{.EW_OPERAND = 1}, element{8}).message;
  CHECK(no_element.starts_with("DPU_EW_OP_VALUE: the expected value does not encode: "));
  CHECK(no_element.find("array-element: ") != std::string::npos);
  CHECK(no_element.find("(DPU_EW_OP_VALUE = 8)") != std::string::npos);
  CHECK(field_report(ew_operands, &DPU_EW_OP_VALUE::EW_OPERAND, 1, element{8}).message ==
        "DPU_EW_OP_VALUE has no element 8 (elements 0 to 7)");
  // The op-enable entry (0x0081, 0x0008) holds CNA | CORE | DPU.
  CHECK(register_report(ew_operands, GLOBAL_OPERATION_ENABLE{.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1}).ok);
  CHECK(register_report(ew_operands, GLOBAL_OPERATION_ENABLE{.DPU_OP_EN = 1, .DPU_RDMA_OP_EN = 1}).message ==
        "GLOBAL_OPERATION_ENABLE at entry 2 (task 0, copy 1 of 1): CNA_OP_EN 1, expected 0; CORE_OP_EN 1, expected 0; "
        "DPU_RDMA_OP_EN 0, expected 1");
  CHECK(field_report(ew_operands, &GLOBAL_OPERATION_ENABLE::PPU_OP_EN, 1).message ==
        "GLOBAL_OPERATION_ENABLE.PPU_OP_EN at entry 2 (task 0, copy 1 of 1): 0, expected 1");
  // The macros take the element and the task after the value.
  CHECK_REGISTER(ew_operands, DPU_EW_OP_VALUE{.EW_OPERAND = 0x40000000}, element{0}, in_task{0});
  CHECK_FIELD(ew_operands, DPU_EW_OP_VALUE::EW_OPERAND, 0x3c00, element{1});
  CHECK_FIELD(ew_operands, GLOBAL_OPERATION_ENABLE::DPU_OP_EN, 1, in_task{0});
}

TEST_CASE("testing: an expected entry (a capture's target, value, offset) is checked as its register") {
  using testing::register_report;
  constexpr std::uint16_t cna = 0x0201;
  CHECK(register_report(golden, entry::make(cna, 0x000000b1u, std::uint16_t{0x1040})).ok);
  CHECK(register_report(golden, entry::make(cna, 0x000000b2u, std::uint16_t{0x1040})).message ==
        "CNA_CBUF_CON0 at entry 0 (task 0, copy 1 of 1): DATA_BANK 1, expected 2");
  CHECK(register_report(golden, entry::make(std::uint16_t{0x0081}, 0x0000001du, std::uint16_t{0x0008})).message ==
        "GLOBAL_OPERATION_ENABLE at entry 2 (task 0, copy 1 of 1): DPU_RDMA_OP_EN 0, expected 1");
  // Bits no field defines are compared too; a register the map lacks is named by its place.
  std::vector<entry> odd = golden;
  odd[0] = entry::make(cna, 0x800000b1u, std::uint16_t{0x1040});
  odd.insert(odd.begin(), entry::make(cna, 0x5u, std::uint16_t{0x1ffc}));
  CHECK(register_report(odd, CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11}).message ==
        "CNA_CBUF_CON0 at entry 1 (task 0, copy 1 of 1): bits no field defines 0x80000000, expected 0x00000000");
  CHECK(register_report(odd, entry::make(cna, 0x6u, std::uint16_t{0x1ffc})).message ==
        "register 0x1ffc of target 0x0201 at entry 0 (task 0, copy 1 of 1): value 0x00000005, expected 0x00000006");
  CHECK(register_report(golden, entry::make(cna, 0x6u, std::uint16_t{0x1ffc})).message ==
        "register 0x1ffc of target 0x0201 is not written in the program (expected 0x00000006)");
}

TEST_CASE("testing: entries, programs and errors print decoded where doctest shows a value") {
  auto text = [](const auto& v) { return std::string(doctest::toString(v).c_str()); };
  CHECK(text(golden[0]) ==
        "CNA CNA_CBUF_CON0 0x000000b1 DATA_BANK=1 WEIGHT_BANK=11 FC_DATA_BANK=0 DATA_REUSE=0 WEIGHT_REUSE=0 "
        "(0x0201000000b11040)");
  const program_view one_task{.entries = golden, .slots = {}, .tasks = {}};
  CHECK(text(one_task) ==
        "3 entries, 1 task\n"
        "task 0:\n"
        "  0 CNA CNA_CBUF_CON0 0x000000b1 DATA_BANK=1 WEIGHT_BANK=11 FC_DATA_BANK=0 DATA_REUSE=0 "
        "WEIGHT_REUSE=0\n"
        "  1 CNA CNA_DATA_SIZE1 0x003f0040 DATAIN_CHANNEL=64 DATAIN_CHANNEL_REAL=63\n"
        "  2 0x0081 OP_ENABLE 0x0000000d CNA_OP_EN=1 CORE_OP_EN=1 DPU_OP_EN=1 DPU_RDMA_OP_EN=0 "
        "PPU_OP_EN=0 PPU_RDMA_OP_EN=0");
  CHECK(text(two_tasks).starts_with("12 entries, 2 tasks\ntask 0:\n  0 CNA CNA_CBUF_CON0 "));
  CHECK(text(two_tasks).find("\ntask 1:\n  6 CNA CNA_CBUF_CON0 ") != std::string::npos);
  const error e = make_error(rules::field_range, "CNA_CBUF_CON0", "DATA_BANK", 16);
  CHECK(text(e).starts_with("field-range: "));
  CHECK(text(e).find("(CNA_CBUF_CON0.DATA_BANK = 16)") != std::string::npos);
}

TEST_CASE("testing: CHECK_BREAKS passes on the rule's error only, and says what happened instead") {
  const status ok{};
  const status other = make_error(rules::k_alignment, "matmul", "K", 100);
  const status expected = make_error(rules::n_alignment, "matmul", "N", 100);
  const auto succeeded = testing::detail::breaks_report(ok, rules::n_alignment);
  CHECK_FALSE(succeeded.ok);
  CHECK(succeeded.message == "it succeeded; it should break n-alignment");
  const auto wrong = testing::detail::breaks_report(other, rules::n_alignment);
  CHECK_FALSE(wrong.ok);
  CHECK(wrong.message.find("it broke k-alignment") == 0);
  CHECK(wrong.message.find("\nit should break n-alignment") != std::string::npos);
  CHECK(testing::detail::breaks_report(expected, rules::n_alignment).ok);
  CHECK_BREAKS(expected, rules::n_alignment);
  CHECK_BREAKS(result<int>{make_error(rules::shape_nonzero, "ew")}, rules::shape_nonzero);
}
