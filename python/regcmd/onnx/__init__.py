"""ONNX models in: regcmd.onnx.import_model(model) gives the model's NPU partitions as regcmd
graph programs and its other nodes on the host (docs/onnx.md); regcmd.onnx.backend is an
onnx.backend.base.Backend over it."""

from .host_ops import Unsupported
from .importer import CompiledModel, ModelError, import_model

__all__ = ["CompiledModel", "ModelError", "Unsupported", "import_model"]
