// Graphs: ops wired by tensors in one program, their placement, their boundary rules, and a
// LLaMA-style FFN block run on the model against the host.
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <regcmd/programs/graph/blocks.hpp>
#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/task/independent_tasks.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/reference/conv.hpp>

#include "model_board.hpp"

using namespace regcmd;

namespace {
// A board with a buffer for every role the graph's tensors live in, each byte 0x5a.
void allocate_graph(testing::model_board& board, const graph_geometry& g) { board.allocate_each(g.buffer_bytes, 0x5a); }
// n values uniform in [-scale, scale], rounded to fp16.
std::vector<float> random_fp16(std::mt19937& rng, std::size_t n, float scale) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (float& e : v) e = half_to_float(float_to_half(d(rng)));
  return v;
}

constexpr matmul_spec fp16_matmul(std::uint32_t M, std::uint32_t K, std::uint32_t N) {
  return {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = M, .K = K, .N = N};
}

const graph_tensor& tensor(const graph_geometry& g, std::string_view name) {
  const graph_tensor* x = g.find(name);
  REQUIRE(x != nullptr);
  return *x;
}

}  // namespace

TEST_CASE("an FFN block: one program of every op's tasks, its tensors sorted by the wiring and placed") {
  constexpr auto block = fixed<llama_ffn(4, 64, 96)>();
  const graph_geometry& g = block.geometry;
  const program_view v = block.view();
  // gate, up: one matmul task each; SiLU: one SDP task (its tables uploaded); mul: one; down: one
  REQUIRE(v.tasks.size() == 5);
  CHECK(v.tasks[0].enable_mask == 0x0d);  // CNA + CORE + DPU
  CHECK(v.tasks[2].enable_mask == 0x18);  // DPU + DPU_RDMA
  CHECK(v.tasks[3].enable_mask == 0x18);
  CHECK(v.tasks[4].enable_mask == 0x0d);
  CHECK_FALSE(v.pingpong);  // SDP tasks inside (the reference's "Chained 2-input SDP": ping-pong off)
  CHECK(validate(v).ok());

  CHECK(tensor(g, "x").kind == tensor_kind::input);
  CHECK(tensor(g, "w_gate").kind == tensor_kind::weight);
  CHECK(tensor(g, "gate").kind == tensor_kind::intermediate);
  CHECK(tensor(g, "y").kind == tensor_kind::output);
  // x: [4][64] fp16 = 512 bytes; the weights [64][96] fp16 = 12288 bytes, one after another
  CHECK(tensor(g, "x").bytes == 512);
  CHECK(tensor(g, "w_up").offset == 12288);
  CHECK(tensor(g, "w_down").offset == 24576);
  // intermediates of [4][96] fp16 = 768 bytes: gate, up and act live at once; h is written
  // after gate's last read (the SiLU), so it takes gate's place
  CHECK(tensor(g, "gate").offset == 0);
  CHECK(tensor(g, "up").offset == 768);
  CHECK(tensor(g, "act").offset == 1536);
  CHECK(tensor(g, "h").offset == 0);
  CHECK(g.arena_bytes() == 2304);
  CHECK(g.intermediates_total == 4 * 768);
  // the SiLU reads gate where the gate matmul wrote it: the same role and IOVA offset
  std::uint32_t gate_writes = 0, gate_reads = 0;
  for (const slot& s : v.slots)
    if (s.role == operand_role::intermediate && s.offset == 0) {
      const entry e = v.entries[s.entry];
      gate_writes += e.target() == 0x1001 && e.offset() == 0x4020 && s.entry < v.tasks[1].first;  // DPU_DST_BASE_ADDR
      gate_reads +=
          e.target() == 0x2001 && e.offset() == 0x5018 && s.entry >= v.tasks[2].first && s.entry < v.tasks[3].first;
    }
  CHECK(gate_writes == 1);
  CHECK(gate_reads == 1);
}

TEST_CASE("an FFN block on the model: one submit, equal to the host's FFN within the SiLU table's error") {
  constexpr std::uint32_t M = 4, D = 64, F = 96;
  const auto built = build(llama_ffn(M, D, F));
  REQUIRE(built.ok());
  const graph_geometry& g = built.value().geometry;
  testing::model_board board;
  allocate_graph(board, g);

  std::mt19937 rng(17);
  std::uniform_real_distribution<float> d(-0.5f, 0.5f);
  auto draw = [&](std::size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = half_to_float(float_to_half(d(rng)));
    return v;
  };
  const std::vector<float> x = draw(M * D), wg = draw(D * F), wu = draw(D * F), wd = draw(F * D);
  REQUIRE(pack_tensor<float>(g, "x", x, board[operand_role::feature]).ok());
  REQUIRE(pack_tensor<float>(g, "w_gate", wg, board[operand_role::weight]).ok());
  REQUIRE(pack_tensor<float>(g, "w_up", wu, board[operand_role::weight]).ok());
  REQUIRE(pack_tensor<float>(g, "w_down", wd, board[operand_role::weight]).ok());

  const auto r = board.run(built.value().view());
  REQUIRE(r.faults.empty());
  CHECK(r.tasks_completed == 5);
  std::vector<float> y(M * D);
  REQUIRE(unpack_tensor<float>(g, "y", board[operand_role::output], y).ok());

  // The host: every intermediate rounded to fp16 as the NPU stores it; SiLU exact. The
  // bound: the table's 2.7e-3 (bench/README.md) and one fp16 rounding of h, through Wd.
  auto fp16 = [](double v) { return double(half_to_float(float_to_half(static_cast<float>(v)))); };
  double worst = 0;
  for (std::uint32_t m = 0; m < M; ++m) {
    std::vector<double> h(F), bound(F);
    for (std::uint32_t f = 0; f < F; ++f) {
      double gate = 0, up = 0;
      for (std::uint32_t k = 0; k < D; ++k) {
        gate += double(x[m * D + k]) * wg[k * F + f];
        up += double(x[m * D + k]) * wu[k * F + f];
      }
      gate = fp16(gate);
      up = fp16(up);
      h[f] = fp16(fp16(gate / (1 + std::exp(-gate))) * up);
      bound[f] = 2.7e-3 * std::abs(up) + std::abs(h[f]) * std::ldexp(1.0, -10);
    }
    for (std::uint32_t n = 0; n < D; ++n) {
      double want = 0, allowed = 0;
      for (std::uint32_t f = 0; f < F; ++f) {
        want += h[f] * wd[f * D + n];
        allowed += bound[f] * std::abs(wd[f * D + n]);
      }
      allowed += std::abs(want) * std::ldexp(1.0, -10) + 1e-6;
      const double error = std::abs(y[m * D + n] - want);
      CHECK(error <= allowed);
      worst = std::max(worst, error);
    }
  }
  CHECK(worst > 0);  // the table's error shows: the comparison is not of a copy
}

