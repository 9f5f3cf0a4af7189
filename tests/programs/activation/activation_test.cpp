// Activation programs against values typed by hand: the LUT registers of the public programs
// (ops-reference §6.2: BN_CFG 0x00020040, EW_CFG 0x302, LUT_CFG 0x68, LUT_INFO 0x050500,
// LE_START -16384, LO_END 16384, the sigmoid's OUT_CVT_SHIFT 0x8000f000), table entries
// evaluated from the formulas of docs/activation-values.md, and the ReLU-family stage values.
#include <regcmd/testing/doctest.hpp>

#include <cstdint>
#include <limits>
#include <vector>

#include <regcmd/programs/activation/activation.hpp>

using namespace regcmd;

namespace {
constexpr std::uint16_t dpu = 0x1001;

// The values of the `n`-th table upload (0: LE, 1: LO) of task 0, as signed entries.
std::vector<std::int16_t> uploaded(const program_view& p, int table) {
  std::vector<std::int16_t> out;
  int seen = -1;
  for (std::uint32_t i = p.tasks[0].first; i < p.tasks[0].first + p.tasks[0].count; ++i) {
    const entry e = p.entries[i];
    if (e.target() != dpu) continue;
    if (e.offset() == 0x4100) ++seen;
    if (e.offset() == 0x4104 && seen == table) out.push_back(static_cast<std::int16_t>(e.value()));
  }
  return out;
}

runtime_program<act_geometry> built(const act_spec& s) {
  auto r = build(s);
  REQUIRE_MESSAGE(r.ok(), r.err().id());
  return std::move(r).value();
}
}  // namespace

TEST_CASE("sigmoid: the public LUT registers, its Q0.15 output conversion and entries by hand") {
  const auto p = built({.fn = activation::sigmoid, .M = 4, .N = 64});
  const program_view v = p.view();
  // Range [-8, 8]: index scale 16384 / 8 = 2048 (fp16 0x6800), step 32 / 2048 = 1/64.
  CHECK_REGISTER(v, reg::DPU_BN_CFG::from_bits(0x00020040));  // BN: ALU add, MUL on, ReLU bypassed
  CHECK_REGISTER(v, reg::DPU_BN_ALU_CFG::from_bits(0x80000000));  // -0.0f
  CHECK_REGISTER(v, reg::DPU_BN_MUL_CFG::from_bits(0x68000000));  // fp16(2048) << 16
  CHECK_REGISTER(v, reg::DPU_EW_CFG::from_bits(0x302));
  CHECK_REGISTER(v, reg::DPU_LUT_CFG::from_bits(0x68));
  CHECK_REGISTER(v, reg::DPU_LUT_INFO::from_bits(0x050500));
  CHECK_REGISTER(v, reg::DPU_LUT_LE_START::from_bits(0xffffc000));
  CHECK_REGISTER(v, reg::DPU_LUT_LE_END::from_bits(0));
  CHECK_REGISTER(v, reg::DPU_LUT_LO_START::from_bits(0));
  CHECK_REGISTER(v, reg::DPU_LUT_LO_END::from_bits(0x4000));
  // max sigmoid on the range 0.99966 -> e = 15 (32757 fits, 65514 does not): the public
  // sigmoid's own conversion, CVT_TYPE | MINUS_EXP 15.
  CHECK_REGISTER(v, reg::DPU_OUT_CVT_SHIFT::from_bits(0x8000f000));
  CHECK_REGISTER(v, reg::DPU_OUT_CVT_SCALE::from_bits(0x00010001));
  CHECK_REGISTER(v, reg::DPU_DATA_FORMAT::from_bits(0x48000002));
  // held tails: both slopes 0
  CHECK_REGISTER(v, reg::DPU_LUT_LE_SLOPE_SCALE::from_bits(0));
  CHECK_REGISTER(v, reg::DPU_LUT_LE_SLOPE_SHIFT::from_bits(0));
  CHECK_REGISTER(v, reg::DPU_LUT_LO_SLOPE_SCALE::from_bits(0));
  CHECK_REGISTER(v, reg::DPU_LUT_LO_SLOPE_SHIFT::from_bits(0));
  // the upload: ACCESS_CFG 0x20000 (table 0, write) and 0x30000 (table 1), 513 entries each
  CHECK(testing::copies_of<reg::DPU_LUT_ACCESS_CFG>(v) == 2);
  CHECK(testing::copies_of<reg::DPU_LUT_ACCESS_DATA>(v) == 1026);
  CHECK(v.entries[v.tasks[0].first] == entry::make(dpu, 0x00020000, 0x4100));
  CHECK(v.entries[v.tasks[0].first + 514] == entry::make(dpu, 0x00030000, 0x4100));
  const std::vector<std::int16_t> le = uploaded(v, 0), lo = uploaded(v, 1);
  REQUIRE(le.size() == 513);
  REQUIRE(lo.size() == 513);
  // LE[i] = round(32768 σ(-(512 - i) / 64)), LO[i] = round(32768 σ(i / 64)):
  CHECK(le[0] == 11);       // 32768 σ(-8) = 10.989
  CHECK(le[256] == 589);    // 32768 σ(-4) = 589.4
  CHECK(le[511] == 16256);  // 32768 σ(-1/64) = 16256.0
  CHECK(le[512] == 16384);
  CHECK(lo[0] == 16384);
  CHECK(lo[1] == 16512);    // 32768 σ(1/64) = 16512.0
  CHECK(lo[256] == 32179);  // 32768 σ(4) = 32178.6
  CHECK(lo[512] == 32757);  // 32768 σ(8) = 32757.0
}

