// Plans: K-split, N-tiling, M-tiling and chained tasks in one program.
#include <regcmd/testing/doctest.hpp>

#include <cstdint>

#include <regcmd/decode/decode.hpp>
#include <regcmd/decode/format.hpp>
#include <regcmd/programs/matmul/plan.hpp>

using namespace regcmd;

TEST_CASE("a decode shape is one submit: M=1, K=4096, N=11008 tiles N into two tasks") {
  constexpr auto p = fixed<plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 1, .K = 4096, .N = 11008}}>();
  CHECK(p.geometry.slices == 1);
  CHECK(p.geometry.n_tiles == 2);
  CHECK(p.geometry.n_tile == 5504);
  CHECK(p.geometry.m_tiles == 1);
  CHECK(p.code.task_count == 2);
  CHECK_FALSE(p.geometry.host_accumulates());
}

TEST_CASE("tasks are chained through their PC tails") {
  constexpr auto p = fixed<plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 512, .N = 16384}}>();
  REQUIRE(p.code.task_count == 2);
  const task& first = p.code.tasks[0];
  const task& second = p.code.tasks[1];
  CHECK(second.first == 108);
  const entry base = p.code.entries[first.first + first.count - 4];
  const entry amount = p.code.entries[first.first + first.count - 3];
  CHECK(base.bits() == 0x0101'0000'0000'0010);  // PC_BASE_ADDRESS: a slot, 0 until bind
  // PC_REGISTER_AMOUNTS = words to fetch - 1 = 108/2 - 1 = 53 (fact sheet §2.3)
  CHECK(amount.bits() == 0x0101'0000'0035'0014);
  bool linked = false;
  for (const slot& s : p.code.view().slots)
    if (s.entry == first.first + first.count - 4) {
      CHECK(s.role == operand_role::regcmd);
      CHECK(s.offset == 108 * 8);
      linked = true;
    }
  CHECK(linked);
  // the last task ends the chain
  CHECK(p.code.entries[second.first + second.count - 4].value() == 0);
  CHECK(p.code.entries[second.first + second.count - 3].value() == 0);
}

TEST_CASE("PC_REGISTER_AMOUNTS matches the kernels' formula") {
  // vendor: (regcfg_amount + 4 + 1) / 2 - 1; rocket: (regcmd_count + 1) / 2 - 1 (fact sheet §2.3)
  CHECK(pc_fetch_amount(108) == 53);
  CHECK(pc_fetch_amount(49) == 24);  // recipe B: 45 + 4 entries -> 0x18
  CHECK(pc_fetch_amount(130) == 64);
  CHECK(pc_fetch_amount(17) == 8);
}

TEST_CASE("K beyond one op is split into slices of at most 2048, summed on the host") {
  constexpr auto p = fixed<plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 64, .K = 16384, .N = 256}}>();
  CHECK(p.geometry.slices > 1);
  CHECK(p.geometry.k_slice <= 2048);
  CHECK(p.geometry.slices * p.geometry.k_slice >= 16384);
  CHECK(p.geometry.partial == precision::fp32);
  CHECK(p.geometry.host_accumulates());
  // each slice writes its own partial [M][N]: output offsets step by M * N * 4
  const auto slice1 = matmul::tile_of(p.geometry, 0, 0, 1);
  CHECK(slice1.at.output == 64 * 256 * 4);
  // and reads its K columns of the same rows: a strided view of the feature rows
  CHECK(slice1.at.feature == p.geometry.k_slice * 2);
  CHECK(slice1.shape.pitches.feature == 16384 * 2);
}

TEST_CASE("fewest_tasks: the slice count minimises tasks") {
  // M=512, K=4096: slices of 2048 hold 8 rows (64 tasks each); of 1024, 176 rows (3 tiles)
  const auto p = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 512, .K = 4096, .N = 256},
                      {.objective = plan_objective::fewest_tasks});
  REQUIRE(p.ok());
  CHECK(p.value().k_slice == 1024);
  CHECK(p.value().slices == 4);
  CHECK(p.value().m_tiles == 3);
  CHECK(p.value().tasks() == 12);
}

