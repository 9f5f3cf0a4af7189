// The runtime against the emulated device (run with LD_PRELOAD=libregcmd-emu.so): the real
// ioctl path, its refusals, and the stateful rules. Every case runs on both drivers (ctest
// runs this binary once with REGCMD_DEVICE=/dev/dri/card1 and once with /dev/accel/accel0);
// cases named "rknpu: ..." or "rocket: ..." run only on theirs.
#include <regcmd/testing/doctest.hpp>

#include <cstdint>
#include <cstdlib>
#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <string>
#include <vector>

#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/runtime/graph_buffers.hpp>

#include "runtime_support.hpp"

using namespace regcmd;
using namespace regcmd::runtime;
using namespace regcmd::testing;

TEST_CASE("the device: its driver found, version reported") {
  const device d = open_device();
  const char* node = std::getenv("REGCMD_DEVICE");
  REQUIRE_MESSAGE(node != nullptr, "ctest sets REGCMD_DEVICE");
  CHECK(d.path() == node);
  if (d.kind() == driver::rknpu) {
    CHECK(d.driver_version().starts_with("rknpu 0.9."));
  } else {
    CHECK(d.driver_version().starts_with("rocket 1.0"));
  }
}

TEST_CASE("the device: a missing node, permission denied, the wrong driver") {
  const device d = open_device();
  const std::string absent = d.kind() == driver::rknpu ? "/dev/dri/card9" : "/dev/accel/accel9";
  const auto missing = device::open(absent);
  REQUIRE_FALSE(missing.ok());
  CHECK_BREAKS(missing, rules::device_missing);
  CHECK(missing.err().os_errno == ENOENT);
  CHECK(missing.err().note() == absent);

  {
    const scoped_env denied_env("REGCMD_EMU_OPEN_ERRNO", "13");
    const auto denied = device::open();
    CHECK_BREAKS(denied, rules::device_permission);
    CHECK(denied.err().os_errno == EACCES);
  }
  const scoped_env other_env("REGCMD_EMU_DRIVER", "i915");
  const auto other = device::open();
  REQUIRE_FALSE(other.ok());
  CHECK_BREAKS(other, rules::wrong_driver);
  CHECK(other.err().note().find("'i915'") != std::string_view::npos);
  CHECK(to_string(other.err()).find("rknpu card node") != std::string::npos);
  CHECK(to_string(other.err()).find("/dev/accel/accelN") != std::string::npos);
}

TEST_CASE("the device: with no node given, the rknpu card node is tried first, then the rocket accel node") {
  const scoped_env no_node("REGCMD_DEVICE", nullptr);
  {
    const auto both = device::open();
    REQUIRE(both.ok());
    CHECK(both.value().kind() == driver::rknpu);
    CHECK(both.value().path() == "/dev/dri/card1");
  }
  const scoped_env no_rknpu("REGCMD_EMU_DEVICE", "none");
  {
    const auto mainline = device::open();
    REQUIRE(mainline.ok());
    CHECK(mainline.value().kind() == driver::rocket);
    CHECK(mainline.value().path() == "/dev/accel/accel0");
  }
  {
    const scoped_env other("REGCMD_EMU_DRIVER", "i915");
    const auto wrong = device::open();
    CHECK_BREAKS(wrong, rules::wrong_driver);
  }
  {
    const scoped_env denied("REGCMD_EMU_OPEN_ERRNO", "13");  // a node we may not open says more than "none"
    const auto refused = device::open();
    CHECK_BREAKS(refused, rules::device_permission);
    CHECK(refused.err().note() == "/dev/accel/accel0");
  }
  const scoped_env no_rocket("REGCMD_EMU_ACCEL_DEVICE", "none");
  const auto none = device::open();
  REQUIRE_FALSE(none.ok());
  CHECK_BREAKS(none, rules::device_missing);
  CHECK(none.err().note().find("/dev/accel/accel") != std::string_view::npos);
  CHECK(to_string(none.err()).find("rocket accel node (/dev/accel/accel0)") != std::string::npos);
}

TEST_CASE("a buffer is page-sized, below 4 GiB in IOVA, mapped for the CPU, and synced by one ioctl") {
  const device d = open_device();
  const buffer b = make(d, 1000);
  CHECK(b.size() == 4096);  // page-aligned by the kernel
  CHECK(b.iova() + b.size() <= (std::uint64_t{1} << 32));
  b.bytes()[4095] = 7;
  const auto before = stats().syncs;
  CHECK(b.sync_to_device().ok());
  CHECK(stats().syncs == before + 1);
}

