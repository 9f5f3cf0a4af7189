// The task skeleton: a task description written in the canonical order, the op-enable and
// the completion interrupts derived from the stages present, the defaults, and delta tasks
// between descriptions of different ops.
#include <regcmd/testing/doctest.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <regcmd/task/delta.hpp>
#include <regcmd/task/emit_task.hpp>
#include <regcmd/task/tail.hpp>
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;
using namespace regcmd::reg;

TEST_CASE("a pooling task: PPU and PPU_RDMA in ascending offsets, enable 0x60, PPU interrupts") {
  // AB-POOL618's max pooling of a 6 x 7 x 8 fp16 cube, 2 x 2 window, stride 1, with the
  // register packers of the mainline map (ops-reference §5.2, §5.3: DST_SURF_STRIDE
  // field(35), DATA_FORMAT INDEX_ADD(35) | fp16, SRC_LINE_STRIDE 0x70, SRC_SURF_STRIDE 0x2a0).
  task_desc t;
  t.ppu = ppu_stage{.cube_in_width = {.CUBE_IN_WIDTH = 6},
                    .cube_in_height = {.CUBE_IN_HEIGHT = 5},
                    .cube_in_channel = {.CUBE_IN_CHANNEL = 7},
                    .cube_out_width = {.CUBE_OUT_WIDTH = 5},
                    .cube_out_height = {.CUBE_OUT_HEIGHT = 4},
                    .cube_out_channel = {.CUBE_OUT_CHANNEL = 7},
                    .operation_mode = {.POOLING_METHOD = 1, .FLYING_MODE = 1},
                    .kernel = {.KERNEL_WIDTH = 1, .KERNEL_HEIGHT = 1},
                    .output = {operand_role::output, 0, 5 * 4 * 16},
                    .dst_surf_stride = {.DST_SURF_STRIDE = 35},
                    .data_format = {.PROC_PRECISION = precision::fp16, .INDEX_ADD = 35}};
  t.ppu_rdma = ppu_rdma_stage{.cube_in_width = {.CUBE_IN_WIDTH = 6},
                              .cube_in_height = {.CUBE_IN_HEIGHT = 5},
                              .cube_in_channel = {.CUBE_IN_CHANNEL = 7},
                              .source = {operand_role::feature, 0, 6 * 7 * 16},
                              .src_line_stride = {.SRC_LINE_STRIDE = 7},   // 16-byte units: 0x70
                              .src_surf_stride = {.SRC_SURF_STRIDE = 42},  // 0x2a0
                              .data_format = {.IN_PRECISION = 2}};
  program<32, 1> p;
  REQUIRE(fill(p, [&](program_writer& w) { emit_task(w, t); }).ok());
  const std::array<std::uint64_t, 30> expected{
      0x4001'0000'000e'6004, 0x4001'0000'0006'600c, 0x4001'0000'0005'6010, 0x4001'0000'0007'6014,
      0x4001'0000'0005'6018, 0x4001'0000'0004'601c, 0x4001'0000'0007'6020, 0x4001'0000'0011'6024,
      0x4001'0000'0101'6034, 0x4001'0000'0000'6038, 0x4001'0000'0000'603c, 0x4001'0000'0000'6040,
      0x4001'0000'0000'6044, 0x4001'0000'0000'6048, 0x4001'0000'0000'6070, 0x4001'0000'0230'607c,
      0x4001'0000'0232'6084, 0x4001'0000'0003'60dc,  // the PPU: 18 writes, as the vendor's maxpool
      0x8001'0000'000e'7004, 0x8001'0000'0006'700c, 0x8001'0000'0005'7010, 0x8001'0000'0007'7014,
      0x8001'0000'0000'701c, 0x8001'0000'0070'7024, 0x8001'0000'02a0'7028, 0x8001'0000'0002'7030,  // 8
      0x0101'0000'0000'0010, 0x0101'0000'0000'0014, 0x0041'0000'0000'0000, 0x0081'0000'0060'0008};
  std::vector<entry> expected_entries;
  for (std::uint64_t bits : expected) expected_entries.push_back(entry::from_bits(bits));
  CHECK_REGCMD_EQ(p, expected_entries);
  CHECK(p.tasks[0].enable_mask == 0x60);
  CHECK(p.tasks[0].int_mask == 0xc00);  // PPU_0 | PPU_1
  REQUIRE(p.slot_count == 2);
  CHECK(p.slots[0] == slot{14, operand_role::output, 0, 320});
  CHECK(p.slots[1] == slot{22, operand_role::feature, 0, 672});
}

