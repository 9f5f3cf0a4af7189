#pragma once
// Whole blocks as graphs (regcmd/programs/graph/graph.hpp), ready to build:
//
//   llama_ffn(M, hidden, intermediate)   LLaMA's feed-forward block, fp16:
//       gate = x·w_gate, up = x·w_up        [M][hidden] · [hidden][intermediate]
//       act = SiLU(gate), h = act·up        element by element, flat
//       y = h·w_down                        [M][intermediate] · [intermediate][hidden]
//     tensors: inputs x, w_gate, w_up, w_down; output y (docs/graph.md)
//
//   mobilenet_v1_block(size)   MobileNet v1's first block, uint8 as TFLite runs it, on a
//                              size x size x 3 image (size even; 224 in the network):
//       c1 = 3x3 stride-2 conv (3 -> 32), c2 = 3x3 depthwise conv (32), c3 = 1x1 pointwise
//       conv (32 -> 64), each with its bias and ReLU6; each layer's output quantization the
//       next one's input quantization (ReLU6 over [0, 6] in uint8)
//     tensors: input image, weights k1, k2, k3 (biases packed with them: pack_conv);
//     intermediates c1, c2; output c3

#include <cstdint>

#include <regcmd/programs/graph/spec.hpp>

namespace regcmd {

constexpr graph_spec llama_ffn(std::uint32_t M, std::uint32_t hidden, std::uint32_t intermediate) {
  constexpr auto fp16 = [](std::uint32_t rows, std::uint32_t K, std::uint32_t N) {
    return matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = rows, .K = K, .N = N};
  };
  return make_graph(graph_matmul("gate", "x", "w_gate", fp16(M, hidden, intermediate)),
                    graph_matmul("up", "x", "w_up", fp16(M, hidden, intermediate)),
                    graph_act("act", "gate", {.fn = activation::silu, .M = M, .N = intermediate}),
                    graph_ew("h", "act", "up", {.op = ew_op::mul, .M = M, .N = intermediate, .layout = operand_layout::row_major}),
                    graph_matmul("y", "h", "w_down", fp16(M, intermediate, hidden)));
}

constexpr graph_spec mobilenet_v1_block(std::uint32_t size) {
  constexpr quantization image{1.0f / 128, 128}, activations{6.0f / 255, 0};
  const std::uint32_t half = size / 2;
  const conv_spec stem{.dtype = conv_data::uint8, .H = size, .W = size, .C = 3, .out_channels = 32, .kernel_h = 3,
                       .kernel_w = 3, .stride_y = 2, .stride_x = 2, .padding = conv_padding::same, .input = image,
                       .weights = {0.02f, 120}, .output = activations, .bias = true,
                       .activation = output_activation::relu6};
  const conv_spec depthwise{.dtype = conv_data::uint8, .H = half, .W = half, .C = 32, .out_channels = 32, .kernel_h = 3,
                            .kernel_w = 3, .padding = conv_padding::same, .depthwise = true, .input = activations,
                            .weights = {0.01f, 130}, .output = activations, .bias = true,
                            .activation = output_activation::relu6};
  const conv_spec pointwise{.dtype = conv_data::uint8, .H = half, .W = half, .C = 32, .out_channels = 64,
                            .input = activations, .weights = {0.004f, 125}, .output = activations, .bias = true,
                            .activation = output_activation::relu6};
  return make_graph(graph_conv("c1", "image", "k1", stem), graph_conv("c2", "c1", "k2", depthwise),
                    graph_conv("c3", "c2", "k3", pointwise));
}

}  // namespace regcmd
