#pragma once
// Activation programs: out = f(x) for every element of an SDP tensor (regcmd/programs/sdp_pass.hpp:
// flat or surface layout, fp16 / int8 / int16), on the DPU's BN, EW and output stages fed by
// the DPU_RDMA (enable mask 0x18).
//
//   ReLU family, no table (fp16, int8, int16):
//     relu          BN ReLU
//     clip(lo, hi)  BN: + (-lo), ReLU, ReLUX at hi - lo; then + lo (fp16: the EW stage's
//                   register immediate add; ints: OUT_CVT_OFFSET). relu6 = clip(0, 6), whose
//                   BN ReLU + ReLUX alone is Mesa's fused ReLU6.
//     leaky_relu    BN multiplier on the negatives only (BN_MUL_PRELU), slope a in [0, 1)
//   Lookup tables (fp16): sigmoid, tanh, silu, gelu, gelu_erf, hardswish, hardsigmoid, exp,
//     mish, elu (α), selu, softplus, or any constexpr function (lut_activation<F, range, spec>()): the BN stage scales
//     x into the table's index space, the EW stage's LUT reads the tables (programs/
//     lut_table.hpp), the output conversion's MINUS_EXP scales the entries back. Every task
//     uploads both tables first: the tables live in each core's DPU, so a task that relied
//     on an earlier task's upload would read nothing once the runtime splits the tasks over
//     cores, or after a reset between submits.
// Register values and their sources: docs/activation-values.md.

#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <string_view>

#include <regcmd/core/error.hpp>
#include <regcmd/core/half.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/task/emit_task.hpp>
#include <regcmd/task/task.hpp>
#include <regcmd/task/writer.hpp>
#include <regcmd/programs/activation/functions.hpp>
#include <regcmd/programs/door.hpp>
#include <regcmd/programs/activation/lut_table.hpp>
#include <regcmd/programs/output_activation.hpp>
#include <regcmd/programs/sdp_pass.hpp>
#include <regcmd/registers/dpu.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

enum class activation : std::uint8_t {
  relu, relu6, clip, leaky_relu,                                             // DPU stages
  sigmoid, tanh, silu, gelu, gelu_erf, hardswish, hardsigmoid, exp, mish,  // lookup tables
  elu, selu, softplus, rsqrt_band, reciprocal_band,
  custom,                                                                    // lut_activation<F>
};

constexpr bool uses_lut(activation f) { return f >= activation::sigmoid; }

struct act_spec {
  activation fn = activation::relu;
  precision dtype = precision::fp16;  // of x and out: fp16, int8 or int16 (tables: fp16)
  std::uint32_t M = 0;
  std::uint32_t N = 0;
  operand_layout layout = operand_layout::row_major;
  tile_padding tile_pad = tile_padding::zero;
  float lo = 0.0f, hi = 6.0f;  // clip's bounds
  float slope = 0.01f;         // leaky_relu's slope for x < 0
  float alpha = 1.0f;          // elu's α: negatives saturate at -α
  lut_range range{};           // a table's range; {0, 0}: the function's own (activation_functions.hpp)
  friend constexpr bool operator==(const act_spec&, const act_spec&) = default;
};

// The DPU stages an activation sets, and its table.
struct act_geometry : sdp_shape {
  activation fn{};
  bn_stage bn{};
  ew_stage ew{};
  out_convert_stage out_convert{};
  bool lut = false;
  lut_stage lut_registers{};
  lut_table table{};
};

