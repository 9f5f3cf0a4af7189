"""Nodes the importer merges before it places them: a BatchNormalization into the Conv before
it, a Relu or a Clip to [0, 6] into the float Conv before it (the DPU clamps after the bias),
and a quantized Conv written as QDQ (DequantizeLinear of its input and weights, a
QuantizeLinear of its result) into one QLinearConv. Each pass returns {a merged node's key:
the key of the node it went into}."""

import numpy as np


def _readers(nodes):
    readers = {}
    for n in nodes:
        for name in n.inputs:
            if name:
                readers.setdefault(name, []).append(n)
    return readers


def _writer(nodes, name):
    return next((n for n in nodes if name in n.outputs), None)


def fold_batchnorm(nodes, infos, outputs):
    """Conv (constant weights) then BatchNormalization (constant statistics) as one Conv;
    returns {the BatchNormalization's key: the Conv's key}."""
    readers = _readers(nodes)
    folded = {}
    for bn in [n for n in nodes if n.op_type == "BatchNormalization" and not n.attrs.get("training_mode", 0)]:
        conv = next((n for n in nodes if bn.inputs[0] in n.outputs and n.op_type == "Conv"), None)
        if conv is None or len(readers.get(conv.outputs[0], [])) != 1 or conv.outputs[0] in outputs:
            continue
        params = [infos[n].const for n in bn.inputs[1:5]]
        w = infos[conv.inputs[1]].const
        if w is None or any(p is None for p in params):
            continue
        b = infos[conv.inputs[2]].const if len(conv.inputs) > 2 and conv.inputs[2] else np.zeros(w.shape[0])
        if b is None:
            continue
        scale, shift, mean, var = (np.asarray(p, dtype=np.float64) for p in params)
        factor = scale / np.sqrt(var + bn.attrs.get("epsilon", 1e-5))
        w2 = (w.astype(np.float64) * factor.reshape(-1, *([1] * (w.ndim - 1)))).astype(w.dtype)
        b2 = ((b - mean) * factor + shift).astype(w.dtype)
        wn, bname = f"{conv.inputs[1]}.bn", f"{conv.key}.bn_bias"
        infos[wn] = _constant(w2)
        infos[bname] = _constant(b2)
        conv.inputs = [conv.inputs[0], wn, bname]
        conv.outputs = [bn.outputs[0]]
        nodes.remove(bn)
        folded[bn.key] = conv.key
    return folded


def _clip_activation(node, infos):
    """"relu" for a Relu, "relu6" for a Clip to [0, 6] (attributes or constant inputs), else None."""
    if node.op_type == "Relu":
        return "relu"
    if node.op_type != "Clip":
        return None
    names = node.inputs[1:3] + [""] * (3 - len(node.inputs))
    bounds = [_scalar(infos, name) if name else None for name in names[:2]]
    lo = float(bounds[0]) if bounds[0] is not None else node.attrs.get("min")
    hi = float(bounds[1]) if bounds[1] is not None else node.attrs.get("max")
    if any(name and b is None for name, b in zip(names[:2], bounds)):
        return None  # a bound the graph computes
    return "relu6" if lo == 0.0 and hi == 6.0 else None


def fuse_conv_activation(nodes, infos, outputs):
    """A float Conv then a Relu, or a Clip to [0, 6], that alone reads it as one Conv with its
    regcmd_act; returns {the activation's key: the Conv's key}."""
    readers = _readers(nodes)
    fused = {}
    for conv in [n for n in nodes if n.op_type == "Conv" and not n.attrs.get("regcmd_act")]:
        after = readers.get(conv.outputs[0], [])
        if len(after) != 1 or conv.outputs[0] in outputs or infos[conv.outputs[0]].dtype != np.dtype(np.float32):
            continue
        act = _clip_activation(after[0], infos)
        if act is None:
            continue
        conv.attrs = dict(conv.attrs, regcmd_act=act)
        conv.outputs = [after[0].outputs[0]]
        nodes.remove(after[0])
        fused[after[0].key] = conv.key
    return fused


