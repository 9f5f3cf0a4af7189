// The runtime misused and under faults, against the emulated device: buffers and devices
// destroyed or moved while in use, operands of another device or bound twice, options out
// of range, the NPU's state shared by sessions and threads, and what each kernel does with
// the jobs of one submit. Each case failed (or crashed) before its fix.
#include <regcmd/testing/doctest.hpp>

#include <barrier>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <regcmd/programs/graph/fused.hpp>
#include <regcmd/programs/matmul/plan.hpp>

#include "runtime_support.hpp"

using namespace regcmd;
using namespace regcmd::runtime;
using namespace regcmd::testing;

namespace {

// A matmul -> SDP add chain with constant data: every output element is K x 0.5 x 0.25 +
// 1.5 = 9.5 (exact in fp16).
struct constant_chain {
  static constexpr fused_spec spec{.matmul = {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 32},
                                   .op = ew_op::add, .operand = ew_operand::immediate, .immediate = 1.5f};
  static constexpr float expected = 64 * 0.5f * 0.25f + 1.5f;
  runtime_program<fused_geometry> program = build(spec).value();
  buffer a, w, out;
  explicit constant_chain(const device& d)
      : a{make(d, program.geometry.mm.feature_bytes())},
        w{make(d, program.geometry.mm.weight_bytes())},
        out{make(d, fused_output_bytes(program.geometry))} {
    const auto& g = program.geometry.mm;
    REQUIRE(matmul::pack_features<float>(g, std::vector<float>(std::size_t{g.M} * g.logical_K, 0.5f), a.bytes()).ok());
    REQUIRE(matmul::pack_weights<float>(g, std::vector<float>(std::size_t{g.logical_K} * g.logical_N, 0.25f), w.bytes()).ok());
  }
  buffer intermediate(const device& d) const { return make(d, fused_intermediate_bytes(program.geometry)); }
  // The largest distance of an output element from 9.5.
  double error() const {
    std::vector<float> c(std::size_t{spec.matmul.M} * spec.matmul.N);
    REQUIRE(unpack_fused_output<float>(program.geometry, out.bytes(), c).ok());
    double e = 0;
    for (float v : c) e = std::max(e, std::abs(double(v) - expected));
    return e;
  }
};

}  // namespace

// Regression: only the output's freshness triggered the warm-up; a fresh intermediate came
// back stale and the SDP added 1.5 to zeros.
TEST_CASE("rknpu: a fresh intermediate buffer gets the warm-up a fresh output gets") {
  const device d = open_device(driver::rknpu);
  session npu{d};
  constant_chain chain(d);
  auto p = npu.prepare(chain.program.view()).value();
  const buffer c1 = chain.intermediate(d);
  REQUIRE(npu.bind(p, {.feature = &chain.a, .weight = &chain.w, .output = &chain.out, .intermediate = &c1}).ok());
  const auto first = npu.run(p);
  REQUIRE_MESSAGE(first.ok(), to_string(first.err()));
  CHECK(first.value().submits == 2);
  CHECK(chain.error() == 0);
  const buffer c2 = chain.intermediate(d);  // fresh; the output is warm
  REQUIRE(npu.bind(p, {.feature = &chain.a, .weight = &chain.w, .output = &chain.out, .intermediate = &c2}).ok());
  const auto second = npu.run(p);
  REQUIRE_MESSAGE(second.ok(), to_string(second.err()));
  CHECK(second.value().submits == 2);
  CHECK(chain.error() == 0);
  const auto third = npu.run(p);  // both warm now
  REQUIRE(third.ok());
  CHECK(third.value().submits == 1);
}

// Regression: cores::all put the chain's SDP task on another core than the matmul whose
// result it reads; the cores of one submit run together, so the SDP read a stale
// intermediate (1.5 came back where 9.5 was due) and run reported ok.
TEST_CASE("rknpu: a chain that hands data on is not split over cores") {
  const device d = open_device(driver::rknpu);
  session npu{d};
  constant_chain chain(d);
  const auto split = npu.prepare(chain.program.view(), {cores::all});
  REQUIRE_FALSE(split.ok());
  CHECK_BREAKS(split, rules::core_split);
  CHECK(split.err().detail == "intermediate");
  auto p = npu.prepare(chain.program.view()).value();
  const buffer c = chain.intermediate(d);
  REQUIRE(npu.bind(p, {.feature = &chain.a, .weight = &chain.w, .output = &chain.out, .intermediate = &c}).ok());
  REQUIRE(npu.run(p).ok());
  CHECK(chain.error() == 0);
}

