#pragma once
// The norm family: softmax, RMSNorm, LayerNorm, row sums, means and maxima, and RoPE over the
// last axis of row-major fp16 tensors, each as graph ops (docs/graph.md, "The norm family").

#include <regcmd/programs/norm/layer_norm.hpp>
#include <regcmd/programs/norm/reduce.hpp>
#include <regcmd/programs/norm/rms_norm.hpp>
#include <regcmd/programs/norm/rope.hpp>
#include <regcmd/programs/norm/softmax.hpp>
