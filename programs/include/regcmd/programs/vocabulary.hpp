#pragma once
// What the op families share, in one place: how operands are laid out (row-major or NC1HWC2
// surfaces), tile padding against spatial padding, the order of a weight matrix, the element
// codec of the packers, NC1HWC2 byte offsets and the tensor formats a graph compares. Each
// family includes this header, never another family's, for these.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include <regcmd/core/half.hpp>
#include <regcmd/core/precision.hpp>

namespace regcmd {

// How a matrix or an SDP tensor lies in the NPU's memory, for every op that has a choice
// (matmul operands, element-wise ops, activations; reference "Operand tile layouts";
// matmul-recipe §1.3, §2.4):
//   row_major  [M][N] rows one after another (a matmul's features read with a line stride,
//              one row per line): the reference's production path; an SDP op's flat tensor.
//   surface    NC1HWC2 with C2 = 16 bytes, W = 1, H = M: implementation A's layout.
enum class operand_layout : std::uint8_t {
  row_major,
  surface,
  flat [[deprecated("the SDP ops' flat layout is operand_layout::row_major")]] = row_major,
};
using ew_layout [[deprecated("ew_layout is operand_layout; flat is row_major")]] = operand_layout;

// Tile padding (a spec's .tile_pad), the last partial tile of a dimension: zero, a K or N
// that is not a multiple of the weight tile (an SDP op's N of a 16-byte atom) is padded with
// zeros by the packers and stripped by the unpacker; none, it must already be one.
// Spatial padding is another word: a conv's or a pooling's .padding and .pad sides.
enum class tile_padding : std::uint8_t { zero, none };
using padding [[deprecated("padding is tile_padding, in the spec field .tile_pad")]] = tile_padding;

// A host weight matrix: B[K][N] (k_by_n) or its transpose B^T[N][K] (n_by_k).
enum class matmul_weight_order : std::uint8_t { k_by_n, n_by_k };
using weights_order [[deprecated("weights_order is matmul_weight_order")]] = matmul_weight_order;

// valid: no padding. same: TFLite's SAME (the output is ceil(input / stride); an odd total
// puts the extra row or column at the bottom or right), which is also PyTorch's
// padding="same" at stride 1. explicit_sides: the four sides given in `pad` (PyTorch's
// padding=(p_h, p_w) is {p_h, p_h, p_w, p_w}).
enum class conv_padding : std::uint8_t { valid, same, explicit_sides };

struct padding_sides {
  std::uint32_t top = 0, bottom = 0, left = 0, right = 0;
  friend constexpr bool operator==(const padding_sides&, const padding_sides&) = default;
};

// How an op lays a tensor out in memory, as far as another op must agree with it: the
// precision, the layout and its dimensions. Two uses of a tensor agree when their formats
// are equal (regcmd/programs/graph/graph.hpp's boundary rule).
//
//   rows      [rows][cols] elements, `pitch` bytes from one row to the next. Contiguous rows
//             are folded into one row of rows·cols elements, so that a matmul's packed
//             [M][N] output and an SDP's flat vector of M·N elements compare equal: the
//             same bytes in the same order.
//   surface   NC1HWC2 with 16-byte atoms: `cols` channels (padded to whole atoms) of `rows`
//             pixels, [cols / atom][rows][atom] (a matmul's surface layout, an SDP surface).
//   vector    `cols` elements, one per channel (an SDP's per-channel operand).
//   weights   a matmul's B in its tiles: K = `rows`, N = `cols` (regcmd/programs/matmul/packing.hpp).
//   conv_weights  a conv's kernels as its CBUF plan packs them: `rows` kernels of `cols`
//             elements (kernel_h · kernel_w · C) (regcmd/programs/conv/packing.hpp).
// A surface of one pixel is its channels in a row: a global pooling's output reads as a
// matmul's feature row. `is_unsigned`: uint8 data (a zero point of 128), not int8. A
// surface's `channels` are those holding values (cols: every channel written or read, the
// padding included): a reader may take a prefix of the channels an op wrote (graph.hpp).
enum class tensor_layout : std::uint8_t { rows, surface, vector, weights, conv_weights };

struct tensor_format {
  precision type{};
  tensor_layout layout{};
  std::uint32_t rows = 0, cols = 0;
  std::uint32_t pitch = 0;  // rows only
  bool is_unsigned = false;
  std::uint32_t channels = 0;  // surface only
  friend constexpr bool operator==(const tensor_format&, const tensor_format&) = default;
};

constexpr tensor_format row_format(precision p, std::uint32_t rows, std::uint32_t cols, std::uint32_t pitch) {
  const std::uint64_t elements = std::uint64_t{rows} * cols;
  if (rows == 1 || pitch == bytes_of(p, cols))
    return {p, tensor_layout::rows, 1, static_cast<std::uint32_t>(elements),
            static_cast<std::uint32_t>(bytes_of(p, elements))};
  return {p, tensor_layout::rows, rows, cols, pitch};
}
constexpr tensor_format surface_format(precision p, std::uint32_t pixels, std::uint32_t cols, std::uint32_t channels) {
  if (pixels == 1) return row_format(p, 1, cols, 0);
  return {p, tensor_layout::surface, pixels, cols, 0, false, channels};
}
// An NC1HWC2 surface of one full atom of channels is the same bytes as its pixels' rows
// ([pixels][atom], contiguous): a pooling over a row-major matrix viewed 8 fp16 channels wide
// reads what a matmul wrote. Other formats are their own.
constexpr tensor_format as_laid_out(const tensor_format& f) {
  if (f.layout == tensor_layout::surface && f.cols == f.channels && bytes_of(f.type, f.cols) == 16)
    return row_format(f.type, 1, f.rows * f.cols, 0);
  return f;
}
constexpr bool same_bytes(const tensor_format& a, const tensor_format& b) { return as_laid_out(a) == as_laid_out(b); }
constexpr tensor_format vector_format(precision p, std::uint32_t channels) {
  return {p, tensor_layout::vector, 1, channels, 0};
}
constexpr tensor_format weight_format(precision p, std::uint32_t K, std::uint32_t N) {
  return {p, tensor_layout::weights, K, N, 0};
}

namespace detail {

// The element codec of the packers: little-endian stores and loads, one host element's
// stored bits, and an output element read back.
constexpr void store_le(std::span<std::uint8_t> out, std::size_t at, std::uint64_t v, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i) out[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}
constexpr std::uint64_t load_le(std::span<const std::uint8_t> in, std::size_t at, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v |= std::uint64_t{in[at + i]} << (8 * i);
  return v;
}

// The stored bits of one host element in precision p (int4: the low nibble).
template <class T>
constexpr std::uint32_t encode_element(precision p, T v) {
  if (p == precision::fp16) {
    if constexpr (std::is_same_v<T, std::uint16_t>) return v;
    else return float_to_half(static_cast<float>(v));
  }
  return static_cast<std::uint32_t>(static_cast<std::uint8_t>(static_cast<std::int8_t>(v))) & (p == precision::int4 ? 0xfu : 0xffu);
}

template <class T>
constexpr bool element_ok(precision p, T v) {
  if constexpr (std::is_same_v<T, std::int8_t>) return p != precision::int4 || (v >= -8 && v <= 7);
  else return true;
}

// Writes element bits at element index `index` of a buffer of precision p (int4: nibbles).
constexpr void put_element(std::span<std::uint8_t> out, precision p, std::size_t index, std::uint32_t bits) {
  if (p == precision::int4) {
    std::uint8_t& b = out[index / 2];
    b = static_cast<std::uint8_t>(index % 2 ? (b & 0x0f) | (bits << 4) : (b & 0xf0) | bits);
    return;
  }
  store_le(out, index * bytes_of(p, 1), bits, static_cast<unsigned>(bytes_of(p, 1)));
}

template <class T>
constexpr T read_output(std::span<const std::uint8_t> in, precision p, std::size_t at) {
  switch (p) {
    case precision::fp32: return static_cast<T>(std::bit_cast<float>(static_cast<std::uint32_t>(load_le(in, at, 4))));
    case precision::fp16: return static_cast<T>(half_to_float(static_cast<std::uint16_t>(load_le(in, at, 2))));
    case precision::int32: return static_cast<T>(static_cast<std::int32_t>(load_le(in, at, 4)));
    case precision::int16: return static_cast<T>(static_cast<std::int16_t>(load_le(in, at, 2)));
    default: return T{};
  }
}

constexpr void fill_zero(std::span<std::uint8_t> out) {
  for (std::uint8_t& b : out) b = 0;
}

// Channels per 16-byte atom of an element of `bytes` bytes.
constexpr std::uint32_t channels_per_atom(std::uint32_t bytes) { return 16 / bytes; }

// Byte offset of (h, w, c) in an NC1HWC2 cube of H × W pixels.
constexpr std::size_t nc1hwc2_offset(std::uint32_t H, std::uint32_t W, std::uint32_t bytes, std::uint32_t h,
                                     std::uint32_t w, std::uint32_t c) {
  const std::uint32_t c2 = channels_per_atom(bytes);
  return ((std::size_t{c / c2} * H + h) * W + w) * 16 + std::size_t{c % c2} * bytes;
}

// The rows (or columns) a dilated kernel spans.
constexpr std::uint64_t dilated_extent(std::uint32_t kernel, std::uint32_t dilation) {
  return std::uint64_t{kernel - 1} * dilation + 1;
}

// TFLite's SAME along one axis: the output is ceil(input / stride), the padding whatever it
// takes, the smaller half before.
constexpr void same_sides(std::uint32_t input, std::uint32_t kernel, std::uint32_t stride, std::uint32_t dilation,
                          std::uint32_t& before, std::uint32_t& after) {
  const std::uint64_t out = (std::uint64_t{input} + stride - 1) / stride;
  const std::uint64_t needed = (out - 1) * stride + dilated_extent(kernel, dilation);
  const std::uint64_t total = needed > input ? needed - input : 0;
  before = static_cast<std::uint32_t>(total / 2);
  after = static_cast<std::uint32_t>(total - total / 2);
}

// A value the register field type Field can hold.
template <class Field>
constexpr bool fits_field(std::uint64_t v) {
  return v <= Field::shape.max_value();
}
}  // namespace detail

}  // namespace regcmd