// Regression: the output bound to the feature buffer was accepted; the NPU overwrote A
// while reading it.
TEST_CASE("a buffer the NPU writes bound to a second role is refused") {
  const device d = open_device();
  session npu{d};
  job j(d, fp16_op, 21);
  auto p = npu.prepare(j.mm.code.view()).value();
  const auto aliased = npu.bind(p, {.feature = &j.a, .weight = &j.b, .output = &j.a});
  REQUIRE_FALSE(aliased.ok());
  CHECK_BREAKS(aliased, rules::operand_aliased);
  CHECK(aliased.err().subject == "output");
  CHECK(aliased.err().detail == "feature");
  CHECK_BREAKS(npu.run(p), rules::operand_missing);  // still unbound
  // reading one buffer twice is allowed
  const buffer both = make(d, std::max(j.a.size(), j.b.size()));
  CHECK(npu.bind(p, {.feature = &both, .weight = &both, .output = &j.c}).ok());
}

// Regression: core 7 wrapped to core 1, UINT32_MAX polled forever, cores::all at run was
// ignored, and a core given to a program split over cores was ignored.
TEST_CASE("run options out of range or inapplicable are refused before any submit") {
  const device d = open_device();
  session npu{d};
  job j(d, fp16_op, 22);
  auto p = npu.prepare(j.mm.code.view()).value();
  REQUIRE(npu.bind(p, j.ops()).ok());
  const auto submits = stats().submits;
  auto refused = [&](const run_options& o) {
    const auto r = npu.run(p, o);
    return r.ok() ? std::string("ran") : std::string(r.err().id()) + " " + std::string(r.err().detail);
  };
  CHECK(refused({.core = 7}) == "run-options core");
  CHECK(refused({.core = 3}) == "run-options core");
  CHECK(refused({.timeout_ms = 0}) == "run-options timeout_ms");
  CHECK(refused({.timeout_ms = UINT32_MAX}) == "run-options timeout_ms");
  CHECK(refused({.use = cores::all}) == "run-options use");
  CHECK(stats().submits == submits);
  CHECK(npu.run(p, {.core = 2, .timeout_ms = 60'000}).ok());

  const auto built = build(plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 512, .K = 512, .N = 64}});
  REQUIRE(built.ok());
  const buffer a = make(d, matmul::plan_feature_bytes(built.value().geometry)), b = make(d, built.value().geometry.weight_bytes());
  const buffer c = make(d, matmul::plan_output_bytes(built.value().geometry));
  auto split = npu.prepare(built.value().view(), {cores::all}).value();
  REQUIRE(npu.bind(split, {.feature = &a, .weight = &b, .output = &c}).ok());
  CHECK_BREAKS(npu.run(split, {.use = cores::round_robin}), rules::run_options_range);
  CHECK_BREAKS(npu.run(split, {.core = 1}), rules::run_options_range);
  CHECK(npu.run(split).ok());
}

// Regression: a bound output destroyed, or moved by a growing vector, before run was a
// use-after-free (ASan) or a null device.
TEST_CASE("a prepared program keeps the buffers bound to it alive") {
  const device d = open_device();
  session npu{d};
  job j(d, fp16_op, 23);
  auto p = npu.prepare(j.mm.code.view()).value();
  {
    const buffer scratch = make(d, j.mm.geometry.output_bytes());
    REQUIRE(npu.bind(p, {.feature = &j.a, .weight = &j.b, .output = &scratch}).ok());
  }  // destroyed: the program still holds it
  CHECK(npu.run(p).ok());

  std::vector<buffer> outputs;
  outputs.push_back(make(d, j.mm.geometry.output_bytes()));
  REQUIRE(npu.bind(p, {.feature = &j.a, .weight = &j.b, .output = &outputs[0]}).ok());
  for (int i = 0; i < 40; ++i) outputs.push_back(make(d, 4096));  // reallocates: outputs[0] moves
  const auto r = npu.run(p);
  REQUIRE_MESSAGE(r.ok(), to_string(r.err()));
  std::swap(j.c, outputs[0]);  // the moved buffer is the one written
  CHECK(j.error() < 1e-4);
}

// Regression: a buffer outliving its device read freed memory; moving a device closed the
// file under every buffer made on it (EBADF).
TEST_CASE("buffers keep their device open; moving a device moves a handle") {
  buffer survivor;
  {
    const device short_lived = open_device();
    survivor = make(short_lived, 4096);
  }
  survivor.bytes()[0] = 1;
  CHECK(survivor.sync_to_device().ok());

  device first = open_device();
  job j(first, fp16_op, 24);
  const device moved = std::move(first);
  session npu{moved};
  auto p = npu.prepare(j.mm.code.view());
  REQUIRE(p.ok());
  REQUIRE(npu.bind(p.value(), j.ops()).ok());  // made on `first`: the same open file
  const auto r = npu.run(p.value());
  REQUIRE_MESSAGE(r.ok(), to_string(r.err()));
  CHECK(j.error() < 1e-4);
  // the moved-from device is empty: errors, not crashes
  CHECK_FALSE(buffer::create(first, 4096).ok());  // NOLINT(bugprone-use-after-move)
  session orphan{first};                          // NOLINT(bugprone-use-after-move)
  CHECK_BREAKS(orphan.prepare(j.mm.code.view()), rules::wrong_device);
  const buffer empty;
  CHECK(empty.bytes().empty());
  CHECK_FALSE(empty.sync_to_device().ok());
}

// Regression: handles and IOVAs of another open file bound and ran "ok" (rocket resolves
// them to this file's BOs); a program prepared on one device ran on another's session.
TEST_CASE("operands and programs of another open device are refused") {
  const device d1 = open_device(), d2 = open_device();
  session s1{d1}, s2{d2};
  job mine(d1, fp16_op, 25), theirs(d2, fp16_op, 26);
  auto p1 = s1.prepare(mine.mm.code.view()).value();
  const auto bound = s1.bind(p1, theirs.ops());
  REQUIRE_FALSE(bound.ok());
  CHECK_BREAKS(bound, rules::wrong_device);
  CHECK(bound.err().detail == "feature");
  REQUIRE(s1.bind(p1, mine.ops()).ok());
  CHECK_BREAKS(s2.run(p1), rules::wrong_device);
  CHECK_BREAKS(s2.bind(p1, theirs.ops()), rules::wrong_device);
  CHECK(s1.run(p1).ok());
}

// Regression: int8 mode was a session's: session A in int8, session B fp16, A int8 again
// skipped the reset (rknpu) and the wedged job timed out.
TEST_CASE("the NPU's int8 mode is the node's, whichever session or device ran last") {
  const device d = open_device();
  const device again = open_device();  // a second open of the same node
  int8_and_fp16 a(d);
  session b{again};
  job f16(again, fp16_op, 27);
  auto pb = b.prepare(f16.mm.code.view()).value();
  REQUIRE(b.bind(pb, f16.ops()).ok());
  REQUIRE(a.npu.run(a.pi).ok());  // the node in int8
  REQUIRE(b.run(pb).ok());        // and out of it
  const auto back = a.npu.run(a.pi);
  REQUIRE_MESSAGE(back.ok(), to_string(back.err()));
  CHECK(back.value().reset);  // rknpu: RKNPU_ACT_RESET; rocket: the kernel's after the wedge
  CHECK(a.i8.error() == 0);
  CHECK(f16.error() < 1e-4);
}

// Runs on one node from several threads and sessions: every result right, every int8
// entry primed (run holds the node's lock; ThreadSanitizer runs this case too).
TEST_CASE("sessions on several threads share one node safely") {
  const device d = open_device();
  session shared{d};
  constexpr int threads = 4, runs = 6;
  std::vector<double> errors(threads, -1);
  std::vector<std::string> failures(threads);
  std::barrier round(threads);  // every round, each thread runs once: int8 and fp16 interleave
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      session own{d};
      session& npu = t % 2 ? own : shared;  // two threads share a session
      job j(d, t % 2 ? int8_op : fp16_op, 30 + static_cast<std::uint32_t>(t));
      auto p = npu.prepare(j.mm.code.view());
      if (!p || !npu.bind(p.value(), j.ops())) failures[static_cast<std::size_t>(t)] = "prepare or bind";
      for (int i = 0; i < runs; ++i) {
        round.arrive_and_wait();
        if (!failures[static_cast<std::size_t>(t)].empty()) continue;
        if (const auto r = npu.run(p.value()); !r) failures[static_cast<std::size_t>(t)] = to_string(r.err());
      }
      if (failures[static_cast<std::size_t>(t)].empty()) errors[static_cast<std::size_t>(t)] = j.error();
    });
  for (std::thread& t : pool) t.join();
  for (int t = 0; t < threads; ++t) {
    CHECK_MESSAGE(failures[static_cast<std::size_t>(t)].empty(), failures[static_cast<std::size_t>(t)]);
    CHECK(errors[static_cast<std::size_t>(t)] >= 0);
    CHECK(errors[static_cast<std::size_t>(t)] < 1e-4);
  }
}

