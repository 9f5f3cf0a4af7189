#pragma once
// A graph's tensors between the host and their buffers, by name: each input and weight is
// laid out by the packer of the op that reads it first (the format every other reader
// agreed to), each output read back by the unpacker of the op that wrote it. `buffer` is
// the whole buffer of the tensor's role (graph_view::buffer_bytes); the tensor sits at
// its offset in it. Host arrays are row-major: [M][K] features, [K][N] weights, [M][N]
// outputs, [N] per-channel vectors; a conv's NHWC features, outputs and residuals, OHWI
// weights (a quantized conv's with its bias: pack_conv; an fp16 conv's bias: pack_fp16_conv_bias).

#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include <regcmd/core/error.hpp>
#include <regcmd/programs/conv/packing.hpp>
#include <regcmd/programs/sdp/packing.hpp>
#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/matmul/packing.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

namespace detail {
constexpr result<const graph_tensor*> tensor_named(const graph_view& g, std::string_view name, bool written) {
  const graph_tensor* x = g.find(name);
  if (!x) return make_error(rules::unknown_tensor, "graph", "tensor").with_note(name);
  const bool npu_written = x->kind == tensor_kind::intermediate || x->kind == tensor_kind::output;
  if (npu_written != written) return make_error(rules::tensor_direction, "graph", "tensor").with_note(name);
  // an intermediate's bytes hold it after the run only when no later tensor reuses them
  if (x->kind == tensor_kind::intermediate && !g.intermediates_kept && !x->read_back)
    return make_error(rules::tensor_direction, "graph", "tensor").with_note(name);
  return x;
}

// The host types a conv's packers take (conv_packing.hpp).
template <class T>
inline constexpr bool conv_element = std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t> ||
                                     std::is_same_v<T, float> || std::is_same_v<T, std::uint16_t>;

// The tensor's bytes inside its role's buffer.
template <class Byte>
constexpr result<std::span<Byte>> tensor_bytes(const graph_tensor& x, std::span<Byte> buffer) {
  if (buffer.size() < std::uint64_t{x.offset} + x.bytes)
    return make_error(rules::buffer_size, "graph", "tensor", buffer.size()).with_note(x.name.view());
  return buffer.subspan(x.offset, x.bytes);
}

// Each kind's packer of an operand it is the first to read, in role `role`, and unpacker of
// the tensor it writes.
template <class T>
constexpr status pack_operand(graph_step_of<graph_op_kind::matmul>, const graph_step& s, operand_role role,
                              std::string_view, std::span<const T> host, std::span<std::uint8_t> out) {
  return role == operand_role::weight ? matmul::pack_weights<T>(s.matmul, host, out) : matmul::pack_features<T>(s.matmul.whole, host, out);
}
template <class T>
constexpr status pack_operand(graph_step_of<graph_op_kind::ew>, const graph_step& s, operand_role role, std::string_view,
                              std::span<const T> host, std::span<std::uint8_t> out) {
  if (role == operand_role::ew_operand && s.ew.operand == ew_operand::per_channel) return sdp::pack_vector<T>(s.ew, host, out);
  return sdp::pack_tensor<T>(s.ew, host, out);
}
template <class T>
constexpr status pack_operand(graph_step_of<graph_op_kind::act>, const graph_step& s, operand_role, std::string_view,
                              std::span<const T> host, std::span<std::uint8_t> out) {
  return sdp::pack_tensor<T>(s.act, host, out);
}
// NHWC features and residuals, OHWI weights.
template <class T>
constexpr status pack_operand(graph_step_of<graph_op_kind::conv>, const graph_step& s, operand_role role,
                              std::string_view name, std::span<const T> host, std::span<std::uint8_t> out) {
  if constexpr (conv_element<T>) {
    if (role == operand_role::weight && s.bias != no_op)
      return make_error(rules::conv_weights_with_bias, "graph", "tensor").with_note(name);
    if (role == operand_role::weight) return conv::pack_weights<T>(s.conv.conv, host, conv_weight_order::ohwi, out);
    if (role == operand_role::residual) return conv::pack_residual<T>(s.conv.conv, host, tensor_order::nhwc, out);
    return conv::pack_features<T>(s.conv.conv, host, tensor_order::nhwc, out);
  } else {
    return make_error(rules::host_size, "graph", "element type").with_note(name);
  }
}
template <class T>  // NHWC
constexpr status pack_operand(graph_step_of<graph_op_kind::pool>, const graph_step& s, operand_role, std::string_view,
                              std::span<const T> host, std::span<std::uint8_t> out) {
  return sdp::pack_tensor<T>(pool_image(s.pool, false), host, out);
}

template <class T>  // never reached: a concatenation's parts are written by ops (graph-concat-source)
constexpr status pack_operand(graph_step_of<graph_op_kind::concat>, const graph_step& s, operand_role, std::string_view,
                              std::span<const T> host, std::span<std::uint8_t> out) {
  return sdp::pack_tensor<T>(s.concat, host, out);
}

template <class T>
constexpr status unpack_result(graph_step_of<graph_op_kind::concat>, const graph_step& s, std::span<const std::uint8_t> in,
                               std::span<T> host) {
  return sdp::unpack_tensor<T>(s.concat, in, host);
}
template <class T>
constexpr status unpack_result(graph_step_of<graph_op_kind::matmul>, const graph_step& s, std::span<const std::uint8_t> in,
                               std::span<T> host) {
  if (s.sums_slices()) return sdp::unpack_tensor<T>(s.ew, in, host);  // the last add's output
  return matmul::finish_plan<T>(s.matmul, in, host);
}
template <class T>
constexpr status unpack_result(graph_step_of<graph_op_kind::ew>, const graph_step& s, std::span<const std::uint8_t> in,
                               std::span<T> host) {
  return sdp::unpack_tensor<T>(s.ew, in, host);
}
template <class T>
constexpr status unpack_result(graph_step_of<graph_op_kind::act>, const graph_step& s, std::span<const std::uint8_t> in,
                               std::span<T> host) {
  return sdp::unpack_tensor<T>(s.act, in, host);
}
template <class T>
constexpr status unpack_result(graph_step_of<graph_op_kind::conv>, const graph_step& s, std::span<const std::uint8_t> in,
                               std::span<T> host) {
  return conv::unpack_output<T>(s.conv.conv, in, tensor_order::nhwc, host);
}
template <class T>
constexpr status unpack_result(graph_step_of<graph_op_kind::pool>, const graph_step& s, std::span<const std::uint8_t> in,
                               std::span<T> host) {
  return sdp::unpack_tensor<T>(pool_image(s.pool, true), in, host);
}
}  // namespace detail

