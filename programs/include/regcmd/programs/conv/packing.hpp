#pragma once
// Convolution features and outputs between host tensors and the NPU's NC1HWC2 cubes.
//
//   host     one image, NHWC (TFLite: [H][W][C]) or NCHW (PyTorch: [C][H][W])
//   NPU      [C1][H][W][C2]: surfaces of 16-byte atoms, C2 = 16 int8 or 8 fp16 channels (4
//            fp32), W fastest; element (h, w, c) at byte
//            ((c / C2) · H · W + h · W + w) · 16 + (c % C2) · bytes
//            (ops-reference §2.3 and §4.1; docs/conv-values.md "axes")
//
// Features hold the channels padded to a multiple of 16 (the CNA reads whole 16-channel
// groups: CNA_DATA_SIZE1.DATAIN_CHANNEL is C aligned to 16), the padding channels holding
// the input's zero point, which the weights of those channels (their zero point) cancel.
// uint8 tensors are stored as int8, shifted by −0x80, and read back shifted by +0x80.
//
// Quantized weights (host OHWI as TFLite, or OIHW as PyTorch; depthwise [1][KH][KW][C] or
// [C][1][KH][KW]) in Mesa's order (ops-reference §2.3): groups of 32 kernels, in each
// groups of 32 input channels (the last 16 wide when C is an odd multiple of 16), in each
// the kernel positions (kh, kw), in each the group's kernels, in each its channels:
//   kernel o, channel i at  32·(o/32)·KH·KW·C16 + n·KH·KW·32·(i/32)
//                           + ((kh·KW + kw)·n + o%32)·w + i%32
// with C16 = C aligned to 16, n the kernels of o's group (32, fewer in the last), w the
// channels of i's group. Depthwise: one kernel, groups of 64 channels, at
// KH·KW·64·(c/64) + (kh·KW + kw)·w + c%64. Kernels are padded to an even count with zeros,
// channels to C16 with the weights' zero point (so that they add nothing). Bias: int32 per
// kernel, less the correction that the input's zero point makes (docs/conv-values.md).
// Host element types: uint8 → std::uint8_t, int8 → std::int8_t, fp16 → float (rounded to
// nearest even) or raw binary16 std::uint16_t; outputs: int8 → std::uint8_t (uint8 convs) or
// std::int8_t, fp16 and fp32 → float.

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include <regcmd/core/error.hpp>
#include <regcmd/core/half.hpp>
#include <regcmd/core/math.hpp>
#include <regcmd/programs/conv/spec.hpp>
#include <regcmd/programs/vocabulary.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

enum class tensor_order : std::uint8_t { nhwc, nchw };

namespace conv {
// Bytes of one input (and residual) element: 1 quantized, 2 fp16.
constexpr std::uint32_t input_bytes_of(conv_data d) { return d == conv_data::fp16 ? 2 : 1; }
}  // namespace conv

namespace detail {


// Index of (h, w, c) in a host tensor of H × W × C.
constexpr std::size_t host_index(tensor_order order, std::uint32_t H, std::uint32_t W, std::uint32_t C,
                                 std::uint32_t h, std::uint32_t w, std::uint32_t c) {
  return order == tensor_order::nhwc ? (std::size_t{h} * W + w) * C + c : (std::size_t{c} * H + h) * W + w;
}

constexpr std::uint32_t conv_input_bytes(const conv_geometry& g) { return conv::input_bytes_of(g.spec.dtype); }

// The stored bits of one feature element.
template <class T>
constexpr std::uint32_t conv_feature_bits(conv_data d, T v) {
  if (d == conv_data::fp16) {
    if constexpr (std::is_same_v<T, std::uint16_t>) return v;
    else return float_to_half(static_cast<float>(v));
  }
  const int value = d == conv_data::uint8 ? static_cast<int>(v) - 0x80 : static_cast<int>(v);
  return static_cast<std::uint8_t>(static_cast<std::int8_t>(value));
}

template <class T>
constexpr bool conv_host_type_fits(conv_data d) {
  switch (d) {
    case conv_data::uint8: return std::is_same_v<T, std::uint8_t>;
    case conv_data::int8: return std::is_same_v<T, std::int8_t>;
    case conv_data::fp16: return std::is_same_v<T, float> || std::is_same_v<T, std::uint16_t>;
  }
  return false;
}

}  // namespace detail

