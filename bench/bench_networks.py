"""Whole networks as regcmd.onnx compiles them (torchvision's ResNet-18, MobileNetV2 and
SqueezeNet 1.1, exported as tests/networks does): per network the partitions and submits, the
tasks, the DMA traffic of its programs against the network's minimum (every weight read once,
every activation moved once, fp16) and against the floor of running it layer by layer (each
intermediate also read back once), and the roofline bound on RK3588, one core and three.
Counts from the programs' registers (docs/cost.md): exact for the programs as built.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_networks.py
"""

import io
import sys

import numpy as np
import onnx
import torch
import torchvision

import regcmd.onnx

NETWORKS = {"ResNet-18": "resnet18", "MobileNetV2": "mobilenet_v2", "SqueezeNet 1.1": "squeezenet1_1"}
TRAFFIC_TARGET = 1.5  # x the minimum (issue 35)


def exported(name):
    torch.manual_seed(0)
    net = getattr(torchvision.models, name)(weights=None)
    net.eval()  # the statistics do not change the programs
    buffer = io.BytesIO()
    torch.onnx.export(net, torch.randn(1, 3, 224, 224), buffer, opset_version=13, input_names=["x"])
    return onnx.load_from_string(buffer.getvalue())


def minimum_bytes(compiled, model):
    """In fp16: every weight once and every activation once (the weights of the Convs and
    Gemms, the input, each value a partition writes, a renamed or concatenated one once); and
    the floor of a network run layer by layer, each intermediate written and read back once."""
    fp16 = 2
    weighted = {n.input[1] for n in model.graph.node if n.op_type in ("Conv", "Gemm")}
    weights = sum(int(np.prod(t.dims)) for t in model.graph.initializer if t.name in weighted)
    inputs = sum(int(np.prod(compiled.infos[name].shape)) for name in compiled.input_names)
    outputs = sum(int(np.prod(compiled.infos[name].shape)) for name in compiled.output_names)
    joined = {n.output[0] for n in model.graph.node if n.op_type == "Concat"}  # its parts' bytes
    written = 0
    for p in compiled.partitions:
        seen = set()
        for name, placed in p.placed.items():
            if placed.names[0] not in seen and name not in joined:
                seen.add(placed.names[0])
                written += int(np.prod(compiled.infos[name].shape))
    once = weights + inputs + written
    return once * fp16, (once + written - outputs) * fp16


def main():
    rows = []
    print(f"{'network':16} {'parts':>5} {'submits':>7} {'tasks':>5} {'traffic MB':>10} {'once MB':>8} "
          f"{'ratio':>5} {'layered MB':>10} {'ratio':>5} {'bound 1 core us':>15} {'3 cores us':>10}")
    for label, name in NETWORKS.items():
        model = exported(name)
        compiled = regcmd.onnx.import_model(model)
        stats = compiled.stats()
        traffic = sum(s["traffic"] for s in stats)
        once, layered = minimum_bytes(compiled, model)
        one = sum(s["bound_ns"] for s in stats) / 1000
        three = sum(s["bound_ns_three_cores"] for s in stats) / 1000
        submits = sum(s["submits"] for s in stats)
        print(f"{label:16} {len(stats):>5} {submits:>7} {sum(s['tasks'] for s in stats):>5} {traffic / 1e6:>10.1f} "
              f"{once / 1e6:>8.1f} {traffic / once:>5.2f} {layered / 1e6:>10.1f} {traffic / layered:>5.2f} "
              f"{one:>15.0f} {three:>10.0f}")
        rows.append((label, "submits (one per partition)", f"{submits} ({len(stats)} partitions)", "1 per partition",
                     "hit" if submits == len(stats) else "MISSED"))
        rows.append((label, "traffic / weights and activations once", f"{traffic / once:.2f}", f"<= {TRAFFIC_TARGET}",
                     "hit" if traffic / once <= TRAFFIC_TARGET else "MISSED"))
        rows.append((label, "traffic / layer by layer (intermediates written and read once)", f"{traffic / layered:.2f}",
                     "", ""))
        rows.append((label, "bound on RK3588, 1 core / 3 cores, us", f"{one:.0f} / {three:.0f}", "", ""))
    for label, what, value, target, verdict in rows:
        print("\t".join(["ROW", f"networks: {label}", what, value, target, verdict]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