TEST_CASE("a matmul runs end to end; the first run on a fresh output buffer warms it up") {
  const device d = open_device();
  session npu{d};
  job j(d, fp16_op, 1);
  auto p = npu.prepare(j.mm.code.view());
  REQUIRE(p.ok());
  REQUIRE(npu.bind(p.value(), j.ops()).ok());
  const auto first = npu.run(p.value());
  REQUIRE_MESSAGE(first.ok(), to_string(first.err()));
  CHECK(first.value().submits == 2);  // warm-up + the run
  CHECK(first.value().core_mask == (d.kind() == driver::rknpu ? 0x1u : 0u));  // rocket: the kernel picks
  CHECK(j.error() < 1e-4);
  const auto second = npu.run(p.value());
  REQUIRE(second.ok());
  CHECK(second.value().submits == 1);
}

TEST_CASE("the device's SoC: RK3588 unless its node names another; prepare refuses every program on a SoC without its numbers") {
  const device d = open_device();
  // The emulated node has no device tree node: RK3588 is assumed.
  CHECK_FALSE(d.soc_detected());
  CHECK(d.soc().id == soc::soc_id::rk3588);
  CHECK(d.soc().cores == 3);
  const device as_rk3576 = d.for_soc(*soc::soc_by_option("rk3576"));
  CHECK(as_rk3576.soc().cores == 2);
  CHECK(d.soc().id == soc::soc_id::rk3588);  // a copy: the device itself is unchanged
  job j(d, fp16_op, 1);
  session npu{as_rk3576};
  const auto refused = npu.prepare(j.mm.code.view());
  REQUIRE_FALSE(refused.ok());
  CHECK_BREAKS(refused, rules::soc_value_unknown);
  CHECK(refused.err().subject == "RK3576");
  session on_rk3588{d.for_soc(*soc::soc_by_option("rk3588"))};
  CHECK(on_rk3588.prepare(j.mm.code.view()).ok());
}

TEST_CASE("bind: operands at offsets into larger buffers; an offset past the buffer is refused") {
  const device d = open_device();
  session npu{d};
  job j(d, fp16_op, 5);
  const std::size_t weights = j.mm.geometry.weight_bytes();
  const buffer big = make(d, 3 * weights);
  std::memcpy(big.bytes().data() + 2 * weights, j.b.bytes().data(), weights);  // the weights at an offset
  auto p = npu.prepare(j.mm.code.view()).value();
  operands ops = j.ops();
  ops.weight = &big;
  ops.offsets[static_cast<std::size_t>(operand_role::weight)] = 2 * weights;
  REQUIRE(npu.bind(p, ops).ok());
  REQUIRE(npu.run(p).ok());
  CHECK(j.error() < 1e-4);
  ops.offsets[static_cast<std::size_t>(operand_role::weight)] = 2 * weights + 64;  // the last 64 bytes past its end
  CHECK_BREAKS(npu.bind(p, ops), rules::operand_extent);
  // the feature is the buffer and the offset bound first: another offset is a rotation
  operands moved = j.ops();
  moved.offsets[static_cast<std::size_t>(operand_role::feature)] = 0;
  REQUIRE(npu.bind(p, moved).ok());
  const buffer wide = make(d, j.a.size() + 64);
  moved.feature = &wide;
  CHECK_BREAKS(npu.bind(p, moved), rules::feature_rotation);
}

TEST_CASE("rknpu: submits of three threads overlap (a core each), the node shared") {
  // run with REGCMD_EMU_SUBMIT_MS: each submit keeps its caller that long
  const device d = open_device(driver::rknpu);
  session npu{d};
  std::vector<std::unique_ptr<job>> jobs;
  std::vector<prepared_program> programs;
  for (std::uint32_t i = 0; i < 3; ++i) {
    jobs.push_back(std::make_unique<job>(d, fp16_op, 10 + i));
    programs.push_back(npu.prepare(jobs[i]->mm.code.view()).value());
    REQUIRE(npu.bind(programs[i], jobs[i]->ops()).ok());
  }
  std::array<bool, 3> ran{};
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < 3; ++i)
    threads.emplace_back([&, i] { ran[i] = npu.run(programs[i], {.core = i}).ok(); });
  for (auto& t : threads) t.join();
  CHECK(ran == std::array<bool, 3>{true, true, true});
  for (const auto& j : jobs) CHECK(j->error() < 1e-4);
  CHECK(stats().max_submits_in_flight >= 2);
}

