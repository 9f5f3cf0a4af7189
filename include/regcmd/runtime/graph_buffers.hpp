#pragma once
// A graph's buffers on a device: one for each role its tensors live in (the inputs' by their
// first reader: features, element-wise operands, residuals; the weights', the quantized
// convs' biases, the arena of intermediates, the outputs'), each of the size its geometry asks
// (regcmd/programs/graph/graph.hpp), with the host's tensors packed and unpacked by name
// (regcmd/programs/graph/packing.hpp) and the operands that bind them:
//
//   auto io = runtime::graph_buffers::create(dev, ffn.geometry);   // result<graph_buffers>
//   io.value().pack<float>("x", x);                                // and the weights
//   npu.bind(prepared, io.value().operands());
//   npu.run(prepared);
//   io.value().unpack<float>("y", y);
//
// The geometry must outlive the buffers.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <regcmd/core/error.hpp>
#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/runtime/buffer.hpp>
#include <regcmd/runtime/session.hpp>

namespace regcmd::runtime {

class graph_buffers {
 public:
  static result<graph_buffers> create(const device& dev, const graph_view& g) {
    graph_buffers out;
    out.geometry_ = g;
    for (operand_role r : roles) {
      const std::uint32_t bytes = g.buffer_bytes[static_cast<std::size_t>(r)];
      if (bytes == 0) continue;
      auto b = buffer::create(dev, bytes);
      if (!b) return b.err();
      out.buffers_[static_cast<std::size_t>(r)] = std::move(b).value();
    }
    return out;
  }

  // An input's or a weight's host values into its buffer.
  template <class T>
  status pack(std::string_view tensor, std::span<const T> host) {
    const graph_tensor* x = geometry_.find(tensor);
    return pack_tensor<T>(geometry_, tensor, host, x ? bytes(x->role) : std::span<std::uint8_t>{});
  }
  // A conv's weights and (quantized) its bias, by the conv's output name.
  template <class T>
  status pack_conv(std::string_view conv, std::span<const T> weights, std::span<const std::int32_t> bias = {}) {
    return regcmd::pack_conv<T>(geometry_, conv, weights, bias, bytes(operand_role::weight), bytes(operand_role::bias));
  }
  // An fp16 conv's bias, by the conv's output name.
  status pack_fp16_conv_bias(std::string_view conv, std::span<const float> bias) {
    return regcmd::pack_fp16_conv_bias(geometry_, conv, bias, bytes(operand_role::bias));
  }
  // An output's values back to the host.
  template <class T>
  status unpack(std::string_view tensor, std::span<T> host) const {
    const graph_tensor* x = geometry_.find(tensor);
    return unpack_tensor<T>(geometry_, tensor, x ? bytes(x->role) : std::span<const std::uint8_t>{}, host);
  }

  // The buffers to bind: nullptr for a role without tensors.
  runtime::operands operands() const {
    return {.feature = of(operand_role::feature), .weight = of(operand_role::weight), .output = of(operand_role::output),
            .ew_operand = of(operand_role::ew_operand), .intermediate = of(operand_role::intermediate),
            .bias = of(operand_role::bias), .residual = of(operand_role::residual)};
  }
  // Makes what the NPU wrote into a role's buffer visible to the CPU: a run does it for the
  // output; the arena's intermediates never leave the device unless asked for (to check a
  // layer, say).
  status read_back(operand_role r) const {
    if (!made(r)) return {};
    return buffers_[static_cast<std::size_t>(r)].sync_from_device();
  }
  // The whole buffer of a role (empty for a role without tensors).
  std::span<std::uint8_t> bytes(operand_role r) const {
    return made(r) ? buffers_[static_cast<std::size_t>(r)].bytes() : std::span<std::uint8_t>{};
  }

 private:
  // The roles a graph's tensors live in (regcmd/programs/graph/graph.hpp).
  static constexpr operand_role roles[] = {operand_role::feature,    operand_role::weight,   operand_role::ew_operand,
                                           operand_role::residual,   operand_role::bias,     operand_role::intermediate,
                                           operand_role::output};
  // A buffer for each role the geometry gives bytes to.
  bool made(operand_role r) const { return geometry_.buffer_bytes[static_cast<std::size_t>(r)] > 0; }
  const buffer* of(operand_role r) const { return made(r) ? &buffers_[static_cast<std::size_t>(r)] : nullptr; }

  graph_view geometry_{};
  std::array<buffer, operand_role_count> buffers_{};
};

}  // namespace regcmd::runtime
