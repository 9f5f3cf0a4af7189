"""regcmd.onnx on models built here with onnx.helper: where each node runs, in how many
submits, and what comes out, against references written here in float64 loops from the
operators' definitions (onnx.ai/onnx/operators); the importer's refusals; regcmd-onnx; the
backend's interface; a short run of the model fuzz (tests/onnx/fuzz_models.py)."""

import json
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import regcmd  # noqa: E402
import regcmd.onnx as ro  # noqa: E402
import regcmd.onnx.backend as backend  # noqa: E402
from regcmd.onnx.tolerance import FP16_ATOL, FP16_RTOL  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent


def model_of(nodes, inputs, outputs, initializers, opset=13):
    graph = helper.make_graph(nodes, "test", inputs, outputs,
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    return m


def tensor(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


# --- references, by the definitions -----------------------------------------------------------

def ref_conv(x, w, b=None, pad=0, groups=1):
    """x [C, H, W], w [O, C/groups, K, K], stride 1, pads `pad` on every side."""
    c, h, wd = x.shape
    o, cg, k, _ = w.shape
    xp = np.zeros((c, h + 2 * pad, wd + 2 * pad))
    xp[:, pad:pad + h, pad:pad + wd] = x
    oh, ow = h + 2 * pad - k + 1, wd + 2 * pad - k + 1
    out = np.zeros((o, oh, ow))
    for j in range(o):
        g = j // (o // groups)
        for y in range(oh):
            for i in range(ow):
                out[j, y, i] = np.sum(xp[g * cg:(g + 1) * cg, y:y + k, i:i + k] * w[j])
        out[j] += 0 if b is None else b[j]
    return out


def ref_pool(x, k, stride, pad, average):
    """Max or average (of the pixels inside the image only) over k x k windows."""
    c, h, w = x.shape
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    out = np.zeros((c, oh, ow))
    for y in range(oh):
        for i in range(ow):
            y0, x0 = y * stride - pad, i * stride - pad
            win = x[:, max(y0, 0):min(y0 + k, h), max(x0, 0):min(x0 + k, w)]
            out[:, y, i] = win.mean(axis=(1, 2)) if average else win.max(axis=(1, 2))
    return out


def assert_fp16_close(got, want):
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=FP16_RTOL, atol=FP16_ATOL)


# --- a CNN in one submit -------------------------------------------------------------------------

def cnn_model(rng):
    w = {"w1": rng.standard_normal((32, 3, 3, 3)) * 0.3, "b1": rng.standard_normal(32) * 0.1,
         "gamma": rng.uniform(0.5, 1.5, 32), "beta": rng.standard_normal(32) * 0.1,
         "mean": rng.standard_normal(32) * 0.1, "var": rng.uniform(0.5, 1.5, 32),
         "w2": rng.standard_normal((32, 1, 3, 3)) * 0.3, "lo": np.array(0.0), "hi": np.array(6.0),
         "wf": rng.standard_normal((10, 32)) * 0.3, "bf": rng.standard_normal(10) * 0.1}
    w = {k: np.asarray(v, dtype=np.float32) for k, v in w.items()}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["n1"], name="bn1"),
             helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2], name="pool1"),
             helper.make_node("Conv", ["p1", "w2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=32,
                              name="dw2"),
             helper.make_node("Clip", ["c2", "lo", "hi"], ["r2"], name="relu6"),
             helper.make_node("Add", ["r2", "p1"], ["s2"], name="residual"),
             helper.make_node("GlobalAveragePool", ["s2"], ["gp"], name="gap"),
             helper.make_node("Flatten", ["gp"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1, name="fc")]
    return model_of(nodes, [tensor("x", [1, 3, 16, 16])], [tensor("y", [1, 10])], w), w


def cnn_reference(x, w):
    c1 = ref_conv(x[0].astype(np.float64), w["w1"], w["b1"], pad=1)
    scale = w["gamma"] / np.sqrt(w["var"].astype(np.float64) + 1e-5)
    n1 = (c1 - w["mean"][:, None, None]) * scale[:, None, None] + w["beta"][:, None, None]
    p1 = ref_pool(np.maximum(n1, 0), 2, 2, 0, average=False)
    r2 = np.clip(ref_conv(p1, w["w2"], pad=1, groups=32), 0, 6)
    gap = (r2 + p1).mean(axis=(1, 2))
    return (gap @ w["wf"].T.astype(np.float64) + w["bf"])[None]


def test_a_cnn_runs_in_one_submit():
    rng = np.random.default_rng(3)
    model, weights = cnn_model(rng)
    compiled = ro.import_model(model)
    assert compiled.placement == {"conv1": "npu", "bn1": "npu", "relu1": "npu", "pool1": "npu", "dw2": "npu",
                                  "relu6": "npu", "residual": "npu", "gap": "npu", "flatten": "npu", "fc": "npu"}
    assert compiled.reasons["bn1"] == "folded into conv1"
    assert compiled.reasons["relu1"] == "folded into conv1"  # after the bias, in the DPU's EW stage
    assert compiled.reasons["relu6"] == "folded into dw2"
    [stats] = compiled.stats()
    assert stats["submits"] == 1
    # conv1 with its bias and ReLU, the max pool, the depthwise conv with its clip, the add,
    # the global pool, the classifier and its bias: seven ops, one task each at these sizes
    assert stats["tasks"] == 7
    report = compiled.report()
    assert "10 nodes: 10 on the NPU in 1 partition (1 submit), 0 on the host" in report
    for _ in range(2):
        x = rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)
        [y] = compiled.run({"x": x})
        assert y.dtype == np.float32 and y.shape == (1, 10)
        assert_fp16_close(y, cnn_reference(x, weights))