TEST_CASE("a run refused for a missing or unpatched operand submits nothing") {
  const device d = open_device();
  session npu{d};
  job j(d, fp16_op, 2);
  const auto submits = stats().submits;

  auto p = npu.prepare(j.mm.code.view());
  REQUIRE(p.ok());
  CHECK_BREAKS(npu.run(p.value()), rules::operand_missing);  // not bound
  const auto unpatched = npu.bind(p.value(), {.feature = &j.a, .output = &j.c});
  CHECK_BREAKS(unpatched, rules::operand_missing);
  CHECK(unpatched.err().detail == "weight");
  const buffer small = make(d, 4096);
  CHECK_BREAKS(npu.bind(p.value(), {.feature = &j.a, .weight = &small, .output = &j.c}), rules::operand_extent);

  // a failed rule: an address register holding a literal is not a slot
  program<16, 1> literal;
  REQUIRE(fill(literal, [](program_writer& w) {
            w.begin_task();
            w.put(reg::CNA_FEATURE_DATA_ADDR{.FEATURE_BASE_ADDR = 0x1000'0000});
            w.end_task({.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1}, dpu_done_interrupts);
          }).ok());
  CHECK_BREAKS(npu.prepare(literal.view()), rules::address_slots);
  CHECK(stats().submits == submits);

  // one stable feature buffer per prepared program
  REQUIRE(npu.bind(p.value(), j.ops()).ok());
  const buffer other = make(d, j.mm.geometry.feature_bytes());
  CHECK_BREAKS(npu.bind(p.value(), {.feature = &other, .weight = &j.b, .output = &j.c}), rules::feature_rotation);
  CHECK(stats().submits == submits);
}

TEST_CASE("bind writes what patch_slots writes, and rebinding rewrites only the addresses") {
  const device d = open_device();
  session npu{d};
  // three chained tasks: feature, weight, output and next-task slots
  const auto built = build(plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 24, .K = 2048, .N = 64,
                                          .sched = schedule::template_split}, {.k_slice = 2048}});
  REQUIRE(built.ok());
  REQUIRE(built.value().view().tasks.size() == 3);
  const plan_shape& shape = built.value().geometry;
  const buffer a = make(d, matmul::plan_feature_bytes(shape)), b = make(d, shape.weight_bytes());
  const buffer c1 = make(d, matmul::plan_output_bytes(shape)), c2 = make(d, matmul::plan_output_bytes(shape));
  auto p = npu.prepare(built.value().view());
  REQUIRE(p.ok());
  auto expected = [&](const buffer& c) {
    std::vector<entry> code = built.value().code.entries;
    operand_addresses base{};
    base[static_cast<std::size_t>(operand_role::feature)] = a.iova();
    base[static_cast<std::size_t>(operand_role::weight)] = b.iova();
    base[static_cast<std::size_t>(operand_role::output)] = c.iova();
    base[static_cast<std::size_t>(operand_role::regcmd)] = p.value().regcmd_iova();
    REQUIRE(patch_slots(code, built.value().view().slots, base).ok());
    std::vector<std::uint8_t> bytes;
    for (const entry& e : code)
      for (std::uint8_t byte : e.to_bytes()) bytes.push_back(byte);
    return bytes;
  };
  auto placed = [&] {
    const auto bytes = p.value().regcmd_bytes();
    return std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(built.value().view().entries.size() * 8));
  };
  REQUIRE(npu.bind(p.value(), {.feature = &a, .weight = &b, .output = &c1}).ok());
  CHECK(placed() == expected(c1));
  REQUIRE(npu.bind(p.value(), {.feature = &a, .weight = &b, .output = &c2}).ok());
  CHECK(placed() == expected(c2));
  CHECK(placed() != expected(c1));
}

TEST_CASE("a bind that fails leaves the program unbound") {
  const device d = open_device();
  session npu{d};
  // PPU_DST_BASE_ADDR holds bits 31:4: an output offset of 8 cannot be encoded
  program<16, 1> odd;
  REQUIRE(fill(odd, [](program_writer& w) {
               w.begin_task();
               w.put_slot<reg::PPU_DST_BASE_ADDR>(operand_role::output, 8, 64);
               w.end_task({.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1}, dpu_done_interrupts);
             }).ok());
  auto p = npu.prepare(odd.view());
  REQUIRE_MESSAGE(p.ok(), to_string(p.err()));
  const buffer c = make(d, 4096);
  const auto bound = npu.bind(p.value(), {.output = &c});
  REQUIRE_FALSE(bound.ok());
  CHECK_BREAKS(bound, rules::address_alignment);
  CHECK(bound.err().subject == "PPU_DST_BASE_ADDR");
  CHECK_BREAKS(npu.run(p.value()), rules::operand_missing);
}

