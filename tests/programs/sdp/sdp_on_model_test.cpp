// SDP element-wise programs end to end on the functional model: every op, dtype, operand
// kind and layout against a host computation on random data, and the faults it reports.
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <regcmd/model/npu.hpp>
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/sdp/packing.hpp>
#include <regcmd/rules/program_rules.hpp>
#include <regcmd/reference/elementwise.hpp>

#include "model_board.hpp"

using namespace regcmd;
using model::fault_kind;

namespace {

// Buffers of a standalone SDP op: a, b and out.
struct sdp_bench : testing::model_board {
  std::vector<std::uint8_t>&a, &b, &c;
  explicit sdp_bench(const runtime_program<ew_geometry>& p)
      : a(allocate(operand_role::feature, p.geometry.tensor_bytes())),
        b(allocate(operand_role::ew_operand, std::max<std::size_t>(16, p.geometry.operand_bytes()))),
        c(allocate(operand_role::output, p.geometry.tensor_bytes(), 0xee)) {}
};


// Runs one op on random data; returns the largest difference from the host computation
// (fp16 rounded once from fp32, integers saturated).
template <class T>
double run_case(const ew_spec& spec, std::uint32_t seed) {
  auto built = build(spec);
  REQUIRE_MESSAGE(built.ok(), built.err().id());
  const runtime_program<ew_geometry>& p = built.value();
  const ew_geometry& g = p.geometry;
  sdp_bench bench(p);
  std::mt19937 rng(seed);
  const std::size_t count = std::size_t{g.M} * g.N;
  std::vector<T> a(count), b(spec.operand == ew_operand::per_channel ? g.N : count), c(count);
  auto draw = [&]() -> T {
    if constexpr (std::is_same_v<T, float>) return half_to_float(float_to_half(std::uniform_real_distribution<float>(-4, 4)(rng)));
    else return static_cast<T>(std::uniform_int_distribution<int>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())(rng));
  };
  for (T& v : a) v = draw();
  for (T& v : b) v = draw();
  REQUIRE(sdp::pack_tensor<T>(g, a, bench.a).ok());
  if (spec.operand == ew_operand::per_element) REQUIRE(sdp::pack_tensor<T>(g, b, bench.b).ok());
  if (spec.operand == ew_operand::per_channel) REQUIRE(sdp::pack_vector<T>(g, b, bench.b).ok());
  const auto r = bench.run(p.view());
  REQUIRE_MESSAGE(r.faults.empty(), r.faults.front().what);
  REQUIRE(r.tasks_completed == p.view().tasks.size());
  REQUIRE(sdp::unpack_tensor<T>(g, bench.c, c).ok());
  double worst = 0;
  for (std::uint32_t m = 0; m < g.M; ++m)
    for (std::uint32_t n = 0; n < g.N; ++n) {
      const std::size_t i = std::size_t{m} * g.N + n;
      const double y = spec.operand == ew_operand::per_channel ? b[n]
                       : spec.operand == ew_operand::immediate ? spec.immediate
                                                               : b[i];
      double want = reference::apply<double>(spec.op, a[i], y);
      if constexpr (std::is_same_v<T, float>) want = half_to_float(float_to_half(static_cast<float>(want)));
      else want = std::clamp<double>(want, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
      worst = std::max(worst, std::abs(want - c[i]));
    }
  return worst;
}

}  // namespace

TEST_CASE("every op, dtype and operand kind on the model, against the host") {
  for (const ew_op op : {ew_op::add, ew_op::mul, ew_op::max, ew_op::min}) {
    CAPTURE(static_cast<int>(op));
    for (const ew_operand operand : {ew_operand::per_element, ew_operand::per_channel}) {
      CAPTURE(static_cast<int>(operand));
      CHECK(run_case<float>({.op = op, .M = 37, .N = 24, .operand = operand}, 1) == 0);
      CHECK(run_case<std::int16_t>({.op = op, .dtype = precision::int16, .M = 9, .N = 40, .operand = operand}, 2) == 0);
      CHECK(run_case<std::int8_t>({.op = op, .dtype = precision::int8, .M = 5, .N = 48, .operand = operand}, 3) == 0);
    }
  }
  for (const ew_op op : {ew_op::add, ew_op::max, ew_op::min})
    CHECK(run_case<float>({.op = op, .M = 6, .N = 16, .operand = ew_operand::immediate, .immediate = 0.75f}, 4) == 0);
}

