#pragma once
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

#include <cstdint>

#include <regcmd/core/precision.hpp>

namespace regcmd {

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
constexpr tensor_format vector_format(precision p, std::uint32_t channels) {
  return {p, tensor_layout::vector, 1, channels, 0};
}
constexpr tensor_format weight_format(precision p, std::uint32_t K, std::uint32_t N) {
  return {p, tensor_layout::weights, K, N, 0};
}

}  // namespace regcmd