TEST_CASE("rknpu: int8 entry issues exactly one reset; leaving and re-entering int8 resets again") {
  const device d = open_device(driver::rknpu);
  int8_and_fp16 both(d);
  session& npu = both.npu;
  job& i8 = both.i8;
  prepared_program &pi = both.pi, &pf = both.pf;
  const auto resets = stats().resets;
  const auto first = npu.run(pi);
  REQUIRE_MESSAGE(first.ok(), to_string(first.err()));
  CHECK(first.value().reset);
  CHECK(stats().resets == resets + 1);
  CHECK(i8.error() == 0);
  const auto again = npu.run(pi);
  REQUIRE(again.ok());
  CHECK_FALSE(again.value().reset);
  CHECK(stats().resets == resets + 1);
  REQUIRE(npu.run(pf).ok());
  const auto back = npu.run(pi);
  REQUIRE(back.ok());
  CHECK(back.value().reset);
  CHECK(stats().resets == resets + 2);
}

TEST_CASE("rocket: int8 entry: the first job wedges, the kernel stops it and resets the core, run runs it again") {
  const device d = open_device(driver::rocket);
  int8_and_fp16 both(d);
  session& npu = both.npu;
  job& i8 = both.i8;
  prepared_program& pi = both.pi;  // the fixture ran fp16 work: the core is not primed for int8
  const auto before = stats();
  const auto first = npu.run(pi);
  REQUIRE_MESSAGE(first.ok(), to_string(first.err()));
  CHECK(first.value().reset);
  CHECK(first.value().submits == 3);  // the wedged job, its re-run, the run
  CHECK(stats().kernel_resets == before.kernel_resets + 1);
  CHECK(stats().resets == before.resets);  // no reset request exists on rocket
  CHECK(i8.error() == 0);
  const auto again = npu.run(pi);
  REQUIRE(again.ok());
  CHECK_FALSE(again.value().reset);
  CHECK(again.value().submits == 1);
  CHECK_BREAKS(d.reset(), rules::reset_unsupported);
}

// Run with REGCMD_EMU_FAULTS=timeout@2 (its own ctest entries): the second submit times out.
TEST_CASE("fault injection: a timed-out job returns the error, the NPU is reset, and the next job succeeds") {
  REQUIRE_MESSAGE(std::getenv("REGCMD_EMU_FAULTS") != nullptr, "this case runs with REGCMD_EMU_FAULTS=timeout@2");
  const device d = open_device();
  job j(d, fp16_op, 8);
  const auto before = stats();
  std::optional<error> failure;
  {
    session npu{d};
    auto p = npu.prepare(j.mm.code.view()).value();
    REQUIRE(npu.bind(p, j.ops()).ok());
    const auto failed = npu.run(p);  // submit 1: warm-up, submit 2: times out
    REQUIRE_FALSE(failed.ok());
    failure = failed.err();
  }  // regression: the reset owed went with the session
  const error& failed = *failure;
  CHECK(failed.id() == "submit-timeout");
  CHECK(stats().timeouts == before.timeouts + 1);
  session npu{d};
  auto p = npu.prepare(j.mm.code.view()).value();
  REQUIRE(npu.bind(p, j.ops()).ok());
  const auto next = npu.run(p);
  REQUIRE_MESSAGE(next.ok(), to_string(next.err()));
  if (d.kind() == driver::rknpu) {
    CHECK(failed.os_errno == ETIMEDOUT);
    CHECK(next.value().reset);  // RKNPU_ACT_RESET before the next submit
    CHECK(stats().resets == before.resets + 1);
  } else {
    CHECK(failed.os_errno == ECANCELED);  // the job's fence
    CHECK(failed.note().find("reset its core") != std::string_view::npos);
    CHECK_FALSE(next.value().reset);  // the kernel reset the core when it stopped the job
    CHECK(stats().kernel_resets == before.kernel_resets + 1);
    CHECK(stats().resets == before.resets);
  }
  CHECK(j.error() < 1e-4);
}

// Run with REGCMD_EMU_IOVA_BASE=0xfffff000 (its own ctest entry): IOVAs past 4 GiB.
TEST_CASE("an IOVA past 32 bits is refused") {
  REQUIRE_MESSAGE(std::getenv("REGCMD_EMU_IOVA_BASE") != nullptr, "this case runs with REGCMD_EMU_IOVA_BASE=0xfffff000");
  const device d = open_device();
  const auto fits = buffer::create(d, 4096);  // 0xfffff000 .. 0xffffffff still fits
  CHECK(fits.ok());
  const auto past = buffer::create(d, 4096);
  REQUIRE_FALSE(past.ok());
  CHECK_BREAKS(past, rules::iova_32bit);
  CHECK(past.err().detail == "end");  // the end is what does not fit, not the start
  CHECK(past.err().value == 0x1'0000'1000u);
}

