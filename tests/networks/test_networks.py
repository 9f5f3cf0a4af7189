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


def test_a_network_on_the_rocket_node_says_what_its_kernel_refuses():
    """rocket turns ping-pong on for every task, which an SDP op (a residual Add) cannot run
    with: the partition holding one is refused with the rule, nothing runs wrong."""
    _, model = _exported("resnet18")
    compiled = regcmd.onnx.import_model(model)
    rocket = regcmd.open_device("/dev/accel/accel0", emulated=True)
    with pytest.raises(regcmd.RuleError) as refused:
        compiled.run({"x": np.zeros((1, 3, 224, 224), np.float32)}, rocket)
    assert refused.value.rule == "rocket-pingpong"
