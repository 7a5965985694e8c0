"""The exceptions of ``torch._dynamo.exc`` that programs catch."""

from tocha.compiler._errors import InvalidBackend, TorchDynamoException, Unsupported

__all__ = ["InvalidBackend", "TorchDynamoException", "Unsupported"]
