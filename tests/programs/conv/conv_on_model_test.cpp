// Conv programs run on the functional model against the host reference
// (regcmd/reference/conv.hpp), on seeded random data: quantized (uint8, int8) and fp16,
// kernels 1/3/5/7, strides 1/2, SAME and VALID, dilation, depthwise, bias, ReLU/ReLU6, the
// residual add, and shapes the CBUF plan splits into several tasks.
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <regcmd/core/half.hpp>
#include <regcmd/programs/conv/emit.hpp>
#include <regcmd/programs/conv/packing.hpp>
#include <regcmd/reference/conv.hpp>

#include "model_board.hpp"

using namespace regcmd;

namespace {

struct outcome {
  double max_error = 0;  // quantized: output steps; fp16: relative to the tolerance (≤ 1 passes)
  std::uint32_t tasks = 0;
  std::vector<double> out;  // quantized: the outputs, NHWC
};

// Builds the conv, runs it on the model with random operands, and compares every output.
template <class T>
outcome run_quantized(const conv_spec& s, std::uint64_t seed, model::rounding rounding = model::rounding::half_up) {
  const auto built = build(s);
  REQUIRE_MESSAGE(built.ok(), built.err().id());
  const conv_geometry& g = built.value().geometry.conv;
  const reference::conv_window h = reference::window_of(g);
  std::mt19937_64 rng(seed);
  const int lo = std::is_same_v<T, std::uint8_t> ? 0 : -128, hi = lo + 255;
  std::uniform_int_distribution<int> value(lo, hi);
  const std::size_t kernels = s.depthwise ? 1 : s.out_channels;
  std::vector<T> x(std::size_t{s.H} * s.W * s.C), w(kernels * s.kernel_h * s.kernel_w * s.C);
  std::vector<T> r(s.residual_add ? std::size_t{g.out_h} * g.out_w * s.out_channels : 0);
  std::vector<std::int32_t> bias(s.bias ? s.out_channels : 0);
  for (T& v : x) v = static_cast<T>(value(rng));
  for (T& v : w) v = static_cast<T>(value(rng));
  for (T& v : r) v = static_cast<T>(value(rng));
  for (std::int32_t& b : bias) b = std::uniform_int_distribution<std::int32_t>(-20000, 20000)(rng);

  testing::model_board board;
  REQUIRE(conv::pack_features<T>(g, x, tensor_order::nhwc, board.allocate(operand_role::feature, conv::feature_bytes(g))).ok());
  REQUIRE(conv::pack_weights<T>(g, w, conv_weight_order::ohwi, board.allocate(operand_role::weight, conv::weight_bytes(g))).ok());
  REQUIRE(conv::pack_bias<T>(g, bias, w, conv_weight_order::ohwi, board.allocate(operand_role::bias, conv::bias_bytes(g))).ok());
  if (s.residual_add)
    REQUIRE(conv::pack_residual<T>(g, r, tensor_order::nhwc, board.allocate(operand_role::residual, conv::residual_bytes(g))).ok());
  board.allocate(operand_role::output, conv::output_bytes(g), 0xa5);
  board.npu.requantization_rounding = rounding;
  const model::run_result ran = board.run(built.value().view());
  for (const model::fault& f : ran.faults) FAIL_CHECK("task ", f.task, ": ", model::name_of(f.kind), ": ", f.what);
  REQUIRE(ran.completed());
  std::vector<T> out(std::size_t{g.out_h} * g.out_w * s.out_channels);
  REQUIRE(conv::unpack_output<T>(g, board[operand_role::output], tensor_order::nhwc, out).ok());

  outcome o{.tasks = static_cast<std::uint32_t>(built.value().view().tasks.size()), .out = {out.begin(), out.end()}};
  for (std::int64_t oy = 0; oy < h.OH; ++oy)
    for (std::int64_t ox = 0; ox < h.OW; ++ox)
      for (std::int64_t c = 0; c < h.OC; ++c) {
        const double accumulator = h.at<T, T>(x, s.input.zero_point, w, s.weights.zero_point, oy, ox, c).sum +
                                   (s.bias ? bias[static_cast<std::size_t>(c)] : 0);
        const std::size_t i = h.out_index(oy, ox, c);
        const double residual = s.residual_add ? static_cast<double>(r[i]) : 0;
        const double q = reference::quantized_output(s, accumulator, s.residual_add ? &residual : nullptr);
        o.max_error = std::max(o.max_error, std::abs(static_cast<double>(out[i]) - q));
      }
  return o;
}

outcome run_fp16(const conv_spec& s, std::uint64_t seed) {
  const auto built = build(s);
  REQUIRE_MESSAGE(built.ok(), built.err().id());
  const conv_geometry& g = built.value().geometry.conv;
  const reference::conv_window h = reference::window_of(g);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const auto half = [&] { return half_to_float(float_to_half(value(rng))); };
  const std::size_t kernels = s.depthwise ? 1 : s.out_channels;
  std::vector<float> x(std::size_t{s.H} * s.W * s.C), w(kernels * s.kernel_h * s.kernel_w * s.C);
  std::vector<float> r(s.residual_add ? std::size_t{g.out_h} * g.out_w * s.out_channels : 0);
  std::vector<float> b(s.bias ? s.out_channels : 0);
  for (float& v : x) v = half();
  for (float& v : w) v = half();
  for (float& v : r) v = 4 * half();
  for (float& v : b) v = 2 * half();

  testing::model_board board;
  REQUIRE(conv::pack_features<float>(g, x, tensor_order::nhwc, board.allocate(operand_role::feature, conv::feature_bytes(g))).ok());
  REQUIRE(conv::pack_weights<float>(g, w, conv_weight_order::ohwi, board.allocate(operand_role::weight, conv::weight_bytes(g))).ok());
  if (s.residual_add)
    REQUIRE(conv::pack_residual<float>(g, r, tensor_order::nhwc, board.allocate(operand_role::residual, conv::residual_bytes(g))).ok());
  if (s.bias) REQUIRE(conv::pack_fp16_bias(g, b, board.allocate(operand_role::bias, conv::bias_bytes(g))).ok());
  board.allocate(operand_role::output, conv::output_bytes(g), 0xa5);
  const model::run_result ran = board.run(built.value().view());
  for (const model::fault& f : ran.faults) FAIL_CHECK("task ", f.task, ": ", model::name_of(f.kind), ": ", f.what);
  REQUIRE(ran.completed());
  std::vector<float> out(std::size_t{g.out_h} * g.out_w * s.out_channels);
  REQUIRE(conv::unpack_output<float>(g, board[operand_role::output], tensor_order::nhwc, out).ok());

  outcome o{.tasks = static_cast<std::uint32_t>(built.value().view().tasks.size()), .out = {}};
  for (std::int64_t oy = 0; oy < h.OH; ++oy)
    for (std::int64_t ox = 0; ox < h.OW; ++ox)
      for (std::int64_t c = 0; c < h.OC; ++c) {
        const reference::products p = h.at<float, float>(x, 0, w, 0, oy, ox, c);
        const double size = p.magnitude;
        double v = p.sum;
        const std::size_t i = h.out_index(oy, ox, c);
        if (s.residual_add) v += r[i];
        if (s.bias) v += b[static_cast<std::size_t>(c)];
        v = reference::activate(s.activation, s.leaky_slope, false, v);
        // fp32 accumulation, then one fp16 rounding of the output
        const double allowed = (size + std::abs(v)) * (h.taps() + 2) * std::ldexp(1.0, -24) +
                               (s.out_dtype == precision::fp16 ? std::abs(v) * std::ldexp(1.0, -11) : 0.0) + 1e-30;
        o.max_error = std::max(o.max_error, std::abs(out[i] - v) / allowed);
      }
  return o;
}

}  // namespace