// Regression: an IOVA near 2^64 plus the size wrapped into range, and the buffer was made.
TEST_CASE("an IOVA that wraps 2^64 is refused") {
  REQUIRE_MESSAGE(std::getenv("REGCMD_EMU_IOVA_BASE") != nullptr, "this case runs with REGCMD_EMU_IOVA_BASE=0xfffffffffffff000");
  const device d = open_device();
  const auto wrapped = buffer::create(d, 8192);
  REQUIRE_FALSE(wrapped.ok());
  CHECK_BREAKS(wrapped, rules::iova_32bit);
  CHECK(wrapped.err().value == ~std::uint64_t{0});
}

// Regression: rounding SIZE_MAX up to whole pages wrapped to 0 and passed the size check.
TEST_CASE("a buffer too large for the driver is refused before the kernel sees it") {
  const device d = open_device();
  const auto huge = buffer::create(d, SIZE_MAX);
  REQUIRE_FALSE(huge.ok());
  if (d.kind() == driver::rocket) CHECK_BREAKS(huge, rules::bo_size);
}

TEST_CASE("rknpu: multi-core: one core, round-robin, all three") {
  const device d = open_device(driver::rknpu);
  session npu{d};
  const auto shape = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 512, .K = 512, .N = 64}).value();
  REQUIRE(shape.tasks() == 2);
  std::vector<entry> entries(matmul::plan_entries(shape));
  std::vector<slot> slots(16);
  std::vector<task> tasks(2);
  program_writer w{entries, slots, tasks};
  matmul::emit_plan(w, shape);
  REQUIRE(w.outcome().ok());
  const program_view view{w.entries(), w.slots(), w.tasks(), true, false};
  const buffer a = make(d, matmul::plan_feature_bytes(shape)), b = make(d, shape.weight_bytes()), c = make(d, matmul::plan_output_bytes(shape));
  auto all = npu.prepare(view, {cores::all}).value();
  REQUIRE(npu.bind(all, {.feature = &a, .weight = &b, .output = &c}).ok());
  const auto r = npu.run(all);
  REQUIRE_MESSAGE(r.ok(), to_string(r.err()));
  CHECK(r.value().core_mask == 0x3);  // two tasks: two chains on two cores
  auto one = npu.prepare(view).value();
  REQUIRE(npu.bind(one, {.feature = &a, .weight = &b, .output = &c}).ok());
  unsigned seen = 0;
  for (int i = 0; i < 3; ++i) {
    const auto rr = npu.run(one, {.use = cores::round_robin});
    REQUIRE(rr.ok());
    seen |= rr.value().core_mask;
  }
  CHECK(seen == 0x7);
  CHECK(npu.run(one, {.core = 2}).value().core_mask == 0x4);

  // a delta-task program cannot be split over cores
  const program_view delta{w.entries(), w.slots(), w.tasks(), true, true};
  CHECK_BREAKS(npu.prepare(delta, {cores::all}), rules::core_split);
}

TEST_CASE("a non-blocking submit waits on its fence and returns the right product") {
  const device d = open_device();
  session npu{d};
  job j(d, fp16_op, 7);
  auto p = npu.prepare(j.mm.code.view()).value();
  REQUIRE(npu.bind(p, j.ops()).ok());
  const auto r = npu.run(p, {.blocking = false});
  REQUIRE_MESSAGE(r.ok(), to_string(r.err()));
  CHECK(j.error() < 1e-4);
}

