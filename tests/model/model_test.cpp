// The functional model: programs computed on the host, and the faults it reports instead
// of computing where the reference says the hardware does not.
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

#include <regcmd/model/npu.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/packing.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/reference/activation.hpp>
#include <regcmd/reference/matmul.hpp>
#include <regcmd/rules/program_rules.hpp>

#include "model_board.hpp"

using namespace regcmd;
using model::fault_kind;

namespace {

// A small board with a regcmd buffer and the three matmul operands.
struct bench : testing::model_board {
  std::vector<std::uint8_t>&regcmd, &feature, &weight, &output;
  bench(std::size_t code_bytes, std::size_t f, std::size_t w, std::size_t o)
      : regcmd(allocate(operand_role::regcmd, code_bytes + 64)),
        feature(allocate(operand_role::feature, f)),
        weight(allocate(operand_role::weight, w)),
        output(allocate(operand_role::output, o, 0xee)) {
    npu.threads = 2;
  }
};

bool has(const model::run_result& r, fault_kind k) {
  for (const auto& f : r.faults)
    if (f.kind == k) return true;
  return false;
}

// Random operands for geometry g packed into the bench; returns the host reference C.
std::vector<double> fill(bench& b, const matmul_geometry& g, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const std::uint32_t M = g.M, K = g.logical_K, N = g.logical_N;
  std::vector<double> ref;
  if (g.in == precision::fp16) {
    std::uniform_real_distribution<float> d(-1, 1);
    std::vector<float> a(std::size_t{M} * K), w(std::size_t{K} * N);
    for (float& v : a) v = half_to_float(float_to_half(d(rng)));
    for (float& v : w) v = half_to_float(float_to_half(d(rng)));
    REQUIRE(matmul::pack_features<float>(g, a, b.feature).ok());
    REQUIRE(matmul::pack_weights<float>(g, w, b.weight).ok());
    for (const reference::products& p : reference::matmul<float, float>(a, w, M, K, N)) ref.push_back(p.sum);
  } else {
    std::uniform_int_distribution<int> d(g.in == precision::int4 ? -8 : -128, g.in == precision::int4 ? 7 : 127);
    std::vector<std::int8_t> a(std::size_t{M} * K), w(std::size_t{K} * N);
    for (auto& v : a) v = static_cast<std::int8_t>(d(rng));
    for (auto& v : w) v = static_cast<std::int8_t>(d(rng));
    REQUIRE(matmul::pack_features<std::int8_t>(g, a, b.feature).ok());
    REQUIRE(matmul::pack_weights<std::int8_t>(g, w, b.weight).ok());
    for (const reference::products& p : reference::matmul<std::int8_t, std::int8_t>(a, w, M, K, N))
      ref.push_back(reference::saturate(g.out, p.sum));
  }
  return ref;
}

double max_error(const bench& b, const matmul_geometry& g, const std::vector<double>& ref) {
  std::vector<double> c(ref.size());
  if (g.out == precision::fp32 || g.out == precision::fp16) {
    std::vector<float> cf(ref.size());
    REQUIRE(matmul::unpack_output<float>(g, b.output, cf).ok());
    std::copy(cf.begin(), cf.end(), c.begin());
  } else {
    std::vector<std::int32_t> ci(ref.size());
    REQUIRE(matmul::unpack_output<std::int32_t>(g, b.output, ci).ok());
    std::copy(ci.begin(), ci.end(), c.begin());
  }
  double e = 0;
  for (std::size_t i = 0; i < c.size(); ++i) e = std::max(e, std::abs(c[i] - ref[i]));
  return e;
}

runtime_program<matmul_geometry> matmul_program(const matmul_spec& s) {
  const auto r = regcmd::build(s);
  REQUIRE_MESSAGE(r.ok(), r.err().id());
  return r.value();
}

}  // namespace

