"""Mutated ONNX models into regcmd.onnx: every one is imported and, when it imports, run on the
emulated device with zero inputs; each must end in one of the importer's errors (ModelError,
Unsupported, SpecError, RuleError) or in outputs, never in another exception, a crash or a
hang. A seeded loop of byte mutations (flips, deletions, insertions, truncations) of a few
valid models: fuzz_models.py SECONDS [SEED] prints the executions and their outcomes."""

import collections
import os
import random
import sys
import time
import warnings

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import regcmd
import regcmd.onnx as ro

ERRORS = (ro.ModelError, ro.Unsupported, regcmd.SpecError, regcmd.RuleError)
DATA = "/usr/share/libonnx-testdata/data/node"


def seed_models():
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
    fc = numpy_helper.from_array(rng.standard_normal((8, 4)).astype(np.float32), "fc")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("GlobalAveragePool", ["p"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "fc"], ["y"])]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [w, b, fc])
    models = [helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()]
    # PyTorch's quantized export: Cast to its own type, a zero point from ConstantOfShape, an
    # int32 bias behind a DequantizeLinear, a quantized global average pool
    q = {"s": np.float32(0.05), "z": np.uint8(128), "sw": np.float32(0.01), "wq": rng.integers(-9, 9, (8, 3, 1, 1)),
         "bq": rng.integers(-99, 99, 8), "shape": np.array([1], np.int64), "s2": np.float32(0.1), "z2": np.uint8(3)}
    q = [numpy_helper.from_array(np.asarray(v, dtype=np.int8 if k == "wq" else np.int32 if k == "bq" else None), k)
         for k, v in q.items()]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("Cast", ["xq"], ["xc"], to=TensorProto.UINT8),
             helper.make_node("DequantizeLinear", ["xc", "s", "z"], ["xd"]),
             helper.make_node("ConstantOfShape", ["shape"], ["zero"], value=helper.make_tensor("v", TensorProto.INT8, [1], [0])),
             helper.make_node("DequantizeLinear", ["wq", "sw", "zero"], ["wd"]),
             helper.make_node("Conv", ["xd", "wd"], ["c"], kernel_shape=[1, 1]),
             helper.make_node("QuantizeLinear", ["c", "s2", "z2"], ["cq"]),
             helper.make_node("DequantizeLinear", ["cq", "s2", "z2"], ["cd"]),
             helper.make_node("GlobalAveragePool", ["cd"], ["g"]),
             helper.make_node("QuantizeLinear", ["g", "s2", "z2"], ["gq"]),
             helper.make_node("DequantizeLinear", ["gq", "s2", "z2"], ["y"])]
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 1, 1])], q)
    models.append(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    for test in ("test_add_bcast", "test_maxpool_2d_ceil", "test_gemm_all_attributes", "test_clip"):
        path = os.path.join(DATA, test, "model.onnx")
        if os.path.exists(path):
            with open(path, "rb") as f:
                models.append(f.read())
    return models


def mutate(rng, data):
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if not b:
            break
        i, op = rng.randrange(len(b)), rng.random()
        if op < 0.5:
            b[i] = rng.randrange(256)
        elif op < 0.7:
            del b[i:i + rng.randint(1, 16)]
        elif op < 0.85:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        else:
            del b[i:]
    return bytes(b)


def one(data):
    """The outcome of importing and running one model."""
    try:
        model = ro.import_model(data)
    except ERRORS as e:
        return "refused: " + type(e).__name__
    try:
        model.run({n: np.zeros(model.infos[n].shape, model.infos[n].dtype) for n in model.input_names})
    except ERRORS as e:
        return "run refused: " + type(e).__name__
    return "ran"


def fuzz(seconds, seed=0):
    with warnings.catch_warnings():
        # protobuf's note on a truncated message; numpy's on the NaN and huge values of
        # mutated weights
        warnings.simplefilter("ignore")
        return _fuzz(seconds, seed)


def _fuzz(seconds, seed):
    rng = random.Random(seed)
    seeds = seed_models()
    outcomes = collections.Counter()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        data = mutate(rng, rng.choice(seeds))
        try:
            outcomes[one(data)] += 1
        except Exception as e:  # anything else is a finding: the input is kept
            with open("onnx-fuzz-finding.onnx", "wb") as f:
                f.write(data)
            raise AssertionError(f"{type(e).__name__}: {e} (the model: onnx-fuzz-finding.onnx)") from e
    return outcomes


if __name__ == "__main__":
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60
    outcomes = fuzz(seconds, int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    print(f"fuzz_onnx: {sum(outcomes.values())} models in {seconds:g}s, no crash: " +
          ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
