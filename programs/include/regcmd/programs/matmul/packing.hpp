#pragma once
// Operand packers: host data in the layouts a matmul program reads and writes.
//
//   features  A[M][K], row-major host array
//     row_major  row m at m * feature_pitch; element k at k * bytes (K padded with zeros).
//                int4: K/2 bytes of nibbles (element k in byte k/2, even k in the low
//                nibble) followed by a zero half-line, the row being K bytes.
//     surface    NC1HWC2, C2 = 16 bytes: element (m, k) at (k / C2) * M * C2 + m * C2 + k % C2
//   weights   B[K][N], row-major host array (or B^T[N][K] with matmul_weight_order::n_by_k)
//     fp16       [N/16][K/32][16][32]: (n/16)*16*K + (k/32)*512 + (n%16)*32 + k%32
//     int8       [N/32][K/32][32][32]: (n/32)*32*K + (k/32)*1024 + (n%32)*32 + k%32
//     int4       [N/64][K/32][64][32] nibbles: (n/64)*64*K + (k/32)*2048 + (n%64)*32 + k%32,
//                two per byte, even index in the low nibble (the vendor's native int4 B:
//                rknn-matmul-api §1.6; the 1 KB int4 atom, regcmd-isa-reference "The
//                precision enum")
//   outputs   C[M][N]
//     row_major  row m at m * output_pitch, element n at n * bytes
//     surface    NC1HWC2, C2 = 16 bytes (4 fp32/int32, 8 fp16)
// Sources: regcmd-isa-reference "Operand tile layouts", matmul-recipe §1.3 (A) and §2.4 (B).
//
// Host element types: fp16 operands from `float` (rounded to nearest even) or raw binary16
// `std::uint16_t`; int8 and int4 from `std::int8_t` (int4 values in [-8, 7]). Outputs read
// into float (fp32, fp16), std::int32_t (int32) or std::int16_t (int16). Multi-byte values
// are little-endian. Nothing allocates; a buffer too small is an error, never a write past
// its end.

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include <regcmd/core/error.hpp>
#include <regcmd/core/half.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/programs/vocabulary.hpp>
#include <regcmd/programs/matmul/spec.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {



namespace detail {


// Element index of (n, k) in a packed weight block of `N` x `K` (both padded to the tile):
// tiles of tile.n columns of tile.k consecutive K, K-fastest within an N block.
constexpr std::size_t weight_index(soc::weight_tile tile, std::uint32_t K, std::uint32_t n, std::uint32_t k) {
  return std::size_t{n / tile.n} * tile.n * K + std::size_t{k / tile.k} * tile.n * tile.k +
         std::size_t{n % tile.n} * tile.k + k % tile.k;
}

// Byte offset of feature element (m, k) of the whole operand.
constexpr std::size_t feature_offset(const matmul_geometry& g, std::uint32_t m, std::uint32_t k) {
  const std::uint32_t bytes = static_cast<std::uint32_t>(bytes_of(g.in, 1));
  if (g.layout == operand_layout::surface) {
    const std::uint32_t c2 = 16 / bytes;
    return (std::size_t{k / c2} * g.M * c2 + std::size_t{m} * c2 + k % c2) * bytes;
  }
  return std::size_t{m} * g.feature_pitch + std::size_t{k} * bytes;
}

// Byte offset of output element (m, n) in a tensor of `M` rows, `N` columns, precision p.
constexpr std::size_t output_offset(operand_layout layout, precision p, std::uint32_t M, std::uint32_t pitch,
                                    std::uint32_t m, std::uint32_t n) {
  const std::uint32_t bytes = static_cast<std::uint32_t>(bytes_of(p, 1));
  if (layout == operand_layout::surface) return nc1hwc2_offset(M, 1, bytes, m, 0, n);
  return std::size_t{m} * pitch + std::size_t{n} * bytes;
}

}  // namespace detail