TEST_CASE("every precision pair computes what a host matmul computes, both layouts") {
  struct pair {
    precision in, out;
    double tolerance;
  };
  for (pair p : {pair{precision::fp16, precision::fp32, 1e-4}, pair{precision::fp16, precision::fp16, 2e-2},
                 pair{precision::int8, precision::int32, 0}, pair{precision::int4, precision::int16, 0}})
    for (operand_layout layout : {operand_layout::row_major, operand_layout::surface})
      for (std::uint32_t M : {1u, 4u, 16u}) {
        if (p.in == precision::int4 && layout == operand_layout::surface) continue;
        CAPTURE(static_cast<int>(p.in));
        CAPTURE(static_cast<int>(layout));
        CAPTURE(M);
        const auto mm = matmul_program({.dtype = p.in, .out_dtype = p.out, .M = M, .K = 96, .N = 40, .layout = layout});
        const matmul_geometry& g = mm.geometry;
        bench b(mm.view().entries.size() * 8, g.feature_bytes(), g.weight_bytes(), g.output_bytes());
        const auto ref = fill(b, g, M);
        const auto r = b.run(mm.code.view());
        CHECK(r.completed());
        CHECK(r.faults.empty());
        CHECK(max_error(b, g, ref) <= p.tolerance);
      }
}

// The model reads operands with its own walk of the registers (model/npu.cpp), not with the
// packers: a packer that lays the weights out wrongly must make the model disagree with the
// host. Here the fp16 weight tile is transposed, element (n, k) of a tile at k%32 * 16 + n%16
// instead of the reference's n%16 * 32 + k%32.
TEST_CASE("a deliberately wrong packer makes the model's result disagree with the host") {
  const auto mm = matmul_program({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 32});
  const matmul_geometry& g = mm.geometry;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> a(4 * 64), w(64 * 32);
  for (float& v : a) v = half_to_float(float_to_half(d(rng)));
  for (float& v : w) v = half_to_float(float_to_half(d(rng)));
  std::vector<double> ref(4 * 32, 0.0);
  for (std::uint32_t m = 0; m < 4; ++m)
    for (std::uint32_t k = 0; k < 64; ++k)
      for (std::uint32_t n = 0; n < 32; ++n) ref[m * 32 + n] += double(a[m * 64 + k]) * w[k * 32 + n];

  auto run_with = [&](bool transposed_tiles) {
    bench b(mm.view().entries.size() * 8, g.feature_bytes(), g.weight_bytes(), g.output_bytes());
    REQUIRE(matmul::pack_features<float>(g, a, b.feature).ok());
    for (std::uint32_t k = 0; k < 64; ++k)
      for (std::uint32_t n = 0; n < 32; ++n) {
        const std::size_t tile = (n / 16) * 16 * 64 + (k / 32) * 512;
        const std::size_t at = tile + (transposed_tiles ? (k % 32) * 16 + n % 16 : (n % 16) * 32 + k % 32);
        const std::uint16_t h = float_to_half(w[k * 32 + n]);
        b.weight[at * 2] = static_cast<std::uint8_t>(h);
        b.weight[at * 2 + 1] = static_cast<std::uint8_t>(h >> 8);
      }
    REQUIRE(b.run(mm.view()).faults.empty());
    return max_error(b, g, ref);
  };
  CHECK(run_with(false) < 1e-4);  // the reference's layout, packed by hand
  CHECK(run_with(true) > 0.1);    // the wrong one: the model does not undo it
}

// int4 weights in the vendor's native N64 × K32 tiles (rknn-matmul-api §1.6: nibble
// ((n/64)·(K/32) + k/32)·2048 + (n%64)·32 + k%32, even nibble low), packed here by hand: the
// model computes the host's result from them, and not from the int8 tiling (N32 × K32)
// regcmd once assumed for int4.
TEST_CASE("int4 weights: the native N64 tiling agrees with the host, an N32 tiling does not") {
  constexpr std::uint32_t M = 4, K = 64, N = 128;
  const auto mm = matmul_program({.dtype = precision::int4, .out_dtype = precision::int16, .M = M, .K = K, .N = N});
  const matmul_geometry& g = mm.geometry;
  REQUIRE(g.weight_bytes() == K * N / 2);
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> d(-8, 7);
  std::vector<std::int8_t> a(M * K), w(K * N);
  for (auto& v : a) v = static_cast<std::int8_t>(d(rng));
  for (auto& v : w) v = static_cast<std::int8_t>(d(rng));
  std::vector<double> ref(M * N, 0.0);
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t k = 0; k < K; ++k)
      for (std::uint32_t n = 0; n < N; ++n) ref[m * N + n] += double(a[m * K + k]) * w[k * N + n];

  auto run_with = [&](std::uint32_t tile_n) {
    bench b(mm.view().entries.size() * 8, g.feature_bytes(), g.weight_bytes(), g.output_bytes());
    REQUIRE(matmul::pack_features<std::int8_t>(g, a, b.feature).ok());
    std::fill(b.weight.begin(), b.weight.end(), std::uint8_t{0});
    for (std::uint32_t k = 0; k < K; ++k)
      for (std::uint32_t n = 0; n < N; ++n) {
        const std::size_t nibble =
            (std::size_t{n / tile_n} * (K / 32) + k / 32) * tile_n * 32 + (n % tile_n) * 32 + k % 32;
        const auto bits = static_cast<std::uint8_t>(w[k * N + n] & 0xf);
        b.weight[nibble / 2] |= static_cast<std::uint8_t>(nibble % 2 ? bits << 4 : bits);
      }
    REQUIRE(b.run(mm.view()).faults.empty());
    return max_error(b, g, ref);
  };
  CHECK(run_with(64) == 0);  // the native tiling
  CHECK(run_with(32) > 0);   // the int8 tiling with nibbles: wrong columns
}

