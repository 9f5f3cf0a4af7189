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


# The inputs of each operator that set what its program is rather than data it reads (a
# scale, a zero point, a clip's bound, a bias, a shape): given as graph inputs, as the
# conformance tests give them, the model is built for their values at its first run with them.
PARAMETERS = {"Clip": (1, 2), "Conv": (2,), "BatchNormalization": (1, 2, 3, 4), "QLinearConv": (1, 2, 4, 5, 6, 7, 8), "QLinearMatMul": (1, 2, 4, 5, 6, 7),
              "QuantizeLinear": (1, 2), "DequantizeLinear": (1, 2), "ConvInteger": (2, 3), "MatMulInteger": (2, 3),
              "Reshape": (1,), "Squeeze": (1,), "Unsqueeze": (1,), "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,),
              "LayerNormalization": (1, 2)}


class BackendRep(onnx.backend.base.BackendRep):
    """A prepared model: imported once, and once more for each set of values of its
    parameter inputs (PARAMETERS) it runs with."""

    def __init__(self, model, **kwargs):
        self.model, self.kwargs = model, kwargs
        self.compiled = import_model(model, **kwargs)
        initializers = {t.name for t in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in initializers]
        self.parameters = sorted({n.input[i] for n in model.graph.node for i in PARAMETERS.get(n.op_type, ())
                                  if i < len(n.input) and n.input[i] in self.input_names})
        self.built = {}

    @property
    def placement(self):
        return self.compiled.placement

    def run(self, inputs, **kwargs):
        if not isinstance(inputs, dict):
            inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
            inputs = dict(zip(self.input_names, inputs))
        if self.parameters and all(p in inputs for p in self.parameters):
            values = {p: np.asarray(inputs[p]) for p in self.parameters}
            key = tuple((p, v.dtype.str, v.shape, v.tobytes()) for p, v in values.items())
            if key not in self.built:
                self.built[key] = import_model(self.model, constants=values, **self.kwargs)
            self.compiled = self.built[key]
        return tuple(self.compiled.run(inputs))


class Backend(onnx.backend.base.Backend):
    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        super().prepare(model, device, **kwargs)
        return BackendRep(model, **kwargs)

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
