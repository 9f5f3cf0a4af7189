"""An ONNX model as regcmd programs: its nodes in order, consecutive NPU nodes gathered into
partitions (one graph program, one submit each: docs/graph.md), the rest on the host.

    import regcmd.onnx
    model = regcmd.onnx.import_model("net.onnx")
    print(model.report())                     # which node runs where, in how many submits
    outputs = model.run({"x": image})         # numpy arrays in and out

Shapes come from the model (ONNX shape inference); a dimension without a fixed size is
refused by name. Constants are folded on the host, a BatchNormalization after a Conv into
the Conv's weights and bias. fp32 tensors run in fp16 on the NPU.
"""

import os
from dataclasses import dataclass, field

import numpy as np

from .. import _regcmd
from .fusion import fold_batchnorm, fuse_conv_activation, fuse_qdq, fuse_qdq_average
from .host_ops import HOST_OPS, LAYOUT_OPS, Unsupported, numpy_type, run_host
from .layouts import Layout, from_host, to_host
from .lowering import LOWERINGS


CONSTANT_FOLDED = "constant, folded at import"  # a node of constants only: computed once, on the host


@dataclass
class ValueInfo:
    shape: tuple
    dtype: np.dtype
    const: object = None  # the value, when the model fixes it


@dataclass
class Node:
    index: int
    key: str  # the node's name, else its index
    op_type: str
    attrs: dict
    inputs: list
    outputs: list


class ModelError(ValueError):
    """A model the importer refuses: what, naming the node or the value."""


# The most elements a tensor of an imported model may hold: 2^26 (256 MiB of fp32), far
# beyond any buffer a network on the NPU needs, and refused before anything is allocated.
MAX_ELEMENTS = 1 << 26


def _check_size(name, shape):
    count = 1
    for d in shape:
        count *= int(d)
    if count > MAX_ELEMENTS:
        raise ModelError(f"value {name!r} {tuple(shape)} holds {count} elements, more than the {MAX_ELEMENTS} "
                         "the importer takes")


def _attribute(node, key, a):
    from onnx import helper
    try:
        v = helper.get_attribute_value(a)
    except Exception:
        raise ModelError(f"node {key} ({node.op_type}): attribute {a.name!r} does not read") from None
    if isinstance(v, bytes):
        try:
            return v.decode()
        except UnicodeDecodeError:
            raise ModelError(f"node {key} ({node.op_type}): attribute {a.name!r} is no text") from None
    return v


def _constant_value(node, proto):
    """A Constant node's value: a tensor, or one float or int, or a list of them."""
    from onnx import numpy_helper
    kinds = {"value_float": np.float32, "value_floats": np.float32, "value_int": np.int64, "value_ints": np.int64}
    if len(proto.attribute) != 1 or len(node.outputs) != 1:
        raise ModelError(f"node {node.key}: a Constant needs one value attribute and one output")
    name, value = proto.attribute[0].name, node.attrs[proto.attribute[0].name]
    if name == "value":
        try:
            return numpy_helper.to_array(value)
        except Exception:
            raise ModelError(f"node {node.key}: the Constant's tensor does not read") from None
    if name in kinds:
        return np.asarray(value, dtype=kinds[name])
    raise ModelError(f"node {node.key}: a Constant's {name} is no value the importer reads")


def _attributes(node, key):
    return {a.name: _attribute(node, key, a) for a in node.attribute}


def _load(model):
    import onnx
    if isinstance(model, (str, os.PathLike)):
        try:
            model = onnx.load(os.fspath(model))
        except Exception as e:  # a truncated or foreign file
            raise ModelError(f"{model}: no ONNX model ({e})") from None
    elif isinstance(model, (bytes, bytearray)):
        try:
            model = onnx.load_model_from_string(bytes(model))
        except Exception as e:
            raise ModelError(f"no ONNX model ({e})") from None
    if not isinstance(model, onnx.ModelProto):
        raise ModelError(f"expected an ONNX ModelProto, a path or bytes, not {type(model).__name__}")
    for opset in model.opset_import:
        if opset.domain not in ("", "ai.onnx"):
            raise ModelError(f"operator set {opset.domain!r} is none the importer knows (ai.onnx only)")
    _check_nodes(model.graph)
    try:
        onnx.checker.check_model(model)
    except Exception as e:
        raise ModelError(f"the model fails ONNX's checker: {_first_line(e)}") from None
    try:
        return onnx.shape_inference.infer_shapes(model, strict_mode=True)
    except Exception as e:
        raise ModelError(f"the model's shapes do not infer: {_first_line(e)}") from None


