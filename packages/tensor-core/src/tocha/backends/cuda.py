"""``tocha.backends.cuda``: the CUDA matmul flags PyTorch programs set, as
``torch.backends.cuda``.

``matmul.allow_tf32`` is the float32 matmul precision seen as a flag (True for anything but
``"highest"``), as in PyTorch; the reduced-precision reduction flags are kept as set.
"""

from __future__ import annotations

from .._runtime import STATE

__all__ = [
    "matmul",
    "is_built",
    "flash_sdp_enabled",
    "enable_flash_sdp",
    "mem_efficient_sdp_enabled",
    "enable_mem_efficient_sdp",
    "math_sdp_enabled",
    "enable_math_sdp",
    "cudnn_sdp_enabled",
    "enable_cudnn_sdp",
]


class _MatmulFlags:
    """``tocha.backends.cuda.matmul``: assignable matmul flags."""

    def __init__(self):
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        return STATE["precision"] != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        STATE["precision"] = "high" if value else "highest"


matmul = _MatmulFlags()
_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built() -> bool:
    """Whether tocha-core was built with CUDA: no (GPUs come from the tocha-cuda plugin)."""
    return False


def flash_sdp_enabled() -> bool:
    """Whether the flash attention kernel may be used (recorded only)."""
    return _SDP["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    """Allow or forbid the flash attention kernel (recorded only)."""
    _SDP["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient attention kernel may be used (recorded only)."""
    return _SDP["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow or forbid the memory-efficient attention kernel (recorded only)."""
    _SDP["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    """Whether the math attention kernel may be used (recorded only)."""
    return _SDP["math"]


def enable_math_sdp(enabled: bool) -> None:
    """Allow or forbid the math attention kernel (recorded only)."""
    _SDP["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    """Whether the cuDNN attention kernel may be used (recorded only)."""
    return _SDP["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    """Allow or forbid the cuDNN attention kernel (recorded only)."""
    _SDP["cudnn"] = bool(enabled)