TEST_CASE("lowest_bound: of the grids the rules allow, the least traffic when the MACs bound the time") {
  // M=512, K=4096, N=256 fp16 -> fp32. 536870912 MACs at 512 a ns: 1048576 ns, above any
  // grid's traffic time (tens of MB at 34 GB/s), so the bound ties and traffic decides.
  // Features 512 x 4096 x 2 = 4 MiB whatever the grid; weights 2 MiB per M tile; an fp32
  // partial of 512 KiB per slice; 864 bytes of regcmd per task. With the bank split
  // (360448 bytes of data banks, rows of 2k bytes):
  //   6 slices of 704 (last 576): 256 rows, 2 M tiles: 4 + 4 + 3 MiB = 11534336 + 12 x 864
  //   4 slices of 1024: 176 rows, 3 M tiles:           4 + 6 + 2 MiB (the fewest-tasks grid)
  //   7 slices of 608: 296 rows, 2 M tiles:            4 + 4 + 3.5 MiB
  //   8 slices of 512: 352 rows, 2 M tiles:            4 + 4 + 4 MiB
  plan_explanation why;
  const auto p = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 512, .K = 4096, .N = 256}, {}, &why);
  REQUIRE(p.ok());
  CHECK(p.value().k_slice == 704);
  CHECK(p.value().slices == 6);
  CHECK(p.value().m_tiles == 2);
  CHECK(p.value().whole.sched == schedule::bank_split);
  const plan_candidate& chosen = why.candidates[why.chosen];
  CHECK(chosen.traffic == 11534336 + 12 * 864);
  CHECK(chosen.limited_by == "compute");
  CHECK(chosen.bound_ns == doctest::Approx(1048576 + 38000));
  const plan_candidate& previous = why.candidates[why.previous];
  CHECK(previous.k_slice == 1024);
  CHECK(previous.traffic == 12582912 + 12 * 864);
  // the operands once: features 4 MiB, weights 2 MiB, the fp32 result 512 KiB
  CHECK(why.minimum_traffic == 4194304 + 2097152 + 524288);
}

TEST_CASE("lowest_bound: a grid whose partials exceed 4 GiB is passed over, not chosen and refused") {
  // M 4096, K 14336, N 11008 fp16 -> fp32: 8 slices of fp32 partials take 8 x 4096 x 11008
  // x 4 = 1442840576 bytes; 3 slices 541065216; every slice count up to 23 fits 4 GiB
  // (23 x 180355072 = 4148166656), so a grid is found whatever the cost prefers.
  const auto p = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4096, .K = 14336, .N = 11008});
  REQUIRE(p.ok());
  CHECK(std::uint64_t{p.value().slices} * 4096 * 11008 * 4 <= 0xffff'ffffull);
}

TEST_CASE("lowest_bound: decode keeps K whole, where the weights bound the time") {
  // M=1, K=4096, N=11008 fp16: 2 N tiles of 5504 columns, one op each; a K-split would add
  // a partial per slice and read the same weights.
  plan_explanation why;
  const auto p = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 1, .K = 4096, .N = 11008}, {}, &why);
  REQUIRE(p.ok());
  CHECK(p.value().slices == 1);
  CHECK(p.value().n_tiles == 2);
  CHECK(p.value().m_tiles == 1);
  const plan_candidate& chosen = why.candidates[why.chosen];
  // features 2 x 8192, weights 4096 x 11008 x 2, outputs 11008 x 2, 2 tasks of regcmd
  CHECK(chosen.traffic == 2 * 8192 + 90177536 + 22016 + 2 * 864);
  CHECK(chosen.limited_by == "memory");
  CHECK(why.chosen == why.previous);
}

TEST_CASE("an explicit slice is honoured, and refused above 2048") {
  const auto ok = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 8192, .N = 64},
                       plan_options{.k_slice = 2048});
  REQUIRE(ok.ok());
  CHECK(ok.value().slices == 4);
  const auto bad = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 8192, .N = 64},
                        plan_options{.k_slice = 4096});
  CHECK_BREAKS(bad, rules::k_slice_max);
}