namespace detail {
// A float operand as the DPU reads it: fp32 bits for fp16 data, a two's complement int32
// for integers.
constexpr std::uint32_t operand_bits(precision p, double v) {
  return p == precision::fp16 ? std::bit_cast<std::uint32_t>(static_cast<float>(v))
                              : static_cast<std::uint32_t>(static_cast<std::int32_t>(v));
}

constexpr bool is_integer_within(double v, precision p) {
  const double top = p == precision::int8 ? 127 : 32767;
  return v >= -top - 1 && v <= top && static_cast<double>(static_cast<std::int32_t>(v)) == v;
}

constexpr status set_clip(act_geometry& g, double lo, double hi) {
  using namespace reg;
  const bool fp16 = g.dtype == precision::fp16;
  if (!(lo < hi) || lo != lo || hi != hi || lo < -3.4e38 || hi > 3.4e38 ||
      (!fp16 && (!is_integer_within(lo, g.dtype) || !is_integer_within(hi, g.dtype))))
    return make_error(rules::act_clip_bounds, "act");
  const bool shifted = lo != 0;
  g.bn = {.cfg = {.BN_ALU_BYPASS = !shifted, .BN_MUL_BYPASS = 1, .BN_RELUX_EN = 1,
                  .BN_ALU_ALGO = shifted ? alu_algo::SUM : alu_algo{}},
          .alu = {.BN_ALU_OPERAND = shifted ? operand_bits(g.dtype, -lo) : 0u},
          .relux = {.BN_RELUX_CMP_DAT = operand_bits(g.dtype, hi - lo)}};
  if (!shifted) return {};
  if (fp16) {
    // + lo as the element-wise add of a register immediate (regcmd/programs/sdp/elementwise.hpp, B).
    g.ew = {.cfg = ew_config_of(g.dtype, ew_op::add, ew_operand::immediate).ew, .operands = every_element(DPU_EW_OP_VALUE{.EW_OPERAND = operand_bits(g.dtype, lo)})};
  } else {
    g.out_convert.offset = {.OUT_CVT_OFFSET = operand_bits(g.dtype, lo)};
  }
  return {};
}

constexpr status set_leaky(act_geometry& g, double slope) {
  if (!leaky_slope_valid(slope)) return make_error(rules::act_leaky_slope, "act");
  g.bn = bn_stage_of(leaky_activation(slope, g.dtype == precision::fp16));
  return {};
}

// The table's registers (ops-reference §6.2): v = (x + -0.0) * index_scale in BN (0x00020040),
// the EW stage's LUT alone (0x302), LUT_CFG 0x68, index select 5 on both tables, LE over
// [-16384, 0] and LO over [0, 16384], the tails, and MINUS_EXP = e on the way out.
constexpr void set_lut(act_geometry& g, const lut_table& table) {
  using namespace reg;
  g.lut = true;
  g.table = table;
  g.bn = {.cfg = {.BN_RELU_BYPASS = 1, .BN_ALU_ALGO = alu_algo::SUM},
          .alu = {.BN_ALU_OPERAND = 0x80000000u},  // -0.0f: no offset
          .mul = {.BN_MUL_OPERAND = table.index_scale}};
  g.ew = {.cfg = {.EW_OP_BYPASS = 1, .EW_OP_CVT_BYPASS = 1, .EW_RELU_BYPASS = 1}};
  g.lut_registers = {
      .cfg = {.LUT_LO_LE_MUX = 2, .LUT_OFLOW_PRIORITY = 1, .LUT_HYBRID_PRIORITY = 1},
      .info = {.LUT_LE_INDEX_SELECT = lut_index_select, .LUT_LO_INDEX_SELECT = lut_index_select},
      .le_start = {.LUT_LE_START = static_cast<std::uint32_t>(-lut_span)},
      .lo_end = {.LUT_LO_END = static_cast<std::uint32_t>(lut_span)},
      .le_slope_scale = {.LUT_LE_SLOPE_UFLOW_SCALE = static_cast<std::uint16_t>(table.underflow.scale)},
      .le_slope_shift = {.LUT_LE_SLOPE_UFLOW_SHIFT = table.underflow.shift},
      .lo_slope_scale = {.LUT_LO_SLOPE_OFLOW_SCALE = static_cast<std::uint16_t>(table.overflow.scale)},
      .lo_slope_shift = {.LUT_LO_SLOPE_OFLOW_SHIFT = table.overflow.shift},
  };
  g.out_convert.shift = {.MINUS_EXP = table.exponent, .CVT_TYPE = 1};
}

// The built-in table of f, over the spec's range or the function's own.
constexpr result<lut_table> builtin_table(activation f, const lut_range& asked, double alpha) {
  namespace a = activations;
  const bool own = asked == lut_range{};
  auto with = [&](const auto& fn, const lut_range& r) { return make_lut_table(fn, own ? r : asked); };
  switch (f) {
    case activation::sigmoid: return with(a::sigmoid_fn{}, a::sigmoid_range);
    case activation::tanh: return with(a::tanh_fn{}, a::tanh_range);
    case activation::silu: return with(a::silu_fn{}, a::silu_range);
    case activation::gelu: return with(a::gelu_fn{}, a::gelu_range);
    case activation::gelu_erf: return with(a::gelu_erf_fn{}, a::gelu_range);
    case activation::hardswish: return with(a::hardswish_fn{}, a::hardswish_range);
    case activation::hardsigmoid: return with(a::hardsigmoid_fn{}, a::hardsigmoid_range);
    case activation::exp: return with(a::exp_fn{}, a::exp_range);
    case activation::mish: return with(a::mish_fn{}, a::mish_range);
    case activation::elu: return with(a::elu_fn{alpha}, a::elu_range);
    case activation::selu: return with(a::selu_fn{}, a::elu_range);
    case activation::softplus: return with(a::softplus_fn{}, a::softplus_range);
    case activation::rsqrt_band: return with(a::rsqrt_band_fn{}, a::band_range);
    case activation::reciprocal_band: return with(a::reciprocal_band_fn{}, a::band_range);
    default: return make_error(rules::lut_range, "act");
  }
}
}  // namespace detail