# Attributes that must be positive where ONNX's own shape inference would divide by them.
POSITIVE = ("strides", "dilations", "kernel_shape", "group")


def _check_nodes(graph):
    """What the importer refuses before ONNX's checker and shape inference see the model: an
    operator it does not map (nor a Constant), and attributes ONNX 1.12's shape inference
    divides by unchecked (a zero stride stops the process)."""
    for i, n in enumerate(graph.node):
        key = n.name or str(i)
        if n.domain not in ("", "ai.onnx"):
            raise ModelError(f"node {key} ({n.op_type}) is of domain {n.domain!r}, which the importer has not")
        if n.op_type not in HOST_OPS and n.op_type != "Constant":
            raise ModelError(f"node {key}: operator {n.op_type} is none the importer maps")
        for a in n.attribute:
            if a.name in POSITIVE:
                values = _attribute(n, key, a)
                values = values if isinstance(values, list) else [values]
                if not all(isinstance(v, int) and v >= 1 for v in values):
                    raise ModelError(f"node {key} ({n.op_type}): {a.name} {list(values)} must be positive")
            elif a.name == "pads" and any(v < 0 for v in a.ints):
                raise ModelError(f"node {key} ({n.op_type}): pads {list(a.ints)} must not be negative")


def _first_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _value_infos(graph):
    from onnx import numpy_helper
    infos = {}
    for t in graph.initializer:
        _check_size(t.name, t.dims)
        try:
            v = numpy_helper.to_array(t)
        except Exception as e:
            raise ModelError(f"initializer {t.name!r} does not read ({e})") from None
        infos[t.name] = ValueInfo(tuple(v.shape), v.dtype, v)
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        if vi.name in infos:
            continue
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or not tt.HasField("shape"):
            raise ModelError(f"value {vi.name!r} is no tensor of known shape")
        dims = []
        for i, d in enumerate(tt.shape.dim):
            if not d.HasField("dim_value") or d.dim_value < 0:
                what = d.dim_param or "unknown"
                raise ModelError(f"value {vi.name!r} has a dynamic dimension {i} ({what}): the importer "
                                 "needs static shapes (fix it, e.g. onnx.tools.update_model_dims)")
            dims.append(d.dim_value)
        _check_size(vi.name, dims)
        try:
            dtype = numpy_type(tt.elem_type)
        except Exception:
            raise ModelError(f"value {vi.name!r} has element type {tt.elem_type}, which numpy has not") from None
        infos[vi.name] = ValueInfo(tuple(dims), dtype)
    return infos


# What older operator sets said otherwise, in today's terms: inputs they gave as attributes
# become constant inputs; PRelu before opset 7 took a slope per channel (axis 1).
def _normalize(node, infos, fresh, opset):
    attrs, inputs = node.attrs, node.inputs
    if node.op_type == "Cast" and np.dtype(infos[inputs[0]].dtype) == np.dtype(infos[node.outputs[0]].dtype):
        node.op_type, node.attrs = "Identity", {}  # to its own type (PyTorch's quantized export): a rename
    if node.op_type == "PRelu" and opset < 7:
        x, slope = infos[inputs[0]], infos[inputs[1]]
        if slope.const is not None and slope.const.ndim == 1 and len(x.shape) > 2 and slope.const.size == x.shape[1]:
            value = slope.const.reshape(-1, *([1] * (len(x.shape) - 2)))
            inputs[1] = fresh("slope")
            infos[inputs[1]] = ValueInfo(tuple(value.shape), value.dtype, value)
    moved = {"Clip": ("min", "max"), "Squeeze": ("axes",), "Unsqueeze": ("axes",)}.get(node.op_type, ())
    for i, name in enumerate(moved):
        if name in attrs:
            value = np.asarray(attrs.pop(name), dtype=np.float32 if node.op_type == "Clip" else np.int64)
            const = fresh(name)
            infos[const] = ValueInfo(tuple(value.shape), value.dtype, value)
            while len(inputs) < i + 2:
                inputs.append("")
            inputs[i + 1] = const


