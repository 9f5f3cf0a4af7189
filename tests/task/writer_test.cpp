// The writer's operand binding: the slots an op writes for its own roles land in the buffers
// and at the offsets it is bound to, whichever way they are written (an address register, a
// raw entry, a copied body); the links between tasks and unbound roles stay as they are.
#include <regcmd/testing/doctest.hpp>

#include <array>
#include <cstdint>

#include <regcmd/task/operand_binding.hpp>
#include <regcmd/task/writer.hpp>
#include <regcmd/registers/cna.hpp>
#include <regcmd/registers/dpu.hpp>

using namespace regcmd;

namespace {
constexpr auto enable = reg::GLOBAL_OPERATION_ENABLE{.CNA_OP_EN = 1, .DPU_OP_EN = 1};

// One task: the feature read at 16 (32 bytes), the weights at 0 (64 bytes), the output at 8.
void one_task(program_writer& w) {
  w.begin_task();
  w.put_slot<reg::CNA_FEATURE_DATA_ADDR>(operand_role::feature, 16, 32);
  w.put_slot<reg::CNA_DCOMP_ADDR0>(operand_role::weight, 0, 64);
  w.put_slot<reg::DPU_DST_BASE_ADDR>(operand_role::output, 8, 48);
  w.end_task(enable, dpu_done_interrupts);
}
}  // namespace

TEST_CASE("operand binding: unbound, every role keeps its own buffer and offset") {
  program<32, 2, 8> p;
  REQUIRE(fill(p, [](program_writer& w) { one_task(w); }).ok());
  REQUIRE(p.slot_count == 3);
  CHECK(p.slots[0].role == operand_role::feature);
  CHECK(p.slots[0].offset == 16);
  CHECK(p.slots[1].role == operand_role::weight);
  CHECK(p.slots[1].offset == 0);
  CHECK(p.slots[2].role == operand_role::output);
  CHECK(p.slots[2].offset == 8);
  CHECK_FALSE(operand_binding{}.moves());
}

TEST_CASE("operand binding: bound roles move to their buffer and offset, while extents, unbound roles and task links stay") {
  program<64, 4, 16> p;
  REQUIRE(fill(p, [](program_writer& w) {
            w.bind(operand_binding{}(operand_role::feature, operand_role::intermediate, 4096)(operand_role::output,
                                                                                            operand_role::output, 640));
            one_task(w);
            one_task(w);
            w.bind({});
            one_task(w);
          }).ok());
  // task 0: feature -> intermediate at 4096 + 16, weight as it was, output at 640 + 8
  REQUIRE(p.slot_count == 3 * 3 + 2);
  CHECK(p.slots[0] == slot{p.slots[0].entry, operand_role::intermediate, 4112, 32});
  CHECK(p.slots[1] == slot{p.slots[1].entry, operand_role::weight, 0, 64});
  CHECK(p.slots[2] == slot{p.slots[2].entry, operand_role::output, 648, 48});
  // task 0's link to task 1: this program's regcmd buffer at task 1's first entry
  CHECK(p.slots[3].role == operand_role::regcmd);
  CHECK(p.slots[3].offset == p.tasks[1].first * 8);
  CHECK(p.slots[4].offset == 4112);
  // after bind({}), the third task's slots are its own again
  CHECK(p.slots[8] == slot{p.slots[8].entry, operand_role::feature, 16, 32});
  CHECK(p.slots[10] == slot{p.slots[10].entry, operand_role::output, 8, 48});
}

TEST_CASE("operand binding: a copied body's slots and a raw address entry are bound too") {
  program<32, 2, 8> source;
  REQUIRE(fill(source, [](program_writer& w) { one_task(w); }).ok());
  const task& k = source.tasks[0];
  const std::span<const entry> body(source.entries.data() + k.first, body_end(k) - k.first);
  const std::span<const slot> slots(source.slots.data(), source.slot_count);
  program<32, 2, 8> copy;
  REQUIRE(fill(copy, [&](program_writer& w) {
            w.bind(operand_binding{}(operand_role::weight, operand_role::weight, 1024));
            w.begin_task();
            w.put_body(body, slots);
            w.put_raw_slot(source.entries[slots[0].entry], operand_role::feature, 2, 4);
            w.end_task(enable, dpu_done_interrupts);
          }).ok());
  REQUIRE(copy.slot_count == 4);
  CHECK(copy.slots[0].offset == 16);
  CHECK(copy.slots[1] == slot{slots[1].entry, operand_role::weight, 1024, 64});
  CHECK(copy.slots[2].offset == 8);
  CHECK(copy.slots[3].role == operand_role::feature);
  CHECK(copy.slots[3].offset == 2);
}