# --- a host node between two partitions --------------------------------------------------------

def split_model(rng):
    w = {"w1": (rng.standard_normal((8, 4, 3, 3)) * 0.3).astype(np.float32),
         "w2": (rng.standard_normal((8, 8, 1, 1)) * 0.3).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             # the PPU's window is dense: a dilated one runs on the host
             helper.make_node("MaxPool", ["r1"], ["m1"], kernel_shape=[2, 2], dilations=[2, 2], name="dilated"),
             helper.make_node("Conv", ["m1", "w2"], ["c2"], kernel_shape=[1, 1], name="conv2"),
             helper.make_node("Sigmoid", ["c2"], ["y"], name="sigmoid")]
    return model_of(nodes, [tensor("x", [1, 4, 6, 6])], [tensor("y", [1, 8, 4, 4])], w), w


def test_a_node_the_npu_cannot_run_goes_to_the_host_between_two_partitions():
    rng = np.random.default_rng(4)
    model, w = split_model(rng)
    compiled = ro.import_model(model)
    assert compiled.placement == {"conv1": "npu", "relu1": "npu", "dilated": "host", "conv2": "npu",
                                  "sigmoid": "npu"}
    assert compiled.reasons["dilated"] == "a pooling with dilations: the PPU's window is dense"
    assert [s["nodes"] for s in compiled.stats()] == [["conv1"], ["conv2", "sigmoid"]]  # relu1 folded into conv1
    assert "5 nodes: 4 on the NPU in 2 partitions (2 submits), 1 on the host" in compiled.report()
    x = rng.uniform(-1, 1, (1, 4, 6, 6)).astype(np.float32)
    [y] = compiled.run([x])
    r1 = np.maximum(ref_conv(x[0], w["w1"], pad=1), 0)
    m1 = np.maximum(np.maximum(r1[:, :4, :4], r1[:, 2:, :4]), np.maximum(r1[:, :4, 2:], r1[:, 2:, 2:]))
    c2 = ref_conv(m1, w["w2"])
    assert_fp16_close(y[0], 1 / (1 + np.exp(-c2)))


def test_a_gemm_with_a_zero_bias_adds_nothing_after_another_op():
    # the classifier of a freshly built torchvision network: its bias all zeros
    rng = np.random.default_rng(12)
    w = rng.uniform(-1, 1, (32, 64)).astype(np.float32)
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Gemm", ["r", "w", "b"], ["y"], transB=1, name="fc")]
    model = model_of(nodes, [tensor("x", [1, 64])], [tensor("y", [1, 32])], {"w": w, "b": np.zeros(32, np.float32)})
    compiled = ro.import_model(model)
    assert compiled.placement == {"relu": "npu", "fc": "npu"} and len(compiled.partitions) == 1
    x = rng.uniform(-1, 1, (1, 64)).astype(np.float32)
    assert_fp16_close(compiled.run([x])[0], np.maximum(x, 0).astype(np.float64) @ w.T)


