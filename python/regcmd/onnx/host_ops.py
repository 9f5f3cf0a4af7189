"""The ONNX ops the importer maps, computed on the host with numpy: what runs where the NPU
cannot (an element type, an attribute or a shape it has no path for), and the layout ops.

Each function takes the node's attributes (a dict) and its input arrays (None for an
omitted optional input) and returns its outputs as a list. Floating-point ops compute in
float64 and return the inputs' type; integer ops follow the ONNX operator definitions
(onnx.ai/onnx/operators), saturation and rounding included.
"""

import itertools

import numpy as np


class Unsupported(ValueError):
    """A node the importer cannot run, on the NPU or on the host: why, naming the node."""


# --- element-wise ------------------------------------------------------------------------

def _float_result(x, like):
    return np.asarray(x).astype(like.dtype, copy=False)


def _binary(fn):
    def op(attrs, a, b):
        return [np.asarray(fn(a, b)).astype(np.result_type(a, b), copy=False)]
    return op


def _variadic(fn):
    def op(attrs, *xs):
        out = xs[0]
        for x in xs[1:]:
            out = fn(out, x)
        return [np.asarray(out).astype(xs[0].dtype, copy=False)]
    return op


def _unary_float(fn):
    def op(attrs, x):
        return [_float_result(fn(x.astype(np.float64), attrs), x)]
    return op


def _clip(attrs, x, lo=None, hi=None):
    out = x
    if lo is not None and lo.size:
        out = np.maximum(out, lo)
    if hi is not None and hi.size:
        out = np.minimum(out, hi)
    return [out.astype(x.dtype, copy=False)]


def _prelu(attrs, x, slope):
    return [np.where(x < 0, x * slope, x).astype(x.dtype, copy=False)]


def _hardsigmoid(x, attrs):
    return np.clip(attrs.get("alpha", 0.2) * x + attrs.get("beta", 0.5), 0, 1)


def _elu(x, attrs):
    alpha = attrs.get("alpha", 1.0)
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _selu(x, attrs):
    alpha = attrs.get("alpha", 1.67326319217681884765625)
    gamma = attrs.get("gamma", 1.05070102214813232421875)
    return gamma * np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


UNARY = {
    "Relu": lambda x, a: np.maximum(x, 0),
    "LeakyRelu": lambda x, a: np.where(x < 0, a.get("alpha", 0.01) * x, x),
    "Sigmoid": lambda x, a: 1 / (1 + np.exp(-x)),
    "Tanh": lambda x, a: np.tanh(x),
    "HardSigmoid": _hardsigmoid,
    "HardSwish": lambda x, a: x * np.clip(x / 6 + 0.5, 0, 1),
    "Exp": lambda x, a: np.exp(x),
    "Elu": _elu,
    "Selu": _selu,
    "Softplus": lambda x, a: np.logaddexp(0, x),
}


def _relu_any(attrs, x):
    # Relu keeps integer types
    return [np.maximum(x, np.zeros((), x.dtype))]


# --- matrix products -----------------------------------------------------------------------

def _gemm(attrs, a, b, c=None):
    if attrs.get("transA", 0):
        a = a.T
    if attrs.get("transB", 0):
        b = b.T
    out = attrs.get("alpha", 1.0) * (a.astype(np.float64) @ b.astype(np.float64))
    if c is not None:
        out = out + attrs.get("beta", 1.0) * c
    return [out.astype(a.dtype)]


def _matmul(attrs, a, b):
    if np.issubdtype(a.dtype, np.floating):
        return [(a.astype(np.float64) @ b.astype(np.float64)).astype(a.dtype)]
    return [a @ b]


def _zero_point(zp):
    return np.int32(0) if zp is None else zp.astype(np.int32)


def _matmul_integer(attrs, a, b, a_zp=None, b_zp=None):
    a32 = a.astype(np.int32) - _per_row(_zero_point(a_zp))
    b32 = b.astype(np.int32) - _zero_point(b_zp)
    return [np.matmul(a32, b32).astype(np.int32)]