TEST_CASE("kept intermediates: each in bytes of its own, and read back by name") {
  // The FFN block above, its four [4][96] fp16 intermediates of 768 bytes one after another
  // (h no longer takes gate's place), the arena their sum.
  graph_spec spec = llama_ffn(4, 64, 96);
  spec.keep_intermediates = true;
  const auto built = build(spec);
  REQUIRE(built.ok());
  const graph_geometry& g = built.value().geometry;
  CHECK(tensor(g, "gate").offset == 0);
  CHECK(tensor(g, "up").offset == 768);
  CHECK(tensor(g, "act").offset == 1536);
  CHECK(tensor(g, "h").offset == 2304);
  CHECK(g.arena_bytes() == 4 * 768);
  std::vector<std::uint8_t> arena(g.arena_bytes());
  std::vector<float> out(4 * 96);
  CHECK(unpack_tensor<float>(g, "gate", arena, out).ok());
  CHECK_BREAKS(unpack_tensor<float>(g, "x", arena, out), rules::tensor_direction);  // still an input
}

TEST_CASE("an intermediate read back keeps its bytes to the end, and only an op's result is read back") {
  // The FFN block's [4][96] intermediates of 768 bytes: h takes gate's place once act has
  // read gate; named in read_back, gate keeps it and h goes past act (3 x 768).
  const auto arena_of = [](const graph_spec& spec) { return build(spec).value().geometry.arena_bytes(); };
  graph_spec spec = llama_ffn(4, 64, 96);
  CHECK(arena_of(spec) == 3 * 768);
  spec.read_back[0] = "gate";
  const auto built = build(spec);
  REQUIRE(built.ok());
  const graph_geometry& g = built.value().geometry;
  CHECK(tensor(g, "gate").offset == 0);
  CHECK(tensor(g, "gate").kind == tensor_kind::intermediate);
  CHECK(tensor(g, "h").offset == 3 * 768);
  CHECK(g.arena_bytes() == 4 * 768);
  std::vector<std::uint8_t> arena(g.arena_bytes());
  std::vector<float> out(4 * 96);
  CHECK(unpack_tensor<float>(g, "gate", arena, out).ok());
  CHECK_BREAKS(unpack_tensor<float>(g, "up", arena, out), rules::tensor_direction);  // not kept
  for (const graph_name& wrong : {graph_name("x"), graph_name("w_up"), graph_name("nothing")}) {
    graph_spec bad = llama_ffn(4, 64, 96);
    bad.read_back[1] = wrong;
    CHECK_BREAKS(build(bad), rules::graph_read_back);
  }
}

TEST_CASE("a graph matmul whose K fits one op keeps it whole where its slices could not be summed") {
  // int8 M 8 K 8192 N 64 (issue 32, N14): the cheapest grid splits K, but int32 partials have
  // no SDP add; K = 8192 is within one op (10752), so every tile keeps it whole, as librknnrt
  // does. It was refused (graph-k-split).
  const auto built = build(make_graph(
      graph_matmul("y", "x", "w", {.dtype = precision::int8, .out_dtype = precision::int32, .M = 8, .K = 8192, .N = 64})));
  REQUIRE_MESSAGE(built.ok(), to_string(built.err()));
  const plan_shape& p = built.value().geometry.steps[0].matmul;
  CHECK(p.slices == 1);
  CHECK(p.k_slice == 8192);
  CHECK_FALSE(built.value().geometry.steps[0].sums_slices());
  // K = 16384 exceeds one op: its slices must be summed, which int32 cannot
  CHECK(build(make_graph(graph_matmul("y", "x", "w", {.dtype = precision::int8, .out_dtype = precision::int32, .M = 8,
                                                            .K = 16384, .N = 64})))
            .err()
            .id() == "graph-k-split");
}

TEST_CASE("a graph's tensors by name: unknown names and the wrong direction are refused") {
  const auto built = build(llama_ffn(4, 64, 96));
  REQUIRE(built.ok());
  const graph_geometry& g = built.value().geometry;
  std::vector<std::uint8_t> buffer(g.buffer_bytes[static_cast<std::size_t>(operand_role::feature)]);
  const std::vector<float> x(4 * 64, 1.0f);
  std::vector<float> out(4 * 96);
  CHECK_BREAKS(pack_tensor<float>(g, "z", x, buffer), rules::unknown_tensor);
  CHECK_BREAKS(pack_tensor<float>(g, "y", x, buffer), rules::tensor_direction);         // an output
  CHECK_BREAKS(unpack_tensor<float>(g, "gate", buffer, out), rules::tensor_direction);  // an intermediate
  CHECK_BREAKS(unpack_tensor<float>(g, "x", buffer, out), rules::tensor_direction);     // an input
  CHECK_BREAKS(pack_tensor<float>(g, "x", x, std::span<std::uint8_t>(buffer).first(100)), rules::buffer_size);
  CHECK(pack_tensor<float>(g, "x", x, buffer).ok());
}