TEST_CASE("SiLU: its own range and exponent, a linear overflow tail by hand") {
  const auto p = built({.fn = activation::silu, .M = 1, .N = 1024});
  const program_view v = p.view();
  // Range [-12, 12]: 16384 / 12 = 1365.3 -> fp16 at most 1365 (0x6555); step 32 / 1365.
  CHECK_REGISTER(v, reg::DPU_BN_MUL_CFG::from_bits(0x65550000));
  // max |silu| = silu(12) = 11.99993 -> e = 11 (24576 fits, 49152 does not)
  CHECK_REGISTER(v, reg::DPU_OUT_CVT_SHIFT::from_bits(0x8000b000));
  const std::vector<std::int16_t> le = uploaded(v, 0), lo = uploaded(v, 1);
  CHECK(lo[1] == 24);        // 2048 silu(0.023443) = 24.29
  CHECK(lo[256] == 12261);   // 2048 silu(6.00147) = 12260.7
  CHECK(lo[512] == 24576);   // x = 12.003 held at 12: 2048 * 11.99993
  CHECK(le[256] == -30);     // 2048 silu(-6.00147) = -30.3
  CHECK(le[0] == 0);         // 2048 silu(-12) = -0.15
  // overflow: secant of silu over [12.003, 24.006] = 1.0000061 per x, * 2048 / 1365 =
  // 1.5003755 per v-unit = 24582 * 2^-14 (the largest shift keeping 16 bits)
  CHECK_REGISTER(v, reg::DPU_LUT_LO_SLOPE_SCALE::from_bits(24582u << 16));
  CHECK_REGISTER(v, reg::DPU_LUT_LO_SLOPE_SHIFT::from_bits(14u << 5));
  // underflow held
  CHECK_REGISTER(v, reg::DPU_LUT_LE_SLOPE_SCALE::from_bits(0));
}

TEST_CASE("every task of a flat LUT program uploads its tables: no task relies on another's") {
  const auto many = built({.fn = activation::tanh, .M = 1000, .N = 200});  // 25000 pixels: 4 tasks
  const program_view w = many.view();
  REQUIRE(w.tasks.size() == 4);
  for (std::size_t t = 0; t < 4; ++t) {
    CHECK(testing::copies_of<reg::DPU_LUT_ACCESS_DATA>(w, testing::in_task{t}) == 1026);
    CHECK(testing::copies_of<reg::DPU_LUT_ACCESS_CFG>(w, testing::in_task{t}) == 2);
    CHECK_REGISTER(w, reg::DPU_LUT_CFG::from_bits(0x68), testing::in_task{t});
    CHECK(w.tasks[t].count == 1028 + 66);  // the upload, 62 writes and the 4-entry tail
  }
}

