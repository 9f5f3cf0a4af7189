"""The ONNX conformance table of docs/onnx.md: per operator, the backend tests of it that run
(tests/python/test_onnx_conformance.py's selection), how many pass, how many placed it on the
NPU, and each failure's reason. Usage: PYTHONPATH=build/gcc/python /usr/bin/python3
scripts/onnx-conformance.py"""

import collections
import glob
import importlib.util
import os
import pathlib

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.loader import load_model_tests

import regcmd.onnx.backend as backend
from regcmd.onnx.tolerance import close

ROOT = pathlib.Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("conformance", ROOT / "tests/python/test_onnx_conformance.py")
conformance = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conformance)


def data_sets(model_dir):
    for d in sorted(glob.glob(os.path.join(model_dir, "test_data_set*"))):
        inputs = [numpy_helper.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(d + "/input_*.pb"))]
        outputs = [numpy_helper.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(d + "/output_*.pb"))]
        yield inputs, outputs
    for f in sorted(glob.glob(os.path.join(model_dir, "test_data_*.npz"))):
        data = np.load(f, encoding="bytes")
        yield list(data["inputs"]), list(data["outputs"])


def run(test):
    model = onnx.load(os.path.join(test.model_dir, "model.onnx"))
    rep = backend.prepare(model)
    for inputs, outputs in data_sets(test.model_dir):
        got = rep.run(inputs)
        for g, want in zip(got, outputs):
            ok, worst = close(g, want)
            if not ok:
                return rep.placement, f"outside the bound ({worst})"
    return rep.placement, None


rows = collections.defaultdict(lambda: dict(run=0, passed=0, npu=0, failed=[]))
tests = {t.name: t for kind in conformance.KINDS for t in load_model_tests(kind=kind) if t.model_dir}
for name, (kind, ops) in sorted(conformance.MAPPED.items()):
    if name in conformance.EXCLUDED:
        continue
    try:
        placement, failure = run(tests[name])
    except Exception as e:  # noqa: BLE001 (a failure to report)
        placement, failure = {}, f"{type(e).__name__}: {e}"
    model = onnx.load(os.path.join(tests[name].model_dir, "model.onnx"))
    for op in ops:
        row = rows[op]
        row["run"] += 1
        keys = [n.name or str(i) for i, n in enumerate(model.graph.node) if n.op_type == op]
        row["npu"] += any(placement.get(k) == "npu" for k in keys)
        if failure:
            row["failed"].append(f"{name}: {failure}")
        else:
            row["passed"] += 1

print("| operator | tests run | passed | on the NPU | failed |")
print("|---|---|---|---|---|")
for op, row in sorted(rows.items()):
    print(f"| {op} | {row['run']} | {row['passed']} | {row['npu']} | {'; '.join(row['failed']) or '—'} |")
total = sum(r["run"] for r in rows.values())
print(f"\n{len(conformance.MAPPED) - len(conformance.EXCLUDED)} tests, {len(conformance.EXCLUDED)} excluded")
