#pragma once
// Plans: a matmul one op cannot do, as one multi-task program plus host steps.
//
//   K-split    K beyond one op (K > 10752, or an M that only fits with a smaller K): slices
//              of at most 2048, each writing its own partial [M][N]; the host sums them.
//              The reference rules out on-chip accumulation across submits ("Ruled out":
//              the accumulator resets; the 0x2000 bit yields the last slice only).
//   N-tiling   N > 8192: column tiles, each with its own weight block.
//   M-tiling   M above the CBUF ceiling: row tiles ("software M-tile").
//
// Every tile is one task of the same program, chained through the PC tails, so a plan is
// one submit (task_number = tasks). Of the valid grids (every K slice count, and with the
// automatic schedule both the production schedule and the bank split), the planner takes
// the one with the lowest time bound (core/roofline.hpp) of its estimated cost; ties go to
// less traffic, then fewer tasks, then fewer slices (less host work). The M ceiling trades
// the weights' re-reads (one per M tile) against the partials' writes (one per K slice):
// the reference's "M-tile PC-chaining re-reads the full weights per M-tile (~22x for M=512,
// K=4096)". `plan_objective::fewest_tasks` keeps the choice made before costs were known.
// With `delta_tasks`, tasks after the first two carry only the entries that changed from
// the task that last used their ping-pong register group (the vendor's multi-task pattern:
// "task[0,1] full, task[2+] lightweight").
//
// Operand buffers of a plan (row_major):
//   feature  [M][K] at feature_pitch (K padded to 32): slices read it strided, as one op does
//   weight   one packed block per (N tile, K slice), in that order (packing.hpp)
//   output   [M][N] at output_pitch when there is one slice; otherwise the partials,
//            [slice][M][N] in the accumulator precision (fp32 for fp16 inputs, int32 for
//            int8, int16 for int4), summed (and converted) by matmul::finish_plan().
// Surface plans lay out every buffer tile after tile in the surface layout; they split K
// and N but not M (an M tile of an NC1HWC2 tensor is not contiguous).

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include <regcmd/core/cost.hpp>
#include <regcmd/core/math.hpp>
#include <regcmd/core/roofline.hpp>
#include <regcmd/task/delta.hpp>
#include <regcmd/task/emit_task.hpp>
#include <regcmd/task/tail.hpp>
#include <regcmd/task/writer.hpp>
#include <regcmd/programs/door.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/spec.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/rules/cbuf.hpp>
#include <regcmd/rules/dma_extent.hpp>
#include <regcmd/rules/limits.hpp>
#include <regcmd/rules/program_rules.hpp>

namespace regcmd {

// How the planner picks among valid grids.
enum class plan_objective : std::uint8_t {
  lowest_bound,  // the lowest time bound of the estimated cost (the default)
  fewest_tasks,  // the fewest tasks with the requested schedule, ties to fewer slices (the
                 // choice before costs were weighed, except that a fused activation now
                 // keeps K whole where a whole-K grid exists instead of failing)
};

struct plan_options {
  std::uint32_t k_slice = 0;  // K-split slice (multiple of 32, at most 2048); 0 = choose
  bool delta_tasks = false;   // later tasks carry only what changed
  // K in one op in every tile (M and N tiles only): the weights stay one block per N tile,
  // which is the vendor's native B layout (rknn-matmul-api §1.6), so a weight buffer packed
  // that way is read where it lies.
  bool whole_k = false;
  // Nonzero: K-split partials in the output's precision, summed on the device by SDP adds
  // of this many tasks for every slice after the first (a graph), which the choice of the
  // slice count weighs; 0: partials in the accumulator's precision (fp32 / int32), summed
  // on the host.
  std::uint32_t device_sum_tasks = 0;
  plan_objective objective = plan_objective::lowest_bound;
  friend constexpr bool operator==(const plan_options&, const plan_options&) = default;
};

namespace matmul {
// The accumulator precision a K-split's partial outputs use.
constexpr precision partial_precision(precision in) {
  return in == precision::fp16 ? precision::fp32 : in == precision::int8 ? precision::int32 : precision::int16;
}
}  // namespace matmul

struct plan_shape {
  matmul_geometry whole;          // the full operation (K, N padded), as one op would see it
  std::uint32_t slices = 1, k_slice = 0;
  std::uint32_t n_tiles = 1, n_tile = 0;
  std::uint32_t m_tiles = 1, m_tile = 0;
  precision partial{};            // output precision of every task
  std::uint32_t feature_pitch = 0, output_pitch = 0;  // row_major pitches of the whole buffers
  plan_options options{};         // as asked