TEST_CASE("a graph built at run time holds 128 ops: a whole network in one program") {
  const act_spec relu{.fn = activation::relu, .M = 4, .N = 96};
  large_graph_spec chain;
  // t1 = relu t0, t2 = relu t1, ... (names appended, not "t" + a string: g++ 12's -Wrestrict)
  std::string in = "t0";
  for (int i = 0; i < 128; ++i) {
    std::string out(1, 't');
    out += std::to_string(i + 1);
    REQUIRE(add_op(chain, graph_act(graph_name::of(out), graph_name::of(in), relu)).ok());
    in = out;
  }
  CHECK_BREAKS(add_op(chain, graph_act("t129", "t128", relu)), rules::graph_capacity);
  const auto built = build(chain);
  REQUIRE(built.ok());
  const large_graph_geometry& g = built.value().geometry;
  CHECK(g.step_count == 128);
  CHECK(g.tensor_count == 129);
  CHECK(built.value().view().tasks.size() == 128);  // one task an activation, all in one program
  // two tensors live at once: the arena holds two 4 x 96 fp16 rows, 768 bytes each
  CHECK(g.arena_bytes() == 2 * 768);
  CHECK(g.find("t0")->kind == tensor_kind::input);
  CHECK(g.find("t128")->kind == tensor_kind::output);
}

TEST_CASE("a concat places its parts side by side in its own bytes: the convs writing them write it") {
  const conv_spec squeeze{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 8, .W = 8, .C = 32, .out_channels = 16};
  conv_spec expand1 = squeeze, expand3 = squeeze, next = squeeze;
  expand1.C = expand3.C = 16;
  expand1.out_channels = 32;
  expand3.out_channels = 48;
  expand3.kernel_h = expand3.kernel_w = 3;
  expand3.padding = conv_padding::same;
  next.C = 80;
  const auto built = build(make_graph(
      graph_conv("s", "x", "k_s", squeeze), graph_conv("a", "s", "k_a", expand1), graph_conv("b", "s", "k_b", expand3),
      graph_concat("y", "a", "b", {.dtype = precision::fp16, .pixels = 64, .channels_a = 32, .channels_b = 48}),
      graph_conv("z", "y", "k_z", next)));
  REQUIRE(built.ok());
  const graph_geometry& g = built.value().geometry;
  const graph_tensor &s = *g.find("s"), &a = *g.find("a"), &b = *g.find("b"), &y = *g.find("y");
  // 64 pixels of 16 bytes a plane: s 2 planes, a 4, b 6, y 10 = a's then b's
  CHECK(s.bytes == 2 * 1024);
  CHECK(y.bytes == 10 * 1024);
  CHECK(a.offset == y.offset);
  CHECK(b.offset == y.offset + 4 * 1024);
  CHECK(a.role == operand_role::intermediate);
  CHECK(b.role == operand_role::intermediate);
  // y lives from a's writer on, so it is placed clear of s (read by b's conv after a is written)
  CHECK((y.offset >= s.offset + s.bytes || y.offset + y.bytes <= s.offset));
  CHECK(g.arena_bytes() == 12 * 1024);
  CHECK(built.value().view().tasks.size() == 4);  // the convs: the concat has no task
  // b's conv (task 2) writes its output where y's planes 4 to 9 are
  const program_view p = built.value().view();
  const task& third = p.tasks[2];
  CHECK(std::any_of(p.slots.begin(), p.slots.end(), [&](const slot& x) {
    return x.entry >= third.first && x.entry < third.first + third.count && x.role == operand_role::intermediate &&
           x.offset == b.offset && x.extent == 6 * 1024;
  }));
}

TEST_CASE("the concat rules refuse at run time") {
  const conv_spec part{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 4, .W = 4, .C = 16, .out_channels = 16};
  const concat_spec both{.dtype = precision::fp16, .pixels = 16, .channels_a = 16, .channels_b = 16};
  const graph_op a = graph_conv("a", "x", "k1", part), b = graph_conv("b", "x", "k2", part);
  concat_spec no_pixels = both, int16 = both, inside_an_atom = both, wide = both;
  no_pixels.pixels = 0;
  int16.dtype = precision::int16;
  inside_an_atom.channels_a = 12;
  conv_spec twelve = part;
  twelve.out_channels = 12;
  wide.channels_a = 8;  // a's conv writes 16 computed channels: more planes than the part holds
  CHECK_BREAKS(build(make_graph(a, b, graph_concat("y", "a", "b", no_pixels))), rules::concat_shape);
  CHECK_BREAKS(build(make_graph(a, b, graph_concat("y", "a", "b", int16))), rules::concat_shape);
  CHECK_BREAKS(build(make_graph(graph_conv("a", "x", "k1", twelve), b, graph_concat("y", "a", "b", inside_an_atom))),
               rules::concat_atoms);
  CHECK_BREAKS(build(make_graph(a, b, graph_concat("y", "a", "x", both))), rules::graph_concat_source);   // an input
  CHECK_BREAKS(build(make_graph(a, b, graph_concat("y", "a", "a", both))), rules::graph_concat_source);   // twice
  CHECK_BREAKS(build(make_graph(a, b, graph_concat("y", "a", "b", both), graph_concat("y2", "a", "b", both))),
               rules::graph_concat_source);  // in two concats
  conv_spec eight = part;
  eight.out_channels = 8;
  CHECK_BREAKS(build(make_graph(graph_conv("a", "x", "k1", eight), b, graph_concat("y", "a", "b", wide))),
               rules::graph_concat_source);
}