TEST_CASE("a chained plan runs task after task through the PC tails") {
  // K = 4096 in two slices of 2048, whose template-split ceiling (16384/K) splits M = 12
  // into two tiles
  const auto p = plan(matmul_spec{.dtype = precision::fp16,
                                  .out_dtype = precision::fp32,
                                  .M = 12,
                                  .K = 4096,
                                  .N = 64,
                                  .sched = schedule::template_split},
                      plan_options{.k_slice = 2048});
  REQUIRE(p.ok());
  const plan_shape& s = p.value();
  REQUIRE(s.tasks() == 4);
  program<4 * matmul::task_entries, 4> code;
  REQUIRE(fill(code, [&](program_writer& w) { matmul::emit_plan(w, s); }).ok());
  bench b(code.entry_count * 8, matmul::plan_feature_bytes(s), s.weight_bytes(), matmul::plan_output_bytes(s));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> a(12 * 4096), w(4096 * 64);
  for (float& v : a) v = half_to_float(float_to_half(d(rng)));
  for (float& v : w) v = half_to_float(float_to_half(d(rng)));
  REQUIRE(matmul::pack_features<float>(s.whole, a, b.feature).ok());
  REQUIRE(matmul::pack_weights<float>(s, w, b.weight).ok());
  const auto r = b.run(code.view());
  CHECK(r.completed());
  CHECK(r.tasks_completed == s.tasks());
  std::vector<float> c(12 * 64);
  REQUIRE(matmul::finish_plan<float>(s, b.output, c).ok());
  double e = 0;
  for (std::uint32_t m = 0; m < 12; ++m)
    for (std::uint32_t n = 0; n < 64; ++n) {
      double ref = 0;
      for (std::uint32_t k = 0; k < 4096; ++k) ref += double(a[m * 4096 + k]) * w[k * 64 + n];
      e = std::max(e, std::abs(ref - c[m * 64 + n]));
    }
  CHECK(e < 1e-3);
}

namespace {
// The program of `s` with one register's value replaced: a way to break one rule.
struct broken {
  runtime_program<matmul_geometry> mm;
  std::vector<entry> code;
  broken(const matmul_spec& s, std::uint16_t offset, std::uint32_t value) : mm{matmul_program(s)} {
    code.assign(mm.code.view().entries.begin(), mm.code.view().entries.end());
    bool found = false;
    for (entry& e : code)
      if (e.offset() == offset && kind_of(e) == entry_kind::register_write) {
        e = e.with_value(value);
        found = true;
      }
    REQUIRE(found);
  }
  model::run_result run_on(bench& b) { return b.run(code, mm.code.view().slots, mm.code.view().tasks); }
};
constexpr matmul_spec fp16_op{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 512, .N = 64};
}  // namespace