TEST_CASE("M above the ceiling is tiled, the surface layout refuses M tiles") {
  const auto rows = plan(matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 2000, .K = 512, .N = 256});
  REQUIRE(rows.ok());
  CHECK(rows.value().m_tiles == 3);   // 704 rows per op at K = 512
  CHECK(rows.value().m_tile == 667);
  // FEATURE_GRAINS = M + 1 must fit 10 bits in A's layout; no K-split helps
  const auto surf = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1100, .K = 64, .N = 64,
                                     .layout = operand_layout::surface});
  CHECK_BREAKS(surf, rules::surface_m_tiling);
  // a K-split is the way out where one exists
  const auto split = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 256, .K = 2048, .N = 64,
                                      .layout = operand_layout::surface});
  REQUIRE(split.ok());
  CHECK(split.value().m_tiles == 1);
  CHECK(split.value().slices == 3);  // slices of 704: 180224 / 704 = 256 rows
  // int8 surface: A's split needs ceil(64 * 9024 / 32 KiB) = 18 banks for K in one op, so
  // the plan slices K (found by fuzz_matmul: the plan used to pick a K no tile could take)
  const auto wide = plan(matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 64, .K = 9023, .N = 16128,
                                     .layout = operand_layout::surface});
  REQUIRE(wide.ok());
  CHECK(wide.value().slices > 1);
  CHECK(wide.value().m_tiles == 1);
}

// Every plan that resolves must emit: each tile it chooses passes resolve and validate.
TEST_CASE("every plan that resolves emits, over precisions, layouts, schedules and shapes") {
  struct pair_of {
    precision in, out;
  };
  const pair_of pairs[] = {{precision::fp16, precision::fp32}, {precision::fp16, precision::fp16},
                           {precision::int8, precision::int32}, {precision::int4, precision::int16}};
  std::uint32_t planned = 0;
  for (const pair_of pr : pairs)
    for (const operand_layout layout : {operand_layout::row_major, operand_layout::surface})
      for (const schedule sched : {schedule::automatic, schedule::template_split, schedule::bank_split})
        for (const std::uint32_t M : {1u, 4u, 64u, 300u, 1024u, 2500u})
          for (std::uint32_t K = 32; K <= 16384; K = K * 3 / 2 + 32) {
            const matmul_spec spec{.dtype = pr.in, .out_dtype = pr.out, .M = M, .K = K, .N = 9000, .layout = layout, .sched = sched};
            const auto p = plan(spec);
            if (!p.ok()) continue;
            ++planned;
            CAPTURE(M);
            CAPTURE(K);
            CAPTURE(static_cast<int>(pr.in));
            CAPTURE(static_cast<int>(layout));
            CAPTURE(static_cast<int>(sched));
            const auto built = build(plan_request{spec});
            REQUIRE_MESSAGE(built.ok(), (built.ok() ? "" : to_string(built.err())));
            CHECK(validate(built.value().view()).ok());
          }
  CHECK(planned > 400);
}

TEST_CASE("delta tasks carry only the entries that change") {
  constexpr auto p = fixed<plan_request{matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 2100, .K = 512, .N = 256}, plan_options{.delta_tasks = true}}>();
  REQUIRE(p.code.task_count == 3);
  // the first two tasks fill both ping-pong register groups
  CHECK(p.code.tasks[0].count == 108);
  CHECK(p.code.tasks[1].count == 108);
  // later tasks: the feature and output addresses, then the tail
  CHECK(p.code.tasks[2].count == 6);
  const task& t = p.code.tasks[2];
  CHECK(p.code.entries[t.first].offset() == 0x1070);
  CHECK(p.code.entries[t.first + 1].offset() == 0x4020);
  CHECK(validate_structure(p.code.view()).ok());
}

TEST_CASE("a chain of 1000 tasks builds at compile time") {
  // the template split asked for: 8 rows a tile, 1000 tiles
  static constexpr auto p = fixed<plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 8000, .K = 2048,
                                                    .N = 64, .sched = schedule::template_split}, plan_options{.k_slice = 2048, .delta_tasks = true}}>();
  CHECK(p.code.task_count == 1000);
  CHECK(p.code.tasks[999].count == 6);
  // and with every task written in full, within the compilers' default constexpr budgets
  static constexpr auto full = fixed<plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 8000, .K = 2048,
                                                       .N = 64, .sched = schedule::template_split}, plan_options{.k_slice = 2048}}>();
  CHECK(full.code.task_count == 1000);
  CHECK(full.code.entry_count == 1000 * matmul::task_entries);
}

