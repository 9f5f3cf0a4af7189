"""ONNX nodes as regcmd graph lines (docs/graph.md, "Graph files"): each function writes the
ops of one node into a partition, or raises Unsupported with the reason the node stays on the
host. What a rule of regcmd refuses is not predicted here: the partition builds the graph
and a node whose ops do not build goes to the host with the rule's message.
"""

import numpy as np

from .. import _regcmd
from .host_ops import Unsupported, pool_geometry, reduce_axes, spatial_pads
from .layouts import Layout, image_channels, image_surface, natural_layout, npu_type

FP16_MAX = 65504.0


def _float_text(v):
    return repr(float(v))


def _precision(ctx, name, allowed=("fp16", "int8", "int16")):
    p = npu_type(ctx.info(name).dtype)
    if p is None or p not in allowed:
        raise Unsupported(f"element type {ctx.info(name).dtype} has no NPU path here (it takes {', '.join(allowed)})")
    return p


def _scalar_const(ctx, name):
    """The value of a constant of one element, else None."""
    c = ctx.info(name).const
    return None if c is None or c.size != 1 else float(c.reshape(()))


def _channel_vector(info, layout):
    """Whether an operand is one value per channel of `layout`, broadcast over the rest: [C, 1,
    1] or [1, C, 1, 1] for an image, [N] or [1, N] for rows."""
    shape = tuple(info.shape)
    if layout.view == "nchw":
        ok = len(shape) <= 4 and all(s == 1 for i, s in enumerate(shape) if len(shape) - i != 3) and \
            len(shape) >= 3 and shape[-3] == layout.columns
    else:
        ok = len(shape) >= 1 and shape[-1] == layout.N and all(s == 1 for s in shape[:-1])
    return ok


def _channel_const(ctx, values, layout):
    """A per-channel operand of `layout`: its values, zero on the padding channels."""
    values = np.asarray(values).reshape(-1)
    return ctx.const(np.pad(values, (0, layout.N - values.size)))


def _tensor_layout(ctx, name, shape, dtype):
    """The layout an element-wise op reads its tensor operand in: as it lies on the NPU, else
    its natural one."""
    resident = ctx.layout(name)
    return resident if resident is not None else natural_layout(shape, dtype)


IMMEDIATE_OPS = ("add", "max", "min")
INTEGER_RANGES = {"int8": (-128, 127), "int16": (-32768, 32767)}


def _value(value, dtype):
    """A constant scalar operand, ("value", x), where the element type holds it exactly."""
    lo, hi = INTEGER_RANGES.get(dtype, (-FP16_MAX, FP16_MAX))
    if not lo <= value <= hi or (dtype in INTEGER_RANGES and value != int(value)):
        raise Unsupported(f"the constant {value:g} is no {dtype} value")
    return ("value", value)


def _as_rows(layout):
    """The layout of an M x N host array that is already in the device's order."""
    return Layout(layout.kind, "rows", layout.M, layout.N, layout.dtype, layout.valid)


def _ew_line(ctx, out, op, a, layout, operand, dtype):
    """out = a (op) operand: operand is ("element", name), ("channel", name) or ("value", x)."""
    kind, arg = operand
    opts = f"--op {op} --dtype {dtype} -M {layout.M} -N {layout.N} --layout {layout.kind}"
    if kind == "value" and (op not in IMMEDIATE_OPS or dtype != "fp16"):
        # the SDP's register immediate is known for fp16 add, max and min only (rule
        # ew-immediate): a product by a constant, or an integer op's, reads it from memory
        kind, arg = "element", ctx.const_tensor(np.full((layout.M, layout.columns), arg), _as_rows(layout))
    if kind == "value":
        ctx.line(out, "ew", [a], opts + f" --operand immediate --value {_float_text(arg)}")
    elif kind == "channel":
        ctx.line(out, "ew", [a, arg], opts + " --operand per-channel")
    else:
        ctx.line(out, "ew", [a, arg], opts)


def _operand(ctx, name, layout, out_shape, allow_value=True):
    """How the second operand of an element-wise op over `layout` reads `name`."""
    info = ctx.info(name)
    value = _scalar_const(ctx, name)
    if allow_value and value is not None and tuple(info.shape) != tuple(out_shape):
        return _value(value, layout.dtype)
    if tuple(info.shape) == tuple(out_shape) or (info.const is None and ctx.layout(name) == layout):
        return ("element", ctx.operand(name, layout))
    if _channel_vector(info, layout) and layout.kind == "surface" and info.const is not None:
        return ("channel", _channel_const(ctx, info.const, layout))
    if ctx.layout(name) is None:
        # a broadcast the SDP has no form for, of a tensor from the host: expanded as it is packed
        return ("element", ctx.operand(name, layout, lambda v: np.broadcast_to(v, out_shape)))
    raise Unsupported(f"the broadcast of {name} {tuple(info.shape)} to {tuple(out_shape)} "
                      "is none the SDP reads (per element, per channel, a constant scalar)")


def _full_layout(ctx, out_shape, dtype, first):
    """The layout of an element-wise op's result: its first tensor operand's."""
    info = ctx.info(first)
    if tuple(info.shape) == tuple(out_shape):
        return _tensor_layout(ctx, first, out_shape, dtype)
    return natural_layout(out_shape, dtype)


