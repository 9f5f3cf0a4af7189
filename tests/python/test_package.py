"""The Python package against what does not come from it: the golden programs the C++ tests
pin (tests/data/golden), products evaluated by hand, and the rule ids of the catalogue."""

import pathlib

import numpy as np
import pytest

import regcmd

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden"


def golden_entries(name):
    """The entries of a golden program: the hex word that starts each line that is no comment."""
    lines = (GOLDEN / (name + ".txt")).read_text().splitlines()
    return [int(line.split()[0], 16) for line in lines if line.startswith("0x")]


@pytest.mark.parametrize(
    "golden, kind, spec",
    [
        ("matmul_fp16_fp32_7x100x50", "matmul", dict(M=7, K=100, N=50, dtype="fp16", out_dtype="fp32")),
        ("matmul_int8_int32_3x70x40", "matmul", dict(M=3, K=70, N=40, dtype="int8", out_dtype="int32")),
        ("matmul_fp16_fp32_4x64x64_surface", "matmul",
         dict(M=4, K=64, N=64, dtype="fp16", out_dtype="fp32", layout="surface")),
        ("ew_add_fp16_element_flat", "ew", dict(op="add", M=8, N=40, layout="flat")),
        ("ew_max_int8_channel_surface", "ew", dict(op="max", dtype="int8", M=8, N=40, operand="per-channel")),
        ("ew_mul_fp16_element_flat_300x500", "ew", dict(op="mul", M=300, N=500, layout="flat")),
    ],
)
def test_a_spec_as_keywords_builds_the_golden_program(golden, kind, spec):
    program = regcmd.build(kind, **spec)
    assert program.kind == kind
    assert program.entries.dtype == np.uint64
    assert [int(e) for e in program.entries] == golden_entries(golden)
    assert program.hex().split() == ["0x%016x" % e for e in golden_entries(golden)]


def test_a_matmul_runs_on_the_device_and_equals_the_hand_evaluated_product():
    # A[m][k] = (m + 1) / 4, B[k][n] = (k + n) % 4 / 2: each run of four k sums to 3, so
    # C[m][n] = 16 * 3 * (m + 1) / 4 = 12 (m + 1), exact in fp32.
    program = regcmd.build("matmul", M=4, K=64, N=32, dtype="fp16", out_dtype="fp32")
    a = np.repeat((np.arange(4, dtype=np.float32)[:, None] + 1) / 4, 64, axis=1)
    b = ((np.arange(64)[:, None] + np.arange(32)[None, :]) % 4 / 2).astype(np.float32)
    device = regcmd.open_device()
    c = device.run(program, a, b)
    assert c.shape == (4, 32)
    assert (c == 12.0 * (np.arange(4)[:, None] + 1)).all()


def test_a_plan_splits_k_and_sums_its_slices():
    # K = 12000 is beyond one op (10752): the plan's slices write fp32 partials the host sums
    p = regcmd.build("plan", M=2, K=12000, N=4, dtype="fp16", out_dtype="fp32")
    assert p.task_count > 1
    a = np.ones((2, 12000), np.float32)
    b = np.tile((np.arange(4, dtype=np.float32) + 1) / 1024, (12000, 1))
    c = regcmd.open_device().run(p, a, b)
    np.testing.assert_array_equal(c, np.tile(12000 * (np.arange(4) + 1) / 1024, (2, 1)))


def test_a_pooling_runs_on_an_nhwc_image():
    # x[h][w][c] = 4 h + w + 16 c: a 2x2 window's max is its bottom-right pixel
    p = regcmd.build("pool", op="max", H=4, W=4, C=8, kernel=2)
    h, w, c = np.meshgrid(np.arange(4), np.arange(4), np.arange(8), indexing="ij")
    y = regcmd.open_device().run(p, (4 * h + w + 16 * c).astype(np.float32))
    i, j, k = np.meshgrid(np.arange(2), np.arange(2), np.arange(8), indexing="ij")
    np.testing.assert_array_equal(y, 4 * (2 * i + 1) + 2 * j + 1 + 16 * k)


def test_without_an_npu_the_device_is_the_emulated_one_in_this_process():
    device = regcmd.open_device(emulated=True)
    assert device.emulated
    assert device.driver == "rknpu"
    assert device.driver_version.startswith("rknpu 0.9.")
    rocket = regcmd.open_device("/dev/accel/accel0", emulated=True)
    assert rocket.driver == "rocket"


def test_a_broken_rule_is_a_rule_error_with_its_id():
    # fp16 with the template split: at most 16384 / K = 4 rows at K = 4096
    with pytest.raises(regcmd.RuleError) as caught:
        regcmd.build("matmul", M=4096, K=4096, N=32, dtype="fp16", out_dtype="fp32")
    assert caught.value.rule == "m-ceiling-fp16"
    assert "m-ceiling-fp16" in str(caught.value)


