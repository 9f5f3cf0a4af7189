"""Whole networks from torchvision, exported to ONNX in the test, compiled by regcmd.onnx and run
on the emulated device, against PyTorch's own fp32 output (PyTorch shares no code with regcmd).

Each network: torchvision's definition with weights=None and torch.manual_seed(0); its
batch-norm statistics calibrated first on three seeded batches of four in train mode (at
torchvision's initial statistics MobileNetV2's logits are ~1e-9, below fp16's smallest normal;
trained networks carry statistics like these), then eval mode, 1x3x224x224, opset 13. Sixteen
seeded inputs: the logits' cosine similarity >= 0.999 on every input and the same top-1 class
on at least 15 of 16; top-5 overlap and the largest error relative to the logits' range are
printed (pytest -s). Every node runs on the NPU, the network in one submit. REGCMD_NETWORKS
selects networks by name (comma-separated)."""

import io
import os

import numpy as np
import onnx
import pytest
import torch
import torchvision

import regcmd
import regcmd.onnx

NETWORKS = ["resnet18", "mobilenet_v2", "squeezenet1_1"]
INPUTS = 16


def _selected():
    wanted = os.environ.get("REGCMD_NETWORKS")
    return [n for n in NETWORKS if not wanted or n in wanted.split(",")]


def _exported(name):
    torch.manual_seed(0)
    net = getattr(torchvision.models, name)(weights=None)
    net.train()
    with torch.no_grad():
        for _ in range(3):
            net(torch.randn(4, 3, 224, 224))
    net.eval()
    buffer = io.BytesIO()
    torch.onnx.export(net, torch.randn(1, 3, 224, 224), buffer, opset_version=13, input_names=["x"],
                      output_names=["logits"])
    return net, onnx.load_from_string(buffer.getvalue())


def _host_nodes(compiled):
    """Nodes that compute on the host (a constant folded at import computes nothing)."""
    return {key: compiled.reasons.get(key) for key, where in compiled.placement.items()
            if where == "host" and compiled.reasons.get(key) != regcmd.onnx.importer.CONSTANT_FOLDED}


@pytest.mark.parametrize("name", _selected())
def test_network_matches_pytorch(name):
    net, model = _exported(name)
    compiled = regcmd.onnx.import_model(model)
    stats = compiled.stats()
    host = _host_nodes(compiled)
    print(f"\n{name}: {len(compiled.placement)} nodes, {len(compiled.partitions)} partitions, "
          f"{sum(s['submits'] for s in stats)} submits, {sum(s['tasks'] for s in stats)} tasks, "
          f"{sum(s['traffic'] for s in stats)} bytes, bound {sum(s['bound_ns'] for s in stats) / 1000:.0f} us; "
          f"on the host: {sorted(set(host.values())) or 'nothing'}")
    # every node on the NPU, in one partition: the host converts the input and the output only
    assert not host and len(compiled.partitions) == 1 and stats[0]["submits"] == 1

    device = regcmd.open_device(emulated=True)
    generator = torch.Generator().manual_seed(1)
    cosines, top1, top5, relative = [], 0, [], 0.0
    for _ in range(INPUTS):
        x = torch.randn(1, 3, 224, 224, generator=generator)
        with torch.no_grad():
            want = net(x).numpy().astype(np.float64).reshape(-1)
        got = np.asarray(compiled.run({"x": x.numpy()}, device)[0], dtype=np.float64).reshape(-1)
        assert np.isfinite(got).all()
        cosines.append(float(got @ want / (np.linalg.norm(got) * np.linalg.norm(want))))
        top1 += int(np.argmax(got) == np.argmax(want))
        top5.append(len(set(np.argsort(got)[-5:]) & set(np.argsort(want)[-5:])))
        relative = max(relative, float(np.max(np.abs(got - want)) / (want.max() - want.min())))
    print(f"{name}: 1 - cosine at most {1 - min(cosines):.1e}, top-1 {top1}/{INPUTS}, top-5 overlap mean {np.mean(top5):.2f}/5 "
          f"(min {min(top5)}), max error / logits' range {relative:.2e}")
    assert min(cosines) >= 0.999
    assert top1 >= 15