TEST_CASE("rocket: one drm_rocket_task per task, the tail included; the job lists what it reads and writes") {
  const device d = open_device(driver::rocket);
  session npu{d};
  const auto built = build(plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 24, .K = 2048, .N = 64,
                                          .sched = schedule::template_split}, {.k_slice = 2048}});
  REQUIRE(built.ok());
  const runtime_program<plan_shape>& plan = built.value();
  REQUIRE(plan.view().tasks.size() == 3);
  const buffer a = make(d, matmul::plan_feature_bytes(plan.geometry)), b = make(d, plan.geometry.weight_bytes());
  const buffer c = make(d, matmul::plan_output_bytes(plan.geometry));
  auto p = npu.prepare(plan.view());
  REQUIRE(p.ok());
  REQUIRE(npu.bind(p.value(), {.feature = &a, .weight = &b, .output = &c}).ok());
  const auto before = stats();
  const auto r = npu.run(p.value());
  REQUIRE_MESSAGE(r.ok(), to_string(r.err()));
  CHECK(r.value().core_mask == 0);  // the kernel chose
  const auto after = stats();
  CHECK(after.jobs_dropped == before.jobs_dropped);
  CHECK(after.jobs_done == before.jobs_done + 2);  // warm-up + run, one job each
  CHECK(after.last_job_tasks == 3);
  const std::vector<std::uint32_t> in(after.last_job_in, after.last_job_in + after.last_job_in_count);
  const std::vector<std::uint32_t> out(after.last_job_out, after.last_job_out + after.last_job_out_count);
  // the program's own regcmd buffer first, then the operands read
  REQUIRE(in.size() == 3);
  CHECK(std::vector<std::uint32_t>(in.begin() + 1, in.end()) == std::vector<std::uint32_t>{a.handle(), b.handle()});
  // the output, and the job's own page, where run waits for the job's fence
  REQUIRE(out.size() == 2);
  CHECK(std::count(out.begin(), out.end(), c.handle()) == 1);
  // FINI_BO for each operand and the program, PREP_BO before the result is read
  CHECK(after.fini_bo >= before.fini_bo + 4);
  CHECK(after.prep_bo == before.prep_bo + 1);

  // binding another output buffer lists that one
  const buffer c2 = make(d, matmul::plan_output_bytes(plan.geometry));
  REQUIRE(npu.bind(p.value(), {.feature = &a, .weight = &b, .output = &c2}).ok());
  REQUIRE(npu.run(p.value()).ok());
  const auto rebound = stats();
  const std::vector<std::uint32_t> out2(rebound.last_job_out, rebound.last_job_out + rebound.last_job_out_count);
  CHECK(std::count(out2.begin(), out2.end(), c2.handle()) == 1);
  CHECK(std::count(out2.begin(), out2.end(), c.handle()) == 0);

  // a buffer bound for two roles is listed once (twice, the kernel drops the job)
  const buffer shared = make(d, std::max(matmul::plan_feature_bytes(plan.geometry), plan.geometry.weight_bytes()));
  auto q = npu.prepare(plan.view()).value();
  REQUIRE(npu.bind(q, {.feature = &shared, .weight = &shared, .output = &c}).ok());
  REQUIRE(npu.run(q).ok());
  CHECK(stats().jobs_dropped == before.jobs_dropped);
  CHECK(stats().last_job_in_count == 2);  // the regcmd buffer and the shared one
}

TEST_CASE("rocket: the CPU sees the NPU's bytes only after PREP_BO, the NPU the CPU's only after FINI_BO") {
  const device d = open_device(driver::rocket);
  const buffer b = make(d, 4096);
  CHECK(b.bytes()[0] == 0);  // rocket BOs start zeroed
  CHECK(b.iova() % 4096 == 0);
  CHECK_BREAKS(buffer::create(d, 0), rules::bo_size);
  CHECK_BREAKS(buffer::create(d, std::size_t{5} << 30), rules::bo_size);  // CREATE_BO takes 32 bits
  b.bytes()[0] = 7;
  REQUIRE(b.sync_from_device().ok());  // PREP_BO without a FINI_BO: the CPU's write is lost
  CHECK(b.bytes()[0] == 0);
  b.bytes()[0] = 7;
  REQUIRE(b.sync_to_device().ok());
  b.bytes()[0] = 9;
  REQUIRE(b.sync_from_device().ok());
  CHECK(b.bytes()[0] == 7);

  // so a run whose result were read without PREP_BO would see stale bytes: run reads it
  session npu{d};
  job j(d, fp16_op, 5);
  auto p = npu.prepare(j.mm.code.view()).value();
  REQUIRE(npu.bind(p, j.ops()).ok());
  std::fill(j.c.bytes().begin(), j.c.bytes().end(), std::uint8_t{0});
  REQUIRE(npu.run(p).ok());
  CHECK(j.error() < 1e-4);
}

TEST_CASE("rocket: programs its kernel cannot run are refused before anything reaches it") {
  const device d = open_device(driver::rocket);
  session npu{d};
  const auto submits = stats().submits;
  // an SDP op needs ping-pong off; the kernel turns it on for every task
  const auto ew = build(ew_spec{.op = ew_op::add, .M = 8, .N = 16});
  REQUIRE(ew.ok());
  CHECK_BREAKS(npu.prepare(ew.value().view()), rules::rocket_pingpong);
  // delta tasks lean on the registers of the task before; the kernel kicks each task alone
  const auto delta = build(plan_request{matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 2000, .K = 512, .N = 64}, {.delta_tasks = true}});
  REQUIRE(delta.ok());
  CHECK_BREAKS(npu.prepare(delta.value().view()), rules::rocket_delta_tasks);
  // a task that does not end on a DPU interrupt never completes there: a PPU task, whose
  // PPU pair (0xc00) the program rules require
  program<16, 1> pooling;
  REQUIRE(fill(pooling, [](program_writer& w) {
            w.begin_task();
            w.end_task(reg::GLOBAL_OPERATION_ENABLE{.PPU_OP_EN = 1}, ppu_done_interrupts);
          }).ok());
  REQUIRE(validate(pooling.view()).ok());
  CHECK_BREAKS(npu.prepare(pooling.view()), rules::rocket_interrupt);
  // a matmul whose mask names the PPU pair is refused on every node
  runtime_program<matmul_geometry> mm = build(fp16_op).value();
  std::vector<task> tasks(mm.code.view().tasks.begin(), mm.code.view().tasks.end());
  tasks[0].int_mask = 0xc00;
  const program_view pview = mm.code.view();
  const program_view ppu_done{pview.entries, pview.slots, tasks, pview.pingpong, pview.delta_tasks};
  CHECK_BREAKS(npu.prepare(ppu_done), rules::task_interrupts);
  CHECK(stats().submits == submits);
}