TEST_CASE("every graph rule refuses its graph at run time with its id") {
  const matmul_spec mm = fp16_matmul(4, 64, 96);
  const act_spec silu{.fn = activation::silu, .M = 4, .N = 96};
  struct row {
    graph_spec graph;
    const regcmd::rule* broken;
  };
  graph_spec seventeen;
  for (int i = 0; i < 16; ++i) REQUIRE(add_op(seventeen, graph_act("o", "i", silu)).ok());
  CHECK_BREAKS(add_op(seventeen, graph_act("o", "i", silu)), rules::graph_capacity);
  const row rows[] = {
      {graph_spec{}, &rules::graph_capacity},
      // N = 2^32 - 1 padded to the weight tile for the partial sums' adds wrapped to 0
      {make_graph(graph_matmul("c", "a", "w", fp16_matmul(1, 64, 4294967295u))), &rules::operand_size},
      {make_graph(graph_matmul("c", "a", "", mm)), &rules::graph_operands},
      {make_graph(graph_act("", "a", silu)), &rules::graph_operands},
      {make_graph(graph_ew("c", "a", "b", {.op = ew_op::add, .M = 4, .N = 96, .operand = ew_operand::immediate})),
       &rules::graph_operands},
      {make_graph(graph_ew("c", "a", {.op = ew_op::add, .M = 4, .N = 96})), &rules::graph_operands},
      {make_graph(graph_matmul("c", "a", "w", mm), graph_act("c", "a2", silu)), &rules::graph_written_twice},
      {make_graph(graph_act("s", "c", silu), graph_matmul("c", "a", "w", mm)), &rules::graph_read_before_write},
      {make_graph(graph_act("s", "s", silu)), &rules::graph_read_before_write},
      // the SiLU over 4 x 80: not the matmul's 4 x 96 output
      {make_graph(graph_matmul("c", "a", "w", mm), graph_act("s", "c", {.fn = activation::silu, .M = 4, .N = 80})),
       &rules::graph_tensor_format},
      // fp32 out: the SDP reads fp16
      {make_graph(
           graph_matmul("c", "a", "w", {.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 96}),
           graph_act("s", "c", silu)),
       &rules::graph_tensor_format},
      // the matmul's surface output is not a flat operand of an element-wise op of two tensors
      // (an activation views it flat: below)
      {make_graph(graph_matmul("c", "a", "w",
                               {.dtype = precision::fp16,
                                .out_dtype = precision::fp16,
                                .M = 4,
                                .K = 64,
                                .N = 96,
                                .layout = operand_layout::surface}),
                  graph_ew("s", "c", "b", {.op = ew_op::add, .M = 4, .N = 96, .layout = operand_layout::row_major})),
       &rules::graph_tensor_format},
      // a flat view covers all of the tensor, in its element type
      {make_graph(graph_conv("c", "a", "k", {.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 8, .W = 8, .C = 16,
                                             .out_channels = 32}),
                  graph_act("s", "c", {.fn = activation::relu, .M = 1, .N = 8 * 8 * 32 - 8})),
       &rules::graph_tensor_format},
      {make_graph(graph_conv("c", "a", "k", {.dtype = conv_data::uint8, .H = 8, .W = 8, .C = 16, .out_channels = 16}),
                  graph_act("s", "c", {.fn = activation::relu, .dtype = precision::int8, .M = 1, .N = 8 * 8 * 16})),
       &rules::graph_tensor_format},
      {make_graph(graph_act("s", "a", silu), graph_matmul("c", "b", "s", fp16_matmul(4, 96, 96))),
       &rules::graph_weight_source},
      // K = 16384 in slices whose fp32 partials no SDP reads
      {make_graph(graph_matmul("c", "a", "w", {.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 16384, .N = 64})),
       &rules::graph_k_split},
      {make_graph(graph_matmul("c", "a", "w", {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 1, .K = 16384, .N = 64,
                                               .output_pitch = 256})),
       &rules::graph_k_split},
      {make_graph(graph_matmul("c", "a", "w", fp16_matmul(0, 64, 64))), &rules::shape_nonzero},  // an op's own rule
      // fp32 features have no weight tile: refused before anything pads N to it (a fuzz finding)
      {make_graph(graph_matmul("c", "a", "w", {.dtype = precision::fp32, .out_dtype = precision::fp16, .M = 1, .K = 256, .N = 64})),
       &rules::precision_pair},
      {make_graph(graph_conv("c", "a", "k", {.H = 8, .W = 8, .C = 16, .out_channels = 32, .residual_add = true})),
       &rules::graph_conv_operands},
      {make_graph(graph_conv("c", "a", "k", {.H = 8, .W = 8, .C = 16, .out_channels = 32}, "r")), &rules::graph_conv_operands},
      {make_graph(graph_conv("c", "a", "", {.H = 8, .W = 8, .C = 16, .out_channels = 32})), &rules::graph_operands},
      // a uint8 conv's output read by an int8 conv: the same bytes, another zero point
      {make_graph(graph_conv("c", "a", "k", {.dtype = conv_data::uint8, .H = 8, .W = 8, .C = 16, .out_channels = 16}),
                  graph_conv("d", "c", "k2", {.dtype = conv_data::int8, .H = 8, .W = 8, .C = 16, .out_channels = 16})),
       &rules::graph_tensor_format},
      // a max pool over 8 x 8 x 16 of a conv's 8 x 8 x 32 output: fewer channels than written
      {make_graph(graph_conv("c", "a", "k", {.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 8, .W = 8, .C = 16,
                                             .out_channels = 32}),
                  graph_pool("p", "c", {.op = pool_op::max, .H = 8, .W = 8, .C = 16})),
       &rules::graph_tensor_format},
      // a residual read again as a conv's input: it lives in its first reader's buffer, the
      // residual one, which the CNA does not read from (each op's slots are bound to it)
      {make_graph(graph_conv("c", "x", "k", {.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 8, .W = 8, .C = 16,
                                             .out_channels = 32, .residual_add = true}, "r"),
                  graph_conv("d", "r", "k2", {.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 8, .W = 8, .C = 32,
                                              .out_channels = 32})),
       &rules::address_slots},
  };
  for (const row& r : rows) {
    CAPTURE(r.broken->id);
    const auto built = build(r.graph);
    REQUIRE_FALSE(built.ok());
    CHECK_BREAKS(built, *r.broken);
  }
}