def test_quantized_mobilenet_v2_matches_pytorch_within_one_step():
    """MobileNetV2 quantized by PyTorch (post-training static, qnnpack: per-tensor uint8
    activations, int8 weights; batch-norm statistics calibrated as above, the observers on four
    seeded batches of two), exported as QDQ: every convolution a QLinearConv on the CNA's uint8
    path (the int8 weights moved up by 128 with their zero point), the global average pool a
    depthwise QLinearConv of unit weights at scale 1/49; against PyTorch's quantized model on 16
    seeded inputs: the logits on the classifier's output grid within one step, the same top-1."""
    from torchvision.models.quantization import mobilenet_v2
    torch.manual_seed(0)
    net = mobilenet_v2(weights=None, quantize=False)
    net.train()
    with torch.no_grad():
        for _ in range(3):
            net(torch.randn(4, 3, 224, 224))
    net.eval()
    net.fuse_model()
    torch.backends.quantized.engine = "qnnpack"
    net.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
    torch.ao.quantization.prepare(net, inplace=True)
    calibration = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for _ in range(4):
            net(torch.randn(2, 3, 224, 224, generator=calibration))
    torch.ao.quantization.convert(net, inplace=True)
    buffer = io.BytesIO()
    torch.onnx.export(net, torch.randn(1, 3, 224, 224), buffer, opset_version=13, input_names=["x"],
                      output_names=["logits"])
    compiled = regcmd.onnx.import_model(onnx.load_from_string(buffer.getvalue()))
    stats = compiled.stats()
    host = _host_nodes(compiled)
    convs = [k for k, where in compiled.placement.items() if k.endswith("/Conv") or k.endswith("GlobalAveragePool")]
    assert convs and all(compiled.placement[k] == "npu" for k in convs)
    print(f"\nquantized mobilenet_v2: {len(compiled.partitions)} partitions, {sum(s['tasks'] for s in stats)} tasks; "
          f"on the host: {sorted({n.split('/')[-1].rstrip('_0123456789') for n in host})}")

    device = regcmd.open_device(emulated=True)
    generator = torch.Generator().manual_seed(1)
    step = net.classifier[1].scale
    steps, top1 = [], 0
    for _ in range(INPUTS):
        x = torch.randn(1, 3, 224, 224, generator=generator)
        with torch.no_grad():
            want = net(x).numpy().astype(np.float64).reshape(-1)
        got = np.asarray(compiled.run({"x": x.numpy()}, device)[0], dtype=np.float64).reshape(-1)
        steps.append(np.abs(got - want) / step)
        top1 += int(np.argmax(got) == np.argmax(want))
    steps = np.concatenate(steps)
    within = float(np.mean(steps <= 1 + 1e-3))
    print(f"quantized mobilenet_v2: {within:.4f} of the logits within one step ({step:.3g}), at most "
          f"{steps.max():.2f} steps, top-1 {top1}/{INPUTS}")
    assert within >= 0.99
    assert top1 >= 15


def test_the_rocket_node_says_what_its_kernel_refuses_of_each_network():
    """The mainline rocket kernel turns ping-pong on for every task, which an SDP op (a
    residual Add) cannot run with, and ends a task only on a DPU interrupt, which a PPU
    pooling does not raise: each network's program is refused with the rule it breaks before
    anything runs (on the rknpu node they run, above)."""
    rocket = regcmd.open_device("/dev/accel/accel0", emulated=True)
    x = {"x": np.zeros((1, 3, 224, 224), np.float32)}
    for name, rule in (("resnet18", "rocket-pingpong"), ("squeezenet1_1", "rocket-interrupt")):
        compiled = regcmd.onnx.import_model(_exported(name)[1])
        with pytest.raises(regcmd.RuleError) as refused:
            compiled.run(x, rocket)
        assert refused.value.rule == rule, name