TEST_CASE("plans refuse int8 outputs, empty shapes and operands past the 32-bit address space") {
  CHECK_BREAKS(plan(matmul_spec{.dtype = precision::int8, .out_dtype = precision::int8, .M = 1, .K = 64, .N = 64}), rules::int8_output_int32);
  CHECK_BREAKS(plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 0, .K = 64, .N = 64}), rules::shape_nonzero);
  // 100000 x 16384 fp32 outputs are 6.5 GB: no 32-bit address reaches the end.
  const auto huge = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 100000, .K = 64, .N = 16384});
  REQUIRE_FALSE(huge.ok());
  CHECK_BREAKS(huge, rules::operand_size);
  CHECK(huge.err().subject == "plan");
  CHECK(huge.err().value == 100000ull * 16384 * 4);
  // A feature view strided past 4 GiB, and weights of 4 GiB + 4 MiB (65600 x 32768 x 2).
  CHECK_BREAKS(plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64,
                         .feature_pitch = 0x6000'0000}), rules::operand_size);
  CHECK_BREAKS(plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 65600, .N = 32768}), rules::operand_size);
  // Just inside: 3 rows at 1 GiB pitch plus one row; weights of 4 GiB less one weight tile
  // column (65536 x 32752 x 2); outputs of 4 GiB less one row (65535 x 16384 x 4). An operand
  // of exactly 4 GiB is refused: its size is a 32-bit number (it read 0, and a plan's output
  // buffer was allocated 16 bytes), and no driver can place it.
  CHECK(plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64,
                         .feature_pitch = 0x4000'0000}).ok());
  CHECK(plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 65536, .N = 32752}).ok());
  CHECK_BREAKS(plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 65536, .N = 32768}), rules::operand_size);
  CHECK(plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 65535, .K = 64, .N = 16384}).ok());
  CHECK_BREAKS(plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 65536, .K = 64, .N = 16384}), rules::operand_size);
  // int8 -> int32, M 262144 K 2048 N 2048: an output of 2 GiB; split in two K slices its
  // partials would be 4 GiB exactly, so no such grid is chosen and the buffer holds them
  const auto two_gib = plan(matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 262144, .K = 2048, .N = 2048});
  REQUIRE(two_gib.ok());
  CHECK(matmul::plan_output_bytes(two_gib.value()) == 2147483648u);
}

TEST_CASE("sizes near 2^32 are refused before they are rounded, never wrapped") {
  // N = 2^32 - 1 rounded to the weight tile wrapped to 0, and the N tiles' count divided by
  // it (SIGFPE); K wrapped likewise and was reported as m-register-limit. Each operand, K
  // and N padded, is now checked in 64 bits first: K x N fp16 here is 128 GiB.
  const auto n = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 64, .N = 4294967295u});
  REQUIRE_FALSE(n.ok());
  CHECK_BREAKS(n, rules::operand_size);
  CHECK(n.err().detail == "weights");
  CHECK(n.err().value == 64ull * 4294967296ull * 2);
  for (const precision p : {precision::int4, precision::int8}) {
    CAPTURE(p);
    const precision out = p == precision::int4 ? precision::int16 : precision::int32;
    CHECK_BREAKS(plan(matmul_spec{.dtype = p, .out_dtype = out, .M = 1, .K = 64, .N = 4294967290u}), rules::operand_size);
    CHECK_BREAKS(plan(matmul_spec{.dtype = p, .out_dtype = out, .M = 1, .K = 4294967295u, .N = 64}), rules::operand_size);
  }
  const auto k = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 4294967295u, .N = 64});
  CHECK_BREAKS(k, rules::operand_size);
  CHECK(k.err().detail == "features");  // 1 x 2^32 fp16 = 8 GiB
  CHECK(plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4294967295u, .K = 4294967295u, .N = 4294967295u})
            .err()
            .id() == "operand-size");  // products saturate, never wrap
}

TEST_CASE("a plan whose every K split has partials past 4 GiB says so") {
  // 16384^3 fp16: the operands fit (512 MiB, 512 MiB, 1 GiB of fp32 outputs), but K = 16384
  // splits into 8 slices of fp32 partials, 8 GiB; the error named m-register-limit ("tile
  // M") before.
  const auto p = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 16384, .K = 16384, .N = 16384});
  REQUIRE_FALSE(p.ok());
  CHECK_BREAKS(p, rules::operand_size);
  CHECK(p.err().detail == "partials");
  CHECK(p.err().value == 8ull * 16384 * 16384 * 4);
}

