"""``tocha._C``: the few probes of PyTorch's extension module (``torch._C``) that libraries
call to learn the state they run in. Any other name raises AttributeError naming it."""

from __future__ import annotations

from typing import Any

from ._device import device
from ._subclass_dispatch import DisableTorchFunction, DisableTorchFunctionSubclass
from ._subclass_dispatch import disabled_torch_function_impl as _disabled_torch_function_impl

__all__ = [
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "_disabled_torch_function_impl",
    "_get_accelerator",
    "_get_tracing_state",
    "_log_api_usage_once",
]


def _get_tracing_state() -> Any:
    """The state of the ``jit.trace`` recording the caller, None when none is: a true value
    while `tocha.jit.trace` records (tocha-fx)."""
    import sys

    jit = sys.modules.get("tocha.jit")
    if jit is not None and jit.is_tracing():
        return jit
    return None


def _get_accelerator(check: bool = False) -> device:
    """The accelerator's device (``device('cuda')`` when tocha sees a GPU), else the CPU."""
    from .accelerator import current_accelerator

    return current_accelerator() or device("cpu")


def _log_api_usage_once(event: str) -> None:
    """PyTorch's usage logging hook: tocha logs nothing."""


def __getattr__(name: str):
    from ._missing import missing_attribute

    raise missing_attribute(__name__, name)