namespace conv {
// Bytes of the feature cube (C padded to 16 channels).
constexpr std::size_t feature_bytes(const conv_geometry& g) {
  const std::uint32_t bytes = detail::conv_input_bytes(g);
  return std::size_t{align_up(g.spec.C, 16)} * bytes / 16 * g.spec.H * g.spec.W * 16;
}

// Bytes of the output cube as the DPU writes it: every computed channel's surface. A
// residual operand has the same layout and size.
constexpr std::size_t output_bytes(const conv_geometry& g) {
  const auto bytes = static_cast<std::size_t>(bytes_of(g.spec.out_dtype, 1));
  return (g.computed_channels() * bytes + 15) / 16 * g.out_h * g.out_w * 16;
}

// Bytes of a residual operand: the output's cube at the residual's element size (int8 for
// a quantized conv, fp16 for an fp16 one: the EW stage reads one or two bytes).
constexpr std::size_t residual_bytes(const conv_geometry& g) {
  return (std::size_t{g.computed_channels()} * conv::input_bytes_of(g.spec.dtype) + 15) / 16 * g.out_h * g.out_w * 16;
}

// Bytes of the bias operand: an int32 per computed channel (quantized), or an fp16 one
// (contiguous, as the ERDMA reads a per-channel operand: regcmd-isa-reference, ERDMA_CFG).
constexpr std::size_t bias_bytes(const conv_geometry& g) {
  return std::size_t{g.computed_channels()} * (g.quantized() ? 4 : 2);
}

// Bytes from the output's base address through its last real channel.
constexpr std::size_t output_extent(const conv_geometry& g) {
  const auto bytes = static_cast<std::uint32_t>(bytes_of(g.spec.out_dtype, 1));
  const std::uint32_t c2 = detail::channels_per_atom(bytes);
  return (std::size_t{g.spec.out_channels - 1} / c2 + 1) * g.out_h * g.out_w * 16;
}

// A host tensor of H × W × C into the feature cube.
template <class T>
constexpr status pack_features(const conv_geometry& g, std::span<const T> host, tensor_order order,
                               std::span<std::uint8_t> out) {
  static_assert(std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, float> ||
                    std::is_same_v<T, std::uint16_t>,
                "conv features: std::uint8_t (uint8), std::int8_t (int8), float or std::uint16_t (fp16)");
  const conv_spec& s = g.spec;
  if (!detail::conv_host_type_fits<T>(s.dtype)) return make_error(rules::host_size, "conv features", "element type");
  if (host.size() != std::size_t{s.H} * s.W * s.C) return make_error(rules::host_size, "conv features");
  if (out.size() < conv::feature_bytes(g)) return make_error(rules::buffer_size, "conv features", "", out.size());
  const std::uint32_t bytes = detail::conv_input_bytes(g);
  // the padding channels: the input's zero point (0 for fp16)
  const std::uint32_t pad_bits =
      s.dtype == conv_data::fp16 ? 0 : detail::conv_feature_bits(s.dtype, static_cast<T>(s.input.zero_point));
  for (std::uint32_t c = 0; c < align_up(s.C, 16); ++c)
    for (std::uint32_t h = 0; h < s.H; ++h)
      for (std::uint32_t w = 0; w < s.W; ++w) {
        const std::uint32_t bits =
            c < s.C ? detail::conv_feature_bits(s.dtype, host[detail::host_index(order, s.H, s.W, s.C, h, w, c)]) : pad_bits;
        detail::store_le(out, detail::nc1hwc2_offset(s.H, s.W, bytes, h, w, c), bits, bytes);
      }
  return {};
}

// The output cube into a host tensor of out_h × out_w × out_channels.
template <class T>
constexpr status unpack_output(const conv_geometry& g, std::span<const std::uint8_t> in, tensor_order order,
                               std::span<T> host) {
  const conv_spec& s = g.spec;
  const bool types_fit = s.out_dtype == precision::int8
                             ? (s.dtype == conv_data::uint8 ? std::is_same_v<T, std::uint8_t> : std::is_same_v<T, std::int8_t>)
                             : std::is_same_v<T, float>;
  if (!types_fit) return make_error(rules::host_size, "conv output", "element type");
  if (host.size() != std::size_t{g.out_h} * g.out_w * s.out_channels) return make_error(rules::host_size, "conv output");
  if (in.size() < conv::output_extent(g)) return make_error(rules::buffer_size, "conv output", "", in.size());
  const auto bytes = static_cast<std::uint32_t>(bytes_of(s.out_dtype, 1));
  for (std::uint32_t c = 0; c < s.out_channels; ++c)
    for (std::uint32_t h = 0; h < g.out_h; ++h)
      for (std::uint32_t w = 0; w < g.out_w; ++w) {
        const std::size_t at = detail::nc1hwc2_offset(g.out_h, g.out_w, bytes, h, w, c);
        T& v = host[detail::host_index(order, g.out_h, g.out_w, s.out_channels, h, w, c)];
        if constexpr (std::is_same_v<T, float>) {
          v = detail::read_output<float>(in, s.out_dtype, at);
        } else {
          const auto stored = static_cast<std::int8_t>(in[at]);
          v = static_cast<T>(s.dtype == conv_data::uint8 ? stored + 0x80 : stored);
        }
      }
  return {};
}

// A residual host tensor of out_h × out_w × out_channels (the conv input's element type:
// std::uint8_t for uint8, std::int8_t for int8, float or std::uint16_t for fp16) into the
// residual operand; channels past the real ones hold 0.
template <class T>
constexpr status pack_residual(const conv_geometry& g, std::span<const T> host, tensor_order order,
                               std::span<std::uint8_t> out) {
  const conv_spec& s = g.spec;
  if (!s.residual_add) return make_error(rules::host_size, "conv residual", "the conv has no residual_add");
  if (!detail::conv_host_type_fits<T>(s.dtype)) return make_error(rules::host_size, "conv residual", "element type");
  if (host.size() != std::size_t{g.out_h} * g.out_w * s.out_channels) return make_error(rules::host_size, "conv residual");
  if (out.size() < conv::residual_bytes(g)) return make_error(rules::buffer_size, "conv residual", "", out.size());
  const std::uint32_t bytes = detail::conv_input_bytes(g);
  for (std::size_t i = 0; i < conv::residual_bytes(g); ++i) out[i] = 0;
  for (std::uint32_t c = 0; c < s.out_channels; ++c)
    for (std::uint32_t h = 0; h < g.out_h; ++h)
      for (std::uint32_t w = 0; w < g.out_w; ++w)
        detail::store_le(out, detail::nc1hwc2_offset(g.out_h, g.out_w, bytes, h, w, c),
                         detail::conv_feature_bits(s.dtype, host[detail::host_index(order, g.out_h, g.out_w, s.out_channels, h, w, c)]),
                         bytes);
  return {};
}
}  // namespace conv