def _per_row(zp):
    # MatMulInteger's a_zero_point is a scalar or one per row of A (M)
    zp = np.asarray(zp)
    return zp.reshape(-1, 1) if zp.ndim == 1 and zp.size > 1 else zp


# --- quantization --------------------------------------------------------------------------

def _axis_shape(v, axis, ndim):
    v = np.asarray(v)
    if v.ndim == 0 or v.size == 1:
        return v.reshape(())
    shape = [1] * ndim
    shape[axis % ndim] = v.size
    return v.reshape(shape)


def _saturate(values, dtype):
    info = np.iinfo(dtype)
    return np.clip(values, info.min, info.max).astype(dtype)


def _quantize(attrs, x, scale, zp=None):
    axis = attrs.get("axis", 1)
    dtype = np.uint8 if zp is None else zp.dtype
    s = _axis_shape(scale, axis, x.ndim).astype(np.float64)
    z = _axis_shape(np.zeros((), dtype) if zp is None else zp, axis, x.ndim).astype(np.int64)
    q = np.rint(x.astype(np.float64) / s) + z  # ties to even, as ONNX rounds
    return [_saturate(q, dtype)]


def _dequantize(attrs, x, scale, zp=None):
    axis = attrs.get("axis", 1)
    s = _axis_shape(scale, axis, x.ndim)
    z = _axis_shape(np.zeros((), x.dtype) if zp is None else zp, axis, x.ndim).astype(np.int64)
    if x.dtype == np.int32:
        z = np.int64(0) if zp is None else z
    return [((x.astype(np.int64) - z) * s.astype(np.float64)).astype(np.float32)]


def _requantize(acc, scale, out_zp):
    q = np.rint(acc.astype(np.float64) * scale) + out_zp.astype(np.int64)
    return _saturate(q, out_zp.dtype)


def _qlinear_matmul(attrs, a, a_s, a_zp, b, b_s, b_zp, y_s, y_zp):
    acc = np.matmul(a.astype(np.int64) - a_zp.astype(np.int64), b.astype(np.int64) - b_zp.astype(np.int64))
    return [_requantize(acc, np.float64(a_s) * np.float64(b_s) / np.float64(y_s), y_zp)]


def _qlinear_conv(attrs, x, x_s, x_zp, w, w_s, w_zp, y_s, y_zp, bias=None):
    wz = _axis_shape(w_zp, 0, w.ndim).astype(np.int64)
    acc = conv_nd(attrs, x.astype(np.int64) - x_zp.astype(np.int64), w.astype(np.int64) - wz)
    if bias is not None:
        acc = acc + bias.astype(np.int64).reshape(1, -1, *([1] * (x.ndim - 2)))
    scale = np.float64(x_s) * _axis_shape(w_s, 1, x.ndim).astype(np.float64) / np.float64(y_s)
    y = _requantize(acc, scale, y_zp)
    if attrs.get("regcmd_relu"):  # a Relu fused into it (fusion.py): real values below 0 clamp to the zero point
        y = np.maximum(y, y_zp)
    return [y]


def _conv_integer(attrs, x, w, x_zp=None, w_zp=None):
    wz = np.int64(0) if w_zp is None else _axis_shape(w_zp, 0, w.ndim).astype(np.int64)
    acc = conv_nd(attrs, x.astype(np.int64) - _zero_point(x_zp).astype(np.int64), w.astype(np.int64) - wz)
    return [acc.astype(np.int32)]


# --- convolution and pooling ---------------------------------------------------------------

