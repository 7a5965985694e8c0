"""The enums of torch.onnx's deprecated export options, kept for their names."""

from __future__ import annotations

import enum

__all__ = ["OperatorExportTypes", "TrainingMode"]


class TrainingMode(enum.IntEnum):
    """The mode of the deprecated ``training`` option: set the model's mode before exporting
    instead (export writes the model in the mode it is in)."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    """The deprecated ``operator_export_type`` option: only ONNX is written."""

    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3