// Regression: jobs of one submit share a fence context, so the last job's fence replaced
// the first's on the buffer run waited on: a wedged first job (int8 entry) read as done,
// no re-run, a wrong result reported as ok.
TEST_CASE("rocket: every job's completion is read: a wedged first job of a split plan is run again") {
  const device d = open_device(driver::rocket);
  session npu{d};
  const auto built = build(plan_request{matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 16, .K = 8192, .N = 64}, {.k_slice = 2048}});
  REQUIRE(built.ok());
  const auto& plan = built.value();
  REQUIRE(plan.view().tasks.size() >= 3);
  job f16(d, fp16_op, 28);
  auto pf = npu.prepare(f16.mm.code.view()).value();
  REQUIRE(npu.bind(pf, f16.ops()).ok());
  // int8 data: A = 1, B = 2 everywhere: every output is 2K
  const buffer a = make(d, matmul::plan_feature_bytes(plan.geometry)), b = make(d, plan.geometry.weight_bytes());
  const buffer c = make(d, matmul::plan_output_bytes(plan.geometry));
  const std::uint32_t M = 16, K = 8192, N = 64;
  REQUIRE(matmul::pack_features<std::int8_t>(plan.geometry.whole, std::vector<std::int8_t>(std::size_t{M} * K, 1), a.bytes()).ok());
  REQUIRE(matmul::pack_weights<std::int8_t>(plan.geometry, std::vector<std::int8_t>(std::size_t{K} * N, 2), b.bytes()).ok());
  auto split = npu.prepare(plan.view(), {cores::all}).value();
  REQUIRE(npu.bind(split, {.feature = &a, .weight = &b, .output = &c}).ok());
  REQUIRE(npu.run(split).ok());  // the output warm
  REQUIRE(npu.run(pf).ok());     // out of int8 mode: the next int8 job wedges
  std::fill(c.bytes().begin(), c.bytes().end(), std::uint8_t{0});
  REQUIRE(c.sync_to_device().ok());
  const auto before = stats();
  const auto r = npu.run(split);
  REQUIRE_MESSAGE(r.ok(), to_string(r.err()));
  CHECK(r.value().reset);
  CHECK(r.value().submits == 2);  // the submit whose first job wedged, and its re-run
  CHECK(stats().kernel_resets == before.kernel_resets + 1);
  std::vector<std::int64_t> out(std::size_t{M} * N);
  REQUIRE(matmul::finish_plan<std::int64_t>(plan.geometry, c.bytes(), out).ok());
  CHECK(std::all_of(out.begin(), out.end(), [](std::int64_t v) { return v == 2 * 8192; }));
}