def _wants_surface(ctx, first, layout, operands, out_shape):
    """A per-channel constant needs a surface (rows become pixels), unless the tensor already
    lies on the NPU in another layout."""
    if layout.kind == "surface" or ctx.layout(first) is not None:
        return layout
    for name in operands:
        info = ctx.info(name)
        if info.const is not None and tuple(info.shape) != tuple(out_shape) and info.const.size > 1 and \
                _channel_vector(info, layout):
            return Layout("surface", layout.view, layout.M, layout.N, layout.dtype, layout.valid)
    return layout


EW_OPS = {"Add": "add", "Sub": "add", "Mul": "mul", "Max": "max", "Min": "min", "PRelu": "prelu"}


def _binary_batch(ctx, op_type, first, rest, placed, out_shape, dtype):
    """An element-wise op over a batch the partition holds image by image: each image with its
    operand (a constant shared by all, or the same image of another batch or input)."""
    if tuple(ctx.info(first).shape) != tuple(out_shape):
        ctx.flush()
    layout, outs = placed.layout, []
    shared = {}
    for n, a in enumerate(placed.names):
        for name in rest:
            info = ctx.info(name)
            value = _scalar_const(ctx, name)
            other = ctx.placed(name)
            if value is not None and op_type != "PRelu":
                operand = _value(value, layout.dtype)
            elif info.const is not None and layout.kind == "surface" and \
                    _channel_vector(info, layout):
                if name not in shared:
                    shared[name] = _channel_const(ctx, info.const, layout)
                operand = ("channel", shared[name])
            elif other is not None:
                if len(other.names) != len(placed.names) or other.layout != layout:
                    ctx.flush()
                operand = ("element", other.names[n])
            else:
                operand = ("element", ctx.operand(name, layout, lambda v, n=n: np.broadcast_to(v, out_shape)[n:n + 1],
                                                  cut_key=("image", n)))
            if op_type == "Sub":
                operand = _negated(ctx, operand, layout, dtype)
            out = ctx.fresh()
            _ew_line(ctx, out, EW_OPS[op_type], a, layout, operand, dtype)
            a = out
        outs.append(a)
    return ctx.result(outs, layout, placed.part_shape)


def binary(ctx, node):
    """Add, Sub, Mul, Max, Min (two or more inputs) and PRelu on the SDP."""
    op_type = node.op_type
    names = [n for n in node.inputs if n]
    out_shape = ctx.info(node.outputs[0]).shape
    dtype = _precision(ctx, names[0])
    for n in names[1:]:
        if np.dtype(ctx.info(n).dtype) != np.dtype(ctx.info(names[0]).dtype):
            raise Unsupported("operands of different element types")
    if dtype != "fp16" and op_type not in ("Max", "Min"):
        # integer adds and products saturate on the SDP; ONNX's wrap around
        raise Unsupported(f"integer {op_type} wraps in ONNX and saturates on the SDP")
    if len(names) == 1:
        return ctx.alias(names[0])
    full = [n for n in names if tuple(ctx.info(n).shape) == tuple(out_shape)]
    commutative = op_type in ("Add", "Mul", "Max", "Min")
    first = names[0] if not commutative or not full or names[0] in full else full[0]
    rest = [n for n in names if n != first] if first != names[0] else names[1:]
    ew_op = EW_OPS[op_type]
    placed = ctx.placed(first)
    if placed is not None and placed.batched:
        return _binary_batch(ctx, op_type, first, rest, placed, out_shape, dtype)
    layout = _full_layout(ctx, out_shape, dtype, first)
    layout = _wants_surface(ctx, first, layout, rest, out_shape)
    if tuple(ctx.info(first).shape) != tuple(out_shape) and ctx.layout(first) is not None:
        ctx.flush()  # a broadcast of a tensor the partition holds: from the host, next partition
    a = ctx.operand(first, layout, None if tuple(ctx.info(first).shape) == tuple(out_shape)
                    else lambda v: np.broadcast_to(v, out_shape))
    for name in rest:
        operand = _operand(ctx, name, layout, out_shape, allow_value=op_type != "PRelu")
        if op_type == "Sub":
            operand = _negated(ctx, operand, layout, dtype)
        out = ctx.fresh()
        _ew_line(ctx, out, ew_op, a, layout, operand, dtype)
        a = out
    return a, layout


def _negated(ctx, operand, layout, dtype):
    kind, arg = operand
    if kind == "value":
        return ("value", -arg)
    if kind == "channel":
        return ("channel", ctx.const(-ctx.const_value(arg)))
    neg = ctx.fresh()
    _ew_line(ctx, neg, "mul", arg, layout, ("value", -1.0), dtype)
    return ("element", neg)


def _act_line(ctx, out, x, layout, options):
    ctx.line(out, "act", [x], f"{options} --dtype {layout.dtype} -M {layout.M} -N {layout.N} --layout {layout.kind}")


def _unary_inputs(ctx, node, fp16_only):
    """The tensors an element-wise op of one input reads: the input, or each image of a batch
    the partition holds; their layout and the batch's part shape."""
    name = node.inputs[0]
    dtype = _precision(ctx, name, ("fp16",) if fp16_only else ("fp16", "int8", "int16"))
    placed = ctx.placed(name)
    if placed is not None and placed.batched:
        return list(placed.names), placed.layout, placed.part_shape
    layout = _tensor_layout(ctx, name, ctx.info(name).shape, dtype)
    return [ctx.operand(name, layout)], layout, None