def _expected_shape(node, infos):
    """The output shape the operator's definition gives the node's inputs, where it is one of
    the element-wise or product operators (the others' shapes are checked as they lower)."""
    shapes = [tuple(infos[n].shape) for n in node.inputs if n]
    op = node.op_type
    try:
        if op in ("Add", "Sub", "Mul", "Max", "Min", "PRelu", "Clip"):
            return np.broadcast_shapes(*(shapes if op != "Clip" else shapes[:1]))
        if op in ("Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Exp", "Elu", "Selu",
                  "Softplus", "Identity", "BatchNormalization", "QuantizeLinear", "DequantizeLinear"):
            return shapes[0]
        if op in ("MatMul", "MatMulInteger", "QLinearMatMul"):
            a, b = shapes[0], shapes[3 if op == "QLinearMatMul" else 1]
            if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
                return "no product"
            return np.broadcast_shapes(a[:-2], b[:-2]) + (a[-2], b[-1])
        if op == "Gemm":
            a, b = shapes[0], shapes[1]
            if len(a) != 2 or len(b) != 2:
                return "no product"
            m, k = a[::-1] if node.attrs.get("transA", 0) else a
            k2, n = b[::-1] if node.attrs.get("transB", 0) else b
            if len(shapes) > 2 and np.broadcast_shapes(shapes[2], (m, n)) != (m, n):
                return "no broadcast of C"
            return (m, n) if k == k2 else "no product"
        if op in ("Conv", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool"):
            return _windowed_shape(node, shapes)
        if op == "Concat":
            axis = node.attrs.get("axis")
            if axis is None or not -len(shapes[0]) <= axis < len(shapes[0]):
                return "no axis"
            axis %= len(shapes[0])
            if any(len(s) != len(shapes[0]) or s[:axis] + s[axis + 1:] != shapes[0][:axis] + shapes[0][axis + 1:]
                   for s in shapes):
                return "no concatenation"
            return shapes[0][:axis] + (sum(s[axis] for s in shapes),) + shapes[0][axis + 1:]
        if op in ("GlobalAveragePool", "GlobalMaxPool"):
            return shapes[0][:2] + (1,) * (len(shapes[0]) - 2)
        if op in LAYOUT_OPS:
            count = int(np.prod(shapes[0], dtype=np.int64))
            out = tuple(infos[node.outputs[0]].shape)
            return out if int(np.prod(out, dtype=np.int64)) == count else f"{count} elements"
    except ValueError:
        return "no broadcast"
    return None


def _windowed_shape(node, shapes):
    """A convolution's or a pooling's output shape, its attributes checked on the way."""
    from .host_ops import pool_geometry, spatial_pads
    x = shapes[0]
    n = len(x) - 2
    attrs = node.attrs
    if n < 1:
        return "no spatial axis"
    conv = "Conv" in node.op_type
    if conv:
        w = shapes[3 if node.op_type == "QLinearConv" else 1]
        group = attrs.get("group", 1)
        if len(w) != len(x) or group < 1 or x[1] % group or w[0] % group or w[1] * group != x[1]:
            return f"no convolution of {x} by weights {w} in {group} groups"
        kernel = list(attrs.get("kernel_shape", w[2:]))
        if kernel != list(w[2:]):
            return f"kernel_shape {kernel} is not the weights' {list(w[2:])}"
    else:
        kernel = list(attrs.get("kernel_shape", []))
    strides = list(attrs.get("strides", [1] * n))
    dilations = list(attrs.get("dilations", [1] * n))
    pads = list(attrs.get("pads", [0] * (2 * n)))
    if len(kernel) != n or len(strides) != n or len(dilations) != n or len(pads) != 2 * n or \
            min(kernel + strides + dilations) < 1 or min(pads) < 0:
        return "kernel_shape, strides, dilations or pads that do not fit the input"
    if conv:
        begin, end = spatial_pads(attrs, x[2:], kernel, strides, dilations)
        out = [(size + b + e - ((k - 1) * d + 1)) // s + 1
               for size, b, e, k, d, s in zip(x[2:], begin, end, kernel, dilations, strides)]
        return (x[0], w[0], *out) if min(out) >= 1 else "an empty output"
    *_, out = pool_geometry(attrs, x[2:])
    return (x[0], x[1], *out) if min(out) >= 1 else "an empty output"


def _check_shapes(node, infos):
    if node.op_type in ("QuantizeLinear", "DequantizeLinear"):
        names = node.inputs + [""] * 3
        allowed = (np.uint8, np.int8) + ((np.int32,) if node.op_type == "DequantizeLinear" else ())
        if names[2] and np.dtype(infos[names[2]].dtype) not in [np.dtype(t) for t in allowed]:
            raise ModelError(f"node {node.key} ({node.op_type}): a zero point of type {infos[names[2]].dtype}")
        if not np.issubdtype(np.dtype(infos[names[1]].dtype), np.floating):
            raise ModelError(f"node {node.key} ({node.op_type}): a scale of type {infos[names[1]].dtype}")
    expected = _expected_shape(node, infos)
    if expected is None:
        return
    out = tuple(infos[node.outputs[0]].shape)
    if expected != out:
        inputs = ", ".join(str(tuple(infos[n].shape)) for n in node.inputs if n)
        raise ModelError(f"node {node.key} ({node.op_type}): inputs {inputs} give {expected}, "
                         f"not the model's {out}")


class _Flush(Exception):
    """The node reads what the open partition holds in a way it cannot: start another."""


@dataclass(frozen=True)
class Placed:
    """A value as a partition holds it: one graph tensor, or a batch of them (one per index of
    its first axis, each of `part_shape`: a batched matmul's matrices, a batch's images)."""
    names: tuple
    layout: Layout
    part_shape: tuple = None

    @property
    def batched(self):
        return self.part_shape is not None


@dataclass
class Partition:
    """NPU nodes as one graph program."""
    index: int
    nodes: list = field(default_factory=list)  # keys
    lines: list = field(default_factory=list)  # (out, program, ins, options)
    reads: dict = field(default_factory=dict)  # graph name -> (value, layout or None, select)
    read_names: dict = field(default_factory=dict)  # (value, layout, cut key) -> graph name
    consts: dict = field(default_factory=dict)  # graph name -> host array
    biases: dict = field(default_factory=dict)  # a conv's output -> its bias (int32 quantized, fp16 values)
    placed: dict = field(default_factory=dict)  # value -> Placed
    names: int = 0
    program: object = None
    needed: list = field(default_factory=list)  # values the host reads back
    keep: bool = False

    def copy(self):
        return Partition(self.index, list(self.nodes), list(self.lines), dict(self.reads), dict(self.read_names),
                         dict(self.consts), dict(self.biases), dict(self.placed), self.names)

    def text(self):
        return "".join(f"{out} = {program} {' '.join(ins)} {options}\n" for out, program, ins, options in self.lines)

    def build(self, keep=False):
        return _regcmd.graph(self.text(), keep_intermediates=keep)

    def run(self, device, infos, env):
        inputs = dict(self.consts)
        for gname, (value, layout, select) in self.reads.items():
            v = env[value] if select is None else select(env[value])
            if layout is not None:
                inputs[gname] = to_host(v, layout)
            else:  # weights: fp16 as floats, an integer type as it is
                inputs[gname] = np.ascontiguousarray(v, dtype=np.float32 if np.issubdtype(v.dtype, np.floating) else None)
        out = device.run_graph(self.program, inputs, self.biases)
        for value in self.needed:
            info, placed = infos[value], self.placed[value]
            if placed.batched:
                env[value] = np.stack([from_host(out[g], placed.layout, placed.part_shape, info.dtype)
                                       for g in placed.names]).reshape(info.shape)
            else:
                env[value] = from_host(out[placed.names[0]], placed.layout, info.shape, info.dtype)


def _same_bytes(resident, wanted):
    """Whether a tensor written in one layout can be read in another: equal, or flat rows of
    the same elements (rows fold into one)."""
    if resident.dtype != wanted.dtype:
        return False
    return resident == wanted or (resident.kind == wanted.kind == "flat" and resident.elements == wanted.elements)


class _Context:
    """What a lowering (lowering.py) writes a node's ops through, into a trial partition."""

    def __init__(self, partition, infos, table_ranges):
        self.p, self.infos, self.table_ranges = partition, infos, table_ranges

    def info(self, name):
        return self.infos[name]

    def fresh(self):
        self.p.names += 1
        return f"p{self.p.index}.t{self.p.names}"

    def line(self, out, program, ins, options):
        self.p.lines.append((out, program, list(ins), options))

    def placed(self, name):
        return self.p.placed.get(name)

    def layout(self, name):
        """The layout of a value the partition holds as one tensor, else None."""
        r = self.p.placed.get(name)
        return r.layout if r is not None and not r.batched else None

    def operand(self, name, layout, select=None, cut_key=None):
        """The graph tensor an op reads `name` from in `layout`: the partition's, else an
        input the host packs (through `select` first: a cut, a transpose, a broadcast)."""
        r = self.p.placed.get(name)
        if r is not None:
            if select is None and not r.batched and _same_bytes(r.layout, layout):
                return r.names[0]
            raise _Flush()
        key = (name, layout, cut_key if select is not None else None, select is not None)
        if key not in self.p.read_names:
            gname = self.fresh()
            self.p.read_names[key] = gname
            self.p.reads[gname] = (name, layout, select)
        return self.p.read_names[key]

    def images(self, name, count, layout, reshape=None):
        """The `count` images of a batch `name` (its first axis) as graph tensors in `layout`."""
        r = self.p.placed.get(name)
        if r is not None:
            if len(r.names) == count and _same_bytes(r.layout, layout) and (count == 1 or r.batched):
                return list(r.names)
            raise _Flush()
        if count == 1:
            return [self.operand(name, layout, reshape)]
        shape = reshape or (lambda v: v)
        return [self.operand(name, layout, lambda v, n=n: shape(v[n:n + 1]), cut_key=("image", n))
                for n in range(count)]

    def weights_of(self, name, transform):
        if name in self.p.placed:
            raise _Flush()  # the CNA reads weights only from the weight buffer (graph-weight-source)
        gname = self.fresh()
        self.p.reads[gname] = (name, None, transform)
        return gname

    def weights(self, array, dtype=np.float32):
        gname = self.fresh()
        self.p.consts[gname] = np.ascontiguousarray(array, dtype=dtype)
        return gname

    def bias(self, conv, values, dtype=np.int32):
        """A conv's bias, packed with its weights (docs/graph.md): a quantized conv's int32, an
        fp16 conv's values."""
        self.p.biases[conv] = np.ascontiguousarray(values, dtype=dtype)

    def const(self, vector):
        return self.weights(np.asarray(vector).reshape(-1))

    def const_value(self, gname):
        return self.p.consts[gname]

    def const_tensor(self, array, layout):
        gname = self.fresh()
        self.p.consts[gname] = to_host(array, layout)
        return gname

    def flush(self):
        """The node cannot read what the partition holds as it holds it: another partition."""
        raise _Flush()

    def alias(self, name):
        r = self.p.placed.get(name)
        if r is None:
            raise Unsupported("nothing to run: its input comes from the host")
        return r

    def result(self, names, layout, part_shape=None):
        """What a node wrote: one tensor, or a batch of them of `part_shape` each."""
        names = tuple(names)
        return Placed(names, layout, tuple(part_shape) if len(names) > 1 else None)


class CompiledModel:
    """An imported model: its steps (partitions and host nodes) in order, ready to run."""

    def __init__(self, graph_inputs, graph_outputs, infos, steps, placement, reasons, partitions, folded):
        self.input_names, self.output_names = graph_inputs, graph_outputs
        self.infos, self.steps = infos, steps
        self.placement, self.reasons, self.partitions, self.folded = placement, reasons, partitions, folded
        self._device = None

    def _open(self, device):
        if device is not None:
            return device
        if self._device is None:
            self._device = _regcmd.open_device()
        return self._device

    def run(self, inputs, device=None):
        """The model's outputs (a list, in the graph's order) for its inputs: a dict by name or
        a list in the graph's order."""
        if not isinstance(inputs, dict):
            inputs = list(inputs)
            if len(inputs) != len(self.input_names):
                raise ModelError(f"the model reads {len(self.input_names)} inputs "
                                 f"({', '.join(self.input_names)}), not {len(inputs)}")
            inputs = dict(zip(self.input_names, inputs))
        env = {}
        for name in self.input_names:
            if name not in inputs:
                raise ModelError(f"the model reads input {name!r}: give it")
            info, v = self.infos[name], np.asarray(inputs[name])
            if tuple(v.shape) != tuple(info.shape):
                raise ModelError(f"input {name!r} is {tuple(v.shape)}, the model's is {tuple(info.shape)}")
            env[name] = v.astype(info.dtype, copy=False)
        for name, info in self.infos.items():
            if info.const is not None:
                env[name] = info.const
        npu = None
        for step in self.steps:
            if isinstance(step, Partition):
                npu = npu or self._open(device)
                step.run(npu, self.infos, env)
            else:
                results = run_host(step.op_type, step.attrs, [env[n] if n else None for n in step.inputs])
                for name, value in zip(step.outputs, results):
                    if name:
                        env[name] = value
        return [env[name] for name in self.output_names]

    def stats(self):
        """Per partition: its nodes and its program's stats (tasks, submits, traffic, bound)."""
        return [dict(partition=p.index, nodes=list(p.nodes), **p.program.stats()) for p in self.partitions]

    def report(self):
        """Which node runs where, and each partition's tasks and submits."""
        lines = []
        for key, where in self.placement.items():
            why = self.reasons.get(key)
            lines.append(f"  {key}: {where}" + (f" ({why})" if why else ""))
        npu = sum(1 for w in self.placement.values() if w == "npu")
        constants = sum(1 for key in self.placement if self.reasons.get(key) == CONSTANT_FOLDED)
        head = [f"{_count(len(self.placement), 'node')}: {npu} on the NPU in {_count(len(self.partitions), 'partition')} "
                f"({_count(sum(s['submits'] for s in self.stats()), 'submit')}), "
                f"{len(self.placement) - npu - constants} on the host" +
                (f", {_count(constants, 'constant')} folded at import" if constants else "")]
        for s in self.stats():
            head.append(f"  partition {s['partition']}: {_count(len(s['nodes']), 'node')}, {_count(s['tasks'], 'task')}, "
                        f"{_count(s['submits'], 'submit')}, {s['traffic']} bytes, bound {s['bound_ns'] / 1000:.2f} us")
        return "\n".join(head + lines) + "\n"


def _count(n, noun):
    return f"{n} {noun}" + ("" if n == 1 else "s")


def import_model(model, table_ranges=None, npu=True, constants=None):
    """An ONNX model (a ModelProto, a path or bytes) as a CompiledModel. `table_ranges` gives a
    table function the inputs its table covers: {"Exp": (-16, 4)} is the default. With
    npu=False every node runs on the host (numpy): the reference `regcmd-onnx --run` checks
    the NPU's results against. `constants` fixes graph inputs to values (a scale, a clip's
    bound), as if they were initializers: the program is then built for those values."""
    model = _load(model)
    graph = model.graph
    infos = _value_infos(graph)
    initializers = {t.name for t in graph.initializer}
    for name, value in (constants or {}).items():
        info = infos.get(name)
        value = np.asarray(value)
        if info is None or name in initializers or tuple(value.shape) != tuple(info.shape):
            raise ModelError(f"constant {name!r}: no graph input of shape {tuple(value.shape)}")
        infos[name] = ValueInfo(info.shape, info.dtype, value.astype(info.dtype))
        initializers.add(name)
    graph_inputs = [vi.name for vi in graph.input if vi.name not in initializers]
    graph_outputs = [vi.name for vi in graph.output]
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=1)
    constants = []  # the nodes of constants only, computed at import
    nodes = _read_nodes(graph, infos, set(graph_inputs) | initializers, set(graph_outputs), opset, constants)
    folded = fold_batchnorm(nodes, infos, set(graph_outputs))
    folded.update(fuse_qdq(nodes, infos, set(graph_outputs)))
    folded.update(fuse_qdq_average(nodes, infos, set(graph_outputs)))
    folded.update(fuse_conv_activation(nodes, infos, set(graph_outputs)))
    placer = _Placer(nodes, infos, graph_outputs, table_ranges or {})
    for node in nodes:
        placer.place(node, npu)
    placer.flush()
    for key in constants:
        placer.placement[key], placer.reasons[key] = "host", CONSTANT_FOLDED
    placement = {}
    for i, n in enumerate(graph.node):  # in the model's order, a merged node where it went
        key = n.name or str(i)
        if key in placer.placement or key in folded:
            placement[key] = placer.placement[folded.get(key, key)]
    reasons = dict(placer.reasons, **{key: f"folded into {into}" for key, into in folded.items()})
    return CompiledModel(graph_inputs, graph_outputs, infos, placer.steps, placement, reasons, placer.partitions, folded)