TEST_CASE("ReLU family stage values: BN ReLU, ReLUX, PReLU multiplier, the shifted clip") {
  SUBCASE("relu: BN on with ALU and MUL bypassed") {
    const auto p = built({.fn = activation::relu, .M = 2, .N = 16});
    CHECK_REGISTER(p.view(), reg::DPU_BN_CFG::from_bits(0x12));  // ALU_BYPASS | MUL_BYPASS
    CHECK_REGISTER(p.view(), reg::DPU_EW_CFG::from_bits(0x383));
    CHECK(testing::copies_of<reg::DPU_LUT_CFG>(p.view()) == 0);     // no LUT registers
  }
  SUBCASE("relu6 fp16: ReLUX at 6.0f, as Mesa's fused ReLU6") {
    const auto p = built({.fn = activation::relu6, .M = 2, .N = 16});
    CHECK_REGISTER(p.view(), reg::DPU_BN_CFG::from_bits(0x92));  // + RELUX_EN
    CHECK_REGISTER(p.view(), reg::DPU_BN_RELUX_CMP_VALUE::from_bits(0x40c00000));
  }
  SUBCASE("relu6 int8: ReLUX at the integer 6") {
    const auto p = built({.fn = activation::relu6, .dtype = precision::int8, .M = 2, .N = 16});
    CHECK_REGISTER(p.view(), reg::DPU_BN_RELUX_CMP_VALUE::from_bits(6));
    CHECK_REGISTER(p.view(), reg::DPU_DATA_FORMAT::from_bits(0));  // int8 everywhere
  }
  SUBCASE("clip(-1, 1) fp16: BN adds 1.0f, clamps to [0, 2.0f], the EW immediate adds -1.0f") {
    const auto p = built({.fn = activation::clip, .M = 2, .N = 16, .lo = -1, .hi = 1});
    CHECK_REGISTER(p.view(), reg::DPU_BN_CFG::from_bits(0x00020090));  // SUM, RELUX_EN, MUL bypassed
    CHECK_REGISTER(p.view(), reg::DPU_BN_ALU_CFG::from_bits(0x3f800000));
    CHECK_REGISTER(p.view(), reg::DPU_BN_RELUX_CMP_VALUE::from_bits(0x40000000));
    CHECK_REGISTER(p.view(), reg::DPU_EW_CFG::from_bits(0x10820280));  // B's immediate add
    CHECK_REGISTER(p.view(), reg::DPU_EW_OP_VALUE::from_bits(0xbf800000), testing::element{0});
  }
  SUBCASE("clip(-5, 100) int16: the offset on the way out") {
    const auto p = built({.fn = activation::clip, .dtype = precision::int16, .M = 2, .N = 16, .lo = -5, .hi = 100});
    CHECK_REGISTER(p.view(), reg::DPU_BN_ALU_CFG::from_bits(5));
    CHECK_REGISTER(p.view(), reg::DPU_BN_RELUX_CMP_VALUE::from_bits(105));
    CHECK_REGISTER(p.view(), reg::DPU_OUT_CVT_OFFSET::from_bits(0xfffffffb));
  }
  SUBCASE("leaky 0.1: fp16 0x2e66 as the multiplier, PReLU, ReLU bypassed") {
    const auto p = built({.fn = activation::leaky_relu, .M = 2, .N = 16, .slope = 0.1f});
    CHECK_REGISTER(p.view(), reg::DPU_BN_CFG::from_bits(0x62));  // ALU_BYPASS | MUL_PRELU | RELU_BYPASS
    CHECK_REGISTER(p.view(), reg::DPU_BN_MUL_CFG::from_bits(0x2e660000));
  }
  SUBCASE("leaky 0.1 int8: round(0.1 * 2^15) = 3277, shift 15") {
    const auto p = built({.fn = activation::leaky_relu, .dtype = precision::int8, .M = 2, .N = 16, .slope = 0.1f});
    CHECK_REGISTER(p.view(), reg::DPU_BN_MUL_CFG::from_bits((3277u << 16 | 15u << 8)));
  }
}