def test_a_refused_spec_is_a_spec_error_naming_the_keyword():
    with pytest.raises(regcmd.SpecError, match=r"--kernel does not apply to matmul \(a conv and pool option\)"):
        regcmd.build("matmul", M=4, K=64, N=32, kernel=3)
    with pytest.raises(regcmd.SpecError, match="unknown program kind 'gemm'"):
        regcmd.build("gemm", M=4)
    with pytest.raises(regcmd.SpecError, match="unknown keyword colour"):
        regcmd.build("ew", op="add", M=8, N=40, colour="red")
    with pytest.raises(regcmd.SpecError, match="-M takes"):
        regcmd.build("ew", op="add", M="many", N=40)
    with pytest.raises(regcmd.SpecError, match=r"--k-slice does not apply to one matmul program: build\('plan'"):
        regcmd.build("matmul", M=4, K=4096, N=32, dtype="fp16", out_dtype="fp32", k_slice=1024)
    assert regcmd.build("plan", M=4, K=4096, N=32, dtype="fp16", out_dtype="fp32", k_slice=1024).task_count == 4
    with pytest.raises(regcmd.SpecError, match="relu=False: leave it out"):
        regcmd.build("conv", H=8, W=8, C=16, out_channels=16, relu=False)
    device = regcmd.open_device(emulated=True)
    matmul = regcmd.build("matmul", M=4, K=64, N=32, dtype="fp16", out_dtype="fp32")
    with pytest.raises(regcmd.SpecError, match="a holds 3 elements, not 256"):
        device.run(matmul, np.zeros(3), np.zeros((64, 32)))
    with pytest.raises(regcmd.SpecError, match="this program reads b"):
        device.run(matmul, np.zeros((4, 64)))
    with pytest.raises(regcmd.SpecError, match="b does not apply: an activation reads one tensor"):
        device.run(regcmd.build("act", fn="relu", M=2, N=16), np.zeros((2, 16)), np.zeros((2, 16)))
    with pytest.raises(regcmd.SpecError, match="b does not apply: a pooling reads one image"):
        device.run(regcmd.build("pool", op="max", H=4, W=4, C=16), np.zeros(256), np.zeros(256))
    with pytest.raises(regcmd.SpecError, match="a matmul program does not run from Python: a fused chain runs as a graph"):
        device.run(regcmd.build("matmul", M=4, K=64, N=32, out_dtype="fp16", then="ew", op="add", operand="immediate",
                                value=1), np.zeros(1))


def test_stats_count_what_the_program_moves():
    # one fp16 -> fp32 task: A 4 x 64 x 2 bytes, B 64 x 32 x 2 read; C 4 x 32 x 4 written
    stats = regcmd.build("matmul", M=4, K=64, N=32, dtype="fp16", out_dtype="fp32").stats()
    assert stats["tasks"] == 1
    assert stats["submits"] == 1
    assert stats["writes"] == 4 * 32 * 4
    assert stats["macs"] == 4 * 64 * 32
    assert stats["bound_ns"] > 0


def test_an_int8_matmul_runs_to_int32_sums_evaluated_by_hand():
    # a = 1, b[k][n] = (k + n) % 3 - 1: 21 whole runs of (-1, 0, 1) sum to 0 and k = 63 adds
    # (63 + n) % 3 - 1, so C[m][n] = n % 3 - 1
    program = regcmd.build("matmul", M=2, K=64, N=48, dtype="int8", out_dtype="int32")
    a = np.ones((2, 64), dtype=np.int8)
    b = ((np.arange(64)[:, None] + np.arange(48)[None, :]) % 3 - 1).astype(np.int8)
    c = regcmd.open_device().run(program, a, b)
    assert c.dtype == np.int32
    assert (c == np.arange(48) % 3 - 1).all()


def test_element_wise_ops_and_activations_run_with_their_operands():
    device = regcmd.open_device()
    a = (np.arange(32, dtype=np.float32) / 4 - 4).reshape(2, 16)  # -4 to 3.75 in quarters: exact in fp16
    added = device.run(regcmd.build("ew", op="add", M=2, N=16, layout="flat"), a, np.full((2, 16), 0.5))
    assert (added == a + 0.5).all()
    per_channel = device.run(regcmd.build("ew", op="max", M=2, N=16, operand="per-channel"), a, np.arange(16) - 8.0)
    assert (per_channel == np.maximum(a, np.arange(16) - 8.0)).all()
    immediate = device.run(regcmd.build("ew", op="add", M=2, N=16, operand="immediate", value=1.5), a)
    assert (immediate == a + 1.5).all()
    relu = device.run(regcmd.build("act", fn="relu", M=2, N=16), a)
    assert (relu == np.maximum(a, 0)).all()
    i8 = np.array([[-128, -1, 0, 1, 127] + [5] * 11, [3] * 16], dtype=np.int8)
    clipped = device.run(regcmd.build("act", fn="clip", dtype="int8", M=2, N=16, lo=-2, hi=4), i8)
    assert clipped.dtype == np.int8
    assert (clipped == np.clip(i8, -2, 4)).all()


