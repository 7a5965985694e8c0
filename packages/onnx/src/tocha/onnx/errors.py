"""The exceptions and warning of ONNX export, as torch.onnx.errors names them."""

from __future__ import annotations

__all__ = ["OnnxExporterError", "OnnxExporterWarning", "UnsupportedOperatorError"]


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""


class OnnxExporterWarning(UserWarning):
    """Warnings raised by the ONNX exporter."""


class UnsupportedOperatorError(OnnxExporterError):
    """Raised when a graph holds an operator that the exporter cannot write as ONNX.

    Args:
        name: the operator (a public function's qualified name, or a primitive's name).
        version: the opset the export targets.
        supported_version: the opset that first supports it, or None when none does.
    """

    def __init__(self, name: str, version: int, supported_version: int | None) -> None:
        if supported_version is None:
            msg = (
                f"Exporting the operator '{name}' to ONNX opset version {version} is not supported"
            )
        else:
            msg = (
                f"Exporting the operator '{name}' to ONNX opset version {version} is not "
                f"supported. Support for this operator was added in version "
                f"{supported_version}, try exporting with this version"
            )
        super().__init__(msg)