TEST_CASE("quantized convs on the model agree with the host convolution within one step") {
  struct named {
    const char* what;
    conv_spec spec;
    std::uint32_t tasks;
  };
  const quantization u_in{0.02f, 100}, u_w{0.005f, 140}, i_in{0.05f, -5}, i_w{0.01f, 3};
  const named cases[] = {
      {"uint8 3x3 s1 SAME, C 20 (a partial atom), 40 kernels, bias",
       {.dtype = conv_data::uint8, .H = 12, .W = 11, .C = 20, .out_channels = 40, .kernel_h = 3, .kernel_w = 3,
        .padding = conv_padding::same, .input = u_in, .weights = u_w, .output = {0.5f, 90}, .bias = true}, 1},
      {"int8 5x5 s2 VALID, 33 kernels (odd), bias",
       {.dtype = conv_data::int8, .H = 15, .W = 13, .C = 16, .out_channels = 33, .kernel_h = 5, .kernel_w = 5, .stride_y = 2,
        .stride_x = 2, .input = i_in, .weights = i_w, .output = {2.0f, 7}, .bias = true}, 1},
      {"uint8 7x7 s2 SAME, C 3 (an image), ReLU6",
       {.dtype = conv_data::uint8, .H = 20, .W = 20, .C = 3, .out_channels = 24, .kernel_h = 7, .kernel_w = 7, .stride_y = 2,
        .stride_x = 2, .padding = conv_padding::same, .input = u_in, .weights = u_w, .output = {6.0f / 255, 0},
        .activation = output_activation::relu6}, 1},
      {"int8 1x1 pointwise, ReLU after a residual add",
       {.dtype = conv_data::int8, .H = 9, .W = 7, .C = 64, .out_channels = 64, .input = i_in, .weights = i_w,
        .output = {1.0f, -10}, .bias = true, .residual_add = true, .residual = {0.1f, 4},
        .activation = output_activation::relu}, 1},
      {"uint8 depthwise 3x3 s1 SAME, bias, ReLU6",
       {.dtype = conv_data::uint8, .H = 10, .W = 12, .C = 48, .out_channels = 48, .kernel_h = 3, .kernel_w = 3,
        .padding = conv_padding::same, .depthwise = true, .input = u_in, .weights = u_w, .output = {6.0f / 255, 0},
        .bias = true, .activation = output_activation::relu6}, 1},
      {"int8 depthwise 3x3 s2 SAME, C 40",
       {.dtype = conv_data::int8, .H = 11, .W = 9, .C = 40, .out_channels = 40, .kernel_h = 3, .kernel_w = 3, .stride_y = 2,
        .stride_x = 2, .padding = conv_padding::same, .depthwise = true, .input = i_in, .weights = i_w,
        .output = {0.5f, 0}}, 1},
      {"int8 3x3 dilation 2, explicit padding 1,2,3,0",
       {.dtype = conv_data::int8, .H = 12, .W = 12, .C = 32, .out_channels = 32, .kernel_h = 3, .kernel_w = 3,
        .dilation_y = 2, .dilation_x = 2, .padding = conv_padding::explicit_sides, .pad = {1, 2, 3, 0}, .input = i_in,
        .weights = i_w, .output = {3.0f, 0}}, 1},
      {"uint8 depthwise 100x100x48 SAME: Mesa's five row tasks",
       {.dtype = conv_data::uint8, .H = 100, .W = 100, .C = 48, .out_channels = 48, .kernel_h = 3, .kernel_w = 3,
        .padding = conv_padding::same, .depthwise = true, .input = u_in, .weights = u_w, .output = {0.05f, 128},
        .bias = true}, 5},
      {"int8 3x3 s1 SAME, bias, leaky ReLU 0.1 (the BN multiplier on the accumulator)",
       {.dtype = conv_data::int8, .H = 9, .W = 10, .C = 32, .out_channels = 40, .kernel_h = 3, .kernel_w = 3,
        .padding = conv_padding::same, .input = i_in, .weights = i_w, .output = {1.0f, 3}, .bias = true,
        .activation = output_activation::leaky_relu, .leaky_slope = 0.1f}, 1},
      {"uint8 depthwise 3x3, leaky ReLU 0.25",
       {.dtype = conv_data::uint8, .H = 8, .W = 8, .C = 32, .out_channels = 32, .kernel_h = 3, .kernel_w = 3,
        .padding = conv_padding::same, .depthwise = true, .input = u_in, .weights = u_w, .output = {0.05f, 128},
        .activation = output_activation::leaky_relu, .leaky_slope = 0.25f}, 1},
      {"int8 3x3 200x256x16: three row tasks",
       {.dtype = conv_data::int8, .H = 200, .W = 256, .C = 16, .out_channels = 8, .kernel_h = 3, .kernel_w = 3,
        .padding = conv_padding::same, .input = i_in, .weights = i_w, .output = {2.0f, 0}, .bias = true}, 3},
      {"int8 3x3 14x14x256 -> 256: two kernel groups",
       {.dtype = conv_data::int8, .H = 14, .W = 14, .C = 256, .out_channels = 256, .kernel_h = 3, .kernel_w = 3,
        .padding = conv_padding::same, .input = i_in, .weights = i_w, .output = {8.0f, 0}, .bias = true}, 2},
  };
  std::uint64_t seed = 1;
  for (const named& c : cases) {
    CAPTURE(c.what);
    const outcome o = c.spec.dtype == conv_data::uint8 ? run_quantized<std::uint8_t>(c.spec, seed++)
                                                    : run_quantized<std::int8_t>(c.spec, seed++);
    CHECK(o.tasks == c.tasks);
    CHECK(o.max_error <= 1.0);
  }
}

