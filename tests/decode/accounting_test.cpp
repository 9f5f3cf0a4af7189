// The accounting of decode/accounting.hpp against counts typed by hand from each program's
// shape: the bytes every DMA moves, the MACs, the DPU's and PPU's elements, the regcmd
// fetched. Each expected value is the formula in its comment, evaluated by hand.
#include <regcmd/testing/doctest.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <regcmd/core/roofline.hpp>
#include <regcmd/decode/accounting.hpp>
#include <regcmd/decode/dump.hpp>
#include <regcmd/programs/conv/emit.hpp>
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/programs/pooling/pooling.hpp>

using namespace regcmd;

namespace {
std::uint64_t at(const stream_bytes& b, stream s) { return b[static_cast<std::size_t>(s)]; }
std::uint64_t at(const task_cost& t, stream s) { return at(t.bytes, s); }

template <class Built>
auto unwrap(Built r) {
  REQUIRE_MESSAGE(r.ok(), r.err().id());
  return std::move(r).value();
}

std::vector<task_cost> tasks_of(const program_view& p) {
  std::vector<task_cost> out;
  account(p, [&](std::size_t, const task_cost& t) { out.push_back(t); });
  return out;
}
}  // namespace

TEST_CASE("accounting: one matmul task, fp16 x fp16 -> fp32 row-major, M 64 K 512 N 256") {
  const auto m = unwrap(build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 64, .K = 512, .N = 256}));
  const program_cost c = account(m.view());
  CHECK(c.tasks == 1);
  CHECK(at(c.bytes, stream::feature) == 64 * 512 * 2);    // 65536: M rows of K fp16
  CHECK(at(c.bytes, stream::weight) == 512 * 256 * 2);    // 262144: K x N fp16
  CHECK(at(c.bytes, stream::output) == 64 * 256 * 4);     // 65536: M x N fp32
  CHECK(at(c.bytes, stream::regcmd) == 108 * 8);          // one full task: 108 entries
  CHECK(at(c.bytes, stream::rdma_source) == 0);
  CHECK(c.macs[0] == 64ull * 256 * 512);                  // 8388608 fp16 MACs
  CHECK(c.macs[1] == 0);
  CHECK(c.dpu_elements == 64 * 256);
  CHECK(c.traffic() == 65536 + 262144 + 65536 + 864);
}

TEST_CASE("accounting: int4 rows are read as K bytes, int8 -> int32 outputs 4 bytes") {
  const auto i4 = unwrap(build(matmul_spec{.dtype = precision::int4, .out_dtype = precision::int16, .M = 8, .K = 512, .N = 128}));
  const program_cost c4 = account(i4.view());
  CHECK(at(c4.bytes, stream::feature) == 8 * 512);        // int4: a row of K bytes ("0x107c")
  CHECK(at(c4.bytes, stream::weight) == 512 * 128 / 2);   // nibbles
  CHECK(at(c4.bytes, stream::output) == 8 * 128 * 2);     // int16
  CHECK(c4.macs[2] == 8ull * 128 * 512);
  const auto i8 = unwrap(build(matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 3, .K = 64, .N = 32}));
  const program_cost c8 = account(i8.view());
  CHECK(at(c8.bytes, stream::feature) == 3 * 64);
  CHECK(at(c8.bytes, stream::weight) == 64 * 32);
  CHECK(at(c8.bytes, stream::output) == 3 * 32 * 4);
  CHECK(c8.macs[1] == 3ull * 32 * 64);
}

TEST_CASE("accounting: a K-split plan writes a partial per slice and reads each slice's weights") {
  // fp16 -> fp32, M 8, K 4096 in slices of 2048, N 64: per slice 8 x 2048 fp16 of features,
  // 2048 x 64 fp16 of weights, an 8 x 64 fp32 partial.
  const auto p = unwrap(build(plan_request{{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 8, .K = 4096, .N = 64}, {.k_slice = 2048}}));
  const program_cost c = account(p.view());
  CHECK(c.tasks == 2);
  CHECK(at(c.bytes, stream::feature) == 2 * 8 * 2048 * 2);   // 65536: the features once
  CHECK(at(c.bytes, stream::weight) == 2 * 2048 * 64 * 2);   // 524288: the weights once
  CHECK(at(c.bytes, stream::output) == 2 * 8 * 64 * 4);      // 4096: two fp32 partials
  CHECK(c.macs[0] == 8ull * 64 * 4096);
  // Re-reads: none, so the distinct bytes are the bytes moved; the partials lie apart.
  distinct_bytes d;
  account(p.view(), [&](std::size_t, const task_cost& t) { d.add(t); });
  const stream_bytes once = d.bytes();
  CHECK(at(once, stream::weight) == 524288);
  CHECK(at(once, stream::output) == 4096);
}