def spatial_pads(attrs, in_shape, kernel, strides, dilations):
    """The begin and end pads of each spatial axis: pads, or auto_pad's."""
    n = len(kernel)
    auto = attrs.get("auto_pad", "NOTSET")
    if isinstance(auto, bytes):
        auto = auto.decode()
    if auto in ("NOTSET", ""):
        pads = list(attrs.get("pads", [0] * (2 * n)))
        return pads[:n], pads[n:]
    if auto == "VALID":
        return [0] * n, [0] * n
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise Unsupported(f"auto_pad {auto!r} is none of NOTSET, SAME_UPPER, SAME_LOWER, VALID")
    begin, end = [], []
    for size, k, s, d in zip(in_shape, kernel, strides, dilations):
        out = -(-size // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small, large = total // 2, total - total // 2
        begin.append(small if auto == "SAME_UPPER" else large)
        end.append(large if auto == "SAME_UPPER" else small)
    return begin, end


def conv_nd(attrs, x, w):
    """ONNX Conv over any number of spatial axes, groups included, in x's and w's type."""
    n = x.ndim - 2
    kernel = list(attrs.get("kernel_shape", w.shape[2:]))
    strides = list(attrs.get("strides", [1] * n))
    dilations = list(attrs.get("dilations", [1] * n))
    group = attrs.get("group", 1)
    begin, end = spatial_pads(attrs, x.shape[2:], kernel, strides, dilations)
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(begin, end)))
    out_shape = [(xp.shape[2 + i] - ((kernel[i] - 1) * dilations[i] + 1)) // strides[i] + 1 for i in range(n)]
    batch, channels = x.shape[:2]
    per_group, out_channels = channels // group, w.shape[0]
    out = np.zeros((batch, out_channels, *out_shape), dtype=np.result_type(x, w))
    for g in range(group):
        xs = xp[:, g * per_group:(g + 1) * per_group]
        ws = w[g * out_channels // group:(g + 1) * out_channels // group]
        for tap in itertools.product(*[range(k) for k in kernel]):
            window = tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                           for t, d, o, s in zip(tap, dilations, out_shape, strides))
            patch = xs[(slice(None), slice(None)) + window]
            out[:, g * out_channels // group:(g + 1) * out_channels // group] += np.einsum(
                "nc...,oc->no...", patch, ws[(slice(None), slice(None)) + tap])
    return out


CONV_ACTIVATIONS = {"relu": (0.0, np.inf), "relu6": (0.0, 6.0)}  # a Relu or Clip fused into a Conv (fusion.py)


def _conv(attrs, x, w, b=None):
    out = conv_nd(attrs, x.astype(np.float64), w.astype(np.float64))
    if b is not None:
        out += b.reshape(1, -1, *([1] * (x.ndim - 2)))
    if attrs.get("regcmd_act"):
        out = np.clip(out, *CONV_ACTIVATIONS[attrs["regcmd_act"]])
    return [out.astype(x.dtype)]


def numpy_type(elem_type):
    """The numpy type of an ONNX element type."""
    import onnx
    if hasattr(onnx.helper, "tensor_dtype_to_np_dtype"):
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    return np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type])  # onnx before 1.13


def _constant_of_shape(attrs, shape):
    from onnx import numpy_helper
    value = attrs.get("value")
    fill = numpy_helper.to_array(value).reshape(-1) if value is not None else np.zeros(1, np.float32)
    return np.full(tuple(int(d) for d in np.asarray(shape).reshape(-1)), fill[0], dtype=fill.dtype)