TEST_CASE("rocket: cores::all makes each chain a job of one submit; the kernel picks the cores") {
  const device d = open_device(driver::rocket);
  session npu{d};
  const auto built = build(plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 512, .K = 512, .N = 64}});
  REQUIRE(built.ok());
  const runtime_program<plan_shape>& plan = built.value();
  REQUIRE(plan.view().tasks.size() == 2);
  const buffer a = make(d, matmul::plan_feature_bytes(plan.geometry)), b = make(d, plan.geometry.weight_bytes());
  const buffer c = make(d, matmul::plan_output_bytes(plan.geometry));
  auto all = npu.prepare(plan.view(), {cores::all}).value();
  REQUIRE(npu.bind(all, {.feature = &a, .weight = &b, .output = &c}).ok());
  const auto before = stats();
  const auto r = npu.run(all);
  REQUIRE_MESSAGE(r.ok(), to_string(r.err()));
  CHECK(r.value().core_mask == 0);
  CHECK(stats().submits == before.submits + 2);  // warm-up + run
  CHECK(stats().jobs_done == before.jobs_done + 4);  // two jobs each
  CHECK(stats().last_job_tasks == 1);
}

// No device: what each kernel is handed for the same task, and what it makes of it.
TEST_CASE("rknpu and rocket: the same program bytes, each kernel's view of a task") {
  const runtime_program<matmul_geometry> mm = build(fp16_op).value();
  const task& t = mm.code.view().tasks[0];
  REQUIRE(t.count == 108);
  const std::uint64_t placed = 0x2000'0000;
  const rknpu::task vendor = rknpu_jobs::descriptor(t, placed);
  const rocket::task mainline = rocket_jobs::descriptor(t, placed);
  CHECK(vendor.regcfg_amount == 104);  // the vendor kernel adds the 4 tail entries back
  CHECK(mainline.regcmd_count == 108);  // rocket counts them
  CHECK(vendor.regcmd_addr == placed);
  CHECK(mainline.regcmd == placed);
  CHECK(rknpu::pc_data_amount(vendor) == 53);
  CHECK(rocket::pc_data_amount(mainline) == 53);
  // the block enables: the 0x0081 entry of the tail, in both; the vendor descriptor's
  // enable_mask repeats it (its kernel does not read it), rocket has no such field
  const entry op_enable = mm.code.view().entries[t.first + t.count - 1];
  CHECK(op_enable.target() == 0x0081);
  CHECK(op_enable.value() == 0x0d);
  CHECK(vendor.enable_mask == 0x0d);
  // the completion interrupt: the vendor kernel waits for the descriptor's; rocket always
  // for DPU_0 | DPU_1, which is what this program's last stage raises
  CHECK(vendor.int_mask == 0x300);
  // an odd entry count: both kernels round the 128-bit words up
  const task odd{0, 13, 0x0d, 0x300};
  CHECK(rknpu::pc_data_amount(rknpu_jobs::descriptor(odd, 0)) == 6);
  CHECK(rocket::pc_data_amount(rocket_jobs::descriptor(odd, 0)) == 6);
  CHECK(pc_fetch_amount(13) == 6);
}