TEST_CASE("accounting: M tiles re-read the weights, the distinct bytes count them once") {
  // fp16 -> fp32, K 512, N 64, M 1000: the bank split (production at K = 512) holds 11
  // banks x 32 KiB / 1024 bytes = 352 rows, so 3 M tiles of ceil(1000 / 3) = 334 rows, the
  // last 332.
  const auto p = unwrap(build(plan_request{{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1000, .K = 512, .N = 64}}));
  const std::vector<task_cost> t = tasks_of(p.view());
  REQUIRE(t.size() == 3);
  CHECK(at(t[0], stream::feature) == 334 * 512 * 2);
  CHECK(at(t[2], stream::feature) == 332 * 512 * 2);
  for (const task_cost& k : t) CHECK(at(k, stream::weight) == 512 * 64 * 2);
  distinct_bytes d;
  for (const task_cost& k : t) d.add(k);
  const stream_bytes once = d.bytes();
  CHECK(at(once, stream::weight) == 512 * 64 * 2);         // 3 reads of one block: once
  CHECK(at(once, stream::feature) == 1000 * 512 * 2);       // the rows, each once
  CHECK(at(once, stream::output) == 1000 * 64 * 4);
}

TEST_CASE("accounting: conv row tasks re-read the overlap rows, later row tasks reuse the weights") {
  // 14 x 14 x 512 int8, 3 x 3 SAME, 512 kernels: 8 groups of 64 kernels x 2 row tasks
  // (conv_test "kernel groups"). Row task 0 makes output rows 0-7 from input rows 0-8 (9),
  // task 1 rows 8-13 from input rows 7-13 (7): rows 7 and 8 are read twice. A row is
  // 14 pixels x 512 channels = 7168 bytes.
  const auto r = unwrap(build(conv_spec{.dtype = conv_data::int8, .H = 14, .W = 14, .C = 512, .out_channels = 512,
                                    .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::same,
                                    .input = {0.1f, 0}, .weights = {0.1f, 0}, .output = {0.1f, 0}}));
  const std::vector<task_cost> t = tasks_of(r.view());
  REQUIRE(t.size() == 16);
  CHECK(at(t[0], stream::feature) == 9 * 7168);
  CHECK(at(t[1], stream::feature) == 7 * 7168);
  CHECK(at(t[0], stream::weight) == 64 * 9 * 512);   // 294912: a group's kernels
  CHECK(at(t[1], stream::weight) == 0);              // WEIGHT_REUSE
  CHECK(at(t[0], stream::output) == 8 * 14 * 64);    // 8 rows x 14 x 64 int8 channels
  CHECK(at(t[1], stream::output) == 6 * 14 * 64);
  CHECK(t[0].macs == 8ull * 14 * 64 * 9 * 512);       // out pixels x kernels x window x C
  const program_cost c = account(r.view());
  CHECK(at(c.bytes, stream::feature) == 8 * 16 * 7168);       // 917504: 8 groups x 16 rows
  CHECK(at(c.bytes, stream::weight) == 512 * 9 * 512);        // the kernels once
  CHECK(at(c.bytes, stream::output) == 14 * 14 * 512);
  CHECK(c.macs[1] == 14ull * 14 * 512 * 512 * 9);              // 462422016
}

TEST_CASE("accounting: a depthwise conv's MACs are a window per channel") {
  // 100 x 100 x 48 fp16, 3 x 3 SAME depthwise: 100 x 100 x 48 x 9 MACs in all tasks.
  const auto r = unwrap(build(conv_spec{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 100, .W = 100, .C = 48,
                                    .out_channels = 48, .kernel_h = 3, .kernel_w = 3,
                                    .padding = conv_padding::same, .depthwise = true}));
  const program_cost c = account(r.view());
  CHECK(c.macs[0] == 100ull * 100 * 48 * 9);
  CHECK(at(c.bytes, stream::output) == 100 * 100 * 48 * 2);
}

TEST_CASE("accounting: an SDP add reads both operands and writes one tensor") {
  // int8 add, 8 pixels x 64 channels, per element: 512 bytes each way.
  const auto e = unwrap(build(ew_spec{.op = ew_op::add, .dtype = precision::int8, .M = 8, .N = 64}));
  const program_cost c = account(e.view());
  CHECK(at(c.bytes, stream::rdma_source) == 512);
  CHECK(at(c.bytes, stream::ew_operand) == 512);
  CHECK(at(c.bytes, stream::output) == 512);
  CHECK(at(c.bytes, stream::feature) == 0);
  CHECK(c.all_macs() == 0);
  CHECK(c.dpu_elements == 512);
  // per channel: 64 int8 operands
  const auto ch = unwrap(build(ew_spec{.op = ew_op::add, .dtype = precision::int8, .M = 8, .N = 64,
                                   .operand = ew_operand::per_channel}));
  CHECK(at(account(ch.view()).bytes, stream::ew_operand) == 64);
}