TEST_CASE("the output pitch is bounded by the notch register, in one op and in a plan") {
  // NOTCH_ADDR_1 holds pitch/4 - 1 outputs in 13 bits: 32768 fp32 outputs is the widest.
  const matmul_spec widest{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64,
                           .output_pitch = 32768 * 4};
  CHECK(plan(widest).ok());
  CHECK(build(widest).ok());
  matmul_spec wider = widest;
  wider.output_pitch += 16;
  CHECK_BREAKS(plan(wider), rules::output_pitch);
  CHECK_BREAKS(build(wider), rules::output_pitch);
}

TEST_CASE("a fused activation rides every tile of a plan, and is refused when K is split") {
  // N = 8208 > 8192: two N tiles, each a whole output with the ReLU in its own BN stage
  const auto tiled = build(plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 64, .N = 8208,
                                            .activation = output_activation::relu}});
  REQUIRE(tiled.ok());
  const program_view v = tiled.value().view();
  REQUIRE(v.tasks.size() == 2);
  for (std::size_t t = 0; t < v.tasks.size(); ++t)
    CHECK_REGISTER(v, reg::DPU_BN_CFG::from_bits(0x12), testing::in_task{t});
  const auto split = plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 4, .K = 16384, .N = 64,
                                      .activation = output_activation::relu});
  REQUIRE_FALSE(split.ok());
  CHECK_BREAKS(split, rules::plan_activation_k_split);
  // K = 4096 fits one op: without the activation two slices of 2048 (88 rows) move the
  // least; with it, K stays whole: the bank split's 360448 / 8192 = 44 rows, two M tiles
  const matmul_spec whole{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 64, .K = 4096, .N = 256};
  CHECK(plan(whole).value().slices == 2);
  matmul_spec activated = whole;
  activated.activation = output_activation::relu;
  const auto kept = plan(activated);
  REQUIRE(kept.ok());
  CHECK(kept.value().slices == 1);
  CHECK(kept.value().m_tiles == 2);
}

TEST_CASE("whole_k: M and N tiles only, so the weights stay one block per N tile (the vendor's native B)") {
  // fp16 at K = 8192: the bank split holds 11 * 32768 / (2 * 8192) = 22 rows, three M tiles
  // of 22 for M = 64, each reading all the weights; the production rule's template split
  // (one data bank, 32768 / (2 * 8192) = 2 rows) would read them 32 times.
  const matmul_spec fp16{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 64, .K = 8192, .N = 16384};
  const auto p = plan(fp16, {.whole_k = true});
  REQUIRE(p.ok());
  CHECK(p.value().slices == 1);
  CHECK(p.value().m_tiles == 3);
  CHECK(p.value().m_tile == 22);
  CHECK(p.value().n_tiles == 2);
  // asked for, the template split: 32 tiles of 2 rows
  matmul_spec templated = fp16;
  templated.sched = schedule::template_split;
  CHECK(plan(templated, {.whole_k = true}).value().m_tiles == 32);
  CHECK(plan(templated, {.whole_k = true}).value().m_tile == 2);
  // N tile 1 starts after N tile 0's 8192 columns of all of K: 8192 * 8192 * 2 bytes
  CHECK(p.value().weight_block_offset(1, 0) == 134217728u);
  CHECK(plan(fp16).value().slices > 1);
  // int8 at K = 8192: the template split holds 32768 / 8192 = 4 rows (rknn-matmul-api §4.3)
  const auto i8 = plan(matmul_spec{.dtype = precision::int8, .out_dtype = precision::int32, .M = 64, .K = 8192, .N = 64}, {.whole_k = true});
  REQUIRE(i8.ok());
  CHECK(i8.value().m_tiles == 16);
  // K beyond one op cannot stay whole; a slice size contradicts it
  CHECK(plan(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 1, .K = 10784, .N = 64}, {.whole_k = true})
            .err()
            .id() == "k-single-op-max");
  CHECK_BREAKS(plan(fp16, {.k_slice = 1024, .whole_k = true}), rules::k_slice_max);
}