def _fold(node, infos):
    """A node of constants only, computed: its outputs become constants. What the operator's
    definition refuses of its values (shapes that do not broadcast, say) refuses the model."""
    try:
        values = run_host(node.op_type, node.attrs, [infos[n].const if n else None for n in node.inputs])
    except (ValueError, TypeError, IndexError, KeyError, OverflowError, MemoryError) as e:
        raise ModelError(f"node {node.key} ({node.op_type}) of constants: {_first_line(e)}") from None
    for name, v in zip(node.outputs, values):
        infos[name] = ValueInfo(tuple(np.shape(v)), np.asarray(v).dtype, np.asarray(v))


def _read_nodes(graph, infos, available, graph_outputs, opset, constants):
    """The model's nodes, each checked (its operator mapped, what it reads written before it,
    its output's shape what its inputs give) and in today's terms; Constants as values."""
    counter = [0]

    def fresh(hint):
        counter[0] += 1
        return f"regcmd.{hint}.{counter[0]}"

    nodes = []
    for i, n in enumerate(graph.node):
        if n.domain not in ("", "ai.onnx"):
            raise ModelError(f"node {n.name or i} ({n.op_type}) is of domain {n.domain!r}, which the importer has not")
        node = Node(i, n.name or str(i), n.op_type, _attributes(n, n.name or str(i)), list(n.input), list(n.output))
        if node.op_type == "Constant":
            v = _constant_value(node, n)
            infos[node.outputs[0]] = ValueInfo(tuple(v.shape), v.dtype, v)
            available.add(node.outputs[0])
            continue
        if node.op_type not in HOST_OPS:
            raise ModelError(f"node {node.key}: operator {node.op_type} is none the importer maps")
        if node.op_type == "MaxPool" and len(node.outputs) > 1 and node.outputs[1]:
            raise ModelError(f"node {node.key}: MaxPool's Indices output is not computed")
        if node.op_type == "BatchNormalization" and node.attrs.get("training_mode", 0):
            raise ModelError(f"node {node.key}: BatchNormalization in training mode (inference only)")
        for name in node.inputs:
            if name and name not in available:
                raise ModelError(f"node {node.key} ({node.op_type}) reads {name!r}, which nothing before it writes")
        for name in node.inputs + node.outputs:
            if name and name not in infos:
                raise ModelError(f"node {node.key} ({node.op_type}): value {name!r} has no shape")
        available.update(n for n in node.outputs if n)
        _normalize(node, infos, fresh, opset)
        _check_shapes(node, infos)
        # a node of constants only is computed here, once (a DequantizeLinear's stays a node:
        # the fusions read the quantized weights and biases behind it)
        if node.op_type != "DequantizeLinear" and all(not n or infos[n].const is not None for n in node.inputs):
            _fold(node, infos)
            constants.append(node.key)
            continue
        nodes.append(node)
    for name in graph_outputs:
        if name not in available:
            raise ModelError(f"the model's output {name!r} is written by no node")
    return nodes


