// The runtime against the emulated rknpu device (run with LD_PRELOAD=libregcmd-emu.so):
// the real ioctl path, its refusals, and the stateful rules.
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/matmul.hpp>
#include <regcmd/programs/packing.hpp>
#include <regcmd/programs/plan.hpp>
#include <regcmd/runtime/session.hpp>

#include "emu_stats.h"

using namespace regcmd;
using namespace regcmd::runtime;

namespace {

regcmd_emu_stats stats() {
  using get = int (*)(regcmd_emu_stats*);
  static const auto fn = reinterpret_cast<get>(dlsym(RTLD_DEFAULT, "regcmd_emu_get_stats"));
  const bool preloaded = fn != nullptr;
  REQUIRE_MESSAGE(preloaded, "run these tests with LD_PRELOAD=libregcmd-emu.so");
  regcmd_emu_stats s{};
  fn(&s);
  return s;
}

device open_device() {
  auto d = device::open();
  REQUIRE_MESSAGE(d.ok(), to_string(d.err()));
  return std::move(d).value();
}

buffer make(const device& d, std::size_t size) {
  auto b = buffer::create(d, size);
  REQUIRE_MESSAGE(b.ok(), to_string(b.err()));
  return std::move(b).value();
}

// A matmul ready to run: program, geometry, buffers filled with random data, reference.
struct job {
  matmul_program mm;
  buffer a, b, c;
  std::vector<double> ref;

  job(const device& d, const matmul_spec& s, std::uint32_t seed)
      : mm{build_matmul(s).value()},
        a{make(d, mm.geometry.feature_bytes())},
        b{make(d, mm.geometry.weight_bytes())},
        c{make(d, mm.geometry.output_bytes())} {
    const auto& g = mm.geometry;
    std::mt19937 rng(seed);
    const std::uint32_t M = g.M, K = g.logical_K, N = g.logical_N;
    ref.assign(std::size_t{M} * N, 0.0);
    std::vector<double> ad(std::size_t{M} * K), bd(std::size_t{K} * N);
    if (g.in == precision::fp16) {
      std::uniform_real_distribution<float> dist(-1, 1);
      std::vector<float> af(ad.size()), bf(bd.size());
      for (std::size_t i = 0; i < af.size(); ++i) ad[i] = af[i] = half_to_float(float_to_half(dist(rng)));
      for (std::size_t i = 0; i < bf.size(); ++i) bd[i] = bf[i] = half_to_float(float_to_half(dist(rng)));
      REQUIRE(pack_features<float>(g, af, a.bytes()).ok());
      REQUIRE(pack_weights<float>(g, bf, b.bytes()).ok());
    } else {
      std::uniform_int_distribution<int> dist(-100, 100);
      std::vector<std::int8_t> ai(ad.size()), bi(bd.size());
      for (std::size_t i = 0; i < ai.size(); ++i) ad[i] = ai[i] = static_cast<std::int8_t>(dist(rng));
      for (std::size_t i = 0; i < bi.size(); ++i) bd[i] = bi[i] = static_cast<std::int8_t>(dist(rng));
      REQUIRE(pack_features<std::int8_t>(g, ai, a.bytes()).ok());
      REQUIRE(pack_weights<std::int8_t>(g, bi, b.bytes()).ok());
    }
    for (std::uint32_t m = 0; m < M; ++m)
      for (std::uint32_t k = 0; k < K; ++k)
        for (std::uint32_t n = 0; n < N; ++n) ref[m * N + n] += ad[m * K + k] * bd[k * N + n];
  }
  operands ops() const { return {.feature = &a, .weight = &b, .output = &c}; }
  double error() const {
    std::vector<float> out(ref.size());
    if (mm.geometry.out == precision::int32) {
      std::vector<std::int32_t> oi(ref.size());
      REQUIRE(unpack_output<std::int32_t>(mm.geometry, c.bytes(), oi).ok());
      for (std::size_t i = 0; i < oi.size(); ++i) out[i] = static_cast<float>(oi[i]);
    } else {
      REQUIRE(unpack_output<float>(mm.geometry, c.bytes(), out).ok());
    }
    double e = 0;
    for (std::size_t i = 0; i < out.size(); ++i) e = std::max(e, std::abs(out[i] - ref[i]));
    return e;
  }
};

constexpr matmul_spec fp16_op{.in = precision::fp16, .out = precision::fp32, .M = 16, .K = 256, .N = 64};
constexpr matmul_spec int8_op{.in = precision::int8, .out = precision::int32, .M = 16, .K = 256, .N = 64};

}  // namespace