TEST_CASE("accounting: pooling reads the input cube and writes the output, a window per output") {
  // fp16 max 2 x 2 stride 2 over 16 x 16 x 64: in 16 x 16 x 64 x 2, out 8 x 8 x 64 x 2.
  const auto p = unwrap(build(pool_spec{.op = pool_op::max, .H = 16, .W = 16, .C = 64}));
  const program_cost c = account(p.view());
  CHECK(at(c.bytes, stream::ppu_source) == 16 * 16 * 64 * 2);
  CHECK(at(c.bytes, stream::ppu_output) == 8 * 8 * 64 * 2);
  CHECK(c.ppu_operations == 8 * 8 * 64 * 4);
  CHECK(at(c.bytes, stream::output) == 0);
}

TEST_CASE("accounting: the vendor capture, from its dump alone") {
  // fp16 -> fp32 surface, M 4, K 40, N 16 (matmul-recipe A-cap): features 5 atoms of 8 fp16
  // x 4 rows, weights 0x500, outputs 4 atoms of 4 fp32 x 4 rows, 4 x 16 x 40 MACs; the task
  // ends at entry 107 (the op-enable); the 4 zero entries after it form no task.
  const dump d = read_dump(std::string(REGCMD_TEST_DATA_DIR) + "/vendor_matmul_fp16_fp32_4x40x16.txt");
  REQUIRE(d.error.empty());
  REQUIRE(d.entries.size() == 112);
  const program_cost c = account_dump(d.entries);
  CHECK(c.tasks == 1);
  CHECK(at(c.bytes, stream::feature) == 5 * 4 * 16);   // 320
  CHECK(at(c.bytes, stream::weight) == 1280);
  CHECK(at(c.bytes, stream::output) == 4 * 4 * 16);    // 256
  CHECK(at(c.bytes, stream::regcmd) == 108 * 8);
  CHECK(c.macs[0] == 4 * 16 * 40);
  CHECK(c.dpu_elements == 4 * 16);
}

TEST_CASE("accounting: dump tasks alternate register groups, a delta task keeps its group's registers") {
  // Two full tasks, then a third that writes only its feature address: ping-pong, it runs
  // with task 0's registers (group 0); without ping-pong, with task 1's.
  const auto a = unwrap(build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 32}));
  const auto b = unwrap(build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 8, .K = 64, .N = 32}));
  std::vector<entry> e(a.view().entries.begin(), a.view().entries.end());
  e.insert(e.end(), b.view().entries.begin(), b.view().entries.end());
  e.push_back(entry::make(block_id::cna, 0x100, reg::CNA_FEATURE_DATA_ADDR::offset));
  e.push_back(entry::make(block_id::pc, 0, 0x0014));
  e.push_back(op_enable_preamble());
  e.push_back(entry::make(op_enable_target, 0x0d, 0x0008));
  std::vector<std::uint64_t> features;
  account_dump(e, true, [&](std::size_t, const task_cost& t) { features.push_back(at(t, stream::feature)); });
  CHECK(features == std::vector<std::uint64_t>{4 * 64 * 2, 8 * 64 * 2, 4 * 64 * 2});
  features.clear();
  account_dump(e, false, [&](std::size_t, const task_cost& t) { features.push_back(at(t, stream::feature)); });
  CHECK(features == std::vector<std::uint64_t>{4 * 64 * 2, 8 * 64 * 2, 8 * 64 * 2});
}

TEST_CASE("roofline: the larger of compute and memory time, plus the submits") {
  // 8388608 fp16 MACs at 512 a cycle on one core at 1 GHz: 16384 ns; 34128 bytes at
  // 34.128 GB/s: 1000 ns; one submit at 38 us.
  program_cost c;
  c.macs[0] = 8388608;
  c.bytes[static_cast<std::size_t>(stream::weight)] = 34128;
  const time_bound b = roofline(c, soc_roofline());
  CHECK(b.compute_ns == doctest::Approx(16384));
  CHECK(b.memory_ns == doctest::Approx(1000));
  CHECK(b.overhead_ns == doctest::Approx(38000));
  CHECK(b.ns() == doctest::Approx(54384));
  CHECK(b.limited_by() == "compute");
  roofline_params three = soc_roofline();
  three.cores = 3;
  three.submit_overhead_ns = 0;
  c.bytes[static_cast<std::size_t>(stream::weight)] = 34128 * 100;
  const time_bound m = roofline(c, three);
  CHECK(m.compute_ns == doctest::Approx(16384.0 / 3));
  CHECK(m.ns() == doctest::Approx(100000));
  CHECK(m.limited_by() == "memory");
}

