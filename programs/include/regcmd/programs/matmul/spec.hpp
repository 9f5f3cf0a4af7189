#pragma once
// What a matmul is asked to compute, and the hardware geometry it resolves to.
//
//   C[M][N] = A[M][K] . B[K][N]      A: features, B: weights, C: output
//
// `matmul_spec` is a structural type, so it can be a template argument (compile-time
// shape: fixed<spec>()) or a plain value (run-time shape: build(spec)). `resolve`
// applies every rule of the request in one place and yields the geometry the emitter and
// the operand packers share.

#include <algorithm>
#include <cstdint>

#include <regcmd/core/error.hpp>
#include <regcmd/core/math.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/core/soc.hpp>
#include <regcmd/programs/vocabulary.hpp>
#include <regcmd/programs/output_activation.hpp>
#include <regcmd/programs/matmul/schedule.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/rules/cbuf.hpp>
#include <regcmd/rules/limits.hpp>
#include <regcmd/rules/precision_rules.hpp>

namespace regcmd {


// The precisions of the two inputs. Written `.dtype = precision::fp16` for the symmetric case;
// `.dtype = {precision::fp16, precision::int8}` asks for a mixed pair (which RK3588 refuses).
struct input_precisions {
  precision features;
  precision weights;
  constexpr input_precisions(precision both) : features{both}, weights{both} {}
  constexpr input_precisions(precision f, precision w) : features{f}, weights{w} {}
  friend constexpr bool operator==(const input_precisions&, const input_precisions&) = default;
};

struct matmul_spec {
  input_precisions dtype = precision::fp16;  // the features' and the weights' element types
  precision out_dtype = precision::fp32;
  std::uint32_t M = 0;
  std::uint32_t K = 0;
  std::uint32_t N = 0;
  operand_layout layout = operand_layout::row_major;
  schedule sched = schedule::automatic;
  tile_padding tile_pad = tile_padding::zero;
  // row_major only: bytes from one feature (output) row to the next; 0 = a packed row.
  // A feature pitch larger than the row reads a strided view (KV cache, K-split slice);
  // an output pitch larger than the row writes a column tile of a wider output.
  std::uint32_t feature_pitch = 0;
  std::uint32_t output_pitch = 0;
  // A ReLU-family activation on the fp16 output, in the same task (output_activation.hpp).
  output_activation activation = output_activation::none;
  float leaky_slope = 0.0f;  // leaky_relu only: in [0, 1)
  friend constexpr bool operator==(const matmul_spec&, const matmul_spec&) = default;
};

// Hardware view of one matmul op.
struct matmul_geometry {
  precision in{};
  precision out{};
  std::uint32_t M = 0;
  std::uint32_t K = 0;  // padded to the weight tile
  std::uint32_t N = 0;  // padded to the weight tile
  std::uint32_t logical_K = 0;
  std::uint32_t logical_N = 0;
  operand_layout layout{};
  schedule sched{};  // resolved; the surface layout uses implementation A's split instead
  std::uint32_t data_banks = 1;
  std::uint32_t feature_pitch = 0;  // row_major: bytes between feature rows
  std::uint32_t output_pitch = 0;   // row_major: bytes between output rows
  bn_activation activation{};       // the fused activation's BN values

  // Bytes each operand's DMA covers from its base address.
  constexpr std::uint32_t feature_bytes() const {
    if (layout == operand_layout::surface) return static_cast<std::uint32_t>(bytes_of(in, std::uint64_t{M} * K));
    return (M - 1) * feature_pitch + feature_row_bytes(in, K);
  }
  constexpr std::uint32_t weight_bytes() const { return static_cast<std::uint32_t>(bytes_of(in, std::uint64_t{K} * N)); }
  constexpr std::uint32_t output_bytes() const {
    if (layout == operand_layout::surface) return static_cast<std::uint32_t>(bytes_of(out, std::uint64_t{M} * N));
    return (M - 1) * output_pitch + static_cast<std::uint32_t>(bytes_of(out, N));
  }