TEST_CASE("a CNA + CORE + DPU + DPU_RDMA task with a bias read: enable 0x1d, the BS operand a slot") {
  const matmul_geometry g =
      resolve(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 32}).value();
  task_desc t = matmul::make_task(g);
  t.dpu_rdma = dpu_rdma_stage{.brdma_cfg = {.BRDMA_DATA_USE = 1},
                              .bs_operand = address{operand_role::ew_operand, 0, 32 * 4},
                              .feature_mode = {.PROC_PRECISION = precision::fp16, .IN_PRECISION = precision::fp16}};
  program<128, 1> p;
  REQUIRE(fill(p, [&](program_writer& w) { emit_task(w, t); }).ok());
  // 104 matmul writes and 14 DPU_RDMA ones: S_POINTER, the cube (3), BRDMA_CFG, BS_BASE_ADDR,
  // NRDMA_CFG, ERDMA_CFG (disabled: 0x1), FEATURE_MODE_CFG, SRC_DMA, SURF_NOTCH, PAD, WEIGHT
  // (0x01010101) and EW_SURF_NOTCH; no source, BN or EW address.
  CHECK(p.entry_count == 104 + 14 + 4);
  CHECK(p.tasks[0].enable_mask == 0x1d);      // Mesa's conv value (fact sheet §5.2)
  CHECK(p.tasks[0].int_mask == 0x300);
  REQUIRE(p.slot_count == 4);
  CHECK(p.entries[p.slots[3].entry].bits() == 0x2001'0000'0000'5020);
  CHECK(p.entries[p.slots[3].entry + 1].bits() == 0x2001'0000'0000'5028);  // NRDMA_CFG
  CHECK(p.entries[p.slots[3].entry + 2].bits() == 0x2001'0000'0001'5034);  // ERDMA disabled
  CHECK(p.entries[p.slots[3].entry - 1].bits() == 0x2001'0000'0002'501c);  // BRDMA_DATA_USE 1
}

TEST_CASE("the complete DPU write list and the vendor's element-wise one differ by 14 registers") {
  const matmul_geometry g =
      resolve(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 32}).value();
  task_desc full = matmul::make_task(g);
  full.cna.reset();
  full.core.reset();
  task_desc short_list = full;
  short_list.dpu->complete = false;
  program<64, 1> a, b;
  REQUIRE(fill(a, [&](program_writer& w) { emit_task(w, full); }).ok());
  REQUIRE(fill(b, [&](program_writer& w) { emit_task(w, short_list); }).ok());
  CHECK(a.tasks[0].regcfg_amount() == 51);  // the DPU's 51 of the vendor's matmul and Mesa's conv
  CHECK(b.tasks[0].regcfg_amount() == 37);  // without OFFSET_PEND, 0x40C4 and the 12 LUT registers
  CHECK(a.tasks[0].enable_mask == 0x08);
}

namespace {
// What a register group holds after `entries` ran, the PC's tail registers aside (they
// link tasks, and a delta task's tail links a shorter one).
std::map<std::pair<std::uint16_t, std::uint16_t>, std::uint32_t> registers_after(std::span<const entry> entries) {
  std::map<std::pair<std::uint16_t, std::uint16_t>, std::uint32_t> state;
  for (const entry& e : entries)
    if (kind_of(e) == entry_kind::register_write && e.target() != static_cast<std::uint16_t>(block_id::pc))
      state[{e.target(), e.offset()}] = e.value();
  return state;
}
}  // namespace

TEST_CASE("a delta task between two different ops leaves the registers the full task would") {
  // a matmul task (writing the intermediate buffer), then an SDP task written as a delta on it
  const matmul_geometry mg =
      resolve(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 8, .K = 64, .N = 32}).value();
  const ew_geometry eg = resolve_ew(ew_spec{.op = ew_op::mul, .M = 8, .N = 32, .layout = operand_layout::row_major}).value();
  program<256, 3, 12> full, delta;
  auto body_of = [](const program<256, 3, 12>& p, std::uint32_t t) {
    const task& k = p.tasks[t];
    std::uint32_t first_slot = 0;
    while (first_slot < p.slot_count && p.slots[first_slot].entry < k.first) ++first_slot;
    std::uint32_t end_slot = first_slot;
    while (end_slot < p.slot_count && p.slots[end_slot].entry < body_end(k)) ++end_slot;
    return std::pair{std::span<const entry>(p.entries.data() + k.first, body_end(k) - k.first),
                     std::span<const slot>(p.slots.data() + first_slot, end_slot - first_slot)};
  };
  REQUIRE(fill(full, [&](program_writer& w) {
    w.bind(operand_binding{}(operand_role::output, operand_role::intermediate));
    emit_task(w, matmul::make_task(mg));
    w.bind({});
    emit_task(w, sdp::make_task(eg, eg.task_shape(0)));
  }).ok());
  // the bodies, their slots relative to them, as emit_copy takes them
  auto relative = [](std::span<const slot> slots, std::uint32_t first) {
    std::array<slot, 6> out{};
    for (std::size_t i = 0; i < slots.size(); ++i) {
      out[i] = slots[i];
      out[i].entry -= first;
    }
    return out;
  };
  const auto [m_entries, m_slots] = body_of(full, 0);
  const auto [e_entries, e_slots] = body_of(full, 1);
  const auto m_rel = relative(m_slots, full.tasks[0].first), e_rel = relative(e_slots, full.tasks[1].first);
  const task_body matmul_body{m_entries, std::span<const slot>(m_rel.data(), m_slots.size()),
                              tail_of(full.view().entries, full.tasks[0]).op_enable, full.tasks[0].int_mask};
  const task_body ew_body{e_entries, std::span<const slot>(e_rel.data(), e_slots.size()),
                          tail_of(full.view().entries, full.tasks[1]).op_enable, full.tasks[1].int_mask};
  REQUIRE(fill(delta, [&](program_writer& w) {
    emit_copy(w, matmul_body);
    emit_copy(w, ew_body, &matmul_body);
  }).ok());
  CHECK(delta.tasks[1].count < full.tasks[1].count);  // the registers both write alike are left out
  CHECK(delta.tasks[1].enable_mask == 0x18);
  // the register state after the delta equals the state after the full SDP task, on top of the matmul
  const auto after_full = registers_after(std::span<const entry>(full.entries.data(), full.entry_count));
  const auto after_delta = registers_after(std::span<const entry>(delta.entries.data(), delta.entry_count));
  CHECK(after_full == after_delta);
  // and every SDP address is still a slot (DST_BASE_ADDR, SRC_BASE_ADDR, EW_BASE_ADDR)
  std::size_t sdp_slots = 0;
  for (std::uint32_t i = 0; i < delta.slot_count; ++i) sdp_slots += delta.slots[i].entry >= delta.tasks[1].first;
  CHECK(sdp_slots == 3);
}