TEST_CASE("a plan's estimated cost is what the accounting reads from its registers") {
  // Two computations of one cost: the planner's, from the grid, and the registers' own.
  struct shape {
    matmul_spec spec;
    plan_options options;
  };
  const shape shapes[] = {
      {{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 512, .K = 4096, .N = 256}, {}},
      {{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 64, .K = 12288, .N = 9000}, {}},
      {{.dtype = precision::int8, .out_dtype = precision::int32, .M = 300, .K = 5000, .N = 100}, {}},
      {{.dtype = precision::int4, .out_dtype = precision::int16, .M = 100, .K = 512, .N = 64}, {}},
      {{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 7, .K = 5000, .N = 32}, {.k_slice = 2048}},
      {{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 256, .K = 2048, .N = 64, .layout = operand_layout::surface}, {}},
      {{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1000, .K = 512, .N = 64}, {.objective = plan_objective::fewest_tasks}},
  };
  for (const shape& s : shapes) {
    CAPTURE(s.spec.M);
    CAPTURE(s.spec.K);
    const auto p = unwrap(build(plan_request{s.spec, s.options}));
    const program_cost from_registers = account(p.view());
    const program_cost estimated = matmul::estimate_cost(p.geometry);
    CHECK(estimated.bytes == from_registers.bytes);
    CHECK(estimated.macs == from_registers.macs);
    CHECK(estimated.tasks == from_registers.tasks);
    CHECK(estimated.dpu_elements == from_registers.dpu_elements);
  }
}

TEST_CASE("accounting at compile time: a program built as a constant, counted as one") {
  // fp16 -> fp32, M 8 K 64 N 32: 8 x 64 x 2 bytes of features, 64 x 32 x 2 of weights.
  static constexpr auto m = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 8, .K = 64, .N = 32}>();
  static constexpr program_cost c = account(m.code.view());
  static_assert(c.bytes[static_cast<std::size_t>(stream::feature)] == 8 * 64 * 2);
  static_assert(c.bytes[static_cast<std::size_t>(stream::weight)] == 64 * 32 * 2);
  static_assert(c.macs[0] == 8 * 32 * 64);
  CHECK(c.tasks == 1);
}

TEST_CASE("accounting: a hostile dump's counts saturate at 2^64 - 1, never wrap") {
  // Every CNA register field at its widest: a direct convolution of 2^22 - 1 atomics (DATAOUT_
  // ATOMICS) x 2^14 - 1 kernels x a 31 x 31 window (the fields as written) x 2^16 - 1 channels,
  // about 2^62 MACs a task: eight such tasks summed in 64 bits wrapped to a fraction of that.
  using namespace reg;
  std::vector<entry> dump;
  for (int t = 0; t < 8; ++t) {
    for (const std::uint16_t offset : {CNA_DATA_SIZE1::offset, CNA_DATA_SIZE3::offset, CNA_WEIGHT_SIZE2::offset})
      dump.push_back(entry::make(block_id::cna, 0xffff'ffff, offset));
    dump.push_back(entry::make(block_id::cna, 0, CNA_CONV_CON1::offset));  // direct convolution, int8
    dump.push_back(entry::make(op_enable_target, 0x1, op_enable_offset));  // CNA_OP_EN (bit 0)
  }
  CHECK(task_structure_problem(dump).empty());
  const program_cost c = account_dump(dump);
  CHECK(c.tasks == 8);
  CHECK(c.macs[static_cast<std::size_t>(mac_class::int8)] == UINT64_MAX);
  CHECK(c.all_macs() == UINT64_MAX);
  CHECK(c.saturated());
  CHECK_FALSE(account_dump(std::span(dump).first(5)).saturated());  // one task: below 2^64
}

TEST_CASE("accounting: a dump that is no program of whole tasks is said so") {
  const std::vector<entry> none{entry::make(block_id::cna, 1, reg::CNA_CONV_CON1::offset)};
  CHECK(task_structure_problem(none) == "the dump has no op-enable entry (target 0x0081), so no task");
  std::vector<entry> trailing{entry::make(op_enable_target, 0x0d, op_enable_offset), entry::from_bits(0),
                              entry::make(block_id::cna, 1, reg::CNA_CONV_CON1::offset)};
  CHECK(task_structure_problem(trailing) == "entry 2 follows the last op-enable entry: every task ends with one");
  trailing.pop_back();
  CHECK(task_structure_problem(trailing).empty());  // zero padding after the last task
}
