"""regcmd-onnx MODEL.onnx: where each node of an ONNX model runs and what each NPU partition
costs; its programs and packed weights written out (--format bin|json|cpp); or the model
run on the device against its host reference (--run). docs/onnx.md has the formats."""

import argparse
import json
import os
import sys
import time

import numpy as np

from .. import _regcmd
from .host_ops import Unsupported
from .importer import ModelError, import_model
from .tolerance import close

BLOB_ALIGN = 64  # each buffer image starts on 64 bytes in the weights blob


def _parser():
    p = argparse.ArgumentParser(
        prog="regcmd-onnx",
        description="Import an ONNX model into regcmd programs: print where each node runs and each NPU "
                    "partition's cost; write the programs and their packed weights; or run it on the device.")
    p.add_argument("model", help="the ONNX file ('-': standard input)")
    p.add_argument("--format", choices=("text", "bin", "json", "cpp"), default="text",
                   help="text: the placement and the costs (default); bin: each partition's entries "
                        "(little-endian u64), the weights blob and model.json; json: the entries decoded instead; "
                        "cpp: one C++ header of every partition as a constexpr program, and the weights blob")
    p.add_argument("-o", "--output", help="the directory bin, json and cpp write into (made if missing)")
    p.add_argument("--name", default="model", help="cpp: the header's name and its namespace (default: model)")
    p.add_argument("--run", action="store_true",
                   help="run the model on the device (the NPU node, else the emulated one) and check every "
                        "output against the host's reference")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="with --run: an input's values (default: seeded random ones)")
    p.add_argument("--seed", type=int, default=0, help="with --run: the random inputs' seed (default 0)")
    p.add_argument("--top", type=int, default=0, metavar="K",
                   help="with --run: each output's K largest values and their indices (a classifier's top-K "
                        "classes), and the run's time")
    p.add_argument("--exp-range", metavar="LO,HI", help="the inputs Exp's table covers (default -16,4)")
    return p


def _fail(message, status=2):
    print(f"regcmd-onnx: {message}", file=sys.stderr)
    sys.exit(status)


def _model_bytes(path):
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        _fail(f"{path}: {e.strerror}")


def _partition_images(model):
    """Per partition: its program, and the bytes of each buffer with its constants packed."""
    for p in model.partitions:
        yield p, _regcmd.pack_graph(p.program, p.consts, p.biases)


def _tensor_table(p):
    """Where each value a partition reads from or returns to the host lies in its buffers."""
    places = {name: (kind, role, offset, size) for name, kind, role, offset, size in p.program.tensors}
    rows = []
    for gname, (value, layout, _) in p.reads.items():
        if layout is not None:
            rows.append(("input", value, gname, layout))
    for value in p.needed:
        placed = p.placed[value]
        if placed.batched:
            rows.extend(("output", f"{value}[{i}]", g, placed.layout) for i, g in enumerate(placed.names))
        else:
            rows.append(("output", value, placed.names[0], placed.layout))
    out = []
    for direction, value, gname, layout in rows:
        kind, role, offset, size = places[gname]
        out.append(dict(direction=direction, value=value, tensor=gname, role=role, offset=offset, bytes=size,
                        layout=layout.kind, view=layout.view, M=layout.M, N=layout.N, columns=layout.columns,
                        dtype=layout.dtype))
    return out


def _write(model, fmt, directory, name):
    os.makedirs(directory, exist_ok=True)
    blob, manifest = bytearray(), dict(inputs=model.input_names, outputs=model.output_names, partitions=[])
    headers = []
    for p, buffers in _partition_images(model):
        images = {}
        for role, data in buffers.items():
            if not any(data):
                images[role] = dict(bytes=len(data), blob_offset=None)
                continue
            blob.extend(b"\0" * (-len(blob) % BLOB_ALIGN))
            images[role] = dict(bytes=len(data), blob_offset=len(blob))
            blob.extend(data)
        entry = dict(index=p.index, nodes=p.nodes, tasks=p.program.task_count, buffers=images,
                     tensors=_tensor_table(p), graph=p.text())
        if fmt == "bin":
            entry["program"] = f"partition{p.index}.bin"
            np.asarray(p.program.entries, dtype="<u8").tofile(os.path.join(directory, entry["program"]))
        elif fmt == "json":
            entry["program"] = f"partition{p.index}.json"
            with open(os.path.join(directory, entry["program"]), "w") as f:
                f.write(p.program.json())
        else:
            headers.append((p, images, entry["tensors"]))
        manifest["partitions"].append(entry)
    blob_name = f"{name}.weights.bin" if fmt == "cpp" else "weights.bin"
    with open(os.path.join(directory, blob_name), "wb") as f:
        f.write(blob)
    if fmt == "cpp":
        with open(os.path.join(directory, f"{name}.hpp"), "w") as f:
            f.write(_header(name, headers, blob_name))
    else:
        manifest["weights"] = blob_name
        with open(os.path.join(directory, "model.json"), "w") as f:
            json.dump(manifest, f, indent=1)


