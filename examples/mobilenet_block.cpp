// MobileNet v1's first block, quantized as TFLite runs it (uint8): a 3×3 stride-2 conv
// (224×224×3 → 112×112×32), a 3×3 depthwise conv (112×112×32) and a 1×1 pointwise conv
// (→ 112×112×64), each with its bias and ReLU6, as one graph built at compile time: one
// program, one submit. Each layer reads the NC1HWC2 cube the one before wrote, from the
// graph's arena (the depthwise conv's DPU computes 64 channels, the pointwise reads the
// first 32), so the host packs only the image, the weights and the biases. Every layer's
// output is checked against a host convolution of the NPU's own input to it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/graph/blocks.hpp>
#include <regcmd/programs/conv/packing.hpp>
#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/runtime/graph_buffers.hpp>
#include <regcmd/runtime/session.hpp>

#include "example_device.hpp"

using namespace regcmd;

namespace {

// Built at compile time (regcmd/programs/graph/blocks.hpp): a shape, a quantization or a boundary
// between the layers that breaks a rule would not compile.
constexpr auto block = fixed<mobilenet_v1_block(224)>();

// One layer's host data: NHWC uint8 tensors, OHWI weights, int32 bias.
struct layer_data {
  std::vector<std::uint8_t> weights;
  std::vector<std::int32_t> bias;
};

layer_data random_layer(const conv_spec& s, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255), bias(-3000, 3000);
  layer_data d;
  d.weights.resize(std::size_t{s.depthwise ? 1 : s.out_channels} * s.kernel_h * s.kernel_w * s.C);
  for (std::uint8_t& w : d.weights) w = static_cast<std::uint8_t>(byte(rng));
  d.bias.resize(s.out_channels);
  for (std::int32_t& b : d.bias) b = bias(rng);
  return d;
}

// The layer on the host, as TFLite defines it: real values from the quantized ones, the
// accumulator's scale input·weights, rounded to the output's quantization after ReLU6.
std::vector<std::uint8_t> host_layer(const conv_geometry& g, const std::vector<std::uint8_t>& in, const layer_data& d) {
  const conv_spec& s = g.spec;
  std::vector<std::uint8_t> out(std::size_t{g.out_h} * g.out_w * s.out_channels);
  for (std::uint32_t oy = 0; oy < g.out_h; ++oy)
    for (std::uint32_t ox = 0; ox < g.out_w; ++ox)
      for (std::uint32_t o = 0; o < s.out_channels; ++o) {
        std::int64_t acc = d.bias[o];
        for (std::uint32_t ky = 0; ky < s.kernel_h; ++ky)
          for (std::uint32_t kx = 0; kx < s.kernel_w; ++kx) {
            const std::int64_t y = std::int64_t{oy} * s.stride_y + ky - g.pad.top;
            const std::int64_t x = std::int64_t{ox} * s.stride_x + kx - g.pad.left;
            if (y < 0 || y >= s.H || x < 0 || x >= s.W) continue;  // padding: the zero point, adds 0
            for (std::uint32_t c = s.depthwise ? o : 0; c < (s.depthwise ? o + 1 : s.C); ++c) {
              const std::int64_t a = in[(std::size_t(y) * s.W + std::size_t(x)) * s.C + c] - s.input.zero_point;
              const std::size_t k = s.depthwise ? 0 : o;
              const std::int64_t w = d.weights[((k * s.kernel_h + ky) * s.kernel_w + kx) * s.C + c] - s.weights.zero_point;
              acc += a * w;
            }
          }
        const double real = std::clamp(double(acc) * s.input.scale * s.weights.scale, 0.0, 6.0);
        const double q = std::round(real / s.output.scale) + s.output.zero_point;
        out[(std::size_t{oy} * g.out_w + ox) * s.out_channels + o] = static_cast<std::uint8_t>(std::clamp(q, 0.0, 255.0));
      }
  return out;
}

}  // namespace