TEST_CASE("what the host fills sits in its first reader's buffer, and an activation views a surface flat") {
  const conv_spec conv{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 8, .W = 8, .C = 16,
                       .out_channels = 32, .residual_add = true};
  const auto built = build(make_graph(graph_conv("c", "x", "k", conv, "r"),
                                      graph_act("s", "c", {.fn = activation::relu, .M = 1, .N = 8 * 8 * 32}),
                                      graph_ew("y", "s", "b", {.op = ew_op::add, .M = 8 * 8, .N = 32})));
  REQUIRE_MESSAGE(built.ok(), built.err().id());
  const graph_geometry& g = built.value().geometry;
  // as each op's own program holds them
  CHECK(g.find("x")->role == operand_role::feature);
  CHECK(g.find("k")->role == operand_role::weight);
  CHECK(g.find("r")->role == operand_role::residual);
  CHECK(g.find("b")->role == operand_role::ew_operand);
  CHECK(g.find("y")->role == operand_role::output);
  // the ReLU walks the conv's 4 surfaces of 64 pixels x 8 channels as 2048 elements, and
  // writes that layout: the add reads it as a surface, the conv's unpacker would unpack it
  const graph_tensor& c = *g.find("c");
  const graph_tensor& relu = *g.find("s");
  CHECK(relu.format == c.format);
  CHECK(relu.format.layout == tensor_layout::surface);
  CHECK(relu.packer_op == 0);
  CHECK(relu.bytes == 4 * 64 * 16);
  CHECK(g.steps[1].act.elements == 2048);
}

TEST_CASE("a matmul whose K is split: fp16 partials summed by SDP adds in the same submit") {
  constexpr std::uint32_t M = 2, K = 12288, N = 48;
  const auto built = build(make_graph(graph_matmul("y", "x", "w", fp16_matmul(M, K, N))));
  REQUIRE(built.ok());
  const graph_geometry& g = built.value().geometry;
  const plan_shape& p = g.steps[0].matmul;
  REQUIRE(p.slices == 6);  // K beyond 10752: slices of at most 2048 (the plan's)
  const program_view v = built.value().view();
  // six slice tasks (CNA + CORE + DPU), then five adds (DPU + DPU_RDMA)
  REQUIRE(v.tasks.size() == 11);
  CHECK(v.tasks[5].enable_mask == 0x0d);
  CHECK(v.tasks[6].enable_mask == 0x18);
  CHECK_FALSE(v.pingpong);
  // the partials (6 x [2][48] fp16) and two running sums in the arena
  CHECK(g.arena_bytes() == align_up(6 * M * N * 2, 64) + align_up(M * N * 2, 64) + M * N * 2);

  testing::model_board board;
  allocate_graph(board, g);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> x(M * K), w(std::size_t{K} * N), y(M * N);
  for (float& e : x) e = half_to_float(float_to_half(d(rng)));
  for (float& e : w) e = half_to_float(float_to_half(d(rng)));
  REQUIRE(pack_tensor<float>(g, "x", x, board[operand_role::feature]).ok());
  REQUIRE(pack_tensor<float>(g, "w", w, board[operand_role::weight]).ok());
  const auto r = board.run(v);
  REQUIRE(r.faults.empty());
  REQUIRE(unpack_tensor<float>(g, "y", board[operand_role::output], y).ok());
  // the host: each slice's sum rounded to fp16, then each add rounded to fp16
  auto fp16 = [](double v) { return double(half_to_float(float_to_half(static_cast<float>(v)))); };
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t n = 0; n < N; ++n) {
      double sum = 0, magnitude = 0;
      for (std::uint32_t s = 0; s < p.slices; ++s) {
        double partial = 0;
        for (std::uint32_t k = s * p.k_slice; k < std::min(K, (s + 1) * p.k_slice); ++k) {
          partial += double(x[m * K + k]) * w[std::size_t{k} * N + n];
          magnitude += std::abs(double(x[m * K + k]) * w[std::size_t{k} * N + n]);
        }
        sum = s == 0 ? fp16(partial) : fp16(sum + fp16(partial));
      }
      // the model accumulates each slice in fp32: within K·2^-24 of the magnitude
      CHECK(std::abs(y[m * N + n] - sum) <= magnitude * K * std::ldexp(1.0, -24) + std::abs(sum) * std::ldexp(1.0, -10));
    }
}

TEST_CASE("int8 FFN matmuls: gate and up in one submit as outputs, and no SDP reads their int32") {
  // int8 x int8 writes only the raw int32 accumulator (narrow outputs never complete), and no
  // SDP reads int32: the requantization between an int8 matmul and the SiLU is the host's.
  constexpr std::uint32_t M = 4, D = 64, F = 96;
  const matmul_spec int8{.dtype = precision::int8, .out_dtype = precision::int32, .M = M, .K = D, .N = F};
  const auto refused = build(make_graph(graph_matmul("gate", "x", "w_gate", int8),
                                              graph_act("act", "gate", {.fn = activation::relu, .dtype = precision::int8,
                                                                        .M = M, .N = F})));
  REQUIRE_FALSE(refused.ok());
  CHECK_BREAKS(refused, rules::graph_tensor_format);
  CHECK(refused.err().note() == "gate");

  const auto built = build(make_graph(graph_matmul("gate", "x", "w_gate", int8), graph_matmul("up", "x", "w_up", int8)));
  REQUIRE(built.ok());
  const graph_geometry& g = built.value().geometry;
  CHECK(tensor(g, "gate").kind == tensor_kind::output);
  CHECK(tensor(g, "up").kind == tensor_kind::output);
  CHECK(tensor(g, "up").offset == M * F * 4);  // after gate's [4][96] int32
  CHECK(built.value().view().pingpong);       // no SDP task: ping-pong stays on
  testing::model_board board;
  allocate_graph(board, g);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> d(-128, 127);
  auto draw = [&](std::size_t n) {
    std::vector<std::int8_t> v(n);
    for (std::int8_t& e : v) e = static_cast<std::int8_t>(d(rng));
    return v;
  };
  const std::vector<std::int8_t> x = draw(M * D), wg = draw(D * F), wu = draw(D * F);
  REQUIRE(pack_tensor<std::int8_t>(g, "x", x, board[operand_role::feature]).ok());
  REQUIRE(pack_tensor<std::int8_t>(g, "w_gate", wg, board[operand_role::weight]).ok());
  REQUIRE(pack_tensor<std::int8_t>(g, "w_up", wu, board[operand_role::weight]).ok());
  const auto r = board.run(built.value().view());
  REQUIRE(r.faults.empty());
  std::vector<std::int32_t> gate(M * F), up(M * F);
  REQUIRE(unpack_tensor<std::int32_t>(g, "gate", board[operand_role::output], gate).ok());
  REQUIRE(unpack_tensor<std::int32_t>(g, "up", board[operand_role::output], up).ok());
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t f = 0; f < F; ++f) {
      std::int32_t want_gate = 0, want_up = 0;
      for (std::uint32_t k = 0; k < D; ++k) {
        want_gate += x[m * D + k] * wg[k * F + f];
        want_up += x[m * D + k] * wu[k * F + f];
      }
      CHECK(gate[m * F + f] == want_gate);
      CHECK(up[m * F + f] == want_up);
    }
}

