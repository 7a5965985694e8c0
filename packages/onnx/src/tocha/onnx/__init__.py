"""tocha.onnx: models written in the ONNX format, with the API of ``torch.onnx``.

``tocha.onnx.export(model, args)`` traces the model with ``tocha.export``, writes each node
of the flattened graph as ONNX operators and returns an :class:`ONNXProgram`, which saves
the model to a file and runs it with onnxruntime. Files it writes need neither tocha nor
Python classes to run.
"""

from __future__ import annotations

from . import errors
from ._enums import OperatorExportTypes, TrainingMode
from ._export import export, is_in_onnx_export
from ._program import ONNXProgram
from .errors import OnnxExporterError

__all__ = [
    "ONNXProgram",
    "OnnxExporterError",
    "OperatorExportTypes",
    "TrainingMode",
    "errors",
    "export",
    "is_in_onnx_export",
]