TEST_CASE("graph buffers: one buffer for each role the graph uses, tensors packed and read back by name") {
  const device d = open_device();
  // two int8 matmuls reading one input (no intermediate): y[n] = sum_k x[k] w[k][n]
  constexpr matmul_spec mm{.dtype = precision::int8, .out_dtype = precision::int32, .M = 1, .K = 32, .N = 16};
  const auto built = build(make_graph(graph_matmul("a", "x", "wa", mm), graph_matmul("b", "x", "wb", mm)));
  REQUIRE(built.ok());
  auto io = graph_buffers::create(d, built.value().geometry);
  REQUIRE(io.ok());
  const operands ops = io.value().operands();
  CHECK(ops.feature != nullptr);
  CHECK(ops.weight != nullptr);
  CHECK(ops.output != nullptr);
  CHECK(ops.intermediate == nullptr);  // nothing lives in an arena
  CHECK(io.value().bytes(operand_role::intermediate).empty());

  // x = 1 everywhere, wa[k][n] = n - 8, wb[k][n] = k - 16: a[n] = 32 (n - 8), b[n] = sum (k - 16) = -16
  std::vector<std::int8_t> x(32, 1), wa(32 * 16), wb(32 * 16);
  for (int k = 0; k < 32; ++k)
    for (int n = 0; n < 16; ++n) {
      wa[std::size_t(k * 16 + n)] = static_cast<std::int8_t>(n - 8);
      wb[std::size_t(k * 16 + n)] = static_cast<std::int8_t>(k - 16);
    }
  REQUIRE(io.value().pack<std::int8_t>("x", x).ok());
  REQUIRE(io.value().pack<std::int8_t>("wa", wa).ok());
  REQUIRE(io.value().pack<std::int8_t>("wb", wb).ok());
  CHECK_BREAKS(io.value().pack<std::int8_t>("nope", x), rules::unknown_tensor);
  CHECK_BREAKS(io.value().pack<std::int8_t>("a", x), rules::tensor_direction);

  session npu{d};
  auto p = npu.prepare(built.value().view());
  REQUIRE(p.ok());
  REQUIRE(npu.bind(p.value(), ops).ok());
  REQUIRE(npu.run(p.value()).ok());
  std::vector<std::int32_t> a(16), b(16);
  REQUIRE(io.value().unpack<std::int32_t>("a", a).ok());
  REQUIRE(io.value().unpack<std::int32_t>("b", b).ok());
  for (int n = 0; n < 16; ++n) {
    CHECK(a[std::size_t(n)] == 32 * (n - 8));
    CHECK(b[std::size_t(n)] == -16);
  }
  CHECK_BREAKS(io.value().unpack<std::int32_t>("x", a), rules::tensor_direction);
}

TEST_CASE("cores::all_then_one: a graph's independent branches on the cores, then the rest on one, the same bytes") {
  const device d = open_device();
  // a and b read x alone (one task each); c reads a
  constexpr conv_spec conv{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 8, .W = 8, .C = 16, .out_channels = 16,
                           .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::same};
  const auto built = build(make_graph(graph_conv("a", "x", "ka", conv), graph_conv("b", "x", "kb", conv),
                                            graph_conv("c", "a", "kc", conv)));
  REQUIRE(built.ok());
  REQUIRE(built.value().view().tasks.size() == 3);
  auto outputs = [&](cores use, unsigned& submits) {
    auto io = graph_buffers::create(d, built.value().geometry);
    REQUIRE(io.ok());
    std::vector<float> x(8 * 8 * 16), k(16 * 9 * 16);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 13) - 6) / 8;
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = float(int(i % 7) - 3) / 32;
    REQUIRE(io.value().pack<float>("x", x).ok());
    for (const char* name : {"ka", "kb", "kc"}) REQUIRE(io.value().pack<float>(name, k).ok());
    session npu{d};
    auto p = npu.prepare(built.value().view(), {use});
    REQUIRE_MESSAGE(p.ok(), to_string(p.err()));
    REQUIRE(npu.bind(p.value(), io.value().operands()).ok());
    REQUIRE(npu.run(p.value()).ok());  // with its warm-up
    const auto second = npu.run(p.value());
    REQUIRE(second.ok());
    submits = second.value().submits;
    std::vector<float> b(8 * 8 * 16), c(8 * 8 * 16);
    REQUIRE(io.value().unpack<float>("b", b).ok());
    REQUIRE(io.value().unpack<float>("c", c).ok());
    b.insert(b.end(), c.begin(), c.end());
    return b;
  };
  unsigned one_submits = 0, split_submits = 0;
  const std::vector<float> one = outputs(cores::one, one_submits), split = outputs(cores::all_then_one, split_submits);
  CHECK(one_submits == 1);
  CHECK(split_submits == 2);  // a and b on two cores, then c
  CHECK(one == split);
  // cores::all refuses it (c reads a), as does all_then_one a program whose second task reads the first
  session npu{d};
  CHECK_BREAKS(npu.prepare(built.value().view(), {cores::all}), rules::core_split);
  const auto chain = build(make_graph(graph_conv("a", "x", "ka", conv), graph_conv("c", "a", "kc", conv)));
  REQUIRE(chain.ok());
  CHECK_BREAKS(npu.prepare(chain.value().view(), {cores::all_then_one}), rules::core_split);
}