def _constant(value):
    from .importer import ValueInfo
    return ValueInfo(tuple(value.shape), value.dtype, value)


def _scalar(infos, name):
    """A constant of one element, else None."""
    c = infos[name].const if name else None
    return None if c is None or c.size != 1 else c.reshape(())


def _dequantized(nodes, infos, name):
    """The DequantizeLinear writing `name` with per-tensor constant parameters: (node, the
    quantized value, its scale's value name, its zero point's value name), else None."""
    dq = _writer(nodes, name)
    if dq is None or dq.op_type != "DequantizeLinear" or len(dq.inputs) < 3 or not dq.inputs[2]:
        return None
    if _scalar(infos, dq.inputs[1]) is None or _scalar(infos, dq.inputs[2]) is None:
        return None
    return dq


def _per_tensor(infos, q):
    """Whether a QuantizeLinear has constant per-tensor parameters."""
    return len(q.inputs) >= 3 and _scalar(infos, q.inputs[1]) is not None and _scalar(infos, q.inputs[2]) is not None


def _drop_unread(nodes, dq, merged, outputs, fused):
    """A DequantizeLinear that nothing but the merged node reads goes with it."""
    if dq in nodes and not any(r is not merged for r in _readers(nodes).get(dq.outputs[0], [])) and \
            dq.outputs[0] not in outputs:
        nodes.remove(dq)
        fused[dq.key] = merged.key


def _constant_value(nodes, infos, name):
    """A constant's value, or a DequantizeLinear's of constants (a quantized bias as
    PyTorch exports it): (the value, the DequantizeLinear or None), else (None, None)."""
    if infos[name].const is not None:
        return infos[name].const, None
    dq = _writer(nodes, name)
    if dq is None or dq.op_type != "DequantizeLinear" or any(not n or infos[n].const is None for n in dq.inputs[:3]):
        return None, None
    q, scale, zp = (np.asarray(infos[n].const, dtype=np.float64) for n in dq.inputs[:3])
    return (q - zp) * scale, dq


def _weights_as(infos, dqw, x_type, key):
    """A DequantizeLinear's constant weights and zero point as `x_type`: int8 weights of a
    uint8 input (PyTorch's quint8 activations, qint8 weights) move up by 128 with their zero
    point, the same real values in the type the CNA reads both in; other weights as they are."""
    w, zp = dqw.inputs[0], dqw.inputs[2]
    if np.dtype(x_type) != np.dtype(np.uint8) or np.dtype(infos[w].dtype) != np.dtype(np.int8):
        return w, zp
    shifted = (infos[w].const.astype(np.int16) + 128).astype(np.uint8)
    infos[f"{key}.w_u8"], infos[f"{key}.w_u8_zp"] = _constant(shifted), _constant(
        np.asarray(int(_scalar(infos, zp)) + 128, dtype=np.uint8))
    return f"{key}.w_u8", f"{key}.w_u8_zp"


