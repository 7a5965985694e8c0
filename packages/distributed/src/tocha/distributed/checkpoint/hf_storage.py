"""``tocha.distributed.checkpoint.hf_storage``, as PyTorch's: DCP's storage in Hugging Face's
safetensors layout. tocha's DCP writes its own folder layout (`FileSystemWriter`): making
one of these raises NotImplementedError."""

from __future__ import annotations

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]


class HuggingFaceStorageReader:
    """Reads a DCP checkpoint from safetensors files: not in tocha yet."""

    def __init__(self, path: str, *args, **kwargs) -> None:
        raise NotImplementedError(
            "torch.distributed.checkpoint.hf_storage.HuggingFaceStorageReader is not in tocha yet"
        )


class HuggingFaceStorageWriter:
    """Writes a DCP checkpoint as safetensors files: not in tocha yet."""

    def __init__(self, path: str, *args, **kwargs) -> None:
        raise NotImplementedError(
            "torch.distributed.checkpoint.hf_storage.HuggingFaceStorageWriter is not in tocha yet"
        )
