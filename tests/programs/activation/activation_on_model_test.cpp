// Activation programs end to end on the functional model: the ReLU family for every dtype
// and layout against the host reference (regcmd/reference/activation.hpp) on random data,
// and every lookup-table function against the reference's exact function over a dense
// sweep of fp16 inputs (all of them within 1.25x the function's range), with the accuracy
// bounds bench/README.md reports.
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <regcmd/core/half.hpp>
#include <regcmd/model/npu.hpp>
#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/sdp/packing.hpp>
#include <regcmd/reference/activation.hpp>

#include "model_board.hpp"

using namespace regcmd;

namespace {

// Runs an activation program on x; returns out.
template <class T>
std::vector<T> run_on_model(const runtime_program<act_geometry>& p, const std::vector<T>& x) {
  const act_geometry& g = p.geometry;
  testing::model_board board;
  auto& in = board.allocate(operand_role::feature, g.tensor_bytes());
  auto& out = board.allocate(operand_role::output, g.tensor_bytes(), 0xee);
  REQUIRE(sdp::pack_tensor<T>(g, x, in).ok());
  const auto r = board.run(p.view());
  REQUIRE_MESSAGE(r.faults.empty(), r.faults.front().what);
  REQUIRE(r.tasks_completed == p.view().tasks.size());
  std::vector<T> y(x.size());
  REQUIRE(sdp::unpack_tensor<T>(g, out, y).ok());
  return y;
}

runtime_program<act_geometry> built(const act_spec& s) {
  auto r = build(s);
  REQUIRE_MESSAGE(r.ok(), r.err().id());
  return std::move(r).value();
}

using reference::to_fp16;

template <class T>
void check_relu_family(const act_spec& s, std::uint32_t seed) {
  CAPTURE(static_cast<int>(s.fn));
  CAPTURE(static_cast<int>(s.dtype));
  CAPTURE(static_cast<int>(s.layout));
  const auto p = built(s);
  std::mt19937 rng(seed);
  std::vector<T> x(std::size_t{s.M} * s.N);
  for (T& v : x) {
    if constexpr (std::is_same_v<T, float>) v = to_fp16(std::uniform_real_distribution<double>(-10, 10)(rng));
    else v = static_cast<T>(std::uniform_int_distribution<int>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())(rng));
  }
  const std::vector<T> y = run_on_model(p, x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    double want = reference::relu_family(s, x[i]);
    if constexpr (std::is_same_v<T, float>) want = to_fp16(want);
    else want = reference::saturate_to<T>(want);
    CAPTURE(x[i]);
    REQUIRE(static_cast<double>(y[i]) == want);
  }
}

// The largest absolute error, and the largest relative one where |f| >= 2^-4, of a table
// function over every fp16 input in [lo, hi].
struct accuracy {
  double absolute = 0, relative = 0;
};

accuracy sweep(activation fn, double lo, double hi) {
  std::vector<float> x;
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float v = half_to_float(static_cast<std::uint16_t>(h));
    if (v >= lo && v <= hi) x.push_back(v);
  }
  const auto p = built({.fn = fn, .M = 1, .N = static_cast<std::uint32_t>(x.size())});
  const std::vector<float> y = run_on_model(p, x);
  accuracy a;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = reference::function(fn, static_cast<double>(x[i])), err = std::abs(y[i] - want);
    a.absolute = std::max(a.absolute, err);
    if (std::abs(want) >= 0.0625) a.relative = std::max(a.relative, err / std::abs(want));
  }
  return a;
}

}  // namespace

TEST_CASE("the ReLU family on the model: every dtype and layout against the host") {
  for (const operand_layout layout : {operand_layout::row_major, operand_layout::surface}) {
    for (const activation fn : {activation::relu, activation::relu6, activation::clip, activation::leaky_relu}) {
      const act_spec f{.fn = fn, .M = 9, .N = 40, .layout = layout, .lo = -2.5f, .hi = 3.0f, .slope = 0.1f};
      check_relu_family<float>(f, 1);
      act_spec i16 = f;
      i16.dtype = precision::int16;
      i16.lo = -300;
      i16.hi = 1000;
      check_relu_family<std::int16_t>(i16, 2);
      act_spec i8 = f;
      i8.dtype = precision::int8;
      i8.N = 48;
      i8.lo = -20;
      i8.hi = 50;
      check_relu_family<std::int8_t>(i8, 3);
    }
  }
}

TEST_CASE("a flat activation over several tasks, and N padded to whole atoms") {
  check_relu_family<float>({.fn = activation::leaky_relu, .M = 200, .N = 1000, .slope = 0.25f}, 4);  // 4 tasks
  check_relu_family<float>({.fn = activation::relu6, .M = 3, .N = 13, .layout = operand_layout::surface}, 5);
  check_relu_family<std::int8_t>({.fn = activation::relu, .dtype = precision::int8, .M = 7, .N = 3}, 6);
}

TEST_CASE("every table function on the model against the exact function, within its stated bound") {
  struct row {
    activation fn;
    double lo, hi;  // the sweep: 1.25x the default range; exp's inputs x - max <= 0
    double max_absolute;
  };
  // Bounds: the measured error (bench/README.md) with a margin of about 1.4x. Near the top
  // of a sweep fp16's own rounding (2^-7 at 8 to 16) is most of it.
  const row rows[] = {
      {activation::sigmoid, -10, 10, 6e-4},     {activation::tanh, -6.25, 6.25, 4e-4},
      {activation::silu, -15, 15, 4e-3},        {activation::gelu, -7.5, 7.5, 1.5e-3},
      {activation::gelu_erf, -7.5, 7.5, 1.5e-3}, {activation::hardswish, -5, 5, 1.5e-3},
      {activation::hardsigmoid, -5, 5, 4e-4},   {activation::exp, -20, 0, 5e-4},
      {activation::mish, -15, 15, 3e-3},        {activation::elu, -10, 10, 6.5e-4},
      {activation::selu, -10, 10, 5.7e-3},      {activation::softplus, -10, 10, 3.1e-3},
  };
  for (const row& r : rows) {
    CAPTURE(static_cast<int>(r.fn));
    const accuracy got = sweep(r.fn, r.lo, r.hi);
    MESSAGE("fn ", static_cast<int>(r.fn), ": max abs error ", got.absolute, ", max rel error (|f| >= 1/16) ", got.relative);
    CHECK(got.absolute <= r.max_absolute);
  }
}
