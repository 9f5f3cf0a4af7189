"""regcmd as an ONNX backend (onnx.backend.base.Backend): a model prepared is imported
(regcmd.onnx.import_model) and runs on the NPU, or on the emulated device in this process
where there is none; `placement` says where each node runs."""

import numpy as np
import onnx
import onnx.backend.base
from onnx import helper

from .importer import import_model


def _tensor_type(dtype):
    if hasattr(helper, "np_dtype_to_tensor_dtype"):
        return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]  # onnx before 1.13


class BackendRep(onnx.backend.base.BackendRep):
    def __init__(self, compiled):
        self.compiled = compiled
        self.placement = compiled.placement

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            return tuple(self.compiled.run(inputs))
        if not isinstance(inputs, (list, tuple)):
            inputs = [inputs]
        return tuple(self.compiled.run(list(inputs)))


class Backend(onnx.backend.base.Backend):
    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        super().prepare(model, device, **kwargs)
        return BackendRep(import_model(model, **kwargs))

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, opset=None, **kwargs):
        """The node alone as a model whose inputs have the given arrays' shapes and types."""
        super().run_node(node, inputs, device=device, outputs_info=outputs_info)
        if isinstance(inputs, dict):
            inputs = [inputs[name] for name in node.input if name]
        arrays = [np.asarray(v) for v in inputs]
        named = [name for name in node.input if name]
        typed = [helper.make_tensor_value_info(n, _tensor_type(a.dtype), a.shape) for n, a in zip(named, arrays)]
        opsets = [helper.make_opsetid("", opset or onnx.defs.onnx_opset_version())]
        # the outputs' types and shapes as ONNX infers them from the inputs'
        bare = helper.make_model(helper.make_graph([node], "node", typed, []), opset_imports=opsets)
        inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(bare).graph.value_info}
        outputs = [inferred.get(n) or helper.make_empty_tensor_value_info(n) for n in node.output if n]
        model = helper.make_model(helper.make_graph([node], "node", typed, outputs), opset_imports=opsets)
        return cls.prepare(model, device, **kwargs).run(arrays)

    @classmethod
    def supports_device(cls, device):
        # the NPU is the CPU's: its buffers are host memory, synced (docs/runtime.md)
        return onnx.backend.base.Device(device).type == onnx.backend.base.DeviceType.CPU


prepare = Backend.prepare
run_model = Backend.run_model
run_node = Backend.run_node
supports_device = Backend.supports_device