def _header(name, partitions, blob_name):
    """One header: each partition's program as a constexpr template (rule-checked where it
    compiles), its buffers' images in the blob and its tensors' places."""
    text = []
    for i, (p, images, tensors) in enumerate(partitions):
        lines = p.program.cpp(f"partition{p.index}", name, f"partition {p.index} of an ONNX model").splitlines()
        if i:  # the first header's pragma and include serve all
            lines = [l for l in lines if not l.startswith("#pragma once") and not l.startswith("#include")]
        text.extend(lines)
        text.append("")
        text.append(f"namespace {name} {{")
        text.append(f"// partition {p.index}: its buffers by role (bytes; where its image starts in {blob_name}, -1 when")
        text.append("// it holds no constants) and the tensors the host writes and reads (role, byte offset, bytes;")
        text.append("// layout: flat rows or NC1HWC2 surface of M x N elements, `columns` of them the tensor's).")
        text.append(f"inline constexpr buffer_image partition{p.index}_buffers[] = {{")
        for role, image in images.items():
            offset = -1 if image["blob_offset"] is None else image["blob_offset"]
            text.append(f"    {{\"{role}\", {image['bytes']}, {offset}}},")
        text.append("};")
        text.append(f"inline constexpr tensor_place partition{p.index}_tensors[] = {{")
        for t in tensors:
            text.append(f"    {{\"{t['direction']}\", \"{t['value']}\", \"{t['role']}\", {t['offset']}, {t['bytes']}, "
                        f"\"{t['layout']}\", \"{t['view']}\", {t['M']}, {t['N']}, {t['columns']}, \"{t['dtype']}\"}},")
        text.append("};")
        text.append(f"}}  // namespace {name}")
        text.append("")
    first_namespace = next(i for i, l in enumerate(text) if l.startswith(f"namespace {name}"))
    types = [f"namespace {name} {{",
             "struct buffer_image {",
             "  const char* role;",
             "  unsigned bytes;",
             "  long long blob_offset;",
             "};",
             "struct tensor_place {",
             "  const char* direction;",
             "  const char* value;",
             "  const char* role;",
             "  unsigned offset, bytes;",
             "  const char* layout;",
             "  const char* view;",
             "  unsigned M, N, columns;",
             "  const char* dtype;",
             "};",
             f"inline constexpr unsigned partition_count = {len(partitions)};",
             f"}}  // namespace {name}", ""]
    return "\n".join(text[:first_namespace] + types + text[first_namespace:]) + "\n"


def _inputs(model, given, seed):
    rng = np.random.default_rng(seed)
    values = {}
    for item in given:
        key, _, path = item.partition("=")
        if not path:
            _fail(f"--input {item}: give NAME=FILE.npy")
        try:
            values[key] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            _fail(f"--input {item}: {e}")
    for name in model.input_names:
        if name in values:
            continue
        info = model.infos[name]
        if np.issubdtype(info.dtype, np.floating):
            values[name] = rng.uniform(-1, 1, info.shape).astype(info.dtype)
        else:
            i = np.iinfo(info.dtype)
            values[name] = rng.integers(i.min, i.max, info.shape, endpoint=True).astype(info.dtype)
    return values


def main(argv=None):
    args = _parser().parse_args(argv)
    data = _model_bytes(args.model)
    ranges = {}
    if args.exp_range:
        try:
            lo, hi = (float(v) for v in args.exp_range.split(","))
        except ValueError:
            _fail(f"--exp-range {args.exp_range}: give LO,HI")
        ranges["Exp"] = (lo, hi)
    try:
        model = import_model(data, table_ranges=ranges)
        if args.format in ("bin", "json", "cpp"):
            if not args.output:
                _fail(f"--format {args.format} writes files: give -o DIRECTORY")
            _write(model, args.format, args.output, args.name)
        else:
            sys.stdout.write(model.report())
        if args.run:
            inputs = _inputs(model, args.input, args.seed)
            device = _regcmd.open_device()
            model.run(inputs, device)  # the first run places the weights
            start = time.perf_counter()
            results = model.run(inputs, device)
            elapsed = time.perf_counter() - start
            if args.top > 0:
                where = "the emulated device" if device.emulated else "the NPU"
                submits = sum(s["submits"] for s in model.stats())
                print(f"run: {elapsed * 1000:.1f} ms on {where} and the host ({submits} submit{'' if submits == 1 else 's'})")
                for name, got in zip(model.output_names, results):
                    flat = np.asarray(got, dtype=np.float64).reshape(-1)
                    best = np.argsort(flat)[::-1][:args.top]
                    print(f"{name} top-{len(best)}: " + ", ".join(f"{i} ({flat[i]:.4g})" for i in best))
            reference = import_model(data, table_ranges=ranges, npu=False).run(inputs)
            failed = False
            for name, got, want in zip(model.output_names, results, reference):
                ok, worst = close(got, want)
                failed |= not ok
                print(f"{name}: {'ok' if ok else 'WRONG'} ({worst})")
            if failed:
                sys.exit(1)
    except (ModelError, Unsupported, _regcmd.SpecError, _regcmd.RuleError) as e:
        _fail(f"{args.model}: {e}")


if __name__ == "__main__":
    main()
