"""How an ONNX tensor lies on the NPU, and how its values cross to and from the host.

A tensor on the NPU is a matrix of M rows of N elements, in one of the graph's two SDP
layouts (docs/graph.md, "Formats"): `flat`, row-major bytes, or `surface`, NC1HWC2 (M
pixels of N channels, channels padded to whole 16-byte atoms; what convolutions and
poolings read and write, and what a per-channel operand is broadcast along). The host array
regcmd.Device.run_graph packs is that M x N matrix; `view` says how the ONNX tensor becomes
it: `nchw`, an image [1, C, H, W] as its H*W pixels of C channels (a transpose), or `rows`,
any tensor as its last axis of N elements in M rows (a reshape: no data moves).
"""

from dataclasses import dataclass

import numpy as np

# ONNX element types the NPU computes in, by the regcmd precision they run as: fp32 runs in
# fp16 (the NPU has no fp32 MACs: regcmd-isa-reference, "Precisions").
NPU_TYPES = {
    np.dtype(np.float32): "fp16",
    np.dtype(np.float16): "fp16",
    np.dtype(np.int8): "int8",
    np.dtype(np.int16): "int16",
}
HOST_TYPES = {"fp16": np.float32, "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "int32": np.int32}


def npu_type(dtype):
    """The precision a tensor of this element type runs in on the NPU, or None."""
    return NPU_TYPES.get(np.dtype(dtype))


@dataclass(frozen=True)
class Layout:
    kind: str  # "flat" or "surface"
    view: str  # "rows" or "nchw"
    M: int
    N: int
    dtype: str  # fp16, int8 or int16
    valid: int = 0  # the columns that are the tensor's, when N pads them (a matmul's output); 0: N

    @property
    def elements(self):
        return self.M * self.N

    @property
    def columns(self):
        return self.valid or self.N


def is_image(shape):
    return len(shape) == 4 and shape[0] == 1


def rows_of(shape):
    """M x N for `rows`: the last axis is N (a scalar is one element)."""
    n = shape[-1] if shape else 1
    return (int(np.prod(shape[:-1], dtype=np.int64)) if len(shape) > 1 else 1), int(n)


def image_channels(c, dtype):
    """The channels an fp16 image holds on the NPU: a conv reads its input and writes its
    output in sixteens (the input cube's C16, the DPU's computed channels: conv/spec.hpp), so
    every op on an image runs over that many, the padding channels zero where the host packs
    them and where a conv writes them (zero kernels, zero bias)."""
    return -(-c // 16) * 16 if dtype == "fp16" else c


def image_surface(pixels, c, dtype):
    """An image of `c` channels as the NPU holds it: a surface of image_channels(c)."""
    n = image_channels(c, dtype)
    return Layout("surface", "nchw", pixels, n, dtype, c if n != c else 0)


def image_layout(shape, dtype):
    _, c, h, w = shape
    return image_surface(h * w, c, dtype)


def rows_layout(shape, dtype, kind="flat"):
    m, n = rows_of(shape)
    return Layout(kind, "rows", m, n, dtype)


def natural_layout(shape, dtype):
    """The layout an element-wise op gives a tensor it reads from the host: an image as a
    surface (so a per-channel operand is its channels, and a conv or pool can read it), any
    other tensor as flat rows."""
    return image_layout(shape, dtype) if is_image(shape) else rows_layout(shape, dtype)


def to_host(value, layout):
    """The M x N host array of an ONNX tensor, in the type run_graph packs from."""
    a = np.asarray(value)
    if layout.view == "nchw":
        a = a.reshape(a.shape[1], -1).T  # [C, H*W] -> [H*W, C]
    a = a.reshape(layout.M, layout.columns)
    if layout.columns != layout.N:
        a = np.pad(a, ((0, 0), (0, layout.N - layout.columns)))
    return np.ascontiguousarray(a, dtype=HOST_TYPES[layout.dtype])


def from_host(array, layout, shape, dtype):
    """The ONNX tensor of `shape` and `dtype` from what run_graph returned for it."""
    a = np.asarray(array).reshape(layout.M, -1)[:, :layout.columns]  # an op's output unpacks unpadded
    if layout.view == "nchw":
        a = a.T
    return np.ascontiguousarray(a.reshape(shape)).astype(dtype, copy=False)
