"""regcmd as an ONNX backend (onnx.backend.base.Backend): a model prepared is imported
(regcmd.onnx.import_model) and runs on the NPU, or on the emulated device in this process
where there is none; `placement` says where each node runs."""

import onnx
import onnx.backend.base

from .importer import import_model


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
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, **kwargs):
        raise onnx.backend.base.BackendIsNotSupposedToImplementIt(
            "regcmd runs models: a node alone has no shapes to import (prepare a model of it)")

    @classmethod
    def supports_device(cls, device):
        # the NPU is the CPU's: its buffers are host memory, synced (docs/runtime.md)
        return onnx.backend.base.Device(device).type == onnx.backend.base.DeviceType.CPU


prepare = Backend.prepare
run_model = Backend.run_model
run_node = Backend.run_node
supports_device = Backend.supports_device
