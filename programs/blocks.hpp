#pragma once
// Whole blocks as graphs (programs/graph.hpp), ready to build:
//
//   llama_ffn(M, hidden, intermediate)   LLaMA's feed-forward block, fp16:
//       gate = x·w_gate, up = x·w_up        [M][hidden] · [hidden][intermediate]
//       act = SiLU(gate), h = act·up        element by element, flat
//       y = h·w_down                        [M][intermediate] · [intermediate][hidden]
//     tensors: inputs x, w_gate, w_up, w_down; output y (docs/graph.md)

#include <cstdint>

#include <regcmd/programs/graph_spec.hpp>

namespace regcmd {

constexpr graph_spec llama_ffn(std::uint32_t M, std::uint32_t hidden, std::uint32_t intermediate) {
  constexpr auto fp16 = [](std::uint32_t rows, std::uint32_t K, std::uint32_t N) {
    return matmul_spec{.in = precision::fp16, .out = precision::fp16, .M = rows, .K = K, .N = N};
  };
  return make_graph(graph_matmul("gate", "x", "w_gate", fp16(M, hidden, intermediate)),
                    graph_matmul("up", "x", "w_up", fp16(M, hidden, intermediate)),
                    graph_act("act", "gate", {.fn = activation::silu, .M = M, .N = intermediate}),
                    graph_ew("h", "act", "up", {.op = ew_op::mul, .M = M, .N = intermediate, .layout = ew_layout::flat}),
                    graph_matmul("y", "h", "w_down", fp16(M, intermediate, hidden)));
}

}  // namespace regcmd