# The table functions whose ONNX definition is regcmd's, and the inputs their tables cover
# (beyond them: the function's held or linear tail, regcmd-gen's --range).
TABLES = {"Sigmoid": ("sigmoid", None), "Tanh": ("tanh", None), "HardSwish": ("hardswish", None),
          "Exp": ("exp", (-16.0, 4.0)), "Softplus": ("softplus", None)}
# SELU's constants as ONNX's defaults give them (float32): the table of regcmd's selu
SELU_ALPHA, SELU_GAMMA = 1.67326319217681884765625, 1.05070102214813232421875


def unary(ctx, node):
    """Relu, LeakyRelu, Clip, the table functions and HardSigmoid on the SDP."""
    xs, layout, part_shape = _unary_inputs(ctx, node, fp16_only=node.op_type in TABLES or
                                           node.op_type in ("HardSigmoid", "LeakyRelu", "Elu", "Selu"))
    return ctx.result([_unary_one(ctx, node, x, layout) for x in xs], layout, part_shape)


def _unary_one(ctx, node, x, layout):
    op, attrs = node.op_type, node.attrs
    out = ctx.fresh()
    if op in TABLES:
        fn, table_range = TABLES[op]
        if op == "Exp" and "Exp" in ctx.table_ranges:
            table_range = ctx.table_ranges["Exp"]
        _act_line(ctx, out, x, layout, f"--fn {fn}" + (f" --range {table_range[0]},{table_range[1]}" if table_range else ""))
    elif op == "HardSigmoid":
        # clip(alpha x + beta, 0, 1): a product, an immediate sum and a clip
        scaled, shifted = ctx.fresh(), ctx.fresh()
        _ew_line(ctx, scaled, "mul", x, layout, ("value", attrs.get("alpha", 0.2)), "fp16")
        _ew_line(ctx, shifted, "add", scaled, layout, ("value", attrs.get("beta", 0.5)), "fp16")
        _act_line(ctx, out, shifted, layout, "--fn clip --lo 0 --hi 1")
    elif op == "Elu":
        _act_line(ctx, out, x, layout, f"--fn elu --alpha {_float_text(attrs.get('alpha', 1.0))}")
    elif op == "Selu":
        alpha, gamma = attrs.get("alpha", SELU_ALPHA), attrs.get("gamma", SELU_GAMMA)
        if abs(alpha - SELU_ALPHA) < 1e-6 and abs(gamma - SELU_GAMMA) < 1e-6:
            _act_line(ctx, out, x, layout, "--fn selu")
        else:  # gamma ELU_alpha: the table, then the product
            elu = ctx.fresh()
            _act_line(ctx, elu, x, layout, f"--fn elu --alpha {_float_text(alpha)}")
            _ew_line(ctx, out, "mul", elu, layout, ("value", gamma), "fp16")
    elif op == "Relu":
        _act_line(ctx, out, x, layout, "--fn relu")
    elif op == "LeakyRelu":
        alpha = attrs.get("alpha", 0.01)
        if not 0 <= alpha < 1:
            raise Unsupported(f"LeakyRelu alpha {alpha}: the DPU's slope is in [0, 1)")
        _act_line(ctx, out, x, layout, f"--fn leaky --slope {_float_text(alpha)}")
    else:
        return _clip(ctx, node, x, layout, out)
    return out


def _clip(ctx, node, x, layout, out):
    names = list(node.inputs) + [""] * 3
    bounds = []
    top = FP16_MAX if layout.dtype == "fp16" else (127 if layout.dtype == "int8" else 32767)
    for name, default in ((names[1], -top - (layout.dtype != "fp16")), (names[2], top)):
        if not name:
            bounds.append(default)
            continue
        bounds.append(_scalar_const(ctx, name))
    if None not in bounds and bounds[0] < bounds[1]:
        fmt = _float_text if layout.dtype == "fp16" else (lambda v: str(int(v)))
        _act_line(ctx, out, x, layout, f"--fn clip --lo {fmt(bounds[0])} --hi {fmt(bounds[1])}")
        return out
    # bounds given as tensors: max with the low one, then min with the high one
    placed = ctx.placed(node.inputs[0])
    if placed is not None and placed.batched:
        ctx.flush()
    out_shape = ctx.info(node.inputs[0]).shape
    a = x
    for name, op in ((names[1], "max"), (names[2], "min")):
        if not name:
            continue
        nxt = ctx.fresh()
        _ew_line(ctx, nxt, op, a, layout, _operand(ctx, name, layout, out_shape), layout.dtype)
        a = nxt
    return a