  constexpr std::uint32_t tasks() const { return slices * n_tiles * m_tiles; }
  constexpr bool host_accumulates() const { return slices > 1; }
  constexpr std::uint32_t k0(std::uint32_t s) const { return s * k_slice; }
  constexpr std::uint32_t depth(std::uint32_t s) const { return std::min(k_slice, whole.K - k0(s)); }
  constexpr std::uint32_t n0(std::uint32_t j) const { return j * n_tile; }
  constexpr std::uint32_t cols(std::uint32_t j) const { return std::min(n_tile, whole.N - n0(j)); }
  constexpr std::uint32_t m0(std::uint32_t t) const { return t * m_tile; }
  constexpr std::uint32_t rows(std::uint32_t t) const { return std::min(m_tile, whole.M - m0(t)); }

  // Bytes of the weight block of (N tile j, slice s), and where it starts.
  constexpr std::uint32_t weight_block_bytes(std::uint32_t j, std::uint32_t s) const {
    return static_cast<std::uint32_t>(bytes_of(whole.in, std::uint64_t{cols(j)} * depth(s)));
  }
  constexpr std::uint32_t weight_block_offset(std::uint32_t j, std::uint32_t s) const {
    std::uint32_t off = 0;
    for (std::uint32_t jj = 0; jj < n_tiles; ++jj)
      for (std::uint32_t ss = 0; ss < slices; ++ss) {
        if (jj == j && ss == s) return off;
        off += weight_block_bytes(jj, ss);
      }
    return off;
  }
  constexpr std::uint32_t weight_bytes() const { return weight_block_offset(n_tiles, 0); }
};

namespace detail {
// The schedule a tile of depth k asks for: the requested one, except that a bank split is
// not asked for below its valid K (reference "Small-K validity of the 0x1040 schedule"):
// a narrow last K slice takes the template split instead.
constexpr schedule tile_schedule(schedule requested, precision in, std::uint32_t k) {
  return requested == schedule::bank_split && !bank_split_valid_k(in, k) ? schedule::template_split : requested;
}

// The M ceiling every tile of a grid with K slices of `k_slice` meets: the smallest over
// the slice sizes that occur (the last may be narrower, with another schedule). Row-major
// tiles use the scheduler; surface tiles implementation A's split, which is the bank split
// whenever K allows it.
template <class Soc>
constexpr std::uint32_t grid_ceiling(const matmul_geometry& g, schedule requested, std::uint32_t k_slice) {
  // FEATURE_GRAINS holds M + 1 (surface) or min(M + 1, R): the register limit on rows.
  auto ceiling = static_cast<std::uint32_t>(decltype(reg::CNA_CONV_CON2::FEATURE_GRAINS)::shape.max_value() - 1);
  const std::uint32_t depths[] = {k_slice, g.K % k_slice ? g.K % k_slice : k_slice};
  for (std::uint32_t k : depths) {
    schedule s = matmul::resolve_schedule(tile_schedule(requested, g.in, k), g.in, k);
    if (g.layout == operand_layout::surface)
      s = bank_split_valid_k(g.in, k) ? schedule::bank_split : schedule::template_split;
    std::uint32_t c = matmul::m_ceiling<Soc>(g.in, k, s);
    // Implementation A's split counts the banks the whole feature occupies (resolve).
    if (g.layout == operand_layout::surface && s == schedule::bank_split)
      c = std::min(c, static_cast<std::uint32_t>((Soc::cbuf_banks - 1) * Soc::cbuf_bank_bytes / bytes_of(g.in, k)));
    c = std::min(c, k128_row_cap(g.in, k));
    ceiling = std::min(ceiling, c);
  }
  return ceiling;
}
}  // namespace detail

namespace detail {
// The bytes of M feature rows of `depth` elements, and of M output rows of `cols` outputs,
// in the operands' layouts (row-major rows; surface atoms, 16 bytes each).
constexpr std::uint64_t feature_traffic(const matmul_geometry& g, std::uint64_t depth) {
  return g.layout == operand_layout::row_major
             ? g.M * std::uint64_t{matmul_geometry::feature_row_bytes(g.in, static_cast<std::uint32_t>(depth))}
             : atoms(depth, traits(g.in).bits_per_element) * g.M * 16;
}
constexpr std::uint64_t output_traffic(const matmul_geometry& g, precision out, std::uint64_t cols) {
  return g.layout == operand_layout::row_major ? g.M * bytes_of(out, cols) : atoms(cols, traits(out).bits_per_element) * g.M * 16;
}
}  // namespace detail

namespace matmul {
// The traffic of the operation at its least: each operand read once and the result
// written once, in the layouts the NPU reads and writes them (K padded to 32, N to the
// weight tile, int4 rows of K bytes). What a plan's traffic is measured against.
constexpr std::uint64_t minimum_traffic(const matmul_geometry& g) {
  return detail::feature_traffic(g, g.K) + bytes_of(g.in, std::uint64_t{g.K} * g.N) + detail::output_traffic(g, g.out, g.N);
}

// What a plan's program moves and computes, from its grid alone, in the terms of the
// accounting from registers (decode/accounting.hpp): features once per N tile, weights
// once per M tile, a partial output per K slice, 108 entries a task (delta tasks counted
// full), and with device sums each add reading two partials and writing one.
constexpr program_cost estimate_cost(const plan_shape& p) {
  const matmul_geometry& g = p.whole;
  const std::uint32_t full_slices = g.K / p.k_slice, rest = g.K % p.k_slice;
  const std::uint32_t full_tiles = g.N / p.n_tile, rest_cols = g.N % p.n_tile;
  program_cost c;
  auto put = [&](stream s, std::uint64_t n) { c.bytes[static_cast<std::size_t>(s)] += n; };
  put(stream::feature, p.n_tiles * (full_slices * detail::feature_traffic(g, p.k_slice) +
                                    (rest ? detail::feature_traffic(g, rest) : 0)));
  put(stream::weight, p.m_tiles * bytes_of(g.in, std::uint64_t{g.K} * g.N));
  put(stream::output, p.slices * (full_tiles * detail::output_traffic(g, p.partial, p.n_tile) +
                                  (rest_cols ? detail::output_traffic(g, p.partial, rest_cols) : 0)));
  c.tasks = p.tasks();
  c.entries = c.tasks * matmul::task_entries;
  c.macs[static_cast<std::size_t>(mac_class_of(g.in))] = std::uint64_t{g.M} * g.N * g.K;
  c.dpu_elements = std::uint64_t{p.slices} * g.M * g.N;
  if (p.options.device_sum_tasks && p.slices > 1) {
    const std::uint64_t sum = std::uint64_t{p.slices - 1} * g.M * bytes_of(g.out, g.N);
    put(stream::rdma_source, sum);
    put(stream::ew_operand, sum);
    put(stream::output, sum);
    c.tasks += std::uint64_t{p.slices - 1} * p.options.device_sum_tasks;
  }
  put(stream::regcmd, c.entries * 8);
  return c;
}
}  // namespace matmul

// Every grid the planner weighed, and the one it took: what `regcmd-gen --plan --explain`
// prints. `previous` is the grid the fewest-tasks rule takes.
struct plan_candidate {
  std::uint32_t slices = 0, k_slice = 0, m_tiles = 0, m_tile = 0, n_tiles = 0;
  schedule sched{};
  std::uint64_t tasks = 0, traffic = 0;
  double bound_ns = 0;
  std::string_view limited_by;
};
struct plan_explanation {
  std::array<plan_candidate, 132> candidates{};  // 66 slice counts x 2 schedules at most
  std::uint32_t count = 0, chosen = 0, previous = 0;
  std::uint64_t minimum_traffic = 0;
};

namespace detail {
// The order of the lowest_bound objective: bound, then traffic, tasks, slices.
constexpr bool better(const plan_candidate& a, const plan_candidate& b) {
  if (a.bound_ns != b.bound_ns) return a.bound_ns < b.bound_ns;
  if (a.traffic != b.traffic) return a.traffic < b.traffic;
  if (a.tasks != b.tasks) return a.tasks < b.tasks;
  return a.slices < b.slices;
}
}  // namespace detail

template <class Soc = soc::rk3588>
constexpr result<plan_shape> plan(const matmul_spec& spec, const plan_options& options = {},
                                  plan_explanation* explain = nullptr) {
  if (status r = check_request<Soc>(spec); !r) return r.err();
  // Every operand, K and N padded to whole weight tiles, within the 32-bit address space:
  // checked in 64 bits (saturated) before any size is rounded to 32 (core/math.hpp).
  {
    const precision in = spec.dtype.features;
    const std::uint64_t K = round_up(spec.K, matmul::weight_tile_k<Soc>(in)), N = round_up(spec.N, matmul::weight_tile_n<Soc>(in));
    auto bytes = [](precision p, std::uint64_t count) { return saturating_mul(count, traits(p).bits_per_element) / 8; };
    const std::uint64_t features = bytes(in, saturating_mul(spec.M, K)), weights = bytes(in, saturating_mul(K, N)),
                        outputs = bytes(spec.out_dtype, saturating_mul(spec.M, N));
    if (!fits_address_space<Soc>(features)) return make_error(rules::operand_size, "plan", "features", features);
    if (!fits_address_space<Soc>(weights)) return make_error(rules::operand_size, "plan", "weights", weights);
    if (!fits_address_space<Soc>(outputs)) return make_error(rules::operand_size, "plan", "output", outputs);
  }
  plan_shape p;
  p.options = options;
  matmul_geometry& g = p.whole;
  g.in = spec.dtype.features;
  g.out = spec.out_dtype;
  g.M = spec.M;
  g.logical_K = spec.K;
  g.logical_N = spec.N;
  g.K = align_up(spec.K, matmul::weight_tile_k<Soc>(g.in));
  g.N = align_up(spec.N, matmul::weight_tile_n<Soc>(g.in));
  g.layout = spec.layout;
  g.sched = spec.sched;  // as requested; each tile resolves its own
  g.activation = float_activation(spec.activation, spec.leaky_slope, "plan").value();  // checked by check_request

  p.n_tiles = ceil_div(g.N, Soc::max_n);
  p.n_tile = align_up(ceil_div(g.N, p.n_tiles), matmul::weight_tile_n<Soc>(g.in));
  if (options.k_slice != 0) {
    if (!k_slice_fits<Soc>(options.k_slice)) return make_error(rules::k_slice_max, "plan", "k_slice", options.k_slice);
    if (options.k_slice % matmul::weight_tile_k<Soc>(g.in) != 0)
      return make_error(rules::k_alignment, "plan", "k_slice", options.k_slice);
    if (options.whole_k) return make_error(rules::k_slice_max, "plan", "k_slice", options.k_slice).with_note("whole_k splits no K");
  }
  if (options.whole_k && !k_fits_one_op<Soc>(g.K)) return make_error(rules::k_single_op_max, "plan", "K", g.K);
  // Candidate slice counts: all of K in one op (when K allows it), else slices of <= 2048,
  // each at least one weight tile deep;
  // candidate schedules: the one requested, and with the automatic one the bank split too
  // (surface tiles take implementation A's split whatever is asked).
  const std::uint32_t first = k_fits_one_op<Soc>(g.K) ? 1 : ceil_div(g.K, Soc::max_k_slice);
  const std::uint32_t last = options.k_slice || options.whole_k ? first : std::min(g.K / matmul::weight_tile_k<Soc>(g.in), first + 64);
  const bool weigh_schedules = options.objective == plan_objective::lowest_bound && spec.sched == schedule::automatic &&
                               g.layout == operand_layout::row_major;
  const schedule schedules[] = {spec.sched, schedule::bank_split};
  const roofline_params rates = soc_roofline<Soc>();
  plan_candidate best{}, fewest{};
  plan_shape best_shape = p;
  std::uint32_t count = 0;
  bool split_activation = false;
  std::uint64_t fewest_partials = ~std::uint64_t{0};  // of the grids passed over for their partials' size
  std::uint32_t last_k_slice = 0;
  for (std::uint32_t n = first; n <= last; ++n) {
    const std::uint32_t k_slice = options.k_slice ? options.k_slice : align_up(ceil_div(g.K, n), matmul::weight_tile_k<Soc>(g.in));
    const std::uint32_t slices = ceil_div(g.K, k_slice);
    if (slices > 1 && !k_slice_fits<Soc>(k_slice)) continue;
    if (slices == 1 && !k_fits_one_op<Soc>(k_slice)) continue;
    // K-split partials are summed after the program: an activation would apply to them.
    if (slices > 1 && g.activation.fn != output_activation::none) {
      split_activation = true;
      continue;
    }
    if (n > first && k_slice == last_k_slice) continue;  // the same slices as the count before
    last_k_slice = k_slice;
    std::uint32_t requested_m_tiles = 0;
    for (std::size_t si = 0; si < (weigh_schedules ? 2u : 1u); ++si) {
      const std::uint32_t ceiling = detail::grid_ceiling<Soc>(g, schedules[si], k_slice);
      if (ceiling == 0) continue;
      const std::uint32_t m_tiles = ceil_div(g.M, ceiling);
      if (si == 0) requested_m_tiles = m_tiles;
      else if (m_tiles == requested_m_tiles) continue;  // the bank split's grid is the requested one's
      if (g.layout == operand_layout::surface && m_tiles > 1) continue;
      plan_shape c = p;
      c.whole.sched = schedules[si];
      c.slices = slices;
      c.k_slice = std::min(k_slice, g.K);
      c.m_tiles = m_tiles;
      c.m_tile = ceil_div(g.M, m_tiles);
      c.partial = slices > 1 && options.device_sum_tasks == 0 ? matmul::partial_precision(g.in) : g.out;
      // A grid whose partials would not fit the 32-bit address space is no candidate (the
      // check after the choice then only refuses shapes no grid fits).
      const std::uint64_t partials = std::uint64_t{slices} * detail::output_traffic(g, c.partial, g.N);
      if (slices > 1 && !fits_address_space<Soc>(partials)) {
        fewest_partials = std::min(fewest_partials, partials);
        continue;
      }
      const program_cost cost = matmul::estimate_cost(c);
      const time_bound bound = roofline(cost, rates);
      const plan_candidate seen{slices, c.k_slice, m_tiles, c.m_tile, p.n_tiles, schedules[si], cost.tasks,
                                cost.traffic(), bound.ns(), bound.limited_by()};
      if (explain && count < explain->candidates.size()) explain->candidates[count] = seen;
      // The fewest-tasks rule weighs the requested schedule only (si 0), as before.
      const bool fewer = si == 0 && (fewest.tasks == 0 || seen.tasks < fewest.tasks);
      if (fewer) fewest = seen;
      const bool take = options.objective == plan_objective::fewest_tasks ? fewer : best.tasks == 0 || detail::better(seen, best);
      if (take) {
        best = seen;
        best_shape = c;
        if (explain) explain->chosen = count;
      }
      if (explain && fewer) explain->previous = count;
      ++count;
    }
  }
  if (best.tasks == 0) {
    if (split_activation) return make_error(rules::plan_activation_k_split, "plan", "K", spec.K);
    if (fewest_partials != ~std::uint64_t{0})
      return make_error(rules::operand_size, "plan", "partials", fewest_partials)
          .with_note("the K split's partials, an output per slice, exceed 4 GiB in every grid: give each program fewer rows or columns");
    if (spec.layout == operand_layout::surface) return make_error(rules::surface_m_tiling, "plan", "M", spec.M);
    return make_error(rules::m_register_limit, "plan", "M", spec.M);
  }
  if (explain) {
    explain->count = std::min(count, static_cast<std::uint32_t>(explain->candidates.size()));
    explain->minimum_traffic = matmul::minimum_traffic(g);
  }
  p = best_shape;
  p.partial = p.slices > 1 && options.device_sum_tasks == 0 ? matmul::partial_precision(g.in) : g.out;
  if (g.layout == operand_layout::row_major) {
    // K-split partials are packed rows: their pitch is the partial row, not the output's.
    const result<row_pitches> pitches = resolve_pitches(g.in, p.partial, g.K, g.N, spec.feature_pitch,
                                                        p.slices == 1 ? spec.output_pitch : 0, "plan");
    if (!pitches) return pitches.err();
    p.feature_pitch = g.feature_pitch = pitches.value().feature;
    p.output_pitch = g.output_pitch = pitches.value().output;
  }
  // Every buffer must lie within the 32-bit address space.
  const std::uint64_t feature_extent = g.layout == operand_layout::surface
      ? bytes_of(g.in, std::uint64_t{g.M} * g.K)
      : std::uint64_t{g.M - 1} * p.feature_pitch + matmul_geometry::feature_row_bytes(g.in, g.K);
  const std::uint64_t output_extent = p.slices * (g.layout == operand_layout::surface
      ? bytes_of(p.partial, std::uint64_t{g.M} * g.N)
      : std::uint64_t{g.M} * p.output_pitch);
  if (!fits_address_space<Soc>(feature_extent)) return make_error(rules::operand_size, "plan", "features", feature_extent);
  if (!fits_address_space<Soc>(bytes_of(g.in, std::uint64_t{g.K} * g.N)))
    return make_error(rules::operand_size, "plan", "weights", bytes_of(g.in, std::uint64_t{g.K} * g.N));
  if (!fits_address_space<Soc>(output_extent)) return make_error(rules::operand_size, "plan", "output", output_extent);
  return p;
}

// The shape of one tile (an op of its own: the plan checked the request as a whole), and
// where its operands start. Every tile's output is final (one K slice) or a partial: the
// activation rides each.
struct plan_tile {
  matmul_shape shape;
  matmul_offsets at;
};

namespace matmul {
constexpr plan_tile tile_of(const plan_shape& p, std::uint32_t m, std::uint32_t j, std::uint32_t s) {
  const matmul_geometry& g = p.whole;
  const bool row = g.layout == operand_layout::row_major;
  plan_tile t;
  t.shape = {.in = g.in,
             .out = p.partial,
             .M = p.rows(m),
             .K = p.depth(s),
             .N = p.cols(j),
             .logical_K = p.depth(s),
             .logical_N = p.cols(j),
             .layout = g.layout,
             .sched = detail::tile_schedule(g.sched, g.in, p.depth(s)),
             .pitches = row ? row_pitches{p.feature_pitch, p.output_pitch} : row_pitches{},
             .activation = g.activation};
  const std::uint32_t out_bytes = static_cast<std::uint32_t>(bytes_of(p.partial, 1));
  const std::uint32_t slice_outputs = row ? g.M * p.output_pitch : static_cast<std::uint32_t>(bytes_of(p.partial, std::uint64_t{g.M} * g.N));
  t.at.weight = p.weight_block_offset(j, s);
  if (row) {
    t.at.feature = p.m0(m) * p.feature_pitch + static_cast<std::uint32_t>(bytes_of(g.in, p.k0(s)));
    t.at.output = s * slice_outputs + p.m0(m) * p.output_pitch + p.n0(j) * out_bytes;
  } else {
    // Surface: a K slice is a run of whole C2 surfaces of M rows; so is an N tile.
    t.at.feature = static_cast<std::uint32_t>(bytes_of(g.in, std::uint64_t{p.k0(s)} * g.M));
    t.at.output = s * slice_outputs + static_cast<std::uint32_t>(bytes_of(p.partial, std::uint64_t{p.n0(j)} * g.M));
  }
  return t;
}

// Bytes each buffer of the plan must hold.
constexpr std::uint32_t plan_feature_bytes(const plan_shape& p) {
  const matmul_geometry& g = p.whole;
  if (g.layout == operand_layout::surface) return static_cast<std::uint32_t>(bytes_of(g.in, std::uint64_t{g.M} * g.K));
  return (g.M - 1) * p.feature_pitch + matmul_geometry::feature_row_bytes(g.in, g.K);
}
constexpr std::uint32_t plan_output_bytes(const plan_shape& p) {
  const matmul_geometry& g = p.whole;
  const std::uint32_t per_slice = g.layout == operand_layout::surface
                                      ? static_cast<std::uint32_t>(bytes_of(p.partial, std::uint64_t{g.M} * g.N))
                                      : g.M * p.output_pitch;
  return p.slices * per_slice;
}
}  // namespace matmul

namespace detail {
// One tile task prepared once per distinct (rows, depth, cols) and validated on its own;
// the plan's tasks are copies with their own operand offsets. This keeps a plan of
// thousands of tasks cheap to build at compile time.
struct tile_template {
  std::uint32_t rows = 0, depth = 0, cols = 0;
  program<matmul::task_entries, 1, 4> task;
};

// A copy of a tile template: its body, with the slots pointing at this tile's operands.
struct tile_copy {
  std::array<slot, 4> slots{};
  task_body body{};
};

constexpr void copy_tile(tile_copy& out, const program<matmul::task_entries, 1, 4>& tile, const matmul_offsets& at) {
  const task& k = tile.tasks[0];
  for (std::uint32_t s = 0; s < tile.slot_count; ++s) {
    slot& mine = out.slots[s];
    mine = tile.slots[s];
    mine.offset = mine.role == operand_role::feature ? at.feature : mine.role == operand_role::weight ? at.weight : at.output;
  }
  out.body = {std::span<const entry>(tile.entries.data(), body_end(k)),
              std::span<const slot>(out.slots.data(), tile.slot_count), tile.entries[tail_index(k, tail_entry::op_enable)],
              k.int_mask};
}
}  // namespace detail

namespace matmul {
// Writes every task of the plan: M tile by M tile, then N tile, then K slice; with delta
// tasks, each copy after the first two carries only what differs from the task that last
// used its ping-pong register group.
template <class Soc = soc::rk3588>
constexpr void emit_plan(program_writer& w, const plan_shape& p) {
  std::array<detail::tile_template, 8> templates{};  // at most 2 rows x 2 depths x 2 widths
  std::uint32_t template_count = 0;
  // With delta tasks, the copy each ping-pong register group last held: copies are written
  // into `next` and handed over, never copied (constant evaluation counts every copy).
  std::array<detail::tile_copy, 3> copies{};
  std::array<detail::tile_copy*, 2> held{};
  detail::tile_copy* next = &copies[0];
  std::uint32_t unused = 1;
  std::uint32_t index = 0;
  for (std::uint32_t s = 0; s < p.slices && w.ok(); ++s)
    for (std::uint32_t j = 0; j < p.n_tiles && w.ok(); ++j)
      for (std::uint32_t m = 0; m < p.m_tiles && w.ok(); ++m, ++index) {
        const plan_tile t = matmul::tile_of(p, m, j, s);
        const detail::tile_template* tile = nullptr;
        for (std::uint32_t i = 0; i < template_count; ++i)
          if (templates[i].rows == t.shape.M && templates[i].depth == t.shape.K && templates[i].cols == t.shape.N)
            tile = &templates[i];
        if (!tile) {
          if (template_count == templates.size()) return w.fail(make_error(rules::program_capacity, "plan templates"));
          detail::tile_template& fresh = templates[template_count++];
          fresh.rows = t.shape.M;
          fresh.depth = t.shape.K;
          fresh.cols = t.shape.N;
          const result<matmul_geometry> g = shape_geometry<Soc>(t.shape);
          if (!g) return w.fail(g.err());
          if (status st = fill(fresh.task, [&](program_writer& tw) { emit_task(tw, matmul::make_task<Soc>(g.value())); }); !st)
            return w.fail(st.err());
          if (status st = validate<Soc>(fresh.task.view(), "plan tile"); !st) return w.fail(st.err());
          tile = &fresh;
        }
        detail::copy_tile(*next, tile->task, t.at);
        if (!p.options.delta_tasks) {
          emit_copy(w, next->body);
          continue;
        }
        detail::tile_copy*& group = held[index % 2];
        emit_copy(w, next->body, group ? &group->body : nullptr);
        detail::tile_copy* const released = group;
        group = next;
        next = released ? released : &copies[unused++];
      }
}

// Storage a plan needs at most: every task full (108 entries keep each 16-byte aligned),
// with slots for its three operands and the next task's program address.
constexpr std::uint32_t plan_entries(const plan_shape& p) { return p.tasks() * matmul::task_entries; }
constexpr std::uint32_t plan_slots(const plan_shape& p) { return p.tasks() * 4; }
}  // namespace matmul

// What a plan is asked for: the operation and how to split it.
struct plan_request {
  matmul_spec matmul;
  plan_options options{};
  friend constexpr bool operator==(const plan_request&, const plan_request&) = default;
};

// A plan program: its tiles chained in one submit. Every tile was validated in full as it
// was prepared, so the whole program needs only its structure checked.
struct plan_kind {
  using spec = plan_request;
  using geometry = plan_shape;
  static constexpr std::string_view name = "plan";
  template <class Soc>
  static constexpr result<geometry> resolve(const spec& s) { return plan<Soc>(s.matmul, s.options); }
  static constexpr program_size size(const geometry& p) { return {matmul::plan_entries(p), matmul::plan_slots(p), p.tasks()}; }
  static constexpr submit_options options(const geometry& p) { return {.delta_tasks = p.options.delta_tasks}; }
  template <class Soc>
  static constexpr void emit(program_writer& w, const geometry& p) { matmul::emit_plan<Soc>(w, p); }
  static constexpr program_checks checks = program_checks::structure;
};

plan_kind program_kind_of(const plan_request&);

// The names before regcmd::fixed and regcmd::build (docs/changelog.md).
template <matmul_spec Spec, plan_options Options = plan_options{}, class Soc = soc::rk3588>
[[deprecated("use regcmd::fixed<plan_request{spec, options}>()")]] constexpr auto plan_matmul() { return fixed<plan_request{Spec, Options}, Soc>(); }
template <class Soc = soc::rk3588>
[[deprecated("use regcmd::build(plan_request{spec, options})")]] auto build_plan(const matmul_spec& spec, const plan_options& options = {}) { return build<Soc>(plan_request{spec, options}); }

}  // namespace regcmd
