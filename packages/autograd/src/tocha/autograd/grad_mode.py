"""`tocha.autograd.grad_mode`: the grad-mode context managers under their PyTorch module path
(``from torch.autograd.grad_mode import no_grad``)."""

from __future__ import annotations

from tocha import enable_grad, inference_mode, no_grad, set_grad_enabled
from tocha.library import check_bool

__all__ = [
    "enable_grad",
    "inference_mode",
    "no_grad",
    "set_grad_enabled",
    "set_multithreading_enabled",
]


class set_multithreading_enabled:  # noqa: N801 - PyTorch's name
    """Context manager (and function call) switching the backward's use of several threads:
    accepted for PyTorch's API; tocha's engine runs each backward in the calling thread."""

    def __init__(self, mode: bool) -> None:
        check_bool("set_multithreading_enabled", mode, "enabled", 1)
        self.mode = mode

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        return None

    def clone(self) -> set_multithreading_enabled:
        return set_multithreading_enabled(self.mode)
