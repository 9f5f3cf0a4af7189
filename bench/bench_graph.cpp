// Whole blocks in one submit: the LLaMA FFN (docs/graph.md), the small CNN and MobileNet's
// first block as one graph each against one program per op; their arenas against the sums
// of their intermediates; then the host's time to
// prepare, bind and run a block against one op (the block's gate matmul alone), on the NPU
// or the emulated device (LD_PRELOAD=libregcmd-emu.so: there the run is the model's
// arithmetic, the same in both, so its ratio shows the work, not a board's submit cost).
// Exit status 3: no device (the static figures are printed first).
#include <cstdio>
#include <cstdlib>
#include <string>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/graph/blocks.hpp>
#include <regcmd/programs/conv/emit.hpp>
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/programs/pooling/pooling.hpp>
#include <regcmd/runtime/graph_buffers.hpp>
#include <regcmd/runtime/session.hpp>

#include "harness.hpp"

using namespace regcmd;
namespace rt = regcmd::runtime;

namespace {

constexpr matmul_spec fp16_matmul(std::uint32_t M, std::uint32_t K, std::uint32_t N) {
  return {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = M, .K = K, .N = N};
}
// The same block as one program per op, each its own submit: what a one-op-per-call API
// (the vendor's matmul API and a host or SDP activation) does; the down projection's K
// slices are then summed on the host.
unsigned programs_per_op(std::uint32_t M, std::uint32_t D, std::uint32_t F, std::size_t& tasks) {
  const auto gate = build(plan_request{fp16_matmul(M, D, F)});
  const auto act = build(act_spec{.fn = activation::silu, .M = M, .N = F});
  const auto mul = build(ew_spec{.op = ew_op::mul, .M = M, .N = F, .layout = operand_layout::row_major});
  const auto down = build(plan_request{{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = M, .K = F, .N = D}});
  if (!gate || !act || !mul || !down) std::abort();
  tasks = 2 * gate.value().view().tasks.size() + act.value().view().tasks.size() + mul.value().view().tasks.size() +
          down.value().view().tasks.size();
  return 5;
}

// A block's figures: its submits and tasks against one program per op, its arena against
// the sum of its intermediates.
template <class Built>
void block_figures(const std::string& group, const Built& g, unsigned separate, std::size_t separate_tasks) {
  bench::row(group, "submits: one graph / one program per op", "1 / " + std::to_string(separate), "1", 1);
  bench::row(group, "tasks: graph / programs per op",
             std::to_string(g.view().tasks.size()) + " / " + std::to_string(separate_tasks));
  const graph_geometry& geo = g.geometry;
  bench::row(group, "arena bytes / sum of intermediates",
             std::to_string(geo.arena_bytes()) + " / " + std::to_string(geo.intermediates_total) + " = " +
                 bench::fixed(double(geo.arena_bytes()) / geo.intermediates_total));
}

void block_rows(const char* name, std::uint32_t M) {
  const auto g = build(llama_ffn(M, 4096, 11008));
  if (!g) std::abort();
  std::size_t separate_tasks = 0;
  const unsigned separate = programs_per_op(M, 4096, 11008, separate_tasks);
  block_figures(std::string("FFN ") + name + " (M = " + std::to_string(M) + ", 4096 -> 11008 -> 4096)", g.value(), separate,
                separate_tasks);
}

// The blocks of the examples as graphs against one program per op (each op's own door):
// the small CNN (examples/cnn.cpp) and MobileNet v1's first block (examples/mobilenet_block.cpp).
void cnn_rows() {
  const auto conv3x3 = [](std::uint32_t hw, std::uint32_t in, std::uint32_t out) {
    return conv_spec{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = hw, .W = hw, .C = in, .out_channels = out,
                     .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::same, .activation = output_activation::relu};
  };
  const pool_spec max{.op = pool_op::max, .H = 32, .W = 32, .C = 32};
  const pool_spec average{.op = pool_op::global_average, .H = 16, .W = 16, .C = 64, .kernel_h = 16, .kernel_w = 16};
  const matmul_spec classifier = fp16_matmul(1, 64, 10);
  const auto g = build(make_graph(graph_conv("c1", "image", "k1", conv3x3(32, 3, 32)), graph_pool("p1", "c1", max),
                                        graph_conv("c2", "p1", "k2", conv3x3(16, 32, 64)), graph_pool("p2", "c2", average),
                                        graph_matmul("logits", "p2", "w_fc", classifier)));
  const auto c1 = build(conv3x3(32, 3, 32)), c2 = build(conv3x3(16, 32, 64));
  const auto p1 = build(max), p2 = build(average);
  const auto fc = build(plan_request{classifier});
  if (!g || !c1 || !c2 || !p1 || !p2 || !fc) std::abort();
  const std::size_t tasks = c1.value().view().tasks.size() + c2.value().view().tasks.size() +
                            p1.value().view().tasks.size() + p2.value().view().tasks.size() +
                            fc.value().view().tasks.size();
  block_figures("small CNN (32x32x3 -> 10, fp16)", g.value(), 5, tasks);
}

void mobilenet_rows() {
  const auto g = build(mobilenet_v1_block(224));
  if (!g) std::abort();
  std::size_t tasks = 0;
  for (std::uint32_t i = 0; i < 3; ++i) {  // each conv as its own program
    const auto alone = build(g.value().geometry.steps[i].conv.conv.spec);
    if (!alone) std::abort();
    tasks += alone.value().view().tasks.size();
  }
  block_figures("MobileNet v1 block (224x224x3 -> 112x112x64, uint8)", g.value(), 3, tasks);
}

}  // namespace