// Exit status: 0 checked, 1 a wrong result, 2 an error, 3 no NPU device here.
int main() {
  int exit_status = 0;
  std::optional<runtime::device> device = example::open_device("mobilenet-block", exit_status);
  if (!device) return exit_status;
  std::printf("device %s: %s\n", device.value().path().c_str(), device.value().driver_version().c_str());
  const runtime::device& dev = device.value();
  const auto fail = [](const error& e) {
    std::fprintf(stderr, "mobilenet-block: %s\n", to_string(e).c_str());
    return 2;
  };

  std::mt19937 rng(2026);
  const graph_geometry& g = block.geometry;
  const conv_spec& stem = g.steps[0].conv.conv.spec;
  std::vector<std::uint8_t> image_data(std::size_t{stem.H} * stem.W * stem.C);
  for (std::uint8_t& v : image_data) v = static_cast<std::uint8_t>(std::uniform_int_distribution<int>(0, 255)(rng));
  const layer_data layers[] = {random_layer(stem, rng), random_layer(g.steps[1].conv.conv.spec, rng),
                               random_layer(g.steps[2].conv.conv.spec, rng)};
  const char* names[] = {"3x3 stride-2 conv + ReLU6", "3x3 depthwise + ReLU6", "1x1 pointwise + ReLU6"};
  const char* tensors[] = {"c1", "c2", "c3"};

  auto io = runtime::graph_buffers::create(dev, g);
  if (!io) return fail(io.err());
  if (status st = io.value().pack<std::uint8_t>("image", image_data); !st) return fail(st.err());
  for (int l = 0; l < 3; ++l)
    if (status st = io.value().pack_conv<std::uint8_t>(tensors[l], layers[l].weights, layers[l].bias); !st)
      return fail(st.err());
  runtime::session npu{dev};
  auto prepared = npu.prepare(block.view());
  if (!prepared) return fail(prepared.err());
  if (status st = npu.bind(prepared.value(), io.value().operands()); !st) return fail(st.err());
  const auto report = npu.run(prepared.value());
  if (!report) return fail(report.err());
  // a first run also warms the fresh buffers up (and rocket runs a first int8 job again)
  std::printf("one graph: %zu tasks in one program, run in %u submits the first time, arena %u bytes\n",
              block.view().tasks.size(), report.value().submits, g.arena_bytes());

  if (status st = io.value().read_back(operand_role::intermediate); !st) return fail(st.err());
  std::vector<std::uint8_t> input = image_data;
  int status_code = 0;
  for (int l = 0; l < 3; ++l) {
    const conv_geometry& c = g.steps[static_cast<std::size_t>(l)].conv.conv;
    const conv_spec& s = c.spec;
    // the layer's output where the NPU left it: the arena (c1, c2) or the output buffer (c3)
    const graph_tensor& x = *g.find(tensors[l]);
    std::vector<std::uint8_t> got(std::size_t{c.out_h} * c.out_w * s.out_channels);
    if (status st = conv::unpack_output<std::uint8_t>(c, io.value().bytes(x.role).subspan(x.offset, x.bytes),
                                                      tensor_order::nhwc, got);
        !st)
      return fail(st.err());
    const std::vector<std::uint8_t> expected = host_layer(c, input, layers[l]);
    int worst = 0;
    std::size_t inside = 0;  // outputs neither clamped at 0 nor at 6: the check is not of clamps alone
    for (std::size_t i = 0; i < got.size(); ++i) {
      worst = std::max(worst, std::abs(int(got[i]) - int(expected[i])));
      inside += expected[i] > 0 && expected[i] < 255;
    }
    // one step: the NPU's 15-bit requantization scale and its (undocumented) rounding
    std::printf("%-26s %3ux%3ux%-3u -> %3ux%3ux%-3u %2.0f%% inside (0, 6): max error %d step%s: %s\n", names[l], s.H, s.W,
                s.C, c.out_h, c.out_w, s.out_channels, 100.0 * static_cast<double>(inside) / static_cast<double>(got.size()),
                worst, worst == 1 ? "" : "s", worst <= 1 ? "PASS" : "FAIL");
    if (worst > 1) status_code = 1;
    input = got;  // the next layer read the NPU's output, as a network does
  }
  return status_code;
}