def test_an_average_over_pads_it_does_not_count_runs_on_the_npu():
    # ONNX's default count_include_pad=0 averages the image's pixels only; the PPU divides by
    # the whole window, and a product by each window's size over its count corrects it
    rng = np.random.default_rng(6)
    model = model_of([helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                       strides=[2, 2], name="avg")],
                     [tensor("x", [2, 5, 7, 7])], [tensor("y", [2, 5, 4, 4])], {})
    compiled = ro.import_model(model)
    assert compiled.placement == {"avg": "npu"}
    x = rng.uniform(-1, 1, (2, 5, 7, 7)).astype(np.float32)
    [y] = compiled.run([x])
    for n in range(2):
        assert_fp16_close(y[n], ref_pool(x[n].astype(np.float64), 3, 2, 1, average=True))


def test_a_gemm_with_every_attribute_and_a_broadcast_bias():
    rng = np.random.default_rng(5)
    a, b = rng.uniform(-1, 1, (6, 5)).astype(np.float32), rng.uniform(-1, 1, (7, 6)).astype(np.float32)
    c = rng.uniform(-1, 1, (1, 7)).astype(np.float32)
    model = model_of([helper.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=0.5, beta=2.0, transA=1, transB=1)],
                     [tensor("a", [6, 5])], [tensor("y", [5, 7])], {"b": b, "c": c})
    compiled = ro.import_model(model)
    assert compiled.placement == {"0": "npu"}
    [y] = compiled.run([a])
    want = 0.5 * (a.T.astype(np.float64) @ b.T) + 2.0 * c
    assert_fp16_close(y, want)


def test_an_integer_max_with_a_constant_reads_it_from_memory():
    # the SDP's register immediate is for fp16 only: an int8 constant is a tensor of it
    x = np.arange(-64, 64, dtype=np.int8).reshape(8, 16)
    model = model_of([helper.make_node("Max", ["x", "c"], ["y"], name="max")], [tensor("x", [8, 16], TensorProto.INT8)],
                     [tensor("y", [8, 16], TensorProto.INT8)], {"c": np.int8(5)})
    compiled = ro.import_model(model)
    assert compiled.placement == {"max": "npu"}
    np.testing.assert_array_equal(compiled.run([x])[0], np.maximum(x, 5))
    wide = model_of([helper.make_node("Max", ["x", "c"], ["y"], name="max")], [tensor("x", [8, 16], TensorProto.INT16)],
                    [tensor("y", [8, 16], TensorProto.INT16)], {"c": np.int16(-1)})
    assert ro.import_model(wide).placement == {"max": "npu"}


# --- quantized ops on the integer paths ----------------------------------------------------------

def test_a_qlinear_conv_runs_on_the_uint8_path_within_one_step():
    rng = np.random.default_rng(8)
    x = rng.integers(0, 256, (1, 8, 6, 6)).astype(np.uint8)
    w = rng.integers(0, 256, (16, 8, 3, 3)).astype(np.uint8)
    bias = rng.integers(-2000, 2000, 16).astype(np.int32)
    params = {"xs": np.float32(0.02), "xz": np.uint8(120), "ws": np.float32(0.01), "wz": np.uint8(130),
              "ys": np.float32(0.4), "yz": np.uint8(100), "w": w, "b": bias}
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"],
                            kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="qconv")
    model = model_of([node], [tensor("x", [1, 8, 6, 6], TensorProto.UINT8)],
                     [tensor("y", [1, 16, 6, 6], TensorProto.UINT8)], params)
    compiled = ro.import_model(model)
    assert compiled.placement == {"qconv": "npu"}
    [y] = compiled.run([x])
    # the definition: the accumulator of the zero-point-shifted values plus the bias, times
    # xs ws / ys, rounded (half to even), plus yz, saturated
    acc = ref_conv(x[0].astype(np.float64) - 120, w.astype(np.float64) - 130, bias, pad=1)
    want = np.clip(np.rint(acc * (0.02 * 0.01 / 0.4)) + 100, 0, 255)
    # the DPU's multiplier is 15 bits and rounds half up: one step at most
    assert y.dtype == np.uint8 and np.abs(y[0].astype(int) - want).max() <= 1


