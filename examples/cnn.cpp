// A small fp16 CNN as one graph, one submit, on a CIFAR-sized image (32 x 32 x 3):
//   c1     = ReLU(conv 3x3, 3 -> 32 channels, same padding)     32 x 32 x 32
//   p1     = max pool 2x2                                       16 x 16 x 32
//   c2     = ReLU(conv 3x3, 32 -> 64 channels, same padding)    16 x 16 x 64
//   p2     = global average                                      1 x  1 x 64
//   logits = p2 · W_fc (a matmul, 64 -> 10 classes)
// built at compile time (a shape that breaks a rule, or two ops that disagree on a tensor's
// format, would not compile). The host packs the image and the weights; the intermediates
// live in one arena; the logits are checked against the host's network, computed in double
// from the same fp16 values, with an error bound carried through every layer (a worst case:
// every rounding on the NPU's side against the host's, all adding with one sign).
//
// Exit status: 0 checked, 1 a wrong result, 2 an error, 3 no NPU device here.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/runtime/graph_buffers.hpp>
#include <regcmd/runtime/session.hpp>

#include "example_device.hpp"

using namespace regcmd;

namespace {

constexpr std::uint32_t side = 32, colours = 3, width1 = 32, width2 = 64, classes = 10;

constexpr conv_spec conv3x3(std::uint32_t hw, std::uint32_t in, std::uint32_t out) {
  return {.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = hw, .W = hw, .C = in, .out_channels = out,
          .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::same, .activation = output_activation::relu};
}

constexpr auto cnn = fixed<make_graph(
    graph_conv("c1", "image", "k1", conv3x3(side, colours, width1)),
    graph_pool("p1", "c1", {.op = pool_op::max, .H = side, .W = side, .C = width1}),
    graph_conv("c2", "p1", "k2", conv3x3(side / 2, width1, width2)),
    graph_pool("p2", "c2",
               {.op = pool_op::global_average, .H = side / 2, .W = side / 2, .C = width2, .kernel_h = side / 2,
                .kernel_w = side / 2}),
    graph_matmul("logits", "p2", "w_fc",
                 {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 1, .K = width2, .N = classes}))>();

double fp16(double v) { return half_to_float(float_to_half(static_cast<float>(v))); }
// One fp16 rounding of v moves it by at most half an ulp; a rounding on the other side of
// a tie than the host's, by one ulp: 2^-10 of |v| (normal values).
double rounding(double v) { return std::abs(v) * std::ldexp(1.0, -10) + std::ldexp(1.0, -24); }

// A tensor on the host, NHWC, with each element's error bound against the NPU.
struct host_tensor {
  std::uint32_t H = 0, W = 0, C = 0;
  std::vector<double> value, bound;
  double& at(std::uint32_t y, std::uint32_t x, std::uint32_t c) { return value[(std::size_t{y} * W + x) * C + c]; }
};

// ReLU(3x3 conv, same padding, stride 1) of `in`, OHWI weights, the result rounded to fp16
// as the NPU stores it. The bound: the input's bounds through |w|, the fp32 accumulation
// (2^-23 per tap of the magnitude), the output's rounding.
host_tensor conv_relu(const host_tensor& in, const std::vector<float>& k, std::uint32_t O) {
  host_tensor out{in.H, in.W, O, std::vector<double>(std::size_t{in.H} * in.W * O), {}};
  out.bound.resize(out.value.size());
  for (std::uint32_t y = 0; y < in.H; ++y)
    for (std::uint32_t x = 0; x < in.W; ++x)
      for (std::uint32_t o = 0; o < O; ++o) {
        double acc = 0, magnitude = 0, carried = 0;
        for (std::uint32_t ky = 0; ky < 3; ++ky)
          for (std::uint32_t kx = 0; kx < 3; ++kx) {
            const std::int64_t iy = std::int64_t{y} + ky - 1, ix = std::int64_t{x} + kx - 1;
            if (iy < 0 || ix < 0 || iy >= in.H || ix >= in.W) continue;
            for (std::uint32_t c = 0; c < in.C; ++c) {
              const std::size_t i = (std::size_t(iy) * in.W + std::size_t(ix)) * in.C + c;
              const double w = k[((std::size_t{o} * 3 + ky) * 3 + kx) * in.C + c];
              acc += in.value[i] * w;
              magnitude += std::abs(in.value[i] * w);
              carried += in.bound[i] * std::abs(w);
            }
          }
        const std::size_t i = (std::size_t{y} * in.W + x) * O + o;
        out.value[i] = fp16(std::max(acc, 0.0));
        out.bound[i] = carried + magnitude * 9 * in.C * std::ldexp(1.0, -23) + rounding(out.value[i]);
      }
  return out;
}

host_tensor max_pool_2x2(const host_tensor& in) {
  host_tensor out{in.H / 2, in.W / 2, in.C, std::vector<double>(std::size_t{in.H / 2} * (in.W / 2) * in.C), {}};
  out.bound.resize(out.value.size());
  for (std::uint32_t y = 0; y < out.H; ++y)
    for (std::uint32_t x = 0; x < out.W; ++x)
      for (std::uint32_t c = 0; c < in.C; ++c) {
        double m = -INFINITY, b = 0;
        for (std::uint32_t dy = 0; dy < 2; ++dy)
          for (std::uint32_t dx = 0; dx < 2; ++dx) {
            const std::size_t i = ((std::size_t{2} * y + dy) * in.W + 2 * x + dx) * in.C + c;
            m = std::max(m, in.value[i]);
            b = std::max(b, in.bound[i]);  // the max of values each within its bound
          }
        out.at(y, x, c) = m;
        out.bound[(std::size_t{y} * out.W + x) * in.C + c] = b;
      }
  return out;
}

// The global average: the PPU multiplies the window's sum by fp16(1/taps) per axis (exact
// for a power of two) and rounds to fp16; its sum's own roundings are allowed one ulp per
// tap of the window's largest element.
host_tensor global_average(const host_tensor& in) {
  host_tensor out{1, 1, in.C, std::vector<double>(in.C), std::vector<double>(in.C)};
  const double taps = double(in.H) * in.W;
  for (std::uint32_t c = 0; c < in.C; ++c) {
    double sum = 0, carried = 0, largest = 0;
    for (std::uint32_t i = 0; i < in.H * in.W; ++i) {
      sum += in.value[std::size_t{i} * in.C + c];
      carried += in.bound[std::size_t{i} * in.C + c];
      largest = std::max(largest, std::abs(in.value[std::size_t{i} * in.C + c]));
    }
    out.value[c] = fp16(sum / taps);
    out.bound[c] = carried / taps + largest * std::ldexp(1.0, -10) + rounding(sum / taps);
  }
  return out;
}

std::vector<float> random_fp16(std::mt19937& rng, std::size_t n, float scale) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (float& e : v) e = half_to_float(float_to_half(d(rng)));
  return v;
}

