// The rules on assembled programs, on hand-written programs: each one broken once.
#include <regcmd/testing/doctest.hpp>

#include <string_view>
#include <vector>

#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;
using namespace regcmd::reg;

namespace {
constexpr GLOBAL_OPERATION_ENABLE matmul_blocks{.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1};

// A run-time program built by `body`, then validated.
template <class Body>
status check(Body&& body) {
  program<64, 2> p;
  const status s = fill(p, [&](program_writer& w) { body(w); });
  if (!s) return s;
  return validate(p.view());
}

std::string_view id(const status& s) { return s.ok() ? "ok" : s.err().id(); }
}  // namespace

TEST_CASE("a minimal program (one task, a valid CBUF split, one feature slot) breaks no rule") {
  CHECK(id(check([](program_writer& w) {
          w.begin_task();
          w.put(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
          w.put_slot<CNA_FEATURE_DATA_ADDR>(operand_role::feature, 0, 64);
          w.end_task(matmul_blocks, dpu_done_interrupts);
        })) == "ok");
}

TEST_CASE("bank-split: DATA_BANK + WEIGHT_BANK = 12 with a weight bank, the last write of CBUF_CON0 counting") {
  CHECK_BREAKS(check([](program_writer& w) {
          w.begin_task();
          w.put(CNA_CBUF_CON0{.DATA_BANK = 2, .WEIGHT_BANK = 11});
          w.end_task(matmul_blocks, dpu_done_interrupts);
        }), rules::bank_split);
  // 0x0c, below the 0x1b floor: DATA_BANK 12 leaves no weight bank
  CHECK_BREAKS(check([](program_writer& w) {
          w.begin_task();
          w.put(CNA_CBUF_CON0{.DATA_BANK = 12, .WEIGHT_BANK = 0});
          w.end_task(matmul_blocks, dpu_done_interrupts);
        }), rules::bank_split);
  // a later copy wins: the NPU uses the last write of a register
  CHECK_BREAKS(check([](program_writer& w) {
          w.begin_task();
          w.put(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
          w.put(CNA_CBUF_CON0{.DATA_BANK = 3, .WEIGHT_BANK = 10});
          w.end_task(matmul_blocks, dpu_done_interrupts);
        }), rules::bank_split);
}

TEST_CASE("tail-complete: no preamble or op-enable inside a task body") {
  CHECK_BREAKS(check([](program_writer& w) {
          w.begin_task();
          w.put_raw(op_enable_preamble());
          w.end_task(matmul_blocks, dpu_done_interrupts);
        }), rules::tail_complete);
}

TEST_CASE("address-slots: an address register is never a literal") {
  CHECK_BREAKS(check([](program_writer& w) {
          w.begin_task();
          w.put(CNA_FEATURE_DATA_ADDR{.FEATURE_BASE_ADDR = 0x1000'0000});
          w.end_task(matmul_blocks, dpu_done_interrupts);
        }), rules::address_slots);
  CHECK_BREAKS(check([](program_writer& w) {
          w.begin_task();
          w.put(DPU_DST_BASE_ADDR{});  // 0, but not a slot: bind would never patch it
          w.end_task(matmul_blocks, dpu_done_interrupts);
        }), rules::address_slots);
}

TEST_CASE("precision-consistent, int8-output-int32, fp16-output-stage, fp16-output-atom8") {
  CHECK_BREAKS(check([](program_writer& w) {
          w.begin_task();
          w.put(CNA_CONV_CON1{.IN_PRECISION = precision::fp16, .PROC_PRECISION = precision::fp16});
          w.put(DPU_DATA_FORMAT{.PROC_PRECISION = precision::int8, .IN_PRECISION = precision::int8, .OUT_PRECISION = precision::int32});
          w.end_task(matmul_blocks, dpu_done_interrupts);
        }), rules::precision_consistent);
  CHECK_BREAKS(check([](program_writer& w) {
          w.begin_task();
          w.put(CNA_CONV_CON1{.IN_PRECISION = precision::int8, .PROC_PRECISION = precision::int8});
          w.put(DPU_DATA_FORMAT{.PROC_PRECISION = precision::int8, .IN_PRECISION = precision::int8, .OUT_PRECISION = precision::int16});
          w.end_task(matmul_blocks, dpu_done_interrupts);
        }), rules::int8_output_int32);
  auto fp16_out = [](bool bypass, bool to_fp16, std::uint32_t size_e) {
    return [=](program_writer& w) {
      w.begin_task();
      w.put(CNA_CONV_CON1{.IN_PRECISION = precision::fp16, .PROC_PRECISION = precision::fp16});
      w.put(DPU_DATA_FORMAT{.PROC_PRECISION = precision::fp16, .IN_PRECISION = precision::fp16,
                            .OUT_PRECISION = precision::fp16});
      w.put(DPU_BS_CFG{.BS_BYPASS = bypass, .BS_ALU_BYPASS = 1, .BS_MUL_BYPASS = 1, .BS_RELU_BYPASS = 1});
      w.put(DPU_BS_OW_CFG{.OD_BYPASS = 1, .SIZE_E_0 = size_e, .SIZE_E_1 = size_e, .SIZE_E_2 = size_e});
      w.put(DPU_OUT_CVT_SCALE{.OUT_CVT_SCALE = 1, .FP32TOFP16_EN = to_fp16});
      w.end_task(matmul_blocks, dpu_done_interrupts);
    };
  };
  CHECK(id(check(fp16_out(true, true, 1))) == "ok");
  CHECK_BREAKS(check(fp16_out(false, true, 1)), rules::fp16_output_stage);
  CHECK_BREAKS(check(fp16_out(true, false, 1)), rules::fp16_output_stage);
  CHECK_BREAKS(check(fp16_out(true, true, 0)), rules::fp16_output_atom8);
}

TEST_CASE("small-k-bank-split, k-single-op-max and n-max on the registers") {
  auto op = [](std::uint32_t K, std::uint32_t data_banks, std::uint32_t N) {
    return [=](program_writer& w) {
      w.begin_task();
      w.put(CNA_CONV_CON1{.IN_PRECISION = precision::fp16, .PROC_PRECISION = precision::fp16});
      w.put(CNA_DATA_SIZE1{.DATAIN_CHANNEL = K, .DATAIN_CHANNEL_REAL = K - 1});
      w.put(CNA_CBUF_CON0{.DATA_BANK = data_banks, .WEIGHT_BANK = 12 - data_banks});
      w.put(CORE_DATAOUT_SIZE_1{.DATAOUT_CHANNEL = N - 1});
      w.end_task(matmul_blocks, dpu_done_interrupts);
    };
  };
  CHECK(id(check(op(64, 1, 64))) == "ok");
  CHECK_BREAKS(check(op(64, 2, 64)), rules::small_k_bank_split);
  CHECK_BREAKS(check(op(10784, 1, 64)), rules::k_single_op_max);
  CHECK_BREAKS(check(op(512, 1, 8208)), rules::n_max);
}

TEST_CASE("task-interrupts: the mask must be pair-complete, and the last block's pair") {
  CHECK_BREAKS(check([](program_writer& w) {
          w.begin_task();
          w.end_task(matmul_blocks, 0x100);
        }), rules::task_interrupts);
  // Regression (fuzz_validate): a matmul waiting for the PPU pair validated; the kernel
  // compares the status with the mask exactly, and a DPU op never raises 0xc00
  CHECK_BREAKS(check([](program_writer& w) {
          w.begin_task();
          w.end_task(matmul_blocks, 0xc00);
        }), rules::task_interrupts);
  CHECK_BREAKS(check([](program_writer& w) {
          w.begin_task();
          w.end_task(GLOBAL_OPERATION_ENABLE{.DPU_OP_EN = 1, .PPU_OP_EN = 1}, 0x300);
        }), rules::task_interrupts);
  CHECK(id(check([](program_writer& w) {
          w.begin_task();
          w.end_task(GLOBAL_OPERATION_ENABLE{.DPU_OP_EN = 1, .PPU_OP_EN = 1}, 0xc00);
        })) == "ok");
}

// Regressions found by fuzz_validate: programs edited by hand that validated.
TEST_CASE("address-slots: a slot's role must be one its register can address") {
  const auto mm = build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64}).value();
  auto with_role = [&](operand_role from, operand_role to) {
    heap_code edited = mm.code;
    for (slot& s : edited.slots)
      if (s.role == from) s.role = to;
    return id(validate(edited.view()));
  };
  // the DPU's output into the program's own regcmd buffer, or into the features it reads
  CHECK(with_role(operand_role::output, operand_role::regcmd) == "address-slots");
  CHECK(with_role(operand_role::output, operand_role::feature) == "address-slots");
  CHECK(with_role(operand_role::output, operand_role::intermediate) == "ok");
  CHECK(with_role(operand_role::weight, operand_role::feature) == "address-slots");
  CHECK(with_role(operand_role::feature, operand_role::output) == "address-slots");
}

TEST_CASE("task-alignment: a task starts on an even entry") {
  const auto mm = build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64}).value();
  heap_code moved = mm.code;  // a zero entry before the task: it starts at entry 1
  moved.entries.insert(moved.entries.begin(), entry{});
  moved.tasks[0].first = 1;
  for (slot& s : moved.slots) s.entry += 1;
  CHECK_BREAKS(validate(moved.view()), rules::task_alignment);
  moved.entries.insert(moved.entries.begin(), entry{});  // two: a whole 16-byte word
  moved.tasks[0].first = 2;
  for (slot& s : moved.slots) s.entry += 1;
  CHECK(id(validate(moved.view())) == "ok");
}

