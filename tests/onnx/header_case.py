"""Writes the model the C++ header test runs (two Gemms with a ReLU between: one NPU partition),
its input and its expected output, computed here in float64 from the weights by the Gemm and
ReLU definitions: header_case.py DIR."""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

directory = sys.argv[1]
os.makedirs(directory, exist_ok=True)
rng = np.random.default_rng(7)
w1 = (rng.standard_normal((64, 32)) / 8).astype(np.float32)
b1 = (rng.standard_normal(32) / 8).astype(np.float32)
w2 = (rng.standard_normal((16, 32)) / 6).astype(np.float32)  # transB
x = rng.uniform(-1, 1, (1, 64)).astype(np.float32)
nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
         helper.make_node("Relu", ["h"], ["r"], name="relu"),
         helper.make_node("Gemm", ["r", "w2"], ["y"], transB=1, name="fc2")]
graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])],
                          [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
                           numpy_helper.from_array(w2, "w2")])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(directory, "mlp.onnx"))
h = x.astype(np.float64) @ w1 + b1
y = np.maximum(h, 0) @ w2.T.astype(np.float64)
x.tofile(os.path.join(directory, "input.f32"))
y.astype(np.float32).tofile(os.path.join(directory, "expected.f32"))
