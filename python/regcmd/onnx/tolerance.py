"""How close the NPU's result of an imported model is to the reference, declared once (the
conformance tests and `regcmd-onnx --run` both use it).

A float tensor crosses the NPU in fp16: 11 significant bits, a unit roundoff of 2^-11 =
4.9e-4 at each rounding (the inputs', each op's store: regcmd-isa-reference, "DPU output
stages"), with sums accumulated in fp32 ("Limits & tiling": fp32 partials); a table
function adds its entry step (exp's table over [-16, 4] holds entries of 2^-9). A chain of a few roundings stays within rtol 1e-2; atol 1e-3
covers results that cancel to near zero, where a relative bound says nothing.

Integer results are exact (max, min and clip of int8 and int16; the int8 matmul's int32
accumulator), but for a requantized 8-bit one (QLinearConv), within one step: the DPU
multiplies by a 15-bit fixed-point scale and rounds half up (programs/conv/spec.hpp), ONNX
multiplies in float and rounds half to even.
"""

import numpy as np

FP16_RTOL, FP16_ATOL = 1e-2, 1e-3


def close(result, reference):
    """Whether `result` is within the bound of `reference`: (ok, the worst error's text)."""
    result, reference = np.asarray(result), np.asarray(reference)
    if result.shape != reference.shape:
        return False, f"shape {result.shape}, the reference's {reference.shape}"
    if not np.issubdtype(reference.dtype, np.floating):
        step = 1 if reference.dtype.itemsize == 1 else 0
        off = np.abs(result.astype(np.int64) - reference.astype(np.int64))
        return bool(np.all(off <= step)), f"{int(np.count_nonzero(off))} of {reference.size} differ, by {int(off.max(initial=0))} at most"
    r, x = result.astype(np.float64), reference.astype(np.float64)
    excess = np.abs(r - x) - (FP16_ATOL + FP16_RTOL * np.abs(x))
    worst = float(np.max(np.abs(r - x))) if r.size else 0.0
    return bool(np.all(excess <= 0)), f"max abs error {worst:.3g}"