TEST_CASE("writer rules: capacity and task structure") {
  program<4, 1> small;
  const status full = fill(small, [](program_writer& w) {
    w.begin_task();
    w.put(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
    w.end_task(matmul_blocks, dpu_done_interrupts);
  });
  CHECK(id(full) == "program-capacity");
  program<16, 1> p;
  CHECK(id(fill(p, [](program_writer& w) { w.end_task(matmul_blocks, dpu_done_interrupts); })) == "task-structure");
  CHECK(id(fill(p, [](program_writer& w) { w.begin_task(); })) == "task-structure");
}

TEST_CASE("patch_slots writes IOVA + offset and refuses addresses past 32 bits") {
  auto mm = build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64}).value();
  std::array<entry, 108> copy{};
  for (std::size_t i = 0; i < 108; ++i) copy[i] = mm.code.entries[i];
  operand_addresses base{};
  base[static_cast<std::size_t>(operand_role::feature)] = 0x1000'0000;
  base[static_cast<std::size_t>(operand_role::weight)] = 0x2000'0000;
  base[static_cast<std::size_t>(operand_role::output)] = 0x3000'0000;
  REQUIRE(patch_slots(copy, mm.code.view().slots, base).ok());
  CHECK(copy[21].bits() == 0x0201'1000'0000'1070);
  CHECK(copy[30].bits() == 0x0201'2000'0000'1110);
  CHECK(copy[57].bits() == 0x1001'3000'0000'4020);
  base[static_cast<std::size_t>(operand_role::output)] = 0x1'0000'0000;
  CHECK_BREAKS(patch_slots(copy, mm.code.view().slots, base), rules::iova_32bit);
}

// Regressions of hand-edited programs that validated before (issue of the attack on regcmd:
// items 5-7). Each edit below passed every check until the rule that now refuses it.
TEST_CASE("chain-link: a tail's next-task slot must address the next task, with its length") {
  auto built = build(plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 8, .K = 8192, .N = 64}, {.k_slice = 2048}});
  REQUIRE(built.ok());
  REQUIRE(built.value().view().tasks.size() == 4);
  CHECK(id(validate(built.value().view())) == "ok");
  // every link pointed back at task 0: task 0 would run again, tasks 1-3 never
  heap_code looped = built.value().code;
  for (slot& s : looped.slots)
    if (s.role == operand_role::regcmd) s.offset = 0;
  CHECK_BREAKS(validate(looped.view()), rules::chain_link);
  CHECK_BREAKS(validate_structure(looped.view()), rules::chain_link);
  // the right task with a wrong length, and a link of another role
  heap_code shorter = built.value().code, elsewhere = built.value().code;
  for (slot& s : shorter.slots)
    if (s.role == operand_role::regcmd) s.extent -= 16;
  for (slot& s : elsewhere.slots)
    if (s.role == operand_role::regcmd) s.role = operand_role::next_program;
  CHECK_BREAKS(validate(shorter.view()), rules::chain_link);
  CHECK_BREAKS(validate(elsewhere.view()), rules::chain_link);
}