class _Placer:
    """Places the nodes in order: a constant one computed at import, an NPU one into the open
    partition (another when it does not fit there), any other on the host."""

    def __init__(self, nodes, infos, graph_outputs, table_ranges):
        self.infos, self.graph_outputs, self.table_ranges = infos, graph_outputs, table_ranges
        self.readers = {}
        for n in nodes:
            for name in n.inputs:
                self.readers.setdefault(name, set()).add(n.key)
        self.placement, self.reasons, self.steps, self.partitions = {}, {}, [], []
        self.current = None  # the open partition

    def flush(self):
        """Closes the open partition: its program returns what the host reads after it."""
        p, self.current = self.current, None
        if p is None or not p.nodes:
            return
        members = set(p.nodes)
        p.needed = [v for v in p.placed
                    if v in self.graph_outputs or any(r not in members for r in self.readers.get(v, ()))]
        read_inside = {name for _, _, ins, _ in p.lines for name in ins}
        p.keep = any(g in read_inside for v in p.needed for g in p.placed[v].names)
        p.program = p.build(p.keep)
        self.steps.append(p)
        self.partitions.append(p)

    def _lowered(self, partition, node):
        """The partition with the node's ops, built; raises what refuses them."""
        trial = partition.copy()
        ctx = _Context(trial, self.infos, self.table_ranges)
        out = LOWERINGS[node.op_type](ctx, node)
        if isinstance(out, tuple):  # one tensor: (graph name, layout)
            out = ctx.result([out[0]], out[1])
        trial.placed[node.outputs[0]] = out
        trial.nodes.append(node.key)
        trial.build()
        return trial

    def _on_npu(self, node):
        """The node in the open partition, or alone in a new one: (partition, None), or (None,
        why it stays on the host)."""
        for _ in range(2):
            base = self.current if self.current is not None else Partition(len(self.partitions))
            try:
                return self._lowered(base, node), None
            except _Flush:
                self.flush()
            except Unsupported as e:
                return None, str(e)
            except (_regcmd.SpecError, _regcmd.RuleError) as e:
                if not base.nodes:
                    return None, str(e)
                self.flush()  # the open partition may be what it does not fit: alone, once more
        return None, "no partition holds it"

    def place(self, node, npu):
        infos = self.infos
        if all(not n or infos[n].const is not None for n in node.inputs):
            _fold(node, infos)
            self.placement[node.key], self.reasons[node.key] = "host", CONSTANT_FOLDED
            return
        if node.op_type in LAYOUT_OPS and self.current is not None and _alias(self.current, node, infos):
            self.placement[node.key] = "npu"
            self.current.nodes.append(node.key)
            return
        if not npu:
            partition, why = None, "the host reference"
        elif node.op_type in LAYOUT_OPS:
            partition, why = None, "a view of values on the host: no data moves"
        elif node.op_type in LOWERINGS:
            partition, why = self._on_npu(node)
        else:
            partition, why = None, "no NPU path"
        if partition is not None:
            self.current = partition
            self.placement[node.key] = "npu"
            return
        self.flush()
        self.placement[node.key], self.reasons[node.key] = "host", why
        self.steps.append(node)