TEST_CASE("faults: a bank split that hangs, the raw K cap, narrow int8 output, small-K zeros") {
  {
    broken p(fp16_op, 0x1040, 0x2b);  // DATA_BANK 11 + WEIGHT_BANK 2 = 13
    bench b(1024, 8192, 65536, 4096);
    const auto r = p.run_on(b);
    CHECK(has(r, fault_kind::hang));
    CHECK_FALSE(r.completed());
    CHECK(b.npu.wedged());
    CHECK(has(b.run(p.mm.code.view()), fault_kind::hang));  // still wedged
    b.npu.reset();
    CHECK(b.run(p.mm.code.view()).completed());
  }
  {
    // the reference's sched=1 below K = 96: zeros
    broken p({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64}, 0x1040, 0xa2);
    bench b(1024, 4096, 8192, 4096);
    const auto r = p.run_on(b);
    CHECK(r.completed());
    CHECK(has(r, fault_kind::zeros));
    CHECK(b.output[0] == 0);
  }
  {
    const auto mm = matmul_program({.dtype = precision::int8, .out_dtype = precision::int32, .M = 4, .K = 64, .N = 64});
    std::vector<entry> code(mm.code.view().entries.begin(), mm.code.view().entries.end());
    for (entry& e : code)
      if (e.offset() == 0x4010) e = e.with_value(0x0);  // int8 -> int8
    bench b(1024, 4096, 8192, 4096);
    CHECK(has(b.run(code, mm.code.view().slots, mm.code.view().tasks), fault_kind::timeout));
  }
  {
    broken p({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 10752, .N = 64}, 0x1024,
             (10783u << 16) | 10784);
    bench b(1024, 32768, 2 * 10784 * 64, 4096);
    CHECK(has(p.run_on(b), fault_kind::wedge));
  }
}

TEST_CASE("faults: N beyond 8192, a wild write, the fp16 output stage") {
  {
    broken p(fp16_op, 0x1038, 0x01010000 | 9000);
    bench b(1024, 8192, 65536, 4096);
    CHECK(has(p.run_on(b), fault_kind::wrong_result));
  }
  {
    const auto mm = matmul_program(fp16_op);
    bench b(1024, mm.geometry.feature_bytes(), mm.geometry.weight_bytes(), mm.geometry.output_bytes());
    b.base[static_cast<std::size_t>(operand_role::output)] = 0x5000'0000;  // no buffer there
    const auto r = b.run(mm.code.view());
    CHECK(has(r, fault_kind::wild_access));
    CHECK_FALSE(r.completed());
  }
  {
    const auto mm = matmul_program({.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 512, .N = 64});
    std::vector<entry> no_cvt(mm.code.view().entries.begin(), mm.code.view().entries.end());
    std::vector<entry> bs_on = no_cvt, atom8 = no_cvt;
    for (entry& e : no_cvt)
      if (e.offset() == 0x4084) e = e.with_value(0x1);
    for (entry& e : bs_on)
      if (e.offset() == 0x4040) e = e.with_value(0x20150);
    for (entry& e : atom8)
      if (e.offset() == 0x4050) e = e.with_value(0x2);
    bench b(1024, 8192, 65536, 4096);
    CHECK(has(b.run(no_cvt, mm.code.view().slots, mm.code.view().tasks), fault_kind::zeros));
    CHECK(has(b.run(bs_on, mm.code.view().slots, mm.code.view().tasks), fault_kind::hang));
    b.npu.reset();
    CHECK(has(b.run(atom8, mm.code.view().slots, mm.code.view().tasks), fault_kind::hang));
  }
}

TEST_CASE("a matmul with an active BN stage on a fp32 output, or an active EW stage, is unmodelled") {
  const auto mm = matmul_program({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 32});
  for (const auto& [offset, value] : {std::pair<std::uint16_t, std::uint32_t>{0x4060, 0x12},      // BN ReLU
                                      std::pair<std::uint16_t, std::uint32_t>{0x4070, 0x302}}) {  // the LUT
    std::vector<entry> code(mm.code.view().entries.begin(), mm.code.view().entries.end());
    for (entry& e : code)
      if (e.target() == 0x1001 && e.offset() == offset) e = e.with_value(value);
    bench b(1024, mm.geometry.feature_bytes(), mm.geometry.weight_bytes(), mm.geometry.output_bytes());
    CHECK(has(b.run(code, mm.code.view().slots, mm.code.view().tasks), fault_kind::unmodelled));
  }
}