def fuse_qdq_average(nodes, infos, outputs):
    """DequantizeLinear(x) -> GlobalAveragePool or AveragePool (no padding, no ceil_mode) ->
    QuantizeLinear as one depthwise QLinearConv of unit weights at scale 1 / (kh kw): the window's
    sum requantized by x_scale / (kh kw y_scale), an arithmetic the DPU's requantization is
    known to do (the PPU's int8 average is not: pool-average-int8)."""
    from .importer import Node
    fused = {}
    readers = _readers(nodes)
    for pool in [n for n in nodes if n.op_type in ("GlobalAveragePool", "AveragePool")]:
        dqx = _dequantized(nodes, infos, pool.inputs[0])
        after = readers.get(pool.outputs[0], [])
        if dqx is None or len(after) != 1 or after[0].op_type != "QuantizeLinear" or pool.outputs[0] in outputs:
            continue
        q, shape = after[0], infos[pool.inputs[0]].shape
        if not _per_tensor(infos, q) or len(shape) != 4 or \
                np.dtype(infos[q.inputs[2]].dtype) != np.dtype(infos[dqx.inputs[0]].dtype):
            continue
        attrs = pool.attrs
        if pool.op_type == "AveragePool" and (any(attrs.get("pads", [0])) or attrs.get("ceil_mode", 0) or
                                              attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID")):
            continue  # a window over padding divides by what it counts
        kernel = list(shape[2:]) if pool.op_type == "GlobalAveragePool" else list(attrs["kernel_shape"])
        x_type = infos[dqx.inputs[0]].dtype
        ones = np.ones((shape[1], 1, *kernel), dtype=x_type)
        w, w_scale, w_zp = (f"{pool.key}.{n}" for n in ("ones", "scale", "zp"))
        infos[w], infos[w_zp] = _constant(ones), _constant(np.asarray(0, dtype=x_type))
        infos[w_scale] = _constant(np.asarray(1.0 / np.prod(kernel), dtype=np.float32))
        conv_attrs = {"kernel_shape": kernel, "group": shape[1], "strides": list(attrs.get("strides", [1, 1]))}
        merged = Node(pool.index, pool.key, "QLinearConv", conv_attrs,
                      [dqx.inputs[0], dqx.inputs[1], dqx.inputs[2], w, w_scale, w_zp, q.inputs[1], q.inputs[2]],
                      [q.outputs[0]])
        nodes[nodes.index(pool)] = merged
        nodes.remove(q)
        fused[q.key] = pool.key
        _drop_unread(nodes, dqx, merged, outputs, fused)
    return fused


def fuse_qdq(nodes, infos, outputs):
    """DequantizeLinear(x), DequantizeLinear(w) -> Conv (-> Relu) -> QuantizeLinear as one
    QLinearConv (a Relu as its regcmd_relu: the result clamped at the zero point); the bias,
    a float constant, quantized to int32 at x_scale w_scale as QLinearConv takes it."""
    from .importer import Node
    fused = {}
    for conv in [n for n in nodes if n.op_type == "Conv"]:
        readers = _readers(nodes)
        dqx, dqw = (_dequantized(nodes, infos, n) for n in conv.inputs[:2])
        if dqx is None or dqw is None or infos[dqw.inputs[0]].const is None:
            continue
        chain, tail = [conv], conv.outputs[0]
        after = readers.get(tail, [])
        if len(after) == 1 and after[0].op_type == "Relu" and tail not in outputs:
            chain.append(after[0])
            tail = after[0].outputs[0]
            after = readers.get(tail, [])
        if len(after) != 1 or after[0].op_type != "QuantizeLinear" or tail in outputs:
            continue
        q = after[0]
        if not _per_tensor(infos, q):
            continue
        w, w_zp = _weights_as(infos, dqw, infos[dqx.inputs[0]].dtype, conv.key)
        types = {infos[dqx.inputs[0]].dtype, infos[w].dtype, infos[q.inputs[2]].dtype}
        if len(types) != 1 or next(iter(types)) not in (np.dtype(np.uint8), np.dtype(np.int8)):
            continue
        inputs = [dqx.inputs[0], dqx.inputs[1], dqx.inputs[2], w, dqw.inputs[1], w_zp, q.inputs[1], q.inputs[2]]
        bias_dq = None
        if len(conv.inputs) > 2 and conv.inputs[2]:
            b, bias_dq = _constant_value(nodes, infos, conv.inputs[2])
            if b is None:
                continue
            step = float(_scalar(infos, dqx.inputs[1])) * float(_scalar(infos, dqw.inputs[1]))
            bias = np.rint(np.asarray(b, dtype=np.float64) / step).astype(np.int32)
            inputs.append(f"{conv.key}.qbias")
            infos[inputs[-1]] = _constant(bias)
        attrs = dict(conv.attrs, regcmd_relu=int(len(chain) == 2))
        merged = Node(conv.index, conv.key, "QLinearConv", attrs, inputs, [q.outputs[0]])
        nodes[nodes.index(conv)] = merged
        for n in chain[1:] + [q]:
            nodes.remove(n)
            fused[n.key] = conv.key
        for dq in (dqx, dqw, bias_dq):
            _drop_unread(nodes, dq, merged, outputs, fused)
    return fused