namespace matmul {
// A[M][K] (logical) into the feature buffer of geometry g (or of a plan's whole geometry).
template <class T>
constexpr status pack_features(const matmul_geometry& g, std::span<const T> a, std::span<std::uint8_t> out) {
  if (a.size() != std::size_t{g.M} * g.logical_K) return make_error(rules::host_size, "features");
  const std::size_t need = g.layout == operand_layout::surface ? bytes_of(g.in, std::uint64_t{g.M} * g.K)
                                                               : std::size_t{g.M - 1} * g.feature_pitch +
                                                                     matmul_geometry::feature_row_bytes(g.in, g.K);
  if (out.size() < need) return make_error(rules::buffer_size, "features", "", out.size());
  detail::fill_zero(out.first(need));
  for (std::uint32_t m = 0; m < g.M; ++m)
    for (std::uint32_t k = 0; k < g.logical_K; ++k) {
      const T v = a[std::size_t{m} * g.logical_K + k];
      if (!detail::element_ok(g.in, v)) return make_error(rules::int4_range, "features", "", static_cast<std::uint64_t>(m) * g.logical_K + k);
      const std::uint32_t bits = detail::encode_element(g.in, v);
      if (g.in == precision::int4) {
        std::uint8_t& b = out[std::size_t{m} * g.feature_pitch + k / 2];
        b = static_cast<std::uint8_t>(k % 2 ? (b & 0x0f) | (bits << 4) : (b & 0xf0) | bits);
      } else {
        detail::store_le(out, detail::feature_offset(g, m, k), bits, static_cast<unsigned>(bytes_of(g.in, 1)));
      }
    }
  return {};
}

// One packed weight block: B[k0 .. k0+K)[n0 .. n0+N) of the logical B, zero beyond it, in
// the SoC's weight tiles.
template <class T, class Soc = soc::rk3588>
constexpr status pack_weight_block(precision in, std::uint32_t K, std::uint32_t N, std::uint32_t k0, std::uint32_t n0,
                                   std::uint32_t logical_K, std::uint32_t logical_N, std::span<const T> b,
                                   matmul_weight_order order, std::span<std::uint8_t> out) {
  const soc::weight_tile tile = soc::weight_tile_of<Soc>(in);
  if (tile.n == 0 || tile.k == 0) return make_error(rules::precision_pair, "weights", "dtype", static_cast<std::uint32_t>(in));
  const std::size_t need = bytes_of(in, std::uint64_t{K} * N);
  if (out.size() < need) return make_error(rules::buffer_size, "weights", "", out.size());
  detail::fill_zero(out.first(need));
  for (std::uint32_t n = 0; n < N && n0 + n < logical_N; ++n)
    for (std::uint32_t k = 0; k < K && k0 + k < logical_K; ++k) {
      const std::size_t at = order == matmul_weight_order::k_by_n ? std::size_t{k0 + k} * logical_N + (n0 + n)
                                                            : std::size_t{n0 + n} * logical_K + (k0 + k);
      const T v = b[at];
      if (!detail::element_ok(in, v)) return make_error(rules::int4_range, "weights", "", at);
      detail::put_element(out, in, detail::weight_index(tile, K, n, k), detail::encode_element(in, v));
    }
  return {};
}

// B into the weight buffer of one op.
template <class T>
constexpr status pack_weights(const matmul_geometry& g, std::span<const T> b, std::span<std::uint8_t> out,
                              matmul_weight_order order = matmul_weight_order::k_by_n) {
  if (b.size() != std::size_t{g.logical_K} * g.logical_N) return make_error(rules::host_size, "weights");
  return matmul::pack_weight_block(g.in, g.K, g.N, 0, 0, g.logical_K, g.logical_N, b, order, out);
}

// B into the weight buffer of a plan: one block per (N tile, K slice).
template <class T>
constexpr status pack_weights(const plan_shape& p, std::span<const T> b, std::span<std::uint8_t> out,
                              matmul_weight_order order = matmul_weight_order::k_by_n) {
  const matmul_geometry& g = p.whole;
  if (b.size() != std::size_t{g.logical_K} * g.logical_N) return make_error(rules::host_size, "weights");
  if (out.size() < p.weight_bytes()) return make_error(rules::buffer_size, "weights", "", out.size());
  for (std::uint32_t j = 0; j < p.n_tiles; ++j)
    for (std::uint32_t s = 0; s < p.slices; ++s) {
      const status st = matmul::pack_weight_block(g.in, p.depth(s), p.cols(j), p.k0(s), p.n0(j), g.logical_K, g.logical_N, b,
                                                  order, out.subspan(p.weight_block_offset(j, s)));
      if (!st) return st;
    }
  return {};
}

// The byte offset of B's element (k, n) in a plan's weight buffer (fp16 and int8: whole
// bytes): a host writes a few weights in place (llm/attention.hpp appends a token to a cache).
template <class Soc = soc::rk3588>
constexpr std::size_t weight_offset(const plan_shape& p, std::uint32_t k, std::uint32_t n) {
  const std::uint32_t j = n / p.n_tile, s = k / p.k_slice;
  const soc::weight_tile tile = soc::weight_tile_of<Soc>(p.whole.in);
  return p.weight_block_offset(j, s) +
         bytes_of(p.whole.in, detail::weight_index(tile, p.depth(s), n - p.n0(j), k - p.k0(s)));
}

// The output buffer of one op into C[M][N] (logical; padding stripped).
template <class T>
constexpr status unpack_output(const matmul_geometry& g, std::span<const std::uint8_t> in, std::span<T> c) {
  if (c.size() != std::size_t{g.M} * g.logical_N) return make_error(rules::host_size, "output");
  if (in.size() < g.output_bytes()) return make_error(rules::buffer_size, "output", "", in.size());
  for (std::uint32_t m = 0; m < g.M; ++m)
    for (std::uint32_t n = 0; n < g.logical_N; ++n)
      c[std::size_t{m} * g.logical_N + n] =
          detail::read_output<T>(in, g.out, detail::output_offset(g.layout, g.out, g.M, g.output_pitch, m, n));
  return {};
}

// The output of a plan into C[M][N]: one slice read as is; several slices summed on the
// host in double (fp) or int64 (int) and converted to the plan's output precision (fp16
// rounded to nearest even, int16 saturated).
// Rows [first, first + c.size() / N) only, so that a large output is read a row at a time.
template <class T>
constexpr status finish_plan_rows(const plan_shape& p, std::span<const std::uint8_t> in, std::uint32_t first,
                                  std::span<T> c) {
  const matmul_geometry& g = p.whole;
  const std::size_t rows = g.logical_N ? c.size() / g.logical_N : 0;
  if (c.size() != rows * g.logical_N || first > g.M || rows > g.M - first) return make_error(rules::host_size, "output");
  if (in.size() < matmul::plan_output_bytes(p)) return make_error(rules::buffer_size, "output", "", in.size());
  const std::size_t per_slice = matmul::plan_output_bytes(p) / p.slices;
  const bool is_float = g.out == precision::fp32 || g.out == precision::fp16;
  for (std::uint32_t m = first; m < first + rows; ++m)
    for (std::uint32_t n = 0; n < g.logical_N; ++n) {
      const std::size_t at = detail::output_offset(g.layout, p.partial, g.M, p.output_pitch, m, n);
      double fsum = 0;
      std::int64_t isum = 0;
      for (std::uint32_t s = 0; s < p.slices; ++s) {
        if (is_float) fsum += detail::read_output<double>(in, p.partial, s * per_slice + at);
        else isum += detail::read_output<std::int64_t>(in, p.partial, s * per_slice + at);
      }
      T& out = c[std::size_t{m - first} * g.logical_N + n];
      if (g.out == precision::fp16) out = static_cast<T>(half_to_float(float_to_half(static_cast<float>(fsum))));
      else if (is_float) out = static_cast<T>(fsum);
      else if (g.out == precision::int16) out = static_cast<T>(isum > 32767 ? 32767 : isum < -32768 ? -32768 : isum);
      else out = static_cast<T>(isum);
    }
  return {};
}
template <class T>
constexpr status finish_plan(const plan_shape& p, std::span<const std::uint8_t> in, std::span<T> c) {
  if (c.size() != std::size_t{p.whole.M} * p.whole.logical_N) return make_error(rules::host_size, "output");
  return matmul::finish_plan_rows<T>(p, in, 0, c);
}
}  // namespace matmul

}  // namespace regcmd
