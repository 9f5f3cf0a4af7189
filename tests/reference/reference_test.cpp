// The host reference (regcmd/reference/): each op on small tensors whose results are
// evaluated by hand in the comments, so the oracle of every other test is itself checked.
#include <regcmd/testing/doctest.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <regcmd/reference.hpp>

using namespace regcmd;

TEST_CASE("reference rounding: fp16 through fp32 to nearest even, integer outputs saturate") {
  CHECK(reference::to_fp16(1.0 / 3) == 0.333251953125f);  // 0x3555
  CHECK(reference::to_fp16(2049) == 2048.0f);              // halfway between 2048 and 2050: the even one
  CHECK(reference::to_fp16(2051) == 2052.0f);
  CHECK(std::isinf(reference::to_fp16(65520)));  // past the largest half, 65504, by half a step
  CHECK(reference::saturate(precision::int8, 200) == 127);
  CHECK(reference::saturate(precision::int8, -129) == -128);
  CHECK(reference::saturate(precision::int16, -40000) == -32768);
  CHECK(reference::saturate(precision::int32, 3e9) == 3e9);  // an int32 sum is exact
  CHECK(reference::saturate_to<std::uint8_t>(-3) == 0);
}

TEST_CASE("reference activations: the leaky slope as programs hold it, the ReLU family, the table functions") {
  // 0.1f · 2^15 = 3276.8 -> 3277; 0.99999f · 2^15 = 32767.67 -> 32768, held at 2^15 - 1
  CHECK(reference::leaky_slope_held(0.1f, true) == 3277.0 / 32768);
  CHECK(reference::leaky_slope_held(0.99999f, true) == 32767.0 / 32768);
  CHECK(reference::leaky_slope_held(0.1f, false) == 0.0999755859375);  // fp16(0.1), 0x2e66
  CHECK(reference::activate(output_activation::relu6, 0, false, 7.5) == 6);
  CHECK(reference::activate(output_activation::relu, 0, false, -1) == 0);
  CHECK(reference::activate(output_activation::leaky_relu, 0.1f, true, -32768) == -3277);
  CHECK(reference::activate(output_activation::none, 0, false, -2.5) == -2.5);

  const act_spec leaky16{.fn = activation::leaky_relu, .dtype = precision::int16, .slope = 0.1f};
  CHECK(reference::relu_family(leaky16, -16384) == -1638);  // -1638.5 rounds half up
  CHECK(reference::relu_family(leaky16, -5) == -1);         // -0.50003
  CHECK(reference::relu_family(leaky16, 100) == 100);
  const act_spec clip{.fn = activation::clip, .lo = -2.5f, .hi = 3.0f};
  CHECK(reference::relu_family(clip, -7) == -2.5);
  CHECK(reference::relu_family(clip, 9) == 3.0);

  CHECK(reference::function(activation::sigmoid, 0) == 0.5);
  CHECK(reference::function(activation::hardswish, 1) == doctest::Approx(4.0 / 6));  // 1 · (1 + 3) / 6
  CHECK(reference::function(activation::hardsigmoid, -4) == 0);
  CHECK(reference::function(activation::gelu_erf, 1) == doctest::Approx(0.8413447460685429));  // Φ(1)
  CHECK(reference::function(activation::exp, 0) == 1);
  CHECK(std::isnan(reference::function(activation::relu, 1)));  // not a table function
}

TEST_CASE("the host reference's element-wise ops: PReLU on each sign, max, min, mul") {
  CHECK(reference::apply(ew_op::prelu, -2.0, 0.25) == -0.5);
  CHECK(reference::apply(ew_op::prelu, 3.0, 0.25) == 3.0);
  CHECK(reference::apply(ew_op::max, -1.0, -3.0) == -1.0);
  CHECK(reference::apply(ew_op::min, -1.0, -3.0) == -3.0);
  CHECK(reference::apply(ew_op::mul, 1.5, -4.0) == -6.0);
}

TEST_CASE("reference matmul: sums and magnitudes of a 2x2 product") {
  // [1 2; 3 4] · [5 -6; 7 8] = [19 10; 43 14]; magnitudes [19 22; 43 50]
  const std::vector<int> a{1, 2, 3, 4}, b{5, -6, 7, 8};
  const std::vector<reference::products> c = reference::matmul<int, int>(a, b, 2, 2, 2);
  REQUIRE(c.size() == 4);
  CHECK(c[0].sum == 19);
  CHECK(c[1].sum == 10);
  CHECK(c[1].magnitude == 22);
  CHECK(c[2].sum == 43);
  CHECK(c[3].sum == 14);
  CHECK(c[3].magnitude == 50);
}