TEST_CASE("every activation rule refuses its spec at run time with its id") {
  auto fails = [](const act_spec& s, const rule& r) {
    auto b = build(s);
    REQUIRE_FALSE(b.ok());
    CHECK_BREAKS(b, r);
  };
  fails({.fn = activation::sigmoid, .dtype = precision::int8, .M = 1, .N = 16}, rules::act_lut_precision);
  fails({.fn = activation::clip, .M = 1, .N = 16, .lo = 2, .hi = 1}, rules::act_clip_bounds);
  fails({.fn = activation::clip, .dtype = precision::int8, .M = 1, .N = 16, .lo = 0, .hi = 200}, rules::act_clip_bounds);
  fails({.fn = activation::clip, .dtype = precision::int8, .M = 1, .N = 16, .lo = 0.5f, .hi = 2}, rules::act_clip_bounds);
  fails({.fn = activation::leaky_relu, .M = 1, .N = 16, .slope = 1.5f}, rules::act_leaky_slope);
  fails({.fn = activation::exp, .M = 1, .N = 16, .range = {-4, 12}}, rules::lut_entry_range);  // e^12 = 162755
  fails({.fn = activation::sigmoid, .M = 1, .N = 16, .range = {-0.1, 0.1}}, rules::lut_range);
  fails({.fn = activation::sigmoid, .M = 1, .N = 16, .range = {1, -1}}, rules::lut_range);
  fails({.fn = activation::relu, .M = 0, .N = 16}, rules::shape_nonzero);
  fails({.fn = activation::relu, .dtype = precision::int32, .M = 1, .N = 16}, rules::ew_precision);
  // a function NaN on part of its range, and a tail too steep for the slope registers
  auto log_of = [](double x) { return x > 0 ? cmath::log(x) : std::numeric_limits<double>::quiet_NaN(); };
  CHECK_BREAKS(build_lut_activation(log_of, {-1, 1}, {.M = 1, .N = 16}), rules::lut_not_finite);
  auto steep = [](double x) { return x <= 1 ? x : 1e9 * x; };
  CHECK_BREAKS(build_lut_activation(steep, {-1, 1, lut_tail::hold, lut_tail::linear}, {.M = 1, .N = 16}), rules::lut_slope_range);
}

// A user function compiled into a table: x / (1 + e^-x) is SiLU, so its table is the
// built-in one's over the same range.
constexpr auto user_silu = lut_activation<[](double x) { return x / (1 + cmath::exp(-x)); },
                                          lut_range{-12, 12, lut_tail::hold, lut_tail::linear},
                                          act_spec{.M = 8, .N = 64}>();
constexpr auto builtin_silu = fixed<act_spec{.fn = activation::silu, .M = 8, .N = 64}>();
static_assert(user_silu.geometry.table.index_scale == 0x6555);
static_assert(user_silu.geometry.table.exponent == 11);

TEST_CASE("a user constexpr function compiles into a table, equal to the built-in one for the same function") {
  CHECK(user_silu.geometry.table.lo == builtin_silu.geometry.table.lo);
  CHECK(user_silu.geometry.table.le == builtin_silu.geometry.table.le);
  CHECK(user_silu.geometry.table.overflow == lut_slope{24582, 14});
  CHECK(user_silu.code.entry_count == 1028 + 66);
}

TEST_CASE("a table's error inside its range: what the step costs (issue 32, N10)") {
  // Linear interpolation between entries h apart is off by up to h^2 / 8 max|f''| (sigmoid's
  // max |f''| is 0.0962 at x = 1.317), plus half an entry's unit (2^-16 with e = 15).
  const auto sigmoid = [](double x) { return activations::sigmoid_fn{}(x); };
  const auto absolute = [](double) { return 1.0; };
  const lut_range own{-8, 8}, wide{-1000, 1000};
  const lut_table t_own = make_lut_table(sigmoid, own).value(), t_wide = make_lut_table(sigmoid, wide).value();
  // +-8: h = 1/64, 2.9e-6 + 1.53e-5
  CHECK(lut_error(sigmoid, own, t_own, absolute) < 1.82e-5);
  // +-1000: index scale fp16 <= 16.384 is 16.375, h = 32 / 16.375 = 1.954: at most 0.0459;
  // the midpoints reach most of it
  const double wide_error = lut_error(sigmoid, wide, t_wide, absolute);
  CHECK(wide_error > 0.03);
  CHECK(wide_error < 0.0459 + 1.6e-5);
  CHECK(t_wide.step() == doctest::Approx(32.0 / 16.375));
  // in units of an allowed error: 0.002 makes the wide table 15 to 23 times too coarse
  const double times = lut_error(sigmoid, wide, t_wide, [](double) { return 0.002; });
  CHECK(times == doctest::Approx(wide_error / 0.002));
}