int main() {
  block_rows("decode", 1);
  block_rows("prefill", 64);
  cnn_rows();
  mobilenet_rows();

  auto dev = rt::device::open();
  if (!dev) {
    std::fprintf(stderr, "bench_graph: %s\n", to_string(dev.err()).c_str());
    return 3;
  }
  // A block small enough that the emulated device's arithmetic does not hide the host's
  // work (hidden 64; the intermediate 11008 keeps the down projection's K split).
  const auto block = build(llama_ffn(1, 64, 11008));
  const auto op = build(make_graph(graph_matmul("gate", "x", "w_gate", fp16_matmul(1, 64, 11008))));
  if (!block || !op) return 2;
  rt::session npu{dev.value()};
  struct measured {
    double prepare = 0, bind = 0, run = 0;
  };
  auto measure = [&](const auto& built) -> measured {
    auto b = rt::graph_buffers::create(dev.value(), built.value().geometry);
    if (!b) std::abort();
    measured m;
    m.prepare = bench::measure([&] { bench::keep(npu.prepare(built.value().view()).ok()); }).median_ns;
    auto prepared = npu.prepare(built.value().view());
    if (!prepared) std::abort();
    m.bind = bench::measure([&] { bench::keep(npu.bind(prepared.value(), b.value().operands()).ok()); }).median_ns;
    if (!npu.bind(prepared.value(), b.value().operands()) || !npu.run(prepared.value())) std::abort();  // the warm-up
    m.run = bench::measure([&] { bench::keep(npu.run(prepared.value()).ok()); }, 5).median_ns;
    return m;
  };
  const measured whole = measure(block), one = measure(op);
  const std::string group = "block against one op (FFN 64 -> 11008 -> 64, M = 1: " +
                            std::to_string(block.value().view().tasks.size()) + " tasks; its gate matmul: " +
                            std::to_string(op.value().view().tasks.size()) + ")";
  bench::row(group, "prepare, us: block / op", bench::fixed(whole.prepare / 1e3) + " / " + bench::fixed(one.prepare / 1e3) +
                                                   " = " + bench::fixed(whole.prepare / one.prepare));
  bench::row(group, "bind, us: block / op", bench::fixed(whole.bind / 1e3) + " / " + bench::fixed(one.bind / 1e3) + " = " +
                                                bench::fixed(whole.bind / one.bind));
  bench::row(group, "run, us: block / op", bench::fixed(whole.run / 1e3) + " / " + bench::fixed(one.run / 1e3) + " = " +
                                               bench::fixed(whole.run / one.run));
  return 0;
}