TEST_CASE("the device: rknpu found, version reported") {
  const device d = open_device();
  CHECK(d.driver_version().starts_with("rknpu 0.9."));
  CHECK(d.path() == "/dev/dri/card1");
}

TEST_CASE("the device: a missing node, permission denied, the wrong driver") {
  const auto missing = device::open("/dev/dri/card9");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.err().id() == "device-missing");
  CHECK(missing.err().os_errno == ENOENT);
  CHECK(missing.err().note() == "/dev/dri/card9");

  setenv("REGCMD_EMU_OPEN_ERRNO", "13", 1);
  const auto denied = device::open();
  unsetenv("REGCMD_EMU_OPEN_ERRNO");
  CHECK(denied.err().id() == "device-permission");
  CHECK(denied.err().os_errno == EACCES);

  setenv("REGCMD_EMU_DRIVER", "i915", 1);
  const auto other = device::open();
  unsetenv("REGCMD_EMU_DRIVER");
  REQUIRE_FALSE(other.ok());
  CHECK(other.err().id() == "wrong-driver");
  CHECK(other.err().note().find("'i915'") != std::string_view::npos);
  CHECK(to_string(other.err()).find("rknpu card node") != std::string::npos);
}

TEST_CASE("buffers: IOVA, mapping, sync") {
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
  CHECK(first.value().core_mask == 0x1);
  CHECK(j.error() < 1e-4);
  const auto second = npu.run(p.value());
  REQUIRE(second.ok());
  CHECK(second.value().submits == 1);
}