def _alias(partition, node, infos):
    """A layout op over a tensor the partition holds as flat rows, or as a surface of one
    pixel (its channels in a row, padded to whole 16-byte atoms), or an Identity of anything
    it holds: the same bytes, renamed."""
    r = partition.placed.get(node.inputs[0])
    if r is not None and node.op_type == "Identity":  # the same value under another name, in any layout
        partition.placed[node.outputs[0]] = r
        return True
    if r is None or r.batched:
        return False
    gname, layout = r.names[0], r.layout
    shape = infos[node.outputs[0]].shape
    if layout.kind == "surface":
        if layout.M != 1:
            return False
        atom = 8 if layout.dtype == "fp16" else 16
        aliased = Layout("flat", "rows", 1, -(-layout.N // atom) * atom, layout.dtype, layout.columns)
    else:
        n = shape[-1] if shape else 1
        m = int(np.prod(shape[:-1], dtype=np.int64)) if len(shape) > 1 else 1
        aliased = Layout("flat", "rows", m, n, layout.dtype)
        if layout.columns != layout.N:  # padded rows stay rows: the same row length only
            if n != layout.columns:
                return False
            aliased = Layout("flat", "rows", m, layout.N, layout.dtype, n)
    partition.placed[node.outputs[0]] = Placed((gname,), aliased)
    return True