// An input or weight of the graph from the host into its buffer.
template <class T>
constexpr status pack_tensor(const graph_view& g, std::string_view name, std::span<const T> host,
                             std::span<std::uint8_t> buffer) {
  const result<const graph_tensor*> x = detail::tensor_named(g, name, false);
  if (!x) return x.err();
  const result<std::span<std::uint8_t>> out = detail::tensor_bytes(*x.value(), buffer);
  if (!out) return out.err();
  const graph_step& s = g.steps[x.value()->packer_op];
  const operand_role role = x.value()->packer_role;
  return with_step_kind(s.kind, [&](auto k) { return detail::pack_operand<T>(k, s, role, name, host, out.value()); });
}

// A conv's weights (OHWI) and, for a quantized conv, its bias operand: the int32 bias (empty
// without spec.bias) less the input zero point's correction (conv_packing.hpp:
// conv::pack_bias). `conv` is the conv's output name; `weight_buffer` and `bias_buffer` the
// whole buffers of those roles (an fp16 conv takes an empty bias here: pack_fp16_conv_bias).
template <class T>
constexpr status pack_conv(const graph_view& g, std::string_view conv, std::span<const T> weights,
                           std::span<const std::int32_t> bias, std::span<std::uint8_t> weight_buffer,
                           std::span<std::uint8_t> bias_buffer) {
  const graph_tensor* out = g.find(conv);
  if (!out || out->writer == no_op || g.steps[out->writer].kind != graph_op_kind::conv)
    return make_error(rules::unknown_tensor, "graph", "conv").with_note(conv);
  const graph_step& s = g.steps[out->writer];
  const graph_tensor& w = g.tensors[s.b];
  const result<std::span<std::uint8_t>> w_bytes = detail::tensor_bytes(w, weight_buffer);
  if (!w_bytes) return w_bytes.err();
  if (status r = conv::pack_weights<T>(s.conv.conv, weights, conv_weight_order::ohwi, w_bytes.value()); !r) return r;
  if (!s.conv.conv.quantized()) {  // an fp16 conv's bias packs apart (pack_fp16_conv_bias)
    if (!bias.empty()) return make_error(rules::host_size, "conv bias").with_note(conv);
    return {};
  }
  const result<std::span<std::uint8_t>> b_bytes = detail::tensor_bytes(g.tensors[s.bias], bias_buffer);
  if (!b_bytes) return b_bytes.err();
  return conv::pack_bias<T>(s.conv.conv, bias, weights, conv_weight_order::ohwi, b_bytes.value());
}

// An fp16 conv's bias (spec.bias), by the conv's output name, into the whole bias buffer.
constexpr status pack_fp16_conv_bias(const graph_view& g, std::string_view conv, std::span<const float> bias,
                                     std::span<std::uint8_t> bias_buffer) {
  const graph_tensor* out = g.find(conv);
  if (!out || out->writer == no_op || g.steps[out->writer].kind != graph_op_kind::conv)
    return make_error(rules::unknown_tensor, "graph", "conv").with_note(conv);
  const graph_step& s = g.steps[out->writer];
  if (!s.conv.conv.ew_bias()) return make_error(rules::host_size, "conv bias", "an fp16 conv with spec.bias").with_note(conv);
  const result<std::span<std::uint8_t>> b_bytes = detail::tensor_bytes(g.tensors[s.bias], bias_buffer);
  if (!b_bytes) return b_bytes.err();
  return conv::pack_fp16_bias(s.conv.conv, bias, b_bytes.value());
}

// An output of the graph from its buffer back to the host.
template <class T>
constexpr status unpack_tensor(const graph_view& g, std::string_view name, std::span<const std::uint8_t> buffer,
                               std::span<T> host) {
  const result<const graph_tensor*> x = detail::tensor_named(g, name, true);
  if (!x) return x.err();
  const result<std::span<const std::uint8_t>> in = detail::tensor_bytes(*x.value(), buffer);
  if (!in) return in.err();
  const graph_step& s = g.steps[x.value()->packer_op];
  return with_step_kind(s.kind, [&](auto k) { return detail::unpack_result<T>(k, s, in.value(), host); });
}

}  // namespace regcmd