// A host conv weight tensor: OHWI (TFLite's) or OIHW (PyTorch's); depthwise [1][KH][KW][C]
// or [C][1][KH][KW].
enum class conv_weight_order : std::uint8_t { ohwi, oihw };
using weight_order [[deprecated("weight_order is conv_weight_order")]] = conv_weight_order;

namespace detail {

constexpr std::uint32_t quantized_shift(conv_data d) { return d == conv_data::uint8 ? 0x80 : 0; }
// WEIGHT_KERNELS: an even count for int8 (Mesa), the kernels for fp16 (the fp16 sources).
constexpr std::uint32_t conv_kernels(const conv_spec& s) {
  return s.depthwise ? 1 : s.dtype == conv_data::fp16 ? s.out_channels : align_up(s.out_channels, 2);
}

// Element of kernel o, channel i at (kh, kw) in the packed weights: groups of 32 kernels
// (fp16 16) of groups of 32 channels of taps of the group's kernels of its channels;
// depthwise, groups of 64 channels (fp16 32) of taps — 32- or 64-byte lines either way.
constexpr std::size_t conv_weight_offset(const conv_spec& s, std::uint32_t o, std::uint32_t i, std::uint32_t kh,
                                         std::uint32_t kw) {
  const bool fp16 = s.dtype == conv_data::fp16;
  const std::uint32_t c16 = align_up(s.C, 16), taps = s.kernel_h * s.kernel_w, tap = kh * s.kernel_w + kw;
  const std::uint32_t g = s.depthwise ? (fp16 ? 32 : 64) : 32;  // channels a group
  const std::uint32_t w = std::min(g, c16 - i / g * g);
  if (s.depthwise) return std::size_t{taps} * g * (i / g) + std::size_t{tap} * w + i % g;
  const std::uint32_t kg = fp16 ? 16 : 32;  // kernels a group
  const std::uint32_t n = std::min(kg, conv_kernels(s) - o / kg * kg);
  return std::size_t{kg} * (o / kg) * taps * c16 + std::size_t{n} * taps * 32 * (i / 32) +
         (std::size_t{tap} * n + o % kg) * w + i % 32;
}

// Index of kernel o, channel i at (kh, kw) in the host weights; a depthwise conv's single
// kernel is [1][KH][KW][C] (OHWI) or [C][1][KH][KW] (OIHW), the same formulas at o = 0.
constexpr std::size_t conv_weight_host_index(const conv_spec& s, conv_weight_order order, std::uint32_t o, std::uint32_t i,
                                             std::uint32_t kh, std::uint32_t kw) {
  const std::size_t kernel = s.depthwise ? 0 : o;
  return order == conv_weight_order::ohwi ? ((kernel * s.kernel_h + kh) * s.kernel_w + kw) * s.C + i
                                     : ((kernel * s.C + i) * s.kernel_h + kh) * s.kernel_w + kw;
}

}  // namespace detail