// Regression: a program with no address slots, bound with nothing, listed no rocket job:
// run submitted none and reported ok.
TEST_CASE("a program that binds nothing still submits its task") {
  const device d = open_device();
  session npu{d};
  program<16, 1> bare;
  REQUIRE(fill(bare, [](program_writer& w) {
            w.begin_task();
            w.end_task(reg::GLOBAL_OPERATION_ENABLE{.DPU_OP_EN = 1}, dpu_done_interrupts);
          }).ok());
  auto p = npu.prepare(bare.view());
  REQUIRE_MESSAGE(p.ok(), to_string(p.err()));
  REQUIRE(npu.bind(p.value(), {}).ok());
  const auto before = stats();
  (void)npu.run(p.value());  // what the model makes of an empty DPU op does not matter here
  const auto after = stats();
  CHECK(after.submits == before.submits + 1);
  if (d.kind() == driver::rocket) CHECK(after.jobs_done + after.timeouts == before.jobs_done + before.timeouts + 1);
}

// Run with REGCMD_EMU_FAULTS=timeout@2.2,timeout@3.1 REGCMD_EMU_STOP_MS=300 (its own ctest
// entry). Regression: the emulated device stopped every job of a faulty submit at once and
// ignored PREP_BO's deadline, so neither a per-job failure nor a wait cut short could show.
TEST_CASE("job fault: rocket stops one job of a split submit; a wait shorter than the stop times out") {
  REQUIRE_MESSAGE(std::getenv("REGCMD_EMU_FAULTS") != nullptr, "this case runs with REGCMD_EMU_FAULTS set");
  const device d = open_device(driver::rocket);
  session npu{d};
  const std::uint32_t M = 16, K = 96, N = 64;
  const auto built = build(plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = M, .K = K, .N = N}, {.k_slice = 32}});
  REQUIRE(built.ok());
  const auto& plan = built.value();
  REQUIRE(plan.view().tasks.size() == 3);
  const buffer a = make(d, matmul::plan_feature_bytes(plan.geometry)), b = make(d, plan.geometry.weight_bytes());
  const buffer c = make(d, matmul::plan_output_bytes(plan.geometry));
  // A = 1, B = 0.5 everywhere: every output is K / 2
  REQUIRE(matmul::pack_features<float>(plan.geometry.whole, std::vector<float>(std::size_t{M} * K, 1.0f), a.bytes()).ok());
  REQUIRE(matmul::pack_weights<float>(plan.geometry, std::vector<float>(std::size_t{K} * N, 0.5f), b.bytes()).ok());
  auto split = npu.prepare(plan.view(), {cores::all}).value();
  REQUIRE(npu.bind(split, {.feature = &a, .weight = &b, .output = &c}).ok());

  // submit 1 warms the output up; submit 2's second job is stopped, the other two complete
  const auto before = stats();
  const auto stopped = npu.run(split);
  REQUIRE_FALSE(stopped.ok());
  CHECK_BREAKS(stopped, rules::submit_timeout);
  CHECK(stopped.err().os_errno == ECANCELED);
  CHECK(stopped.err().note() == "rocket job 1: the kernel stopped it and reset its core");
  CHECK(stats().timeouts == before.timeouts + 1);
  CHECK(stats().jobs_done == before.jobs_done + 3 + 2);

  // submit 3's first job is stopped only after 300 ms: a 50 ms wait, and a 20 ms PREP_BO
  // deadline, end before it; a longer PREP_BO returns once the kernel has stopped it
  const auto cut_short = npu.run(split, {.timeout_ms = 50});
  REQUIRE_FALSE(cut_short.ok());
  CHECK(cut_short.err().os_errno == ETIMEDOUT);
  CHECK(cut_short.err().note() == "rocket job 0 fence");
  const status waited = c.sync_from_device(20);
  REQUIRE_FALSE(waited.ok());
  CHECK((waited.err().os_errno == EBUSY || waited.err().os_errno == ETIMEDOUT));
  CHECK(c.sync_from_device(2000).ok());

  // the kernel reset the core: the next submit runs, and every output is K / 2
  const auto next = npu.run(split);
  REQUIRE_MESSAGE(next.ok(), to_string(next.err()));
  std::vector<float> out(std::size_t{M} * N);
  REQUIRE(matmul::finish_plan<float>(plan.geometry, c.bytes(), out).ok());
  CHECK(std::all_of(out.begin(), out.end(), [](float v) { return v == K / 2.0f; }));
}