def test_a_conv_runs_on_nhwc_arrays_and_sums_its_windows():
    # all ones, 3 x 3 SAME over 4 x 4 x 16: a window holds 9, 6 or 4 taps of 16 channels
    program = regcmd.build("conv", dtype="fp16", H=4, W=4, C=16, out_channels=16, kernel=3, pad="same")
    device = regcmd.open_device()
    y = device.run(program, np.ones((4, 4, 16)), np.ones((16, 3, 3, 16)))
    assert y.shape == (4, 4, 16)
    taps = np.array([[4, 6, 6, 4], [6, 9, 9, 6], [6, 9, 9, 6], [4, 6, 6, 4]])
    assert (y == 16.0 * taps[:, :, None]).all()


def test_a_quantized_conv_requantizes_by_its_scales_and_adds_its_bias():
    # scales 0.5 x 0.25 / 0.125: the requantization multiplies by exactly 1, so y = 16 + bias
    program = regcmd.build("conv", dtype="int8", H=2, W=2, C=16, out_channels=16, bias=True,
                           input_scale=0.5, weight_scale=0.25, output_scale=0.125)
    bias = np.arange(16, dtype=np.int32) - 8
    y = regcmd.open_device().run(program, np.ones((2, 2, 16), dtype=np.int8), np.ones((16, 1, 1, 16), dtype=np.int8),
                                 bias=bias)
    assert y.dtype == np.int8
    assert (y == 16 + bias).all()


def regcmd_gen(*args):
    """regcmd-gen's hex output (REGCMD_GEN: the tool as built), one int a line."""
    import os
    import subprocess
    tool = os.environ.get("REGCMD_GEN")
    if not tool:
        pytest.skip("REGCMD_GEN names no regcmd-gen")
    out = subprocess.run([tool, *args], check=True, capture_output=True, text=True).stdout
    return [int(line.split()[0], 16) for line in out.splitlines() if line.startswith("0x")]


EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "graphs"


@pytest.mark.parametrize("name", ["cnn.graph", "ffn.graph"])
def test_a_graph_files_text_builds_the_program_regcmd_gen_builds(name):
    # regcmd-gen writes the program bound to its default IOVAs: the slots' entries differ
    program = regcmd.graph((EXAMPLES / name).read_text())
    assert program.kind == "graph"
    written = regcmd_gen("graph", str(EXAMPLES / name))
    addresses = {entry for entry, _, _, _ in program.slots}
    assert len(written) == len(program.entries)
    assert [int(e) for i, e in enumerate(program.entries) if i not in addresses] == [
        e for i, e in enumerate(written) if i not in addresses]
    assert all(int(program.entries[i]) & 0xffff == written[i] & 0xffff for i in addresses)


def test_a_graph_names_the_line_that_is_wrong():
    with pytest.raises(regcmd.SpecError, match="line 2: matmul needs -M, -K and -N"):
        regcmd.graph("# two ops\ny = matmul x w -M 4\n")
    with pytest.raises(regcmd.RuleError, match="line 2: ") as caught:
        regcmd.graph("a = act x --fn relu -M 1 -N 16\ny = act a --fn sigmoid --dtype int8 -M 1 -N 16\n")
    assert caught.value.rule == "act-lut-precision"


def test_a_graph_runs_with_its_tensors_by_name():
    device = regcmd.open_device()
    program = regcmd.graph("h = ew x y --op add -M 2 -N 16 --layout flat\n"
                           "o = act h --fn relu -M 2 -N 16\n")
    x = (np.arange(32, dtype=np.float32) / 4 - 4).reshape(2, 16)
    out = device.run_graph(program, {"x": x, "y": np.full((2, 16), 0.5)})
    assert list(out) == ["o"]
    assert (out["o"] == np.maximum(x + 0.5, 0)).all()
    # ones through a 3 x 3 SAME conv (window sums 4, 6 or 9 taps x 16 channels), then a 2 x 2
    # max pool: each 2 x 2 block of the 4 x 4 map holds an interior 9
    cnn = regcmd.graph("c = conv image k --in fp16 -H 4 -W 4 -C 16 --out-channels 16 --kernel 3 --pad same\n"
                       "p = pool c --op max -H 4 -W 4 -C 16\n")
    pooled = device.run_graph(cnn, {"image": np.ones((4, 4, 16)), "k": np.ones((16, 3, 3, 16))})["p"]
    assert pooled.shape == (2, 2, 16)
    assert (pooled == 144).all()
    with pytest.raises(regcmd.SpecError, match="the graph reads 'y': give it in inputs"):
        device.run_graph(program, {"x": x})
    with pytest.raises(regcmd.SpecError, match="the graph reads no input 'z'"):
        device.run_graph(program, {"x": x, "y": x, "z": x})