namespace conv {
// Bytes of the packed weights: CNA_WEIGHT_SIZE0's kernels · KH · KW · C16 elements.
constexpr std::size_t weight_bytes(const conv_geometry& g) {
  const conv_spec& s = g.spec;
  return std::size_t{detail::conv_kernels(s)} * s.kernel_h * s.kernel_w * align_up(s.C, 16) * detail::conv_input_bytes(g);
}

// Weights (uint8, int8 or fp16 as the conv's input) into the weight buffer.
template <class T>
constexpr status pack_weights(const conv_geometry& g, std::span<const T> host, conv_weight_order order,
                              std::span<std::uint8_t> out) {
  const conv_spec& s = g.spec;
  if (!detail::conv_host_type_fits<T>(s.dtype)) return make_error(rules::host_size, "conv weights", "element type");
  const std::size_t kernels = s.depthwise ? 1 : s.out_channels;
  if (host.size() != kernels * s.kernel_h * s.kernel_w * s.C) return make_error(rules::host_size, "conv weights");
  if (out.size() < conv::weight_bytes(g)) return make_error(rules::buffer_size, "conv weights", "", out.size());
  const std::uint32_t bytes = detail::conv_input_bytes(g);
  // padding channels: the weights' zero point (they add nothing); fp16 0
  const std::uint32_t pad_bits =
      s.dtype == conv_data::fp16 ? 0 : detail::conv_feature_bits(s.dtype, static_cast<T>(s.weights.zero_point));
  for (std::uint32_t o = 0; o < detail::conv_kernels(s); ++o)
    for (std::uint32_t i = 0; i < align_up(s.C, 16); ++i)
      for (std::uint32_t kh = 0; kh < s.kernel_h; ++kh)
        for (std::uint32_t kw = 0; kw < s.kernel_w; ++kw) {
          std::uint32_t v = 0;  // the padding kernel
          if (o < kernels)
            v = i < s.C ? detail::conv_feature_bits(s.dtype, host[detail::conv_weight_host_index(s, order, o, i, kh, kw)])
                        : pad_bits;
          detail::store_le(out, detail::conv_weight_offset(s, o, i, kh, kw) * bytes, v, bytes);
        }
  return {};
}

// An fp16 conv's bias per kernel as fp16, the computed channels past the real ones 0.
constexpr status pack_fp16_bias(const conv_geometry& g, std::span<const float> bias, std::span<std::uint8_t> out) {
  if (!g.ew_bias()) return make_error(rules::host_size, "conv bias", "an fp16 conv with spec.bias");
  if (bias.size() != g.spec.out_channels) return make_error(rules::host_size, "conv bias");
  if (out.size() < conv::bias_bytes(g)) return make_error(rules::buffer_size, "conv bias", "", out.size());
  for (std::uint32_t o = 0; o < g.computed_channels(); ++o)
    detail::store_le(out, std::size_t{o} * 2, o < bias.size() ? float_to_half(bias[o]) : 0u, 2);
  return {};
}

// The int32 bias per kernel the DPU adds, from the host's (TFLite: int32 at scale
// input.scale · weights.scale; empty for a conv without bias): bias − Σ (w −
// weights.zero_point) · (input.zero_point − shift) over the kernel's taps and channels,
// shift 0x80 for uint8 and 0 for int8 (the stored input is x − shift; the correction keeps
// Σ (x − input.zero_point)(w − zero_point)). Channels past the real ones hold 0. A quantized
// conv always reads this operand, bias or not: it carries the correction.
template <class T>
constexpr status pack_bias(const conv_geometry& g, std::span<const std::int32_t> bias, std::span<const T> weights,
                           conv_weight_order order, std::span<std::uint8_t> out) {
  const conv_spec& s = g.spec;
  if (s.dtype == conv_data::fp16 || !detail::conv_host_type_fits<T>(s.dtype))
    return make_error(rules::host_size, "conv bias", "element type");
  const std::size_t kernels = s.depthwise ? 1 : s.out_channels;
  if (bias.size() != (s.bias ? s.out_channels : 0u)) return make_error(rules::host_size, "conv bias");
  if (weights.size() != kernels * s.kernel_h * s.kernel_w * s.C) return make_error(rules::host_size, "conv weights");
  if (out.size() < conv::bias_bytes(g)) return make_error(rules::buffer_size, "conv bias", "", out.size());
  for (std::size_t i = std::size_t{s.out_channels} * 4; i < conv::bias_bytes(g); ++i) out[i] = 0;
  const std::int64_t input_offset = std::int64_t{s.input.zero_point} - detail::quantized_shift(s.dtype);
  for (std::uint32_t o = 0; o < s.out_channels; ++o) {
    std::int64_t correction = 0;
    for (std::uint32_t kh = 0; kh < s.kernel_h; ++kh)
      for (std::uint32_t kw = 0; kw < s.kernel_w; ++kw)
        for (std::uint32_t i = 0; i < (s.depthwise ? 1u : s.C); ++i) {
          const std::uint32_t channel = s.depthwise ? o : i;
          const auto w = static_cast<std::int64_t>(weights[detail::conv_weight_host_index(s, order, o, channel, kh, kw)]);
          correction += (w - s.weights.zero_point) * input_offset;
        }
    const std::int64_t v = (s.bias ? std::int64_t{bias[o]} : 0) - correction;
    if (v < INT32_MIN || v > INT32_MAX) return make_error(rules::conv_bias_range, "conv bias", "kernel", o);
    detail::store_le(out, std::size_t{o} * 4, static_cast<std::uint32_t>(static_cast<std::int32_t>(v)), 4);
  }
  return {};
}
}  // namespace conv

}  // namespace regcmd