TEST_CASE("reference conv: padding adds nothing, zero points shift both operands, depthwise reads its channel") {
  // x = 1..9 in a 3x3 image, a 3x3 kernel of ones, one pixel of padding each side
  std::vector<double> x(9), ones(9, 1.0);
  for (int i = 0; i < 9; ++i) x[static_cast<std::size_t>(i)] = i + 1;
  const reference::conv_window h{.H = 3, .W = 3, .C = 1, .OC = 1, .KH = 3, .KW = 3, .top = 1, .left = 1, .OH = 3, .OW = 3};
  CHECK(h.at<double, double>(x, 0, ones, 0, 1, 1, 0).sum == 45);  // the whole image
  CHECK(h.at<double, double>(x, 0, ones, 0, 0, 0, 0).sum == 12);  // 1 + 2 + 4 + 5
  CHECK(h.at<double, double>(x, 1, ones, 0, 0, 0, 0).sum == 8);   // 0 + 1 + 3 + 4: padding is the zero point
  CHECK(h.at<double, double>(x, 0, ones, 2, 0, 0, 0).sum == -12); // (1 + 2 + 4 + 5) · (1 - 2)
  CHECK(h.taps() == 9);
  // depthwise, two channels interleaved (NHWC): channel 1 holds 10x channel 0
  std::vector<double> x2(18), k2(18, 1.0);
  for (int i = 0; i < 9; ++i) {
    x2[static_cast<std::size_t>(2 * i)] = i + 1;
    x2[static_cast<std::size_t>(2 * i + 1)] = 10 * (i + 1);
  }
  const reference::conv_window d{.H = 3, .W = 3, .C = 2, .OC = 2, .KH = 3, .KW = 3, .OH = 1, .OW = 1, .depthwise = true};
  CHECK(d.at<double, double>(x2, 0, k2, 0, 0, 0, 1).sum == 450);
  CHECK(d.taps() == 9);
  CHECK(d.out_index(0, 0, 1) == 1);
}

TEST_CASE("reference quantized conv output: TFLite's rounding, the activation, the type's clamp, the residual") {
  conv_spec s{.dtype = conv_data::uint8, .input = {0.5f, 128}, .weights = {0.25f, 0}, .output = {1.0f, 10}};
  CHECK(reference::quantized_output(s, 10, nullptr) == 11);     // 10 · 0.125 = 1.25 -> 1, + 10
  CHECK(reference::quantized_output(s, -200, nullptr) == 0);    // -25 + 10 = -15: uint8 holds 0
  s.activation = output_activation::relu6;
  CHECK(reference::quantized_output(s, 100, nullptr) == 16);    // 12.5 held at 6, + 10
  s.activation = output_activation::none;
  s.residual = {0.5f, 4};
  const double stored = 8;                                      // 0.5 · (8 - 4) = 2
  CHECK(reference::quantized_output(s, 10, &stored) == 13);     // 1.25 + 2 = 3.25 -> 3, + 10
  s.dtype = conv_data::int8;
  CHECK(reference::quantized_output(s, 2000, nullptr) == 127);  // 250 + 10: int8 holds 127
}

TEST_CASE("reference pooling: max over the taps inside, the average over the whole window") {
  // [1 -2; 3 4], a 2x2 window at stride 1 with one row and column of padding before
  const std::vector<float> x{1, -2, 3, 4};
  const reference::pool_window p{.H = 2, .W = 2, .C = 1, .KH = 2, .KW = 2, .top = 1, .left = 1};
  const reference::pool_taps corner = p.at<float>(x, 0, 0, 0), whole = p.at<float>(x, 1, 1, 0);
  CHECK(corner.max == 1);
  CHECK(p.value(corner, true) == 0.25);  // 1 / 4: the padded taps count as 0
  CHECK(whole.sum == 6);
  CHECK(whole.magnitude == 10);
  CHECK(p.value(whole, false) == 4);
  CHECK(p.value(whole, true) == 1.5);
}