namespace {
// The host's conv (NHWC, same padding, stride 1) with ReLU, in double.
std::vector<double> host_conv_relu(const std::vector<double>& x, std::uint32_t H, std::uint32_t W, std::uint32_t C,
                                   const std::vector<float>& k, std::uint32_t O, std::uint32_t K) {
  const std::int64_t pad = K / 2;
  const reference::conv_window h{.H = H, .W = W, .C = C, .OC = O, .KH = K, .KW = K, .top = pad, .left = pad, .OH = H, .OW = W};
  std::vector<double> out(h.output_count());
  for (std::int64_t y = 0; y < h.OH; ++y)
    for (std::int64_t x0 = 0; x0 < h.OW; ++x0)
      for (std::int64_t o = 0; o < h.OC; ++o)
        out[h.out_index(y, x0, o)] = std::max(h.at<double, float>(x, 0, k, 0, y, x0, o).sum, 0.0);
  return out;
}
using reference::to_fp16;
}  // namespace

TEST_CASE("a small CNN in one submit: conv 3x3 + ReLU, max pool 2x2, conv 3x3 + ReLU, global average, classifier") {
  constexpr conv_spec c1{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 8, .W = 8, .C = 16, .out_channels = 16,
                         .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::same, .activation = output_activation::relu};
  constexpr conv_spec c2{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 4, .W = 4, .C = 16, .out_channels = 32,
                         .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::same, .activation = output_activation::relu};
  constexpr auto cnn = fixed<make_graph(
      graph_conv("c1", "image", "k1", c1), graph_pool("p1", "c1", {.op = pool_op::max, .H = 8, .W = 8, .C = 16}),
      graph_conv("c2", "p1", "k2", c2),
      graph_pool("p2", "c2", {.op = pool_op::global_average, .H = 4, .W = 4, .C = 32, .kernel_h = 4, .kernel_w = 4}),
      graph_matmul("logits", "p2", "w_fc", fp16_matmul(1, 32, 16)))>();
  const graph_geometry& g = cnn.geometry;
  const program_view v = cnn.view();
  REQUIRE(v.tasks.size() == 5);
  CHECK(v.pingpong);  // no SDP task
  // the global average's [1][1][32] surface is the classifier's feature row [1][32]
  CHECK(tensor(g, "p2").kind == tensor_kind::intermediate);
  CHECK(tensor(g, "p2").bytes == 64);

  testing::model_board board;
  allocate_graph(board, g);
  std::mt19937 rng(11);
  const std::vector<float> image = random_fp16(rng, 8 * 8 * 16, 1.0f), k1 = random_fp16(rng, 16 * 9 * 16, 0.25f),
                           k2 = random_fp16(rng, 32 * 9 * 16, 0.25f), fc = random_fp16(rng, 32 * 16, 0.5f);
  REQUIRE(pack_tensor<float>(g, "image", image, board[operand_role::feature]).ok());
  REQUIRE(pack_tensor<float>(g, "k1", k1, board[operand_role::weight]).ok());
  REQUIRE(pack_tensor<float>(g, "k2", k2, board[operand_role::weight]).ok());
  REQUIRE(pack_tensor<float>(g, "w_fc", fc, board[operand_role::weight]).ok());
  const auto r = board.run(v);
  REQUIRE(r.faults.empty());
  std::vector<float> logits(16);
  REQUIRE(unpack_tensor<float>(g, "logits", board[operand_role::output], logits).ok());

  // the host, each tensor rounded to fp16 where the NPU stores it
  std::vector<double> x(image.begin(), image.end());
  std::vector<double> a1 = host_conv_relu(x, 8, 8, 16, k1, 16, 3);
  for (double& e : a1) e = to_fp16(e);
  std::vector<double> p1(4 * 4 * 16);
  for (std::uint32_t y = 0; y < 4; ++y)
    for (std::uint32_t x0 = 0; x0 < 4; ++x0)
      for (std::uint32_t c = 0; c < 16; ++c) {
        double m = -1e30;
        for (std::uint32_t dy = 0; dy < 2; ++dy)
          for (std::uint32_t dx = 0; dx < 2; ++dx) m = std::max(m, a1[((2 * y + dy) * 8 + 2 * x0 + dx) * 16 + c]);
        p1[(y * 4 + x0) * 16 + c] = m;
      }
  std::vector<double> a2 = host_conv_relu(p1, 4, 4, 16, k2, 32, 3);
  for (double& e : a2) e = to_fp16(e);
  std::vector<double> p2(32, 0.0);
  for (std::uint32_t i = 0; i < 16; ++i)
    for (std::uint32_t c = 0; c < 32; ++c) p2[c] += a2[i * 32 + c] / 16;
  std::size_t positive = 0;
  for (std::uint32_t n = 0; n < 16; ++n) {
    double want = 0, magnitude = 0;
    for (std::uint32_t c = 0; c < 32; ++c) {
      want += to_fp16(p2[c]) * fc[c * 16 + n];
      magnitude += std::abs(p2[c] * fc[c * 16 + n]);
    }
    positive += want > 0;
    // the average's fp16 steps (its reciprocal fp16(1/16) is exact) and the logits' rounding
    CHECK(std::abs(logits[n] - want) <= magnitude * std::ldexp(1.0, -9) + std::abs(want) * std::ldexp(1.0, -10) + 1e-3);
  }
  CHECK(positive > 0);
  CHECK(positive < 16);  // logits of both signs: not a constant
}