TEST_CASE("faults: rows beyond the data banks, a DPU_SURFACE_ADD that points the DPU astray") {
  {
    broken p({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 64, .K = 512, .N = 64}, 0x1040,
             0xb1);  // 1 bank, 2 needed
    bench b(1024, 65536, 65536, 16384);
    CHECK(has(p.run_on(b), fault_kind::wrong_result));
  }
  {
    broken p(fp16_op, 0x40c0, 0x3000'0000);  // an address where a surface count belongs
    bench b(1024, 8192, 65536, 4096);
    CHECK(has(p.run_on(b), fault_kind::hang));
  }
}

TEST_CASE("the board's quirks: cold-start stale output, the int8 entry wedge") {
  const auto mm = matmul_program({.dtype = precision::int8, .out_dtype = precision::int32, .M = 4, .K = 64, .N = 64});
  bench b(1024, mm.geometry.feature_bytes(), mm.geometry.weight_bytes(), mm.geometry.output_bytes());
  b.npu.behaviour = {true, true};
  const auto ref = fill(b, mm.geometry, 9);
  // entering int8 without a reset wedges the first job
  CHECK(has(b.run(mm.code.view()), fault_kind::wedge));
  b.npu.reset();
  // after the reset it completes, but the fresh output buffer is stale the first time
  const auto first = b.run(mm.code.view());
  CHECK(first.completed());
  CHECK(has(first, fault_kind::stale_output));
  CHECK(max_error(b, mm.geometry, ref) > 0);
  const auto second = b.run(mm.code.view());
  CHECK(second.faults.empty());
  CHECK(max_error(b, mm.geometry, ref) == 0);
}

TEST_CASE("a chain that ends before task_number, and a fetch outside every buffer") {
  const auto mm = matmul_program(fp16_op);
  bench b(1024, mm.geometry.feature_bytes(), mm.geometry.weight_bytes(), mm.geometry.output_bytes());
  std::vector<entry> code(mm.code.view().entries.begin(), mm.code.view().entries.end());
  REQUIRE(patch_slots(code, mm.code.view().slots, b.base).ok());
  for (std::size_t i = 0; i < code.size(); ++i) {
    const auto bytes = code[i].to_bytes();
    std::copy(bytes.begin(), bytes.end(), b.regcmd.begin() + static_cast<std::ptrdiff_t>(i * 8));
  }
  CHECK(has(b.npu.run(b.memory, 0x1000'0000, 53, 2, true), fault_kind::hang));
  b.npu.reset();
  CHECK(has(b.npu.run(b.memory, 0x7000'0000, 53, 1, true), fault_kind::wild_access));
}

TEST_CASE("a strided feature view (KV-cache rows at a pitch > K) equals the matmul of the gathered rows") {
  // Rows of 256 fp16 in memory, the matmul reading the first K = 64 of each: CNA_DMA_CON1
  // LINE_STRIDE = pitch / 16 bytes (reference "0x107c ... strided activations").
  constexpr std::uint32_t M = 8, K = 64, N = 32, row = 256;
  const auto strided =
      matmul_program({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = M, .K = K, .N = N, .feature_pitch = row * 2});
  const auto dense = matmul_program({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = M, .K = K, .N = N});
  for (const entry& e : strided.view().entries)
    if (e.target() == 0x0201 && e.offset() == 0x107c) CHECK(e.value() == row * 2 / 16);

  std::mt19937 rng(21);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> cache(std::size_t{M} * row), gathered(std::size_t{M} * K), w(std::size_t{K} * N);
  for (float& v : cache) v = half_to_float(float_to_half(d(rng)));
  for (float& v : w) v = half_to_float(float_to_half(d(rng)));
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t k = 0; k < K; ++k) gathered[m * K + k] = cache[m * row + k];

  bench s(strided.view().entries.size() * 8, strided.geometry.feature_bytes(), strided.geometry.weight_bytes(),
          strided.geometry.output_bytes());
  for (std::size_t i = 0; i < cache.size() && i * 2 + 1 < s.feature.size(); ++i) {
    const std::uint16_t h = float_to_half(cache[i]);
    s.feature[i * 2] = static_cast<std::uint8_t>(h);
    s.feature[i * 2 + 1] = static_cast<std::uint8_t>(h >> 8);
  }
  REQUIRE(matmul::pack_weights<float>(strided.geometry, w, s.weight).ok());
  bench g(dense.view().entries.size() * 8, dense.geometry.feature_bytes(), dense.geometry.weight_bytes(),
          dense.geometry.output_bytes());
  REQUIRE(matmul::pack_features<float>(dense.geometry, gathered, g.feature).ok());
  REQUIRE(matmul::pack_weights<float>(dense.geometry, w, g.weight).ok());
  REQUIRE(s.run(strided.code.view()).faults.empty());
  REQUIRE(g.run(dense.code.view()).faults.empty());
  CHECK(s.output == g.output);
  std::vector<double> ref;
  for (const reference::products& p : reference::matmul<float, float>(gathered, w, M, K, N)) ref.push_back(p.sum);
  CHECK(max_error(s, strided.geometry, ref) < 1e-4);
}

TEST_CASE("a matmul's fused ReLU, ReLU6 and leaky ReLU: the model applies the BN stage to the accumulator") {
  struct row {
    output_activation fn;
    float slope;
  };
  for (const row& r :
       {row{output_activation::relu, 0}, row{output_activation::relu6, 0}, row{output_activation::leaky_relu, 0.1f}})
    for (operand_layout layout : {operand_layout::row_major, operand_layout::surface}) {
      CAPTURE(static_cast<int>(r.fn));
      CAPTURE(static_cast<int>(layout));
      const auto mm = matmul_program({.dtype = precision::fp16,
                             .out_dtype = precision::fp16,
                             .M = 16,
                             .K = 96,
                             .N = 40,
                             .layout = layout,
                             .activation = r.fn,
                             .leaky_slope = r.slope});
      const matmul_geometry& g = mm.geometry;
      bench b(mm.view().entries.size() * 8, g.feature_bytes(), g.weight_bytes(), g.output_bytes());
      std::vector<double> ref = fill(b, g, 7);
      // the sums reach past both ends of every clamp: the stage has something to do
      CHECK(std::count_if(ref.begin(), ref.end(), [](double v) { return v < 0; }) > 50);
      CHECK(std::count_if(ref.begin(), ref.end(), [](double v) { return v > 6; }) > 0);
      for (double& v : ref) v = reference::activate(r.fn, r.slope, false, v);
      const auto result = b.run(mm.code.view());
      CHECK(result.completed());
      CHECK(result.faults.empty());
      CHECK(max_error(b, g, ref) <= 2e-2);
    }
}

// The model keeps its own copy of the SoC's numbers (model::soc_numbers), typed from the
// reference apart from the traits the programs read (core/soc.hpp): the two copies agree.
TEST_CASE("the model's SoC numbers: its RK3588 copy agrees with the traits'") {
  const model::soc_numbers m{};
  CHECK(m.cbuf_banks == soc::rk3588::cbuf_banks);
  CHECK(m.bank_bytes == soc::rk3588::cbuf_bank_bytes);
  CHECK(m.max_k == soc::rk3588::max_k_single_op);
  CHECK(m.max_n == soc::rk3588::max_n);
  CHECK(m.int4_rows_times_k == soc::rk3588::int4_rows_times_k);
  CHECK(m.tile_n_fp16 == soc::rk3588::weight_tile_fp16.n);
  CHECK(m.tile_n_int8 == soc::rk3588::weight_tile_int8.n);
  CHECK(m.tile_n_int4 == soc::rk3588::weight_tile_int4.n);
  CHECK(m.tile_k == soc::rk3588::weight_tile_fp16.k);
}

// The same program judged by a model of other numbers: proof that the model reads its
// parameter, not a constant (no other SoC's numbers are known to be these).
TEST_CASE("the model judges by its SoC numbers: banks, the widest N, the weight tile") {
  const auto mm = matmul_program({.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64});
  const matmul_geometry& g = mm.geometry;
  auto run_with = [&](auto change) {
    bench b(mm.view().entries.size() * 8, g.feature_bytes(), g.weight_bytes(), g.output_bytes());
    const auto ref = fill(b, g, 4);
    change(b.npu.soc);
    const auto r = b.run(mm.code.view());
    return std::pair{r, r.completed() && r.faults.empty() ? max_error(b, g, ref) : -1.0};
  };
  CHECK(run_with([](model::soc_numbers&) {}).second <= 1e-4);
  // 12-bank split of regcmd's program on an 8-bank CBUF: not a split there, it hangs.
  const auto eight_banks = run_with([](model::soc_numbers& s) { s.cbuf_banks = 8; }).first;
  CHECK(has(eight_banks, fault_kind::hang));
  REQUIRE_FALSE(eight_banks.faults.empty());
  CHECK(eight_banks.faults.front().what == "CNA_CBUF_CON0 is not a 8-bank split (DATA_BANK + WEIGHT_BANK = 8, DATA_BANK <= 7)");
  // N = 64 beyond a widest output of 32: silently wrong.
  CHECK(has(run_with([](model::soc_numbers& s) { s.max_n = 32; }).first, fault_kind::wrong_result));
  // Weights read in 8-wide fp16 tiles (RK3566/RK3568's N): the result is not the host's.
  CHECK(run_with([](model::soc_numbers& s) { s.tile_n_fp16 = 8; }).second > 1e-2);
}