// Every rule of an activation request but the table's, in the order a user would fix them;
// `table` is the table of a LUT function (computed by the caller: built in or the user's).
template <class Soc = soc::rk3588>
constexpr result<act_geometry> resolve_act_shape(const act_spec& s) {
  const result<sdp_shape> shape = resolve_sdp_shape<Soc>(s.dtype, s.M, s.N, s.layout, s.tile_pad, "act");
  if (!shape) return shape.err();
  act_geometry g;
  static_cast<sdp_shape&>(g) = shape.value();
  g.fn = s.fn;
  if (uses_lut(s.fn) && s.dtype != precision::fp16) return make_error(rules::act_lut_precision, "act");
  using namespace reg;
  switch (s.fn) {
    case activation::relu: g.bn = {.cfg = {.BN_ALU_BYPASS = 1, .BN_MUL_BYPASS = 1}}; break;
    case activation::relu6:
      if (status c = detail::set_clip(g, 0, 6); !c) return c.err();
      break;
    case activation::clip:
      if (status c = detail::set_clip(g, s.lo, s.hi); !c) return c.err();
      break;
    case activation::leaky_relu:
      if (status c = detail::set_leaky(g, s.slope); !c) return c.err();
      break;
    default: break;
  }
  return g;
}

template <class Soc = soc::rk3588>
constexpr result<act_geometry> resolve_act(const act_spec& s) {
  result<act_geometry> g = resolve_act_shape<Soc>(s);
  if (!g || !uses_lut(s.fn)) return g;
  const result<lut_table> table = detail::builtin_table(s.fn, s.range, s.alpha);
  if (!table) return table.err();
  detail::set_lut(g.value(), table.value());
  return g;
}

namespace act {
// Entries of a task (at most): 51 register writes (the SDP task without a second operand),
// the tail and the padding to 16 bytes; a LUT task also writes 0x40C4 and 10 LUT registers,
// and the two tables (2 x (1 + 513) writes).
inline constexpr std::uint32_t task_entries = 56, lut_task_entries = 66;
inline constexpr std::uint32_t lut_upload_entries = 2 * (1 + lut_table_entries);

constexpr std::uint32_t entries_of(const act_geometry& g) {
  return g.tasks() * (g.lut ? act::lut_task_entries + act::lut_upload_entries : act::task_entries);
}

// One activation task over `shape`, a LUT task with its tables.
constexpr task_desc make_task(const act_geometry& g, const ew_task_shape& shape, const ew_offsets& at) {
  task_desc t = sdp_task(g, shape, at);
  t.dpu->bn = g.bn;
  t.dpu->ew = g.ew;
  t.dpu->out_convert.offset = g.out_convert.offset;
  t.dpu->out_convert.shift = g.out_convert.shift;
  if (g.lut) {
    t.dpu->lut_config = true;
    t.dpu->lut = g.lut_registers;
    t.dpu->upload = lut_upload{g.table.le.data(), g.table.lo.data(), lut_table_entries};
  }
  return t;
}

// Every task of an activation: one in the surface layout, one per 8000 pixels flat.
constexpr void emit(program_writer& w, const act_geometry& g) {
  for (std::uint32_t t = 0; t < g.tasks() && w.ok(); ++t) {
    const std::uint32_t at = g.task_offset(t);
    emit_task(w, act::make_task(g, g.task_shape(t), {at, 0, at}));
  }
}
}  // namespace act

