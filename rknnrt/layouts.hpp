#pragma once
// The matmul API's operand layouts (rknn-matmul-api §1.5, §1.6) and the moves between them
// and the layouts regcmd's programs read and write.
//
//   normal   A [M][K], B [K][N], C [M][N] row-major; int4 two elements a byte, the even
//            index in the low nibble
//   TP_NORM  B only: [N][K] row-major
//   native   B: tiles of subN x 32 (subN 16 fp16, 32 int8, 64 int4), K fastest within an N
//            block; above K = 8192 (RK3588) K is cut into segments, each tiled on its own
//            and stored one after another. That is regcmd's weight layout for each segment
//            (regcmd/programs/matmul/packing.hpp), so native B is read where it lies.
//            A: (K/subK, M, subK), C: (N/subN, M, subN): 16-byte atoms (NC1HWC2)
// regcmd's row-major features are the normal A, except int4, whose rows are K bytes (K/2
// bytes of nibbles and a zero half-line: regcmd/programs/matmul/spec.hpp).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <regcmd/core/half.hpp>
#include <regcmd/core/math.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/core/soc.hpp>
#include <regcmd/programs/matmul/packing.hpp>

namespace regcmd::rknn {

// Native B's K segment (rknn-matmul-api §1.6: 8192 on RK3588); each is one op of K in one piece.
inline constexpr std::uint32_t k_segment = soc::rk3588::k_segment;

constexpr std::uint32_t segment_count(std::uint32_t K) { return ceil_div(K, k_segment); }
constexpr std::uint32_t segment_depth(std::uint32_t K, std::uint32_t s) {
  return std::min(k_segment, K - s * k_segment);
}

enum class layout : std::uint8_t { normal = 0, native = 1, transposed = 2 };

// Element index of B(k, n) in native B of K x N: earlier segments are all k_segment deep.
constexpr std::size_t native_b_index(precision p, std::uint32_t K, std::uint32_t N, std::uint32_t k, std::uint32_t n) {
  const std::uint32_t s = k / k_segment;
  return std::size_t{N} * s * k_segment +
         detail::weight_index(soc::weight_tile_of<soc::rk3588>(p), segment_depth(K, s), n, k % k_segment);
}

// Element index of B(k, n) in any of B's layouts.
constexpr std::size_t b_index(layout l, precision p, std::uint32_t K, std::uint32_t N, std::uint32_t k,
                              std::uint32_t n) {
  switch (l) {
    case layout::normal:
      return std::size_t{k} * N + n;
    case layout::transposed:
      return std::size_t{n} * K + k;
    case layout::native:
      break;
  }
  return native_b_index(p, K, N, k, n);
}

// Elements in one 16-byte atom of native A and C.
constexpr std::uint32_t atom_elements(precision p) {
  return p == precision::int4 ? 32 : static_cast<std::uint32_t>(16 / bytes_of(p, 1));
}

// Element index of (row, col) in a rows x cols matrix stored natively: (cols/atom, rows, atom).
constexpr std::size_t native_ac_index(precision p, std::uint32_t rows, std::uint32_t row, std::uint32_t col) {
  const std::uint32_t a = atom_elements(p);
  return (std::size_t{col / a} * rows + row) * a + col % a;
}

// The raw bits of element `i` of a buffer of precision p (int4: a nibble).
inline std::uint32_t get_bits(const std::uint8_t* data, precision p, std::size_t i) {
  switch (p) {
    case precision::int4:
      return (data[i / 2] >> (i % 2 ? 4 : 0)) & 0xfu;
    case precision::int8:
      return data[i];
    case precision::fp16:
    case precision::int16:
      return static_cast<std::uint32_t>(data[2 * i] | data[2 * i + 1] << 8);
    default: {
      std::uint32_t v;
      std::memcpy(&v, data + 4 * i, 4);
      return v;
    }
  }
}

inline void put_bits(std::uint8_t* data, precision p, std::size_t i, std::uint32_t bits) {
  switch (p) {
    case precision::int4: {
      std::uint8_t& b = data[i / 2];
      b = static_cast<std::uint8_t>(i % 2 ? (b & 0x0f) | (bits & 0xf) << 4 : (b & 0xf0) | (bits & 0xf));
      return;
    }
    case precision::int8:
      data[i] = static_cast<std::uint8_t>(bits);
      return;
    case precision::fp16:
    case precision::int16:
      data[2 * i] = static_cast<std::uint8_t>(bits);
      data[2 * i + 1] = static_cast<std::uint8_t>(bits >> 8);
      return;
    default:
      std::memcpy(data + 4 * i, &bits, 4);
  }
}

// A signed integer element (int4, int8, int16, int32).
inline std::int32_t get_int(const std::uint8_t* data, precision p, std::size_t i) {
  const std::uint32_t bits = get_bits(data, p, i);
  switch (p) {
    case precision::int4:
      return static_cast<std::int32_t>(bits ^ 8u) - 8;
    case precision::int8:
      return static_cast<std::int8_t>(bits);
    case precision::int16:
      return static_cast<std::int16_t>(bits);
    default:
      return static_cast<std::int32_t>(bits);
  }
}

// An output element as a double (fp32, fp16, int32, int16).
inline double get_value(const std::uint8_t* data, precision p, std::size_t i) {
  if (p == precision::fp32) return std::bit_cast<float>(get_bits(data, p, i));
  if (p == precision::fp16) return half_to_float(static_cast<std::uint16_t>(get_bits(data, p, i)));
  return get_int(data, p, i);
}

// B (K x N, elements of p) from layout `from` into native B (both packed in the same p).
inline void b_to_native(const std::uint8_t* in, layout from, precision p, std::uint32_t K, std::uint32_t N,
                        std::uint8_t* out) {
  if (from == layout::native) {
    std::memcpy(out, in, bytes_of(p, std::uint64_t{K} * N));
    return;
  }
  for (std::uint32_t n = 0; n < N; ++n)
    for (std::uint32_t k = 0; k < K; ++k)
      put_bits(out, p, native_b_index(p, K, N, k, n), get_bits(in, p, b_index(from, p, K, N, k, n)));
}

// Columns [k0, k0 + depth) of A (M x K of p, in the API's layout `from`) as regcmd's
// row-major feature rows of that depth. int4 rows are `depth` bytes, the nibbles in the
// first half: the second half is not written (the caller zeroes it once).
inline void a_to_features(const std::uint8_t* in, layout from, precision p, std::uint32_t M, std::uint32_t K,
                          std::uint32_t k0, std::uint32_t depth, std::uint8_t* out) {
  const std::uint32_t row = matmul_geometry::feature_row_bytes(p, depth);
  const auto packed = static_cast<std::size_t>(bytes_of(p, depth));
  for (std::uint32_t m = 0; m < M; ++m) {
    std::uint8_t* line = out + std::size_t{m} * row;
    if (from == layout::normal) {  // int4 too: its rows' nibbles are packed as the API's (k0 is even)
      std::memcpy(line, in + bytes_of(p, std::uint64_t{m} * K + k0), packed);
    } else {
      for (std::uint32_t k = 0; k < depth; ++k) {
        const std::size_t at = from == layout::normal ? std::size_t{m} * K + k0 + k : native_ac_index(p, M, m, k0 + k);
        put_bits(line, p, k, get_bits(in, p, at));
      }
    }
  }
}

}  // namespace regcmd::rknn