def matmul(ctx, node):
    """MatMul (2-D) and Gemm on the CNA: fp16 in, fp16 out, weights from the host."""
    a_name, b_name = node.inputs[0], node.inputs[1]
    a_info, b_info = ctx.info(a_name), ctx.info(b_name)
    _precision(ctx, a_name, ("fp16",))
    _precision(ctx, b_name, ("fp16",))
    gemm = node.op_type == "Gemm"
    attrs = node.attrs
    if not gemm and (len(a_info.shape) != 2 or len(b_info.shape) != 2):
        return _batched_matmul(ctx, node)
    trans_a, trans_b = gemm and attrs.get("transA", 0), gemm and attrs.get("transB", 0)
    M, K = a_info.shape[::-1] if trans_a else a_info.shape
    N = b_info.shape[0] if trans_b else b_info.shape[1]
    if trans_a and ctx.layout(a_name) is not None:
        raise Unsupported("transA of a tensor on the NPU")
    alpha = attrs.get("alpha", 1.0) if gemm else 1.0
    a = ctx.operand(a_name, Layout("flat", "rows", M, K, "fp16"), (lambda v: v.T) if trans_a else None)
    weights = (lambda v: v.T) if trans_b else (lambda v: v)
    if b_info.const is not None:
        b = ctx.weights(np.asarray(weights(b_info.const), dtype=np.float64) * alpha)
        alpha = 1.0
    else:
        b = ctx.weights_of(b_name, weights)
    out = ctx.fresh()
    ctx.line(out, "matmul", [a, b], f"--in fp16 --out fp16 -M {M} -K {K} -N {N}")
    layout = matmul_output(M, N)
    if alpha != 1.0:
        scaled = ctx.fresh()
        _ew_line(ctx, scaled, "mul", out, layout, ("value", alpha), "fp16")
        out = scaled
    if gemm and len(node.inputs) > 2 and node.inputs[2]:
        c_name, beta = node.inputs[2], attrs.get("beta", 1.0)
        c_info = ctx.info(c_name)
        if c_info.const is not None:
            c = np.broadcast_to(np.asarray(c_info.const, dtype=np.float64) * beta, (M, N))
            if not c.any():  # a zero bias adds nothing (torchvision's classifiers start so)
                return out, layout
            operand = ("value", float(c.flat[0])) if c_info.const.size == 1 else ("element", ctx.const_tensor(c, layout))
        else:
            operand = _operand(ctx, c_name, layout, (M, N))
            if beta != 1.0:
                scaled_c = ctx.fresh()
                _ew_line(ctx, scaled_c, "mul", operand[1], layout, ("value", beta), "fp16")
                operand = ("element", scaled_c)
        summed = ctx.fresh()
        _ew_line(ctx, summed, "add", out, layout, operand, "fp16")
        out = summed
    return out, layout