namespace detail {
// What every activation kind shares: the storage, SDP's ping-pong off, the emitter.
struct act_kind_base {
  using geometry = act_geometry;
  static constexpr std::string_view name = "act";
  static constexpr program_size size(const geometry& g) { return {act::entries_of(g), std::size_t{g.tasks()} * 4, g.tasks()}; }
  static constexpr submit_options options(const geometry&) { return {.pingpong = false}; }
  template <class Soc>
  static constexpr void emit(program_writer& w, const geometry& g) { act::emit(w, g); }
  static constexpr program_checks checks = program_checks::every_rule;
};
}  // namespace detail

// A built-in activation (act_spec::fn).
struct act_kind : detail::act_kind_base {
  using spec = act_spec;
  template <class Soc>
  static constexpr result<geometry> resolve(const spec& s) { return resolve_act<Soc>(s); }
};

// A table of the constexpr function F over spec.range (spec.fn is ignored).
template <auto F>
struct lut_act_kind : detail::act_kind_base {
  using spec = act_spec;
  template <class Soc>
  static constexpr result<geometry> resolve(const spec& s) {
    act_spec shape = s;
    shape.fn = activation::custom;
    result<act_geometry> g = resolve_act_shape<Soc>(shape);
    if (!g) return g;
    const result<lut_table> table = make_lut_table(F, s.range);
    if (!table) return table.err();
    detail::set_lut(g.value(), table.value());
    return g;
  }
};

// A table built at run time (make_lut_table of any callable) and the shape it applies to.
struct table_act_spec {
  act_spec shape{};
  lut_table table{};
};
struct table_act_kind;
table_act_kind program_kind_of(const table_act_spec&);
struct table_act_kind : detail::act_kind_base {
  using spec = table_act_spec;
  template <class Soc>
  static constexpr result<geometry> resolve(const spec& s) {
    act_spec shape = s.shape;
    shape.fn = activation::custom;
    result<act_geometry> g = resolve_act_shape<Soc>(shape);
    if (!g) return g;
    detail::set_lut(g.value(), s.table);
    return g;
  }
};

act_kind program_kind_of(const act_spec&);

// The names before regcmd::fixed and regcmd::build (docs/changelog.md).
template <act_spec Spec, class Soc = soc::rk3588>
[[deprecated("use regcmd::fixed<spec>()")]] constexpr auto activation_program() { return fixed<Spec, Soc>(); }

template <auto F, lut_range Range, act_spec Spec, class Soc = soc::rk3588>
constexpr auto lut_activation() {
  constexpr act_spec spec = [] {
    act_spec s = Spec;
    s.range = Range;
    return s;
  }();
  return build_fixed<lut_act_kind<F>, spec, Soc>();
}
template <class Soc = soc::rk3588>
[[deprecated("use regcmd::build(spec)")]] auto build_activation(const act_spec& spec) { return build<Soc>(spec); }

// Any callable, at run time: its table over `range`, then the program.
template <class F, class Soc = soc::rk3588>
result<runtime_program<act_geometry>> build_lut_activation(const F& f, const lut_range& range, const act_spec& shape) {
  const result<lut_table> table = make_lut_table(f, range);
  if (!table) return table.err();
  return build<Soc>(table_act_spec{shape, table.value()});
}

}  // namespace regcmd
