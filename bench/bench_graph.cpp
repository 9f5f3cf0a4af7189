// Whole blocks in one submit: the LLaMA FFN (docs/graph.md) as one graph against one
// program per op; its arena against the sum of its intermediates; then the host's time to
// prepare, bind and run a block against one op (the block's gate matmul alone), on the NPU
// or the emulated device (LD_PRELOAD=libregcmd-emu.so: there the run is the model's
// arithmetic, the same in both, so its ratio shows the work, not a board's submit cost).
// Exit status 3: no device (the static figures are printed first).
#include <cstdio>
#include <string>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/activation.hpp>
#include <regcmd/programs/elementwise.hpp>
#include <regcmd/programs/blocks.hpp>
#include <regcmd/programs/graph.hpp>
#include <regcmd/programs/plan.hpp>
#include <regcmd/runtime/session.hpp>

#include "harness.hpp"

using namespace regcmd;
namespace rt = regcmd::runtime;

namespace {

constexpr matmul_spec fp16_matmul(std::uint32_t M, std::uint32_t K, std::uint32_t N) {
  return {.in = precision::fp16, .out = precision::fp16, .M = M, .K = K, .N = N};
}
// The same block as one program per op, each its own submit: what a one-op-per-call API
// (the vendor's matmul API and a host or SDP activation) does; the down projection's K
// slices are then summed on the host.
unsigned programs_per_op(std::uint32_t M, std::uint32_t D, std::uint32_t F, std::size_t& tasks) {
  const auto gate = build_plan(fp16_matmul(M, D, F));
  const auto act = build_activation({.fn = activation::silu, .M = M, .N = F});
  const auto mul = build_ew({.op = ew_op::mul, .M = M, .N = F, .layout = ew_layout::flat});
  const auto down = build_plan({.in = precision::fp16, .out = precision::fp32, .M = M, .K = F, .N = D});
  if (!gate || !act || !mul || !down) std::abort();
  tasks = 2 * gate.value().view().tasks.size() + act.value().view().tasks.size() + mul.value().view().tasks.size() +
          down.value().view().tasks.size();
  return 5;
}

void block_rows(const char* name, std::uint32_t M) {
  const auto g = build_graph(llama_ffn(M, 4096, 11008));
  if (!g) std::abort();
  std::size_t separate_tasks = 0;
  const unsigned separate = programs_per_op(M, 4096, 11008, separate_tasks);
  const std::string group = std::string("FFN ") + name + " (M = " + std::to_string(M) + ", 4096 -> 11008 -> 4096)";
  bench::row(group, "submits: one graph / one program per op", "1 / " + std::to_string(separate), "1", 1);
  bench::row(group, "tasks: graph / programs per op", std::to_string(g.value().view().tasks.size()) + " / " + std::to_string(separate_tasks));
  const graph_geometry& geo = g.value().geometry;
  bench::row(group, "arena bytes / sum of intermediates",
             std::to_string(geo.arena_bytes()) + " / " + std::to_string(geo.intermediates_total) + " = " +
                 bench::fixed(double(geo.arena_bytes()) / geo.intermediates_total));
}

struct buffers {
  std::vector<rt::buffer> owned;
  rt::operands ops;
};

result<buffers> allocate(const rt::device& dev, const graph_geometry& g) {
  buffers b;
  b.owned.reserve(4);
  const operand_role roles[] = {operand_role::feature, operand_role::weight, operand_role::intermediate, operand_role::output};
  for (operand_role r : roles) {
    auto made = rt::buffer::create(dev, std::max<std::uint32_t>(16, g.buffer_bytes[static_cast<std::size_t>(r)]));
    if (!made) return made.err();
    b.owned.push_back(std::move(made).value());
  }
  b.ops = {.feature = &b.owned[0], .weight = &b.owned[1], .output = &b.owned[3], .intermediate = &b.owned[2]};
  return b;
}

}  // namespace

int main() {
  block_rows("decode", 1);
  block_rows("prefill", 64);

  auto dev = rt::device::open();
  if (!dev) {
    std::fprintf(stderr, "bench_graph: %s\n", to_string(dev.err()).c_str());
    return 3;
  }
  // A block small enough that the emulated device's arithmetic does not hide the host's
  // work (hidden 64; the intermediate 11008 keeps the down projection's K split).
  const auto block = build_graph(llama_ffn(1, 64, 11008));
  const auto op = build_graph(make_graph(graph_matmul("gate", "x", "w_gate", fp16_matmul(1, 64, 11008))));
  if (!block || !op) return 2;
  rt::session npu{dev.value()};
  struct measured {
    double prepare = 0, bind = 0, run = 0;
  };
  auto measure = [&](const auto& built) -> measured {
    auto b = allocate(dev.value(), built.value().geometry);
    if (!b) std::abort();
    measured m;
    m.prepare = bench::measure([&] { bench::keep(npu.prepare(built.value().view()).ok()); }).median_ns;
    auto prepared = npu.prepare(built.value().view());
    if (!prepared) std::abort();
    m.bind = bench::measure([&] { bench::keep(npu.bind(prepared.value(), b.value().ops).ok()); }).median_ns;
    if (!npu.bind(prepared.value(), b.value().ops) || !npu.run(prepared.value())) std::abort();  // the warm-up
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