TEST_CASE("PReLU: the EW multiplier on the negatives only, a slope per channel or per element") {
  // a in [-4, 4]: half the inputs are negative (multiplied), half pass unchanged
  for (const ew_operand operand : {ew_operand::per_channel, ew_operand::per_element})
    for (const operand_layout layout : {operand_layout::surface, operand_layout::row_major}) {
      if (operand == ew_operand::per_channel && layout == operand_layout::row_major) continue;  // rule ew-per-channel-layout
      CAPTURE(static_cast<int>(operand));
      CAPTURE(static_cast<int>(layout));
      CHECK(run_case<float>({.op = ew_op::prelu, .M = 21, .N = 40, .operand = operand, .layout = layout}, 9) == 0);
    }
  // the same program with EW_MUL_PRELU cleared multiplies every value: the bit is what selects
  auto p = build(ew_spec{.op = ew_op::prelu, .M = 8, .N = 16, .operand = ew_operand::per_channel}).value();
  for (entry& e : p.code.entries)
    if (e.target() == 0x1001 && e.offset() == 0x4070) {
      CHECK(e.value() == 0x008003a4);  // 0x00800384 (per-channel mul) | EW_MUL_PRELU (bit 5)
      e = e.with_value(e.value() & ~0x20u);
    }
  sdp_bench bench(p);
  std::vector<float> a(8 * 16, -1.0f), slope(16, 0.5f), c(8 * 16);
  REQUIRE(sdp::pack_tensor<float>(p.geometry, a, bench.a).ok());
  REQUIRE(sdp::pack_vector<float>(p.geometry, slope, bench.b).ok());
  REQUIRE(bench.run(p.view()).faults.empty());
  REQUIRE(sdp::unpack_tensor<float>(p.geometry, bench.c, c).ok());
  CHECK(c[0] == -0.5f);
}

TEST_CASE("N padded to whole atoms, and the flat layout over several chained tasks") {
  CHECK(run_case<float>({.op = ew_op::add, .M = 3, .N = 13}, 5) == 0);
  CHECK(run_case<std::int8_t>({.op = ew_op::max, .dtype = precision::int8, .M = 4, .N = 21}, 6) == 0);
  // 3 * 8000 + 1000 pixels of 8 fp16: four tasks, each its own slice
  CHECK(run_case<float>({.op = ew_op::mul, .M = 200, .N = 1000, .layout = operand_layout::row_major}, 7) == 0);
  CHECK(run_case<float>({.op = ew_op::min, .M = 7, .N = 3, .layout = operand_layout::row_major}, 8) == 0);  // 21 -> 24 elements
}

TEST_CASE("the model faults as the reference documents: a stale fresh output, int32 features wedging the read DMA, an operand buffer too small") {
  auto p = build(ew_spec{.op = ew_op::add, .M = 8, .N = 16}).value();
  {
    sdp_bench bench(p);
    bench.npu.behaviour = {true, false};
    const auto r = bench.run(p.view());
    REQUIRE(r.faults.size() == 1);
    CHECK(r.faults[0].kind == fault_kind::stale_output);  // a fresh output buffer
  }
  {
    // int32 features: the main read DMA stalls
    for (entry& e : p.code.entries)
      if (e.target() == 0x2001 && e.offset() == 0x5044) e = e.with_value((e.value() & ~(7u << 15)) | 4u << 15);
    sdp_bench bench(p);
    const auto r = bench.run(p.view());
    REQUIRE_FALSE(r.faults.empty());
    CHECK(r.faults[0].kind == fault_kind::timeout);
    CHECK(bench.npu.wedged());
  }
  {
    const auto q = build(ew_spec{.op = ew_op::add, .M = 8, .N = 16}).value();
    sdp_bench bench(q);
    bench.allocate(operand_role::ew_operand, 8);  // the operand buffer too small for its DMA
    const auto r = bench.run(q.view());
    REQUIRE_FALSE(r.faults.empty());
    CHECK(r.faults[0].kind == fault_kind::wild_access);
  }
}