def test_an_int8_matmul_integer_is_exact():
    rng = np.random.default_rng(9)
    a = rng.integers(-128, 128, (5, 70)).astype(np.int8)
    b = rng.integers(-128, 128, (70, 40)).astype(np.int8)
    model = model_of([helper.make_node("MatMulInteger", ["a", "b"], ["y"], name="mm")],
                     [tensor("a", [5, 70], TensorProto.INT8)], [tensor("y", [5, 40], TensorProto.INT32)], {"b": b})
    compiled = ro.import_model(model)
    assert compiled.placement == {"mm": "npu"}
    [y] = compiled.run([a])
    np.testing.assert_array_equal(y, a.astype(np.int64) @ b.astype(np.int64))


# --- refusals ----------------------------------------------------------------------------------

def relu_model(shape):
    return model_of([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", shape)], [tensor("y", shape)], {})


@pytest.mark.parametrize("make, message", [
    (lambda: relu_model(["batch", 4]), "value 'x' has a dynamic dimension 0 (batch)"),
    (lambda: model_of([helper.make_node("Erf", ["x"], ["y"], name="e")], [tensor("x", [2, 4])],
                      [tensor("y", [2, 4])], {}), "node e: operator Erf is none the importer maps"),
    (lambda: model_of([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[0, 1], name="p")],
                      [tensor("x", [1, 1, 4, 4])], [tensor("y", [1, 1, 3, 3])], {}),
     "node p (MaxPool): strides [0, 1] must be positive"),
    (lambda: relu_model([1 << 14, 1 << 13]), "holds 134217728 elements, more than the 67108864"),
    (lambda: relu_model([2, 4]).SerializeToString()[:-7], "no ONNX model"),
    (lambda: b"not a model at all", "no ONNX model"),
])
def test_a_model_the_importer_cannot_take_is_one_error_naming_what(make, message):
    with pytest.raises(ro.ModelError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        ro.import_model(make())


def test_inputs_of_another_shape_or_missing_are_refused_by_name():
    compiled = ro.import_model(relu_model([2, 4]))
    with pytest.raises(ro.ModelError, match=r"input 'x' is \(3, 4\), the model's is \(2, 4\)"):
        compiled.run({"x": np.zeros((3, 4), np.float32)})
    with pytest.raises(ro.ModelError, match="the model reads input 'x': give it"):
        compiled.run({})


# --- the backend's interface -------------------------------------------------------------------

def test_the_backend_prepares_runs_and_places():
    model = relu_model([2, 8])
    rep = backend.prepare(model, "CPU")
    assert rep.placement == {"0": "npu"}
    x = np.array([[-1, 2, -3, 4, -5, 6, -7, 8]] * 2, np.float32)
    np.testing.assert_array_equal(rep.run([x])[0], np.maximum(x, 0))
    np.testing.assert_array_equal(backend.run_model(model, [x])[0], np.maximum(x, 0))
    assert backend.supports_device("CPU") and not backend.supports_device("CUDA")
    node = helper.make_node("Relu", ["x"], ["y"])
    np.testing.assert_array_equal(backend.run_node(node, [x])[0], np.maximum(x, 0))


# --- regcmd-onnx --------------------------------------------------------------------------------

def regcmd_onnx(*args):
    tool = pathlib.Path(regcmd.__file__).resolve().parents[2] / "tools" / "regcmd-onnx"
    return subprocess.run([str(tool), *map(str, args)], capture_output=True, text=True)


def test_a_fire_module_concatenates_in_place_and_a_concat_of_the_input_runs_on_the_host():
    """SqueezeNet's fire module: the two expand convs write the Concat's halves (no copy, no
    task of its own), the conv after it reads all 40 channels; then a Concat of the model's
    input, which no op writes in place, on the host."""
    rng = np.random.default_rng(8)
    w = {k: np.asarray(v, dtype=np.float32) for k, v in {
        "ws": rng.standard_normal((8, 16, 1, 1)) * 0.3, "bs": rng.standard_normal(8) * 0.1,
        "w1": rng.standard_normal((16, 8, 1, 1)) * 0.3, "w3": rng.standard_normal((24, 8, 3, 3)) * 0.2,
        "wz": rng.standard_normal((4, 40, 1, 1)) * 0.3}.items()}
    nodes = [helper.make_node("Conv", ["x", "ws", "bs"], ["s"], kernel_shape=[1, 1], name="squeeze"),
             helper.make_node("Relu", ["s"], ["sr"], name="squeeze_relu"),
             helper.make_node("Conv", ["sr", "w1"], ["e1"], kernel_shape=[1, 1], name="expand1"),
             helper.make_node("Conv", ["sr", "w3"], ["e3"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="expand3"),
             helper.make_node("Concat", ["e1", "e3"], ["y"], axis=1, name="concat"),
             helper.make_node("Conv", ["y", "wz"], ["z"], kernel_shape=[1, 1], name="next"),
             helper.make_node("Concat", ["z", "x"], ["out"], axis=1, name="concat_input")]
    model = model_of(nodes, [tensor("x", [1, 16, 6, 6])], [tensor("out", [1, 20, 6, 6])], w)
    compiled = ro.import_model(model)
    assert compiled.placement["concat"] == "npu" and compiled.placement["concat_input"] == "host"
    assert compiled.reasons["concat_input"] == "a Concat of a value from the host: no op writes it in place"
    [stats] = compiled.stats()
    assert stats["tasks"] == 4  # the four convs: the concat writes nothing of its own
    x = rng.uniform(-1, 1, (1, 16, 6, 6)).astype(np.float32)
    [got] = compiled.run({"x": x})
    s_ = np.maximum(ref_conv(x[0].astype(np.float64), w["ws"], w["bs"]), 0)
    y = np.concatenate([ref_conv(s_, w["w1"]), ref_conv(s_, w["w3"], pad=1)])
    want = np.concatenate([ref_conv(y, w["wz"]), x[0]])[None]
    assert_fp16_close(got, want)


def test_regcmd_onnx_prints_writes_and_runs(tmp_path):
    model, _ = split_model(np.random.default_rng(4))
    path = tmp_path / "split.onnx"
    onnx.save(model, path)
    shown = regcmd_onnx(path)
    assert shown.returncode == 0, shown.stderr
    assert "dilated: host (" in shown.stdout and "partition 1: 2 nodes" in shown.stdout
    ran = regcmd_onnx(path, "--run", "--seed", "2")
    assert ran.returncode == 0 and "y: ok (max abs error" in ran.stdout, ran.stdout + ran.stderr
    # --top: the K largest outputs with their indices (a classifier's classes) and the time
    x = np.random.default_rng(6).uniform(-1, 1, (1, 4, 6, 6)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    top = regcmd_onnx(path, "--run", "--top", "3", "--input", f"x={tmp_path / 'x.npy'}")
    assert top.returncode == 0, top.stdout + top.stderr
    assert re.search(r"^run: [0-9.]+ ms on the emulated device and the host \(2 submits\)$", top.stdout, re.M)
    line = next(text for text in top.stdout.splitlines() if text.startswith("y top-3: "))
    shown = [(int(i), float(v.strip("()"))) for i, v in (item.split(" ") for item in line[len("y top-3: "):].split(", "))]
    want = ro.import_model(model, npu=False).run({"x": x})[0].reshape(-1).astype(np.float64)
    assert len({i for i, _ in shown}) == 3 and [v for _, v in shown] == sorted((v for _, v in shown), reverse=True)
    for i, v in shown:  # the NPU's values, among the reference's three largest within fp16's bound
        assert abs(v - want[i]) <= 2e-3 and want[i] >= np.sort(want)[-3] - 4e-3
    written = regcmd_onnx(path, "--format", "bin", "-o", tmp_path / "out")
    assert written.returncode == 0, written.stderr
    manifest = json.loads((tmp_path / "out" / "model.json").read_text())
    assert [p["nodes"] for p in manifest["partitions"]] == [["conv1"], ["conv2", "sigmoid"]]  # relu1 folded into conv1
    first = manifest["partitions"][0]
    entries = np.fromfile(tmp_path / "out" / first["program"], dtype="<u8")
    assert len(entries) > 0 and all(int(e) >> 48 != 0 for e in entries[:4])
    blob = (tmp_path / "out" / "weights.bin").read_bytes()
    weight = first["buffers"]["weight"]
    assert weight["blob_offset"] is not None and weight["blob_offset"] + weight["bytes"] <= len(blob)
    assert {"direction": "input", "value": "x"}.items() <= first["tensors"][0].items()


def test_regcmd_onnx_refuses_bad_input_in_one_line(tmp_path):
    (tmp_path / "bad.onnx").write_bytes(b"\x08\x07garbage")
    for args in ([tmp_path / "bad.onnx"], [tmp_path / "missing.onnx"], [tmp_path / "bad.onnx", "--format", "bin"]):
        r = regcmd_onnx(*args)
        assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith("regcmd-onnx: ")


# --- the model fuzz, briefly (60 s in the full test command) -----------------------------------

def test_mutated_models_end_in_errors_or_outputs():
    sys.path.insert(0, str(HERE.parent / "onnx"))
    try:
        import fuzz_models
    finally:
        sys.path.pop(0)
    outcomes = fuzz_models.fuzz(3, seed=11)
    assert outcomes["ran"] > 0 and sum(outcomes.values()) > 100


# --- a QDQ model ---------------------------------------------------------------------------------

def test_quantized_average_pools_run_as_depthwise_convs_of_unit_weights():
    """DequantizeLinear -> AveragePool 2x2 / GlobalAveragePool -> QuantizeLinear on uint8: a
    depthwise QLinearConv of weights 1 at scale 1/(kh kw), within one step of the definition
    (the PPU's int8 average stays refused: no source gives its arithmetic)."""
    rng = np.random.default_rng(12)
    params = {"s_in": np.float32(0.05), "z_in": np.uint8(128), "s_a": np.float32(0.04), "z_a": np.uint8(120),
              "s_g": np.float32(0.01), "z_g": np.uint8(100)}
    nodes = [helper.make_node("DequantizeLinear", ["x", "s_in", "z_in"], ["xd"], name="dq"),
             helper.make_node("AveragePool", ["xd"], ["a"], kernel_shape=[2, 2], strides=[2, 2], name="avg"),
             helper.make_node("QuantizeLinear", ["a", "s_a", "z_a"], ["aq"], name="q_avg"),
             helper.make_node("GlobalAveragePool", ["xd"], ["g"], name="gap"),
             helper.make_node("QuantizeLinear", ["g", "s_g", "z_g"], ["gq"], name="q_gap")]
    model = model_of(nodes, [tensor("x", [1, 16, 6, 6], TensorProto.UINT8)],
                     [tensor("aq", [1, 16, 3, 3], TensorProto.UINT8), tensor("gq", [1, 16, 1, 1], TensorProto.UINT8)],
                     params)
    compiled = ro.import_model(model)
    assert compiled.placement == {"dq": "npu", "avg": "npu", "q_avg": "npu", "gap": "npu", "q_gap": "npu"}
    assert compiled.reasons["q_avg"] == "folded into avg" and compiled.reasons["q_gap"] == "folded into gap"
    x = rng.integers(0, 256, (1, 16, 6, 6)).astype(np.uint8)
    aq, gq = compiled.run([x])
    real = (x[0].astype(np.float64) - 128) * 0.05
    avg = real.reshape(16, 3, 2, 3, 2).mean(axis=(2, 4))
    want_a = np.clip(np.rint(avg / np.float64(np.float32(0.04))) + 120, 0, 255)
    want_g = np.clip(np.rint(real.mean(axis=(1, 2)) / np.float64(np.float32(0.01))) + 100, 0, 255)
    assert np.abs(aq[0].astype(np.int64) - want_a).max() <= 1
    assert np.abs(gq[0, :, 0, 0].astype(np.int64) - want_g).max() <= 1
    assert np.abs(aq[0].astype(np.int64) - want_a).mean() < 0.5  # mostly exact


def test_a_qdq_conv_relu_runs_as_one_quantized_conv():
    rng = np.random.default_rng(10)
    wq = rng.integers(-127, 128, (8, 4, 3, 3)).astype(np.int8)
    b = (rng.standard_normal(8) * 0.5).astype(np.float32)
    params = {"s_in": np.float32(0.02), "z_in": np.int8(3), "s_w": np.float32(0.005), "z_w": np.int8(0), "wq": wq,
              "b": b, "s_out": np.float32(0.05), "z_out": np.int8(-10)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "s_in", "z_in"], ["xq"], name="q_in"),
             helper.make_node("DequantizeLinear", ["xq", "s_in", "z_in"], ["xd"], name="dq_in"),
             helper.make_node("DequantizeLinear", ["wq", "s_w", "z_w"], ["wd"], name="dq_w"),
             helper.make_node("Conv", ["xd", "wd", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("QuantizeLinear", ["r", "s_out", "z_out"], ["yq"], name="q_out"),
             helper.make_node("DequantizeLinear", ["yq", "s_out", "z_out"], ["y"], name="dq_out")]
    model = model_of(nodes, [tensor("x", [1, 4, 5, 5])], [tensor("y", [1, 8, 5, 5])], params)
    compiled = ro.import_model(model)
    # the input's quantization and the output's dequantization are the host's, at the boundaries
    assert compiled.placement == {"q_in": "host", "dq_in": "npu", "dq_w": "npu", "conv": "npu", "relu": "npu",
                                  "q_out": "npu", "dq_out": "host"}
    assert compiled.reasons["relu"] == "folded into conv"
    x = rng.uniform(-1, 1, (1, 4, 5, 5)).astype(np.float32)
    [y] = compiled.run([x])
    # the definitions in float64: quantize x (half to even, saturate), dequantize, convolve
    # with the dequantized weights and the bias, ReLU, quantize and dequantize the result
    xq = np.clip(np.rint(x[0] / np.float64(0.02)) + 3, -128, 127)
    conv = ref_conv((xq - 3) * np.float64(0.02), wq.astype(np.float64) * np.float64(0.005), b, pad=1)
    yq = np.clip(np.rint(np.maximum(conv, 0) / np.float64(0.05)) - 10, -128, 127)
    # one step of the output's scale: the bias is quantized to x_scale w_scale, and the DPU
    # requantizes with a 15-bit multiplier
    assert np.abs(y[0] / np.float32(0.05) - (yq + 10)).max() <= 1 + 1e-3


def test_attention_rows_softmax_layer_norm_and_reductions_run_on_the_npu():
    """Softmax over rows of 40 (held in 64, the padding masked), LayerNormalization over rows
    of 64 with Scale and B, and ReduceSum / ReduceMean / ReduceMax over the last axis: one
    partition, each against the definition in float64 within the NPU's fp16 bound."""
    rng = np.random.default_rng(36)
    scale = (1 + 0.3 * rng.standard_normal(64)).astype(np.float32)
    bias = (0.2 * rng.standard_normal(64)).astype(np.float32)
    nodes = [
        helper.make_node("Softmax", ["s"], ["p"]),
        helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["n"], epsilon=1e-5),
        helper.make_node("ReduceSum", ["x", "axes"], ["sum"]),
        helper.make_node("ReduceMean", ["x"], ["mean"], axes=[-1], keepdims=0),
        helper.make_node("ReduceMax", ["s"], ["max"], axes=[1]),
    ]
    inits = [numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(bias, "bias"),
             numpy_helper.from_array(np.array([-1], dtype=np.int64), "axes")]
    graph = helper.make_graph(nodes, "rows", [tensor("s", [6, 40]), tensor("x", [4, 64])],
                              [tensor("p", [6, 40]), tensor("n", [4, 64]), tensor("sum", [4, 1]), tensor("mean", [4]),
                               tensor("max", [6, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    s = (3 * rng.standard_normal((6, 40))).astype(np.float16).astype(np.float32)
    x = (1.5 + rng.standard_normal((4, 64))).astype(np.float16).astype(np.float32)
    rep = backend.prepare(model)
    assert set(rep.placement.values()) == {"npu"}, rep.placement
    p, n, total, mean, top = rep.run([s, x])
    d = s.astype(np.float64)
    e = np.exp(d - d.max(1, keepdims=True))
    assert np.abs(p - e / e.sum(1, keepdims=True)).max() < 1e-3
    xd = x.astype(np.float64)
    centred = xd - xd.mean(1, keepdims=True)
    want = centred / np.sqrt((centred ** 2).mean(1, keepdims=True) + 1e-5) * scale + bias
    assert np.abs(n - want).max() < 8e-3
    assert np.abs(total[:, 0] - xd.sum(1)).max() < np.abs(xd).sum(1).max() * 2 ** -10
    assert np.abs(mean - xd.mean(1)).max() < np.abs(xd).mean(1).max() * 2 ** -9
    assert np.abs(top[:, 0] - d.max(1)).max() < 2 ** -7 * np.abs(d).max()