TEST_CASE("refusals: nothing reaches the device") {
  const device d = open_device();
  session npu{d};
  job j(d, fp16_op, 2);
  const auto submits = stats().submits;

  auto p = npu.prepare(j.mm.code.view());
  REQUIRE(p.ok());
  CHECK(npu.run(p.value()).err().id() == "operand-missing");  // not bound
  const auto unpatched = npu.bind(p.value(), {.feature = &j.a, .output = &j.c});
  CHECK(unpatched.err().id() == "operand-missing");
  CHECK(unpatched.err().detail == "weight");
  const buffer small = make(d, 4096);
  CHECK(npu.bind(p.value(), {.feature = &j.a, .weight = &small, .output = &j.c}).err().id() == "operand-extent");

  // a failed rule: an address register holding a literal is not a slot
  program<16, 1> literal;
  REQUIRE(literal
              .fill([](program_writer& w) {
                w.begin_task();
                w.put(reg::CNA_FEATURE_DATA_ADDR{.FEATURE_BASE_ADDR = 0x1000'0000});
                w.end_task({.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1}, dpu_done_interrupts);
              })
              .ok());
  CHECK(npu.prepare(literal.view()).err().id() == "address-slots");
  CHECK(stats().submits == submits);

  // one stable feature buffer per prepared program
  REQUIRE(npu.bind(p.value(), j.ops()).ok());
  const buffer other = make(d, j.mm.geometry.feature_bytes());
  CHECK(npu.bind(p.value(), {.feature = &other, .weight = &j.b, .output = &j.c}).err().id() == "feature-rotation");
  CHECK(stats().submits == submits);
}

TEST_CASE("bind writes what patch_slots writes, and rebinding rewrites only the addresses") {
  const device d = open_device();
  session npu{d};
  // three chained tasks: feature, weight, output and next-task slots
  const auto built = build_plan(matmul_spec{.in = precision::fp16, .out = precision::fp32, .M = 24, .K = 2048, .N = 64},
                                {.k_slice = 2048});
  REQUIRE(built.ok());
  REQUIRE(built.value().tasks.size() == 3);
  const plan_shape& shape = built.value().geometry;
  const buffer a = make(d, plan_feature_bytes(shape)), b = make(d, shape.weight_bytes());
  const buffer c1 = make(d, plan_output_bytes(shape)), c2 = make(d, plan_output_bytes(shape));
  auto p = npu.prepare(built.value().view());
  REQUIRE(p.ok());
  auto expected = [&](const buffer& c) {
    std::vector<entry> code = built.value().entries;
    operand_addresses base{};
    base[static_cast<std::size_t>(operand_role::feature)] = a.iova();
    base[static_cast<std::size_t>(operand_role::weight)] = b.iova();
    base[static_cast<std::size_t>(operand_role::output)] = c.iova();
    base[static_cast<std::size_t>(operand_role::regcmd)] = p.value().regcmd_iova();
    REQUIRE(patch_slots(code, built.value().slots, base).ok());
    std::vector<std::uint8_t> bytes;
    for (const entry& e : code)
      for (std::uint8_t byte : e.to_bytes()) bytes.push_back(byte);
    return bytes;
  };
  auto placed = [&] {
    const auto bytes = p.value().regcmd_bytes();
    return std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(built.value().entries.size() * 8));
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
  REQUIRE(odd.fill([](program_writer& w) {
               w.begin_task();
               w.put_slot<reg::PPU_DST_BASE_ADDR>(operand_role::output, 8, 64);
               w.end_task({.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1}, dpu_done_interrupts);
             }).ok());
  auto p = npu.prepare(odd.view());
  REQUIRE_MESSAGE(p.ok(), to_string(p.err()));
  const buffer c = make(d, 4096);
  const auto bound = npu.bind(p.value(), {.output = &c});
  REQUIRE_FALSE(bound.ok());
  CHECK(bound.err().id() == "address-alignment");
  CHECK(bound.err().subject == "PPU_DST_BASE_ADDR");
  CHECK(npu.run(p.value()).err().id() == "operand-missing");
}

TEST_CASE("int8 entry issues exactly one reset; leaving and re-entering int8 resets again") {
  const device d = open_device();
  session npu{d};
  job i8(d, int8_op, 3), f16(d, fp16_op, 4);
  auto pi = npu.prepare(i8.mm.code.view()).value();
  auto pf = npu.prepare(f16.mm.code.view()).value();
  REQUIRE(npu.bind(pi, i8.ops()).ok());
  REQUIRE(npu.bind(pf, f16.ops()).ok());
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

// Run with REGCMD_EMU_FAULTS=timeout@2 (its own ctest entry): the second submit times out.
TEST_CASE("fault injection: a timed-out submit returns the error, resets, and the next submit succeeds") {
  REQUIRE_MESSAGE(std::getenv("REGCMD_EMU_FAULTS") != nullptr, "this case runs with REGCMD_EMU_FAULTS=timeout@2");
  const device d = open_device();
  session npu{d};
  job j(d, fp16_op, 8);
  auto p = npu.prepare(j.mm.code.view()).value();
  REQUIRE(npu.bind(p, j.ops()).ok());
  const auto resets = stats().resets;
  const auto failed = npu.run(p);  // submit 1: warm-up, submit 2: times out
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.err().id() == "submit-timeout");
  CHECK(failed.err().os_errno == ETIMEDOUT);
  CHECK(stats().timeouts == 1);
  const auto next = npu.run(p);
  REQUIRE_MESSAGE(next.ok(), to_string(next.err()));
  CHECK(next.value().reset);
  CHECK(stats().resets == resets + 1);
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
  CHECK(past.err().id() == "iova-32bit");
}

TEST_CASE("multi-core: one core, round-robin, all three") {
  const device d = open_device();
  session npu{d};
  const auto shape = plan(matmul_spec{.in = precision::fp16, .out = precision::fp32, .M = 512, .K = 512, .N = 64}).value();
  REQUIRE(shape.tasks() == 2);
  std::vector<entry> entries(plan_entries(shape));
  std::vector<slot> slots(16);
  std::vector<task> tasks(2);
  program_writer w{entries, slots, tasks};
  emit_plan(w, shape);
  REQUIRE(w.outcome().ok());
  const program_view view{w.entries(), w.slots(), w.tasks(), true, false};
  const buffer a = make(d, plan_feature_bytes(shape)), b = make(d, shape.weight_bytes()), c = make(d, plan_output_bytes(shape));
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
  CHECK(npu.prepare(delta, {cores::all}).err().id() == "core-split");
}

TEST_CASE("non-blocking submit with a fence") {
  const device d = open_device();
  session npu{d};
  job j(d, fp16_op, 7);
  auto p = npu.prepare(j.mm.code.view()).value();
  REQUIRE(npu.bind(p, j.ops()).ok());
  const auto r = npu.run(p, {.blocking = false});
  REQUIRE_MESSAGE(r.ok(), to_string(r.err()));
  CHECK(j.error() < 1e-4);
}