namespace {
// A quantized layer on the host as TFLite defines it (uint8, per-tensor): the accumulator
// bias + sum (x - zx)(w - zw), at scale sx·sw, ReLU6 in real values, rounded to the output.
std::vector<std::uint8_t> host_layer(const reference::conv_window& h, const conv_spec& s, const std::vector<std::uint8_t>& in,
                                     const std::vector<std::uint8_t>& w, const std::vector<std::int32_t>& bias) {
  std::vector<std::uint8_t> out(h.output_count());
  for (std::int64_t oy = 0; oy < h.OH; ++oy)
    for (std::int64_t ox = 0; ox < h.OW; ++ox)
      for (std::int64_t o = 0; o < h.OC; ++o) {
        const double acc = bias[std::size_t(o)] +
                           h.at<std::uint8_t, std::uint8_t>(in, s.input.zero_point, w, s.weights.zero_point, oy, ox, o).sum;
        out[h.out_index(oy, ox, o)] = static_cast<std::uint8_t>(reference::quantized_output(s, acc, nullptr));
      }
  return out;
}
}  // namespace

TEST_CASE("a quantized MobileNet block in one submit: biases packed with their weights, surfaces read as a prefix") {
  // MobileNet v1's first block at 16 x 16: a 3x3 stride-2 conv (3 -> 32), a 3x3 depthwise
  // conv (32: its DPU computes 64 channels, the pointwise reads the first 32) and a 1x1
  // pointwise conv (32 -> 64), uint8, each with its bias and ReLU6.
  constexpr quantization image_q{1.0f / 128, 128}, acts{6.0f / 255, 0};
  constexpr conv_spec stem{.dtype = conv_data::uint8, .H = 16, .W = 16, .C = 3, .out_channels = 32, .kernel_h = 3,
                           .kernel_w = 3, .stride_y = 2, .stride_x = 2, .padding = conv_padding::same, .input = image_q,
                           .weights = {0.02f, 120}, .output = acts, .bias = true, .activation = output_activation::relu6};
  constexpr conv_spec dw{.dtype = conv_data::uint8, .H = 8, .W = 8, .C = 32, .out_channels = 32, .kernel_h = 3,
                         .kernel_w = 3, .padding = conv_padding::same, .depthwise = true, .input = acts,
                         .weights = {0.01f, 130}, .output = acts, .bias = true, .activation = output_activation::relu6};
  constexpr conv_spec pw{.dtype = conv_data::uint8, .H = 8, .W = 8, .C = 32, .out_channels = 64, .input = acts,
                         .weights = {0.004f, 125}, .output = acts, .bias = true, .activation = output_activation::relu6};
  constexpr auto block = fixed<make_graph(graph_conv("c1", "image", "k1", stem), graph_conv("c2", "c1", "k2", dw),
                                          graph_conv("c3", "c2", "k3", pw))>();
  const graph_geometry& g = block.geometry;
  REQUIRE(block.view().tasks.size() == 3);
  // the depthwise conv writes 64 channels, the pointwise reads 32 of them
  CHECK(tensor(g, "c2").format.cols == 64);
  CHECK(g.steps[2].conv.conv.spec.C == 32);
  CHECK(tensor(g, "c2").kind == tensor_kind::intermediate);
  CHECK(g.buffer_bytes[static_cast<std::size_t>(operand_role::bias)] > 0);  // three biases

  testing::model_board board;
  allocate_graph(board, g);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255), bias_value(-3000, 3000);
  auto bytes = [&](std::size_t n) {
    std::vector<std::uint8_t> v(n);
    for (auto& e : v) e = static_cast<std::uint8_t>(byte(rng));
    return v;
  };
  auto biases = [&](std::size_t n) {
    std::vector<std::int32_t> v(n);
    for (auto& e : v) e = bias_value(rng);
    return v;
  };
  const std::vector<std::uint8_t> image = bytes(16 * 16 * 3), k1 = bytes(32 * 9 * 3), k2 = bytes(9 * 32),
                                  k3 = bytes(64 * 32);
  const std::vector<std::int32_t> b1 = biases(32), b2 = biases(32), b3 = biases(64);
  REQUIRE(pack_tensor<std::uint8_t>(g, "image", image, board[operand_role::feature]).ok());
  // a quantized conv's weights alone would leave its bias (the zero-point correction) unpacked
  CHECK_BREAKS(pack_tensor<std::uint8_t>(g, "k1", k1, board[operand_role::weight]), rules::conv_weights_with_bias);
  for (const auto& [conv, w, b] : {std::tuple{"c1", &k1, &b1}, std::tuple{"c2", &k2, &b2}, std::tuple{"c3", &k3, &b3}})
    REQUIRE(pack_conv<std::uint8_t>(g, conv, *w, *b, board[operand_role::weight], board[operand_role::bias]).ok());
  CHECK(pack_conv<std::uint8_t>(g, "image", k1, b1, board[operand_role::weight], board[operand_role::bias])
            .err()
            .breaks(rules::unknown_tensor));
  const auto r = board.run(block.view());
  REQUIRE(r.faults.empty());

  // Each layer against the host's layer of the NPU's own input (the intermediates stay in
  // the arena): within 1 in output units (the DPU's 15-bit requantization).
  auto stored = [&](const char* name, const conv_geometry& writer) {
    const graph_tensor& x = tensor(g, name);
    const auto& buffer = board[x.role];
    std::vector<std::uint8_t> v(std::size_t{writer.out_h} * writer.out_w * writer.spec.out_channels);
    REQUIRE(conv::unpack_output<std::uint8_t>(writer, std::span(buffer).subspan(x.offset, x.bytes), tensor_order::nhwc, v)
                .ok());
    return v;
  };
  const std::vector<std::uint8_t> c1 = stored("c1", g.steps[0].conv.conv), c2 = stored("c2", g.steps[1].conv.conv),
                                  c3 = stored("c3", g.steps[2].conv.conv);
  // TFLite's SAME at stride 2: (8 - 1) * 2 + 3 - 16 = 1 row and column of padding, after
  const reference::conv_window h1{.H = 16, .W = 16, .C = 3, .OC = 32, .KH = 3, .KW = 3, .SY = 2, .SX = 2,
                              .top = 0, .left = 0, .OH = 8, .OW = 8};
  const reference::conv_window h2{.H = 8, .W = 8, .C = 32, .OC = 32, .KH = 3, .KW = 3, .top = 1, .left = 1, .OH = 8, .OW = 8,
                              .depthwise = true};
  const reference::conv_window h3{.H = 8, .W = 8, .C = 32, .OC = 64, .OH = 8, .OW = 8};
  std::size_t nonzero = 0;
  for (const auto& [host, got] : {std::pair{host_layer(h1, stem, image, k1, b1), &c1},
                                  std::pair{host_layer(h2, dw, c1, k2, b2), &c2}, std::pair{host_layer(h3, pw, c2, k3, b3), &c3}}) {
    REQUIRE(host.size() == got->size());
    for (std::size_t i = 0; i < host.size(); ++i) {
      CHECK(std::abs(int(host[i]) - int((*got)[i])) <= 1);
      nonzero += host[i] != 0 && host[i] != 255;
    }
  }
  CHECK(nonzero > 1000);  // values inside the range, not clamped everywhere
}