def pool_geometry(attrs, in_shape):
    """Kernel, strides, dilations, begin and end pads, and the output size of each axis."""
    kernel = list(attrs["kernel_shape"])
    n = len(kernel)
    strides = list(attrs.get("strides", [1] * n))
    dilations = list(attrs.get("dilations", [1] * n))
    begin, end = spatial_pads(attrs, in_shape, kernel, strides, dilations)
    ceil = attrs.get("ceil_mode", 0)
    out = []
    for size, k, s, d, b, e in zip(in_shape, kernel, strides, dilations, begin, end):
        span = size + b + e - ((k - 1) * d + 1)
        o = (-(-span // s) if ceil else span // s) + 1
        if ceil and (o - 1) * s >= size + b:  # a last window starting in the end pad is dropped
            o -= 1
        out.append(o)
    return kernel, strides, dilations, begin, end, out


def _pool(attrs, x, average):
    kernel, strides, dilations, begin, end, out_shape = pool_geometry(attrs, x.shape[2:])
    # explicit pads: zeros an average counts (count_include_pad), else nothing; past them
    # (ceil_mode's last windows) nothing
    extra = [max(0, (o - 1) * s + (k - 1) * d + 1 - (size + b + e))
             for o, s, k, d, size, b, e in zip(out_shape, strides, kernel, dilations, x.shape[2:], begin, end)]
    xf = x.astype(np.float64)
    fill = 0.0 if average and attrs.get("count_include_pad", 0) else np.nan
    xp = np.pad(xf, [(0, 0), (0, 0)] + list(zip(begin, end)), constant_values=fill)
    xp = np.pad(xp, [(0, 0), (0, 0)] + [(0, e) for e in extra], constant_values=np.nan)
    taps = []
    for tap in itertools.product(*[range(k) for k in kernel]):
        window = tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                       for t, d, o, s in zip(tap, dilations, out_shape, strides))
        taps.append(xp[(slice(None), slice(None)) + window])
    stack = np.stack(taps)
    out = np.nanmean(stack, axis=0) if average else np.nanmax(stack, axis=0)
    return [out.astype(x.dtype)]


def _global(attrs, x, average):
    axes = tuple(range(2, x.ndim))
    out = x.astype(np.float64).mean(axis=axes, keepdims=True) if average else x.max(axis=axes, keepdims=True)
    return [out.astype(x.dtype)]


def _batchnorm(attrs, x, scale, bias, mean, var):
    if attrs.get("training_mode", 0):
        raise Unsupported("BatchNormalization in training mode (its running statistics are outputs)")
    shape = (1, -1) + (1,) * (x.ndim - 2)
    inv = scale / np.sqrt(var.astype(np.float64) + attrs.get("epsilon", 1e-5))
    out = (x - mean.reshape(shape)) * inv.reshape(shape) + bias.reshape(shape)
    return [out.astype(x.dtype)]


# --- layout --------------------------------------------------------------------------------

def flatten_shape(attrs, shape):
    axis = attrs.get("axis", 1)
    axis = axis + len(shape) if axis < 0 else axis
    return (int(np.prod(shape[:axis], dtype=np.int64)), int(np.prod(shape[axis:], dtype=np.int64)))


def reshape_shape(attrs, shape, target):
    target = [int(t) for t in target]
    out = []
    for i, t in enumerate(target):
        out.append(shape[i] if t == 0 and not attrs.get("allowzero", 0) else t)
    if -1 in out:
        known = int(np.prod([t for t in out if t != -1], dtype=np.int64))
        out[out.index(-1)] = int(np.prod(shape, dtype=np.int64)) // known if known else 0
    return tuple(out)


def squeeze_shape(shape, axes):
    if axes is None:
        return tuple(s for s in shape if s != 1)
    axes = {a % len(shape) for a in axes}
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def unsqueeze_shape(shape, axes):
    rank = len(shape) + len(axes)
    axes = sorted(a % rank for a in axes)
    out = list(shape)
    for a in axes:
        out.insert(a, 1)
    return tuple(out)


def _flatten(attrs, x):
    return [x.reshape(flatten_shape(attrs, x.shape))]


def _reshape(attrs, x, target):
    return [x.reshape(reshape_shape(attrs, x.shape, target))]


def _squeeze(attrs, x, axes=None):
    return [x.reshape(squeeze_shape(x.shape, None if axes is None else list(axes)))]


def _unsqueeze(attrs, x, axes):
    return [x.reshape(unsqueeze_shape(x.shape, list(axes)))]


# --- normalizations and reductions --------------------------------------------------------

def _softmax(attrs, x):
    axis = attrs.get("axis", -1)
    z = x.astype(np.float64)
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return [_float_result(e / e.sum(axis=axis, keepdims=True), x)]


def _layer_norm(attrs, x, scale, bias=None):
    """Y over the axes from `axis` on, and the Mean and InvStdDev outputs (stash_type float)."""
    axis = attrs.get("axis", -1) % x.ndim
    axes = tuple(range(axis, x.ndim))
    z = x.astype(np.float64)
    mean = z.mean(axis=axes, keepdims=True)
    inv = 1 / np.sqrt(((z - mean) ** 2).mean(axis=axes, keepdims=True) + attrs.get("epsilon", 1e-5))
    y = (z - mean) * inv * scale
    if bias is not None:
        y = y + bias
    return [_float_result(y, x), mean.astype(np.float32), inv.astype(np.float32)]


def reduce_axes(attrs, x, axes):
    """The axes a Reduce* node reduces (its input from opset 13 (ReduceSum) or 18, before that
    its attribute), or None for none at all (noop_with_empty_axes)."""
    axes = attrs.get("axes") if axes is None else axes
    if axes is None or len(axes) == 0:
        return None if attrs.get("noop_with_empty_axes", 0) else tuple(range(x.ndim))
    return tuple(int(a) % x.ndim for a in np.asarray(axes).reshape(-1))


def _reduce(fn):
    def op(attrs, x, axes=None):
        axes = reduce_axes(attrs, x, axes)
        if axes is None:
            return [x]
        out = fn(x.astype(np.float64) if x.dtype.kind == "f" else x, axis=axes, keepdims=bool(attrs.get("keepdims", 1)))
        return [np.asarray(out).astype(x.dtype, copy=False)]
    return op


HOST_OPS = {
    "Add": _binary(np.add), "Sub": _binary(np.subtract), "Mul": _binary(np.multiply),
    "Max": _variadic(np.maximum), "Min": _variadic(np.minimum),
    "Relu": _relu_any, "PRelu": _prelu, "Clip": _clip,
    **{name: _unary_float(fn) for name, fn in UNARY.items() if name != "Relu"},
    "Gemm": _gemm, "MatMul": _matmul, "MatMulInteger": _matmul_integer,
    "Conv": _conv, "ConvInteger": _conv_integer, "QLinearConv": _qlinear_conv, "QLinearMatMul": _qlinear_matmul,
    "QuantizeLinear": _quantize, "DequantizeLinear": _dequantize,
    "MaxPool": lambda attrs, x: _pool(attrs, x, average=False),
    "AveragePool": lambda attrs, x: _pool(attrs, x, average=True),
    "GlobalMaxPool": lambda attrs, x: _global(attrs, x, average=False),
    "GlobalAveragePool": lambda attrs, x: _global(attrs, x, average=True),
    "BatchNormalization": _batchnorm,
    "Flatten": _flatten, "Reshape": _reshape, "Squeeze": _squeeze, "Unsqueeze": _unsqueeze,
    "Identity": lambda attrs, x: [x],
    "Concat": lambda attrs, *xs: [np.concatenate(xs, axis=attrs["axis"])],
    "Cast": lambda attrs, x: [x.astype(numpy_type(attrs["to"]))],
    "ConstantOfShape": lambda attrs, shape: [_constant_of_shape(attrs, shape)],
    "Softmax": _softmax, "LayerNormalization": _layer_norm,
    "ReduceSum": _reduce(np.sum), "ReduceMean": _reduce(np.mean), "ReduceMax": _reduce(np.max),
}

# Ops whose output is their input's bytes under another shape: no data moves.
LAYOUT_OPS = {"Flatten", "Reshape", "Squeeze", "Unsqueeze", "Identity"}


def run_host(op_type, attrs, inputs):
    return HOST_OPS[op_type](attrs, *inputs)
