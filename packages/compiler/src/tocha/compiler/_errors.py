"""The compiler's exceptions, published as ``tocha._dynamo.exc`` (as ``torch._dynamo.exc``)."""

from __future__ import annotations

__all__ = ["InvalidBackend", "TorchDynamoException", "Unsupported"]


class TorchDynamoException(RuntimeError):
    """Base of the compiler's errors."""


class Unsupported(TorchDynamoException):
    """The program does something a graph cannot hold where ``fullgraph=True`` asks for one
    graph."""


class InvalidBackend(TorchDynamoException):
    """``tocha.compile(backend=...)`` named no known backend."""