int fail(const error& e) {
  std::fprintf(stderr, "cnn: %s\n", to_string(e).c_str());
  return 2;
}

}  // namespace

int main() {
  int exit_status = 0;
  std::optional<runtime::device> device = example::open_device("cnn", exit_status);
  if (!device) return exit_status;
  const runtime::device& dev = device.value();
  std::printf("device %s: %s\n", dev.path().c_str(), dev.driver_version().c_str());

  // Weights scaled by 1/sqrt(fan-in) so that every layer's values stay near 1.
  std::mt19937 rng(2026);
  const std::vector<float> image = random_fp16(rng, std::size_t{side} * side * colours, 1.0f);
  const std::vector<float> k1 = random_fp16(rng, std::size_t{width1} * 9 * colours, 1.0f / std::sqrt(9.0f * colours));
  const std::vector<float> k2 = random_fp16(rng, std::size_t{width2} * 9 * width1, 1.0f / std::sqrt(9.0f * width1));
  const std::vector<float> fc = random_fp16(rng, std::size_t{width2} * classes, 1.0f / std::sqrt(float(width2)));

  const graph_geometry& g = cnn.geometry;
  auto io = runtime::graph_buffers::create(dev, g);
  if (!io) return fail(io.err());
  for (const auto& [tensor, host] : {std::pair{"image", &image}, std::pair{"k1", &k1}, std::pair{"k2", &k2},
                                     std::pair{"w_fc", &fc}})
    if (status s = io.value().pack<float>(tensor, *host); !s) return fail(s.err());

  runtime::session npu{dev};
  auto prepared = npu.prepare(cnn.view());
  if (!prepared) return fail(prepared.err());
  if (status s = npu.bind(prepared.value(), io.value().operands()); !s) return fail(s.err());
  auto warm = npu.run(prepared.value());  // fresh buffers read stale once (runtime/session.hpp)
  if (!warm) return fail(warm.err());
  auto report = npu.run(prepared.value());
  if (!report) return fail(report.err());
  std::vector<float> logits(classes);
  if (status s = io.value().unpack<float>("logits", logits); !s) return fail(s.err());

  host_tensor x{side, side, colours, std::vector<double>(image.begin(), image.end()),
                std::vector<double>(image.size(), 0.0)};
  const host_tensor p2 = global_average(conv_relu(max_pool_2x2(conv_relu(x, k1, width1)), k2, width2));
  double worst = 0, tightest = INFINITY;
  bool within = true;
  std::printf("class  NPU        host       |diff|     allowed\n");
  for (std::uint32_t n = 0; n < classes; ++n) {
    double want = 0, magnitude = 0, carried = 0;
    for (std::uint32_t c = 0; c < width2; ++c) {
      const double w = fc[std::size_t{c} * classes + n];
      want += p2.value[c] * w;
      magnitude += std::abs(p2.value[c] * w);
      carried += p2.bound[c] * std::abs(w);
    }
    const double allowed = carried + magnitude * width2 * std::ldexp(1.0, -23) + rounding(want);
    const double error = std::abs(logits[n] - fp16(want));
    std::printf("%5u  %+.6f  %+.6f  %.2e   %.2e\n", n, double(logits[n]), fp16(want), error, allowed);
    within = within && error <= allowed;
    worst = std::max(worst, error);
    tightest = std::min(tightest, allowed);
  }
  std::printf("cnn 32x32x3 -> 10: %zu tasks, %u submit%s a run, arena %u of %u intermediate bytes, "
              "max error %.2e (allowed from %.2e): %s\n",
              cnn.view().tasks.size(), report.value().submits, report.value().submits == 1 ? "" : "s", g.arena_bytes(),
              g.intermediates_total, worst, tightest, within ? "PASS" : "FAIL");
  return within ? 0 : 1;
}