TEST_CASE("the model's requantization rounding is a parameter: truncating moves outputs, within the step") {
  const conv_spec s{.dtype = conv_data::int8, .H = 8, .W = 8, .C = 32, .out_channels = 32, .kernel_h = 3, .kernel_w = 3,
                    .padding = conv_padding::same, .input = {0.05f, 0}, .weights = {0.01f, 0}, .output = {1.0f, 0},
                    .bias = true};
  const outcome nearest = run_quantized<std::int8_t>(s, 7), floor = run_quantized<std::int8_t>(s, 7, model::rounding::truncate);
  CHECK(nearest.max_error <= 1.0);
  CHECK(floor.max_error <= 1.0);
  std::size_t moved = 0;
  for (std::size_t i = 0; i < nearest.out.size(); ++i) {
    CHECK(floor.out[i] <= nearest.out[i]);  // floor never above round-half-up
    moved += floor.out[i] != nearest.out[i];
  }
  CHECK(moved > 0);
}

TEST_CASE("fp16 convs on the model agree with the host convolution within fp32 accumulation") {
  struct named {
    const char* what;
    conv_spec spec;
  };
  const named cases[] = {
      {"3x3 s1 SAME, 40 kernels, fp16 out",
       {.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 10, .W = 9, .C = 32, .out_channels = 40, .kernel_h = 3,
        .kernel_w = 3, .padding = conv_padding::same}},
      {"1x1, C 64, fp32 out, ReLU",
       {.dtype = conv_data::fp16, .out_dtype = precision::fp32, .H = 6, .W = 8, .C = 64, .out_channels = 64,
        .activation = output_activation::relu}},
      {"depthwise 3x3 C 24, ReLU6",
       {.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 9, .W = 9, .C = 24, .out_channels = 24, .kernel_h = 3,
        .kernel_w = 3, .padding = conv_padding::same, .depthwise = true, .activation = output_activation::relu6}},
      {"5x5 s2 VALID with a residual add",
       {.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 13, .W = 15, .C = 16, .out_channels = 16, .kernel_h = 5,
        .kernel_w = 5, .stride_y = 2, .stride_x = 2, .residual_add = true}},
      {"3x3 SAME, leaky ReLU 0.1 (fp16 multiplier 0x2e66), fp16 out",
       {.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 8, .W = 7, .C = 16, .out_channels = 24, .kernel_h = 3,
        .kernel_w = 3, .padding = conv_padding::same, .activation = output_activation::leaky_relu, .leaky_slope = 0.1f}},
      {"3x3 SAME, 40 kernels, a bias per channel and ReLU6 (the EW stage)",
       {.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 10, .W = 9, .C = 32, .out_channels = 40, .kernel_h = 3,
        .kernel_w = 3, .padding = conv_padding::same, .bias = true, .activation = output_activation::relu6}},
      {"depthwise 3x3 s2 C 24, a bias, ReLU",
       {.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 9, .W = 9, .C = 24, .out_channels = 24, .kernel_h = 3,
        .kernel_w = 3, .stride_y = 2, .stride_x = 2, .padding = conv_padding::same, .depthwise = true, .bias = true,
        .activation = output_activation::relu}},
      {"3x3 C 256 into 256 kernels in groups, a bias: each group reads its channels' biases",
       {.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 4, .W = 4, .C = 256, .out_channels = 256, .kernel_h = 3,
        .kernel_w = 3, .padding = conv_padding::same, .bias = true}},
      {"7x7 s1 SAME, C 3, fp32 out",
       {.dtype = conv_data::fp16, .out_dtype = precision::fp32, .H = 12, .W = 12, .C = 3, .out_channels = 8, .kernel_h = 7,
        .kernel_w = 7, .padding = conv_padding::same}},
  };
  std::uint64_t seed = 100;
  for (const named& c : cases) {
    CAPTURE(c.what);
    CHECK(run_fp16(c.spec, seed++).max_error <= 1.0);
  }
}