TEST_CASE("tail-complete: a task range that wraps 32 bits is out of bounds, not a short task") {
  const auto mm = build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64}).value();
  heap_code wrapped = mm.code;
  // first + count = 0x1'0000'0070 wraps to 0x70, inside the 108 entries in 32 bits
  wrapped.tasks[0].first = 0xffff'fff0u;
  wrapped.tasks[0].count = 0x80;
  CHECK_BREAKS(validate(wrapped.view()), rules::tail_complete);
  CHECK_BREAKS(validate_structure(wrapped.view()), rules::tail_complete);
}

TEST_CASE("task-length: every task's fetch amount fits PC_REGISTER_AMOUNTS, linked or not") {
  // 131072 entries are 65536 words, amount 65535: the longest a task can be
  std::vector<entry> entries(140'004);
  const std::vector<slot> no_slots;
  for (const std::uint32_t count : {131'072u, 131'073u, 140'004u}) {
    CAPTURE(count);
    const std::vector<task> one{task{0, count, 0xd, dpu_done_interrupts}};
    const program_view v{entries, no_slots, one, true, false};
    const std::string_view rule = id(validate(v));
    if (count == 131'072u) CHECK(rule != "task-length");  // refused later, for its empty tail
    else CHECK(rule == "task-length");
  }
}

TEST_CASE("program-empty: a program of no tasks is refused, with or without entries") {
  const auto mm = build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64}).value();
  const program_view whole = mm.code.view();
  const program_view no_tasks{whole.entries, whole.slots, {}, true, false};
  CHECK_BREAKS(validate(no_tasks), rules::program_empty);
  CHECK_BREAKS(validate_structure(no_tasks), rules::program_empty);
  CHECK_BREAKS(validate(program_view{}), rules::program_empty);
  CHECK(validate(whole).ok());
}

namespace {
// The slot of `role` with its extent one byte short: validate must name the register and
// the bytes its DMA touches.
struct short_slot {
  std::string_view id, register_name;
  std::uint64_t touched;
};
short_slot shorten(const heap_code& code, operand_role role) {
  heap_code edited = code;
  for (slot& s : edited.slots)
    if (s.role == role) s.extent -= 1;
  const status st = validate(edited.view());
  if (st.ok()) return {"ok", {}, 0};
  return {st.err().id(), st.err().detail, st.err().value};
}
}  // namespace

// Regression: a slot's extent was trusted. An output slot claiming 0 bytes at offset 4096
// validated; bound to a 4 KiB buffer, the DPU wrote the whole output past its end. The
// bytes below are worked out by hand from the registers (reference "Key registers").
TEST_CASE("slot-extent: each slot covers the bytes its DMA touches, by the task's registers") {
  // surface fp16 -> fp32, M = 4, K = 64, N = 64: features in K/8 = 8 surfaces of 4 rows of
  // 16 bytes (SURF_STRIDE + LINE_STRIDE = 0 + 4 units of 16 bytes apart): 512; weights
  // K x N x 2 = 8192; outputs in 64 x 4 / 16 = 16 surfaces of 4 atoms: 1024.
  const auto surface = build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64,
                                     .layout = operand_layout::surface}).value();
  CHECK(id(validate(surface.code.view())) == "ok");
  heap_code lying = surface.code;
  for (slot& s : lying.slots)
    if (s.role == operand_role::output) s.extent = 0, s.offset = 4096;
  CHECK_BREAKS(validate(lying.view()), rules::slot_extent);
  const short_slot feature = shorten(surface.code, operand_role::feature);
  CHECK(feature.id == "slot-extent");
  CHECK(feature.register_name == "CNA_FEATURE_DATA_ADDR");
  CHECK(feature.touched == 512);
  CHECK(shorten(surface.code, operand_role::weight).touched == 8192);
  const short_slot output = shorten(surface.code, operand_role::output);
  CHECK(output.register_name == "DPU_DST_BASE_ADDR");
  CHECK(output.touched == 1024);

  // row-major fp16 -> fp32 with padded pitches: 4 feature rows 256 bytes apart, 128 read
  // from the last (3 x 256 + 128 = 896); 4 output rows 512 bytes apart, 256 written in the
  // last (3 x 512 + 256 = 1792)
  const auto rows = build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64,
                                  .feature_pitch = 256, .output_pitch = 512}).value();
  CHECK(id(validate(rows.code.view())) == "ok");
  CHECK(shorten(rows.code, operand_role::feature).touched == 896);
  CHECK(shorten(rows.code, operand_role::output).touched == 1792);

  // an SDP add over 16 x 64 fp16: the source, the operand and the output are 8 surfaces
  // of 16 atoms (2048 bytes); a per-channel operand is 64 x 2 = 128 bytes
  const auto add = build(ew_spec{.op = ew_op::add, .dtype = precision::fp16, .M = 16, .N = 64}).value();
  CHECK(id(validate(add.code.view())) == "ok");
  const short_slot source = shorten(add.code, operand_role::feature);
  CHECK(source.register_name == "DPU_RDMA_RDMA_SRC_BASE_ADDR");
  CHECK(source.touched == 2048);
  const short_slot operand = shorten(add.code, operand_role::ew_operand);
  CHECK(operand.register_name == "DPU_RDMA_RDMA_EW_BASE_ADDR");
  CHECK(operand.touched == 2048);
  CHECK(shorten(add.code, operand_role::output).touched == 2048);
  const auto scale = build(ew_spec{.op = ew_op::add, .dtype = precision::fp16, .M = 16, .N = 64,
                                      .operand = ew_operand::per_channel}).value();
  CHECK(shorten(scale.code, operand_role::ew_operand).touched == 128);
}