def matmul_output(M, N):
    """A fp16 matmul's result: M rows of N padded to the weight tile's 16 columns (an SDP
    after it reads them all: graph-tensor-format)."""
    return Layout("flat", "rows", M, -(-N // 16) * 16, "fp16", N)


def matmul_integer(ctx, node):
    """MatMulInteger of int8 matrices without zero points: the CNA's int8 matmul, whose int32
    accumulator is the exact product (a zero point would need each row's sum of A)."""
    names = list(node.inputs) + [""] * 4
    a_name, b_name = names[0], names[1]
    a_info, b_info = ctx.info(a_name), ctx.info(b_name)
    for name in (a_name, b_name):
        if np.dtype(ctx.info(name).dtype) != np.dtype(np.int8):
            raise Unsupported("a MatMulInteger of uint8: the CNA's integer matmul reads int8")
    for name in names[2:4]:
        if name and (ctx.info(name).const is None or np.any(ctx.info(name).const)):
            raise Unsupported("a MatMulInteger with a zero point: the CNA adds none")
    if len(a_info.shape) != 2 or len(b_info.shape) != 2:
        raise Unsupported("a batched MatMulInteger")
    (M, K), N = a_info.shape, b_info.shape[1]
    a = ctx.operand(a_name, Layout("flat", "rows", M, K, "int8"))
    b = ctx.weights(b_info.const, np.int8) if b_info.const is not None else ctx.weights_of(b_name, lambda v: v)
    out = ctx.fresh()
    ctx.line(out, "matmul", [a, b], f"--in int8 --out int32 -M {M} -K {K} -N {N}")
    return out, Layout("flat", "rows", M, -(-N // 32) * 32, "int32", N)


def _batched_matmul(ctx, node):
    """A batched MatMul: one matmul op per matrix of the batch, the slices cut and the
    results stacked on the host."""
    a_name, b_name = node.inputs[0], node.inputs[1]
    a_shape, b_shape = tuple(ctx.info(a_name).shape), tuple(ctx.info(b_name).shape)
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise Unsupported("a MatMul of a vector")
    out_shape = tuple(ctx.info(node.outputs[0]).shape)
    batch = out_shape[:-2]
    M, K, N = a_shape[-2], a_shape[-1], b_shape[-1]
    parts = []
    for index in np.ndindex(*batch):
        def cut(v, index=index):
            return np.broadcast_to(v, batch + v.shape[-2:])[index]
        a = ctx.operand(a_name, Layout("flat", "rows", M, K, "fp16"), cut, cut_key=index)
        if ctx.info(b_name).const is not None:
            b = ctx.weights(cut(ctx.info(b_name).const).astype(np.float64))
        else:
            b = ctx.weights_of(b_name, cut)
        out = ctx.fresh()
        ctx.line(out, "matmul", [a, b], f"--in fp16 --out fp16 -M {M} -K {K} -N {N}")
        parts.append(out)
    return ctx.result(parts, matmul_output(M, N), (M, N))


def _image_dims(shape):
    """C, H, W of an image of a 1-D (N, C, L) or 2-D (N, C, H, W) batch; 1-D runs one pixel tall."""
    return (shape[1], 1, shape[2]) if len(shape) == 3 else tuple(shape[1:])


def _batch_of(ctx, node):
    x_shape = tuple(ctx.info(node.inputs[0]).shape)
    if len(x_shape) not in (3, 4):
        raise Unsupported(f"an input of {x_shape}: the NPU takes 1-D and 2-D images")
    return x_shape, x_shape[0], (1,) + tuple(ctx.info(node.outputs[0]).shape[1:])


def _conv_geometry(attrs, x_shape, w_shape, C, O, held=None):
    """A convolution's kernel, strides, dilations and pads as regcmd-gen's options (1-D as
    one pixel tall), whether it is depthwise, and its output's pixels. `held`: the channels
    of its input and output as the NPU holds them (C, O otherwise)."""
    _, H, W = _image_dims(x_shape)
    kernel = list(attrs.get("kernel_shape", w_shape[2:]))
    n = len(kernel)
    strides = list(attrs.get("strides", [1] * n))
    dilations = list(attrs.get("dilations", [1] * n))
    begin, end = spatial_pads(attrs, x_shape[2:], kernel, strides, dilations)
    if len(x_shape) == 3:
        kernel, strides, dilations, begin, end = [1] + kernel, [1] + strides, [1] + dilations, [0] + begin, [0] + end
    group = attrs.get("group", 1)
    depthwise = group == C and group > 1
    if group != 1 and not (depthwise and O == C):
        raise Unsupported(f"group {group} of {C} channels into {O}: the NPU runs group 1 and depthwise "
                          "(a channel multiplier of 1)")
    out_h = (H + begin[0] + end[0] - ((kernel[0] - 1) * dilations[0] + 1)) // strides[0] + 1
    out_w = (W + begin[1] + end[1] - ((kernel[1] - 1) * dilations[1] + 1)) // strides[1] + 1
    held_c, held_o = held or (C, O)
    options = (f"-H {H} -W {W} -C {held_c} --out-channels {held_o} --kernel {kernel[0]}x{kernel[1]} "
               f"--stride {strides[0]}x{strides[1]} --dilation {dilations[0]}x{dilations[1]} "
               f"--pad {begin[0]},{end[0]},{begin[1]},{end[1]}" + (" --depthwise" if depthwise else ""))
    return dict(kernel=kernel, options=options, depthwise=depthwise, out_pixels=out_h * out_w)


def _ohwi(w, O, kernel, depthwise, held=None):
    """ONNX's OIHW weights (1-D: OIW) as the packer's OHWI; a depthwise conv's as 1 x KH x KW x C.
    `held` (the input's and output's channels on the NPU): zero kernels and channels up to them."""
    w = w.reshape(O, -1, kernel[0], kernel[1])
    w = w[:, 0].transpose(1, 2, 0)[None] if depthwise else w.transpose(0, 2, 3, 1)
    if held is None:
        return w
    c, o = held
    return np.pad(w, ((0, 0 if depthwise else o - w.shape[0]), (0, 0), (0, 0), (0, c - w.shape[3])))


def conv(ctx, node):
    """Conv: conv2d (group 1) and depthwise (group = channels), fp16, image by image; its bias
    and a fused Relu or ReLU6 (fusion.py) in the DPU's output stage. 1-D convolutions run as
    images one pixel tall."""
    x_name, w_name = node.inputs[0], node.inputs[1]
    w_info = ctx.info(w_name)
    _precision(ctx, x_name, ("fp16",))
    x_shape, batch, part_shape = _batch_of(ctx, node)
    C, H, W = _image_dims(x_shape)
    O = w_info.shape[0]
    held = (image_channels(C, "fp16"), image_channels(O, "fp16"))  # zero channels and kernels up to them
    geometry = _conv_geometry(node.attrs, x_shape, w_info.shape, C, O, held)
    kernel, options, depthwise = geometry["kernel"], geometry["options"], geometry["depthwise"]
    x_layout, layout = image_surface(H * W, C, "fp16"), image_surface(geometry["out_pixels"], O, "fp16")

    def ohwi(w):
        return _ohwi(np.asarray(w, dtype=np.float64), O, kernel, depthwise, held)
    weights = ctx.weights(ohwi(w_info.const)) if w_info.const is not None else ctx.weights_of(w_name, ohwi)
    bias = None
    if len(node.inputs) > 2 and node.inputs[2]:
        b_info = ctx.info(node.inputs[2])
        if b_info.const is None:
            raise Unsupported("a Conv bias from the graph's inputs")
        bias = np.asarray(b_info.const, dtype=np.float64).reshape(-1)
        bias = np.pad(bias, (0, layout.N - O)) if bias.any() else None  # a zero bias adds nothing
    act = node.attrs.get("regcmd_act")
    stage = (" --bias" if bias is not None else "") + (f" --{act}" if act else "")
    outs = []
    for x in ctx.images(x_name, batch, x_layout):
        out = ctx.fresh()
        ctx.line(out, "conv", [x, weights], f"--in fp16 --out fp16 {options}{stage}")
        if bias is not None:
            ctx.bias(out, bias, np.float32)
        outs.append(out)
    return ctx.result(outs, layout, part_shape)


def _per_tensor(ctx, name, what):
    """The value of a per-tensor quantization parameter (a constant of one element)."""
    value = _scalar_const(ctx, name) if name else None
    if value is None:
        raise Unsupported(f"{what} is no constant of one element: the DPU requantizes with one scale per tensor")
    return value


def qlinear_conv(ctx, node):
    """QLinearConv on the CNA's uint8 or int8 path: per-tensor scales and zero points, the
    int32 bias packed with the weights, requantized by the DPU (within one step of ONNX's
    rounding: a 15-bit multiplier, rounded half up)."""
    names = list(node.inputs) + [""] * 9
    x_name, w_name, b_name = names[0], names[3], names[8]
    x_type = np.dtype(ctx.info(x_name).dtype)
    if x_type not in (np.dtype(np.uint8), np.dtype(np.int8)) or np.dtype(ctx.info(w_name).dtype) != x_type or \
            np.dtype(ctx.info(names[7]).dtype) != x_type:
        raise Unsupported("input, weights and output of different 8-bit types: the CNA takes one")
    dtype = "uint8" if x_type == np.dtype(np.uint8) else "int8"
    quant = [(_per_tensor(ctx, names[i], what), flag) for i, what, flag in (
        (1, "x_scale", "--input-scale"), (2, "x_zero_point", "--input-zero-point"),
        (4, "w_scale", "--weight-scale"), (5, "w_zero_point", "--weight-zero-point"),
        (6, "y_scale", "--output-scale"), (7, "y_zero_point", "--output-zero-point"))]
    quant_options = " ".join(f"{flag} {int(v) if 'zero' in flag else _float_text(v)}" for v, flag in quant)
    w_info = ctx.info(w_name)
    x_shape, batch, part_shape = _batch_of(ctx, node)
    C, H, W = _image_dims(x_shape)
    O = w_info.shape[0]
    geometry = _conv_geometry(node.attrs, x_shape, w_info.shape, C, O)
    kernel, options = geometry["kernel"], geometry["options"]
    depthwise = geometry["depthwise"]

    def ohwi(w):
        return _ohwi(np.asarray(w), O, kernel, depthwise)
    host_type = np.uint8 if dtype == "uint8" else np.int8
    weights = ctx.weights(ohwi(w_info.const), host_type) if w_info.const is not None else \
        ctx.weights_of(w_name, ohwi)
    bias = None
    if b_name:
        b = ctx.info(b_name).const
        if b is None:
            raise Unsupported("a QLinearConv bias from the graph's inputs")
        bias = np.asarray(b).reshape(-1)
    layout = Layout("surface", "nchw", geometry["out_pixels"], O, dtype)
    outs = []
    for x in ctx.images(x_name, batch, Layout("surface", "nchw", H * W, C, dtype)):
        out = ctx.fresh()
        ctx.line(out, "conv", [x, weights], f"--in {dtype} --out int8 {options} {quant_options}" +
                 (" --bias" if bias is not None else "") + (" --relu" if node.attrs.get("regcmd_relu") else ""))
        if bias is not None:
            ctx.bias(out, bias)
        outs.append(out)
    return ctx.result(outs, layout, part_shape)


def pool(ctx, node):
    """MaxPool, AveragePool and the global poolings on the PPU (1-D and 2-D), image by image."""
    op, attrs = node.op_type, node.attrs
    x_name = node.inputs[0]
    average = "Average" in op
    dtype = _precision(ctx, x_name, ("fp16",) if average else ("fp16", "int8"))
    x_shape, batch, part_shape = _batch_of(ctx, node)
    if len(node.outputs) > 1 and node.outputs[1]:
        raise Unsupported("MaxPool's Indices output")
    C, H, W = _image_dims(x_shape)
    x_layout = image_surface(H * W, C, dtype)
    held = x_layout.N  # every channel the NPU holds, padding included: pooled apart
    program, extra_inputs, correction = "pool", [], None
    if op.startswith("Global"):
        options = f"--op {'global-avg' if average else 'global-max'} --dtype {dtype} -H {H} -W {W} -C {held}"
        layout = image_surface(1, C, dtype)
    else:
        kernel, strides, dilations, begin, end, out_size = pool_geometry(attrs, x_shape[2:])
        if any(d != 1 for d in dilations):
            raise Unsupported("a pooling with dilations: the PPU's window is dense")
        # ceil_mode's last windows as end padding (-inf for max, 0 for an average)
        extra = [(o - 1) * s + k - (size + b + e) for o, s, k, size, b, e in
                 zip(out_size, strides, kernel, x_shape[2:], begin, end)]
        counted = [max(0, x) for x in extra]
        end = [e + x for e, x in zip(end, counted)]
        if average:
            correction = _average_correction(attrs, x_shape[2:], kernel, strides, begin, end, counted, out_size)
        if len(x_shape) == 3:
            kernel, strides, begin, end, out_size = [1] + kernel, [1] + strides, [0] + begin, [0] + end, [1] + out_size
        options = (f"--op {'avg' if average else 'max'} --dtype {dtype} -H {H} -W {W} -C {held} "
                   f"--kernel {kernel[0]}x{kernel[1]} --stride {strides[0]}x{strides[1]} "
                   f"--pad {begin[0]},{end[0]},{begin[1]},{end[1]}")
        if average and min(kernel) == 1:
            # the PPU's reciprocal fp16(2^16 / k) has no value for k = 1 (pool-average-kernel):
            # a depthwise convolution of weights 1 / (kh kw) sums the same window
            weights = ctx.weights(np.full((1, kernel[0], kernel[1], held), 1.0 / (kernel[0] * kernel[1])))
            program, extra_inputs = "conv", [weights]
            options = (f"--in fp16 --out fp16 -H {H} -W {W} -C {held} --out-channels {held} --depthwise "
                       f"--kernel {kernel[0]}x{kernel[1]} --stride {strides[0]}x{strides[1]} "
                       f"--pad {begin[0]},{end[0]},{begin[1]},{end[1]}")
        layout = image_surface(out_size[0] * out_size[1], C, dtype)
    if correction is not None:
        correction = ctx.const_tensor(np.broadcast_to(correction, (1, C) + correction.shape), layout)
    outs = []
    for x in ctx.images(x_name, batch, x_layout):
        out = ctx.fresh()
        ctx.line(out, program, [x] + extra_inputs, options)
        if correction is not None:
            corrected = ctx.fresh()
            _ew_line(ctx, corrected, "mul", out, layout, ("element", correction), dtype)
            out = corrected
        outs.append(out)
    return ctx.result(outs, layout, part_shape)


def _average_correction(attrs, size, kernel, strides, begin, end, counted, out_size):
    """What turns the NPU's average, the window's sum over its whole size, into ONNX's: per
    output pixel, the window's size over the pixels it counts (the image's, and with
    count_include_pad its explicit pads, never ceil_mode's end); None where every window
    counts its whole size."""
    include = attrs.get("count_include_pad", 0)
    factors = []
    for n, k, s, b, e, c, o in zip(size, kernel, strides, begin, end, counted, out_size):
        lo, hi = (-b, n + e - c) if include else (0, n)  # the positions counted along this axis
        starts = np.arange(o) * s - b
        factors.append(k / (np.minimum(starts + k, hi) - np.maximum(starts, lo)))
    correction = factors[0] if len(factors) == 1 else np.outer(factors[0], factors[1])
    return None if np.all(correction == 1) else correction.reshape(([1] if len(factors) == 1 else []) + list(correction.shape))


def batchnorm(ctx, node):
    """BatchNormalization at inference, alone (after a Conv it is folded into the Conv): per
    channel, the mean subtracted, the product and the shift on the SDP, image by image."""
    x_name = node.inputs[0]
    _precision(ctx, x_name, ("fp16",))
    consts = [ctx.info(n).const for n in node.inputs[1:5]]
    if any(c is None for c in consts):
        raise Unsupported("a BatchNormalization of statistics from the graph's inputs")
    x_shape, batch, part_shape = _batch_of(ctx, node)
    scale, bias, mean, var = (np.asarray(c, dtype=np.float64) for c in consts)
    factor = scale / np.sqrt(var + node.attrs.get("epsilon", 1e-5))
    C, H, W = _image_dims(x_shape)
    layout = image_surface(H * W, C, "fp16")
    # (x - mean) first: x factor + (bias - mean factor) would cancel in fp16 where var is small
    centre, mul, add = (_channel_const(ctx, v, layout) for v in (-mean, factor, bias))
    outs = []
    for x in ctx.images(x_name, batch, layout):
        centred, scaled, out = ctx.fresh(), ctx.fresh(), ctx.fresh()
        _ew_line(ctx, centred, "add", x, layout, ("channel", centre), "fp16")
        _ew_line(ctx, scaled, "mul", centred, layout, ("channel", mul), "fp16")
        _ew_line(ctx, out, "add", scaled, layout, ("channel", add), "fp16")
        outs.append(out)
    return ctx.result(outs, layout, part_shape)


def concat(ctx, node):
    """Concat of two fp16 images along their channels, both written in this partition: the
    graph places them side by side in the result's bytes, so the ops writing them write it and
    nothing is copied (docs/graph.md, "Concat"). The first part must hold its channels without
    padding (a multiple of 16), or its padding would fall inside the result."""
    names = [n for n in node.inputs if n]
    shape = tuple(ctx.info(node.outputs[0]).shape)
    _precision(ctx, names[0], ("fp16",))
    if len(names) != 2 or len(shape) != 4 or shape[0] != 1 or node.attrs.get("axis") % 4 != 1:
        raise Unsupported("a Concat other than of two images along their channels")
    placed = [ctx.placed(n) for n in names]
    if any(p is None or p.batched for p in placed):
        raise Unsupported("a Concat of a value from the host: no op writes it in place")
    (first, second), pixels = placed, shape[2] * shape[3]
    if first.layout != image_surface(pixels, ctx.info(names[0]).shape[1], "fp16") or first.layout.valid or \
            second.layout != image_surface(pixels, ctx.info(names[1]).shape[1], "fp16"):
        raise Unsupported("a Concat whose first part pads its channels (not a multiple of 16)")
    out = ctx.fresh()
    ctx.line(out, "concat", [first.names[0], second.names[0]],
             f"--dtype fp16 -M {pixels} --channels {first.layout.N},{second.layout.N}")
    return out, image_surface(pixels, shape[1], "fp16")


# --- the norm family (docs/graph.md, "The norm family"): rows of the last axis -------------

HIDDEN = -32768.0  # a mask's value that hides an element (norm/softmax.hpp)


def _rows(ctx, name, axis, what):
    """M x N of `name` reduced or normalized over the axes from `axis` on, in fp16."""
    _precision(ctx, name, ("fp16",))
    shape = tuple(ctx.info(name).shape)
    if not shape:
        raise Unsupported(f"{what} of a scalar")
    axis %= len(shape)
    M = int(np.prod(shape[:axis], dtype=np.int64))
    return M, int(np.prod(shape[axis:], dtype=np.int64))


def _mask(ctx, out, M, length, held):
    """The preset's mask "<out>.mask": 0 on a row's elements, HIDDEN on its padding."""
    mask = np.zeros((M, held))
    mask[:, length:] = HIDDEN
    ctx.p.consts[f"{out}.mask"] = np.ascontiguousarray(mask, dtype=np.float32)


def softmax(ctx, node):
    """Softmax over the last axis (rows held in softmax_row_length, the padding masked)."""
    x = node.inputs[0]
    rank = len(ctx.info(x).shape)
    if node.attrs.get("axis", -1) % max(rank, 1) != rank - 1:
        raise Unsupported("a softmax over another axis than the last (the NPU's rows are the last axis)")
    M, L = _rows(ctx, x, -1, "softmax")
    N = _regcmd.softmax_row_length(L)
    if N > 8192:
        raise Unsupported(f"a softmax row of {L} elements (the NPU's pooling takes 8192 at most)")
    layout = Layout("flat", "rows", M, N, "fp16", L if N != L else 0)
    a = ctx.operand(x, layout)
    out = ctx.fresh()
    if N != L:
        _mask(ctx, out, M, L, N)
    ctx.line(out, "softmax", [a], f"-M {M} -N {N}" + (" --mask" if N != L else ""))
    return out, layout


def layer_norm(ctx, node):
    """LayerNormalization over the axes from `axis` on, of rows of a multiple of 32 elements,
    its Scale and B constants; its Y only."""
    if any(node.outputs[1:]):
        raise Unsupported("LayerNormalization's Mean and InvStdDev outputs are not computed on the NPU")
    x = node.inputs[0]
    M, D = _rows(ctx, x, node.attrs.get("axis", -1), "LayerNormalization")
    if D % 32:
        raise Unsupported(f"rows of {D} elements: the NPU's norms take a multiple of 32 (rule norm-shape)")
    vectors = []
    for name in node.inputs[1:3]:
        if not name:
            continue
        info = ctx.info(name)
        if info.const is None:
            raise Unsupported(f"{name}: LayerNormalization's Scale and B are constants on the NPU")
        vectors.append(np.broadcast_to(np.asarray(info.const, dtype=np.float64).reshape(-1), (D,)))
    layout = Layout("flat", "rows", M, D, "fp16")
    a = ctx.operand(x, layout)
    out = ctx.fresh()
    names = [ctx.const(v) for v in vectors]
    ctx.line(out, "layernorm", [a, *names], f"-M {M} -D {D} --eps {_float_text(node.attrs.get('epsilon', 1e-5))}")
    return out, layout


REDUCE_OPS = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max"}


def reduce(ctx, node):
    """ReduceSum, ReduceMean and ReduceMax over trailing axes (the last, the last few, all):
    rows of what they reduce, held in multiples of 32 (the padding weighed 0, or hidden for
    the maximum)."""
    x = node.inputs[0]
    shape = tuple(ctx.info(x).shape)
    axes_name = node.inputs[1] if len(node.inputs) > 1 else ""
    axes = None
    if axes_name:
        if ctx.info(axes_name).const is None:
            raise Unsupported("axes computed at run time")
        axes = ctx.info(axes_name).const
    reduced = reduce_axes(node.attrs, np.empty(shape), axes) if shape else None
    if reduced is None or sorted(reduced) != list(range(len(shape) - len(reduced), len(shape))):
        raise Unsupported("a reduction over other axes than trailing ones (the NPU's rows are the last axes)")
    M, L = _rows(ctx, x, len(shape) - len(reduced), node.op_type)
    op = REDUCE_OPS[node.op_type]
    N = _regcmd.softmax_row_length(L) if op == "max" else -(-L // 32) * 32
    layout = Layout("flat", "rows", M, N, "fp16", L if N != L else 0)
    a = ctx.operand(x, layout)
    out = ctx.fresh()
    masked = op == "max" and N != L
    if masked:
        _mask(ctx, out, M, L, N)
    ctx.line(out, "reduce", [a], f"--op {op} -M {M} -N {N}" + (f" --count {L}" if N != L else "") +
             (" --mask" if masked else ""))
    return out, Layout("flat", "rows", M, 16, "fp16", 1)


LOWERINGS = {
    **{op: binary for op in ("Add", "Sub", "Mul", "Max", "Min", "PRelu")},
    **{op: unary for op in ("Relu", "LeakyRelu", "Clip", "HardSigmoid", "Elu", "Selu", *TABLES)},
    "MatMul": matmul, "Gemm": matmul, "Conv": conv, "QLinearConv": qlinear_conv, "MatMulInteger": matmul_integer,
    **{op: pool for op in ("MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool")},
    "BatchNormalization": batchnorm, "Concat": concat,
    "Softmax": softmax, "LayerNormalization": layer_norm, **{op: reduce for op in REDUCE_OPS},
}

__all__ = ["LOWERINGS"]