  // Bytes one feature row occupies in memory. int4 rows are K/2 bytes of nibbles followed
  // by a zero half-line: the reference reads int4 with the int8 line stride K/16 ("0x107c":
  // "mc_phys = 2H zero-line padding").
  static constexpr std::uint32_t feature_row_bytes(precision p, std::uint32_t K) {
    return p == precision::int4 ? K : static_cast<std::uint32_t>(bytes_of(p, K));
  }
  friend constexpr bool operator==(const matmul_geometry&, const matmul_geometry&) = default;
};

namespace matmul {
// The weight tile's N and K per input precision: the SoC's native B tile (core/soc.hpp; on
// RK3588 every tile is 1 KB, so int4's holds 64 N: regcmd-isa-reference "The precision enum").
template <class Soc = soc::rk3588>
constexpr std::uint32_t weight_tile_n(precision p) {
  return soc::weight_tile_of<Soc>(p).n;
}
template <class Soc = soc::rk3588>
constexpr std::uint32_t weight_tile_k(precision p) {
  return soc::weight_tile_of<Soc>(p).k;
}
}  // namespace matmul

// The widest output row pitch in outputs: NOTCH_ADDR_1 holds it in 4-output units minus
// one, in 13 bits (reference "Key registers", 0x4038 notch; matmul.hpp checks the width).
inline constexpr std::uint32_t max_output_pitch_outputs = 4u << 13;

// The row-major pitches of a request: the ones asked for, or packed rows.
struct row_pitches {
  std::uint32_t feature = 0;
  std::uint32_t output = 0;
};
constexpr result<row_pitches> resolve_pitches(precision in, precision out, std::uint32_t K, std::uint32_t N,
                                              std::uint32_t feature_pitch, std::uint32_t output_pitch,
                                              const char* where) {
  const std::uint32_t row = matmul_geometry::feature_row_bytes(in, K);
  row_pitches p{feature_pitch ? feature_pitch : row, 0};
  if (p.feature % 16 != 0 || p.feature < row) return make_error(rules::feature_pitch, where, "feature_pitch", p.feature);
  const auto out_row = static_cast<std::uint32_t>(bytes_of(out, N));
  p.output = output_pitch ? output_pitch : out_row;
  if (p.output % 16 != 0 || p.output < out_row || p.output / bytes_of(out, 1) > max_output_pitch_outputs)
    return make_error(rules::output_pitch, where, "output_pitch", p.output);
  return p;
}

// The rules of a request that do not depend on its size: precisions, layout options,
// alignment. Plans check these for the whole operation, then size each tile.
template <class Soc = soc::rk3588>
constexpr status check_request(const matmul_spec& s) {
  const precision in = s.dtype.features;
  if (s.M == 0 || s.K == 0 || s.N == 0) return make_error(rules::shape_nonzero, "matmul");
  if (s.dtype.weights != in) return make_error(rules::precision_symmetric, "matmul");
  if (!int8_writes_int32(in, s.out_dtype)) return make_error(rules::int8_output_int32, "matmul");
  if (!Soc::matmul_pair(in, s.out_dtype)) return make_error(rules::precision_pair, "matmul");
  if (s.tile_pad == tile_padding::none && s.K % matmul::weight_tile_k<Soc>(in) != 0) return make_error(rules::k_alignment, "matmul", "K", s.K);
  if (s.tile_pad == tile_padding::none && s.N % matmul::weight_tile_n<Soc>(in) != 0) return make_error(rules::n_alignment, "matmul", "N", s.N);
  if (in == precision::int4 && s.sched == schedule::bank_split) return make_error(rules::int4_bank_split, "matmul");
  if (s.activation != output_activation::none && s.out_dtype != precision::fp16)
    return make_error(rules::matmul_activation_precision, "matmul", "out_dtype", static_cast<std::uint32_t>(s.out_dtype));
  if (s.activation == output_activation::leaky_relu && !leaky_slope_valid(s.leaky_slope))
    return make_error(rules::act_leaky_slope, "matmul", "leaky_slope");
  if (s.layout == operand_layout::surface) {
    if (in == precision::int4) return make_error(rules::int4_surface, "matmul");
    if (s.feature_pitch != 0 || s.output_pitch != 0) return make_error(rules::pitch_row_major, "matmul");
    if (s.sched != schedule::automatic) return make_error(rules::surface_schedule, "matmul");
    if (s.M != 1 && s.M % 4 != 0) return make_error(rules::surface_m, "matmul", "M", s.M);
  }
  return {};
}

// Every rule of a matmul request as one op, in the order a user would fix them.
// One op's shape, its request's rules already held: what a spec asks for, or what a plan
// asks of one tile (a part of an operation it has checked as a whole).
struct matmul_shape {
  precision in{}, out{};
  std::uint32_t M = 0, K = 0, N = 0;  // K and N whole weight tiles
  std::uint32_t logical_K = 0, logical_N = 0;
  operand_layout layout = operand_layout::row_major;
  schedule sched = schedule::automatic;  // as requested
  row_pitches pitches{};                 // row-major only
  bn_activation activation{};
};

// The geometry of one op of that shape: the schedule and CBUF split it takes, and the
// hardware's rules on it (the M ceiling, the K-128 cap, FEATURE_GRAINS, the address space).
template <class Soc = soc::rk3588>
constexpr result<matmul_geometry> shape_geometry(const matmul_shape& s) {
  const precision in = s.in;
  matmul_geometry g;
  g.in = in;
  g.out = s.out;
  g.M = s.M;
  g.logical_K = s.logical_K;
  g.logical_N = s.logical_N;
  g.K = s.K;
  g.N = s.N;
  g.layout = s.layout;
  g.activation = s.activation;
  if (!n_fits_one_op<Soc>(g.N)) return make_error(rules::n_max, "matmul", "N", g.N);
  g.sched = matmul::resolve_schedule(s.sched, in, g.K);

  if (s.layout == operand_layout::surface) {
    // Implementation A's split: the banks the whole feature occupies (matmul-recipe §1.1 #11).
    g.data_banks = std::max(1u, ceil_div(std::uint64_t{g.M} * g.K * (in == precision::fp16 ? 2 : 1),
                                         Soc::cbuf_bank_bytes));
    g.sched = g.data_banks > 1 ? schedule::bank_split : schedule::template_split;
  } else {
    g.feature_pitch = s.pitches.feature;
    g.output_pitch = s.pitches.output;
    g.data_banks = matmul::data_banks<Soc>(in, g.M, g.K, g.sched);
  }

  const bool split = g.data_banks > 1;
  if (split && !bank_split_valid_k(in, g.K)) return make_error(rules::small_k_bank_split, "matmul", "K", g.K);
  if (!within_fp16_k128_cap(in, g.K, g.M)) return make_error(rules::fp16_k128_cap, "matmul", "M", g.M);
  if (g.M > regcmd::m_ceiling<Soc>(in, g.K, split) || !is_bank_split<Soc>(g.data_banks, Soc::cbuf_banks - g.data_banks))
    return make_error(m_ceiling_rule(in), "matmul", "M", g.M);
  // FEATURE_GRAINS is min(M + 1, R) row-major, M + 1 in A's surface layout.
  const std::uint32_t grains = s.layout == operand_layout::surface ? g.M + 1 : matmul::feature_grains<Soc>(in, g.M, g.K);
  if (!rows_fit_registers(g.M, grains)) return make_error(rules::m_register_limit, "matmul", "M", g.M);
  if (!fits_address_space<Soc>(std::uint64_t{g.M - 1} * g.feature_pitch + matmul_geometry::feature_row_bytes(in, g.K)))
    return make_error(rules::operand_size, "matmul", "feature_pitch", g.feature_pitch);
  return g;
}

// A matmul request: its rules, then its shape's geometry.
template <class Soc = soc::rk3588>
constexpr result<matmul_geometry> resolve(const matmul_spec& s) {
  if (status r = check_request<Soc>(s); !r) return r.err();
  const precision in = s.dtype.features;
  if (!k_fits_one_op<Soc>(s.K)) return make_error(rules::k_single_op_max, "matmul", "K", s.K);
  if (!n_fits_one_op<Soc>(s.N)) return make_error(rules::n_max, "matmul", "N", s.N);
  matmul_shape shape{.in = in,
                     .out = s.out_dtype,
                     .M = s.M,
                     .K = align_up(s.K, matmul::weight_tile_k<Soc>(in)),
                     .N = align_up(s.N, matmul::weight_tile_n<Soc>(in)),
                     .logical_K = s.K,
                     .logical_N = s.N,
                     .layout = s.layout,
                     .sched = s.sched,
                     .activation = float_activation(s.activation, s.leaky_slope, "matmul").value()};  // checked above
  if (!n_fits_one_op<Soc>(shape.N)) return make_error(rules::n_max, "matmul", "N", shape.N);
  if (s.layout == operand_layout::row_major) {
    const result<row_pitches> pitches = resolve_pitches(in, s.out_dtype, shape.K, shape.N, s.feature_pitch, s.output_pitch, "matmul");
    if (!pitches) return pitches.err();
    shape.pitches = pitches.value();
  }
  return shape_geometry<Soc>(shape);
}

}  // namespace regcmd