TEST_CASE("a residual block in one submit: y = ReLU(conv(c1) + c1), the residual an intermediate") {
  constexpr conv_spec first{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 8, .W = 8, .C = 16, .out_channels = 16,
                            .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::same};
  conv_spec second = first;
  second.residual_add = true;
  second.activation = output_activation::relu;
  const auto built = build(make_graph(graph_conv("c1", "x", "k1", first), graph_conv("y", "c1", "k2", second, "c1")));
  REQUIRE(built.ok());
  const graph_geometry& g = built.value().geometry;
  CHECK(tensor(g, "c1").kind == tensor_kind::intermediate);
  CHECK(g.buffer_bytes[static_cast<std::size_t>(operand_role::bias)] == 0);  // fp16: no bias operand

  testing::model_board board;
  allocate_graph(board, g);
  std::mt19937 rng(5);
  const std::vector<float> x = random_fp16(rng, 8 * 8 * 16, 1.0f), k1 = random_fp16(rng, 16 * 9 * 16, 0.1f),
                           k2 = random_fp16(rng, 16 * 9 * 16, 0.1f);
  REQUIRE(pack_tensor<float>(g, "x", x, board[operand_role::feature]).ok());
  REQUIRE(pack_tensor<float>(g, "k1", k1, board[operand_role::weight]).ok());
  REQUIRE(pack_conv<float>(g, "y", k2, {}, board[operand_role::weight], {}).ok());  // pack_conv works for fp16 too
  REQUIRE(board.run(built.value().view()).faults.empty());
  std::vector<float> y(8 * 8 * 16);
  REQUIRE(unpack_tensor<float>(g, "y", board[operand_role::output], y).ok());

  const reference::conv_window h{.H = 8, .W = 8, .C = 16, .OC = 16, .KH = 3, .KW = 3, .top = 1, .left = 1, .OH = 8, .OW = 8};
  std::vector<double> c1(8 * 8 * 16);
  for (int oy = 0; oy < 8; ++oy)
    for (int ox = 0; ox < 8; ++ox)
      for (int o = 0; o < 16; ++o) c1[h.out_index(oy, ox, o)] = to_fp16(h.at<float, float>(x, 0, k1, 0, oy, ox, o).sum);
  std::size_t clamped = 0;
  for (int oy = 0; oy < 8; ++oy)
    for (int ox = 0; ox < 8; ++ox)
      for (int o = 0; o < 16; ++o) {
        const std::size_t i = h.out_index(oy, ox, o);
        const auto [sum, magnitude] = h.at<double, float>(c1, 0, k2, 0, oy, ox, o);
        const double want = std::max(sum + c1[i], 0.0);
        clamped += want == 0;
        // c1's roundings through k2 (one ulp each), the sum's and the output's roundings
        CHECK(std::abs(y[i] - want) <= magnitude * std::ldexp(1.0, -10) + (std::abs(c1[i]) + std::abs(want)) * std::ldexp(1.0, -10) + 1e-6);
      }
  CHECK(clamped > 0);
  CHECK(clamped < 8 * 8 * 16);
}

TEST_CASE("independent prefix: the leading tasks that hand nothing to each other") {
  // LLaMA's FFN at hidden 64, intermediate 256: gate and up (one task each) read x; the SiLU
  // reads gate
  const auto ffn = build(llama_ffn(1, 64, 256));
  REQUIRE(ffn.ok());
  REQUIRE(ffn.value().view().tasks.size() == 5);
  CHECK(independent_prefix(ffn.value().view()) == 2);
  // two matmuls reading one input: every task
  constexpr matmul_spec mm{.dtype = precision::int8, .out_dtype = precision::int32, .M = 4, .K = 64, .N = 512};
  const auto pair = build(make_graph(graph_matmul("a", "x", "wa", mm), graph_matmul("b", "x", "wb", mm)));
  REQUIRE(pair.ok());
  CHECK(independent_prefix(pair.value().view()) == pair.value().view().tasks.size());
  // a conv, then a pooling of its output: the first task alone
  constexpr conv_spec c{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 8, .W = 8, .C = 16, .out_channels = 16};
  const auto chain = build(make_graph(graph_conv("c", "x", "k", c), graph_pool("p", "c", {.H = 8, .W = 8, .C = 16})));
  REQUIRE(chain.ok());
  CHECK(independent_prefix(chain.value().view()) == 1);
  // a plan of K slices writing fp32 partials side by side: every task
  const auto split = build(plan_request{{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 16384, .N = 64}});
  REQUIRE(split.ok());
  CHECK(split.value().view().tasks.size() == 8);  // K 16384 in slices of 2048
  CHECK(independent_prefix(split.value().view()) == 8);
  // delta tasks rely on earlier tasks' registers
  const auto delta =
      build(plan_request{{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 16384, .N = 64}, {.delta_tasks = true}});
  REQUIRE(delta.ok());
  CHECK(independent_prefix(delta.value().view()) == 1);
}
