"""Forward-mode automatic differentiation, as ``torch.autograd.forward_ad``.

Inside ``with dual_level():``, ``make_dual(primal, tangent)`` gives a tensor that carries a
tangent; every op on it computes its output's tangent with the op's forward rule (the
Jacobian-vector product), and ``unpack_dual(t)`` reads a result's primal and tangent::

    with dual_level():
        x = make_dual(primal, tangent)
        y = f(x)
        jvp = unpack_dual(y).tangent
"""

from __future__ import annotations

from typing import NamedTuple

from tocha import Tensor

from . import _forward
from ._forward import LEVEL, set_tangent, tangent_of

__all__ = [
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "UnpackedDualTensor",
]


# Only one level is active at a time, so its index is always 0, as PyTorch's first level
# (tocha tells levels apart internally, so that the tangents of an exited level are gone).
_INDEX = 0


def enter_dual_level() -> int:
    """Start a forward-AD level and return its index (0: only one can be active)."""
    _forward.enter()
    return _INDEX


def exit_dual_level(*, level: int | None = None) -> None:
    """End the active forward-AD level: every tangent made in it is gone."""
    if LEVEL.current is None:
        raise RuntimeError("Dual level must be a positive number.")
    if level is not None and level != _INDEX:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    _forward.leave(None)


class dual_level:
    """Context manager of a forward-AD level: ``with dual_level(): ...``."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


def _level(level: int | None) -> int:
    current = LEVEL.current
    if current is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if level is not None and level != _INDEX:
        raise RuntimeError("Invalid level given to _make_dual")
    return current


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of `tensor` (floating point or complex) carrying `tangent` (same shape) at the
    active level. The view keeps tensor's autograd history."""
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"make_dual(): argument 'tensor' must be Tensor, not {type(tensor).__name__}"
        )
    if not isinstance(tangent, Tensor):
        raise TypeError(
            f"make_dual(): argument 'tangent' must be Tensor, not {type(tangent).__name__}"
        )
    at = _level(level)
    if tangent_of(tensor, at) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at "
            f"the same level {_INDEX} is not supported."
        )
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    if tangent.shape != tensor.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    if tangent.device != tensor.device:
        raise RuntimeError(
            "Trying to set a forward gradient on a Tensor that is on a different device than "
            f"the gradient: {tensor.device} and {tangent.device}."
        )
    LEVEL.current = None  # the view itself takes no tangent from `tensor`
    try:
        dual = tensor.view_as(tensor)
    finally:
        LEVEL.current = at
    set_tangent(dual, tangent, at)
    return dual


class UnpackedDualTensor(NamedTuple):
    """What `unpack_dual` returns: the primal (a view without tangent) and the tangent."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """`tensor`'s primal (a view of it, without tangent) and its tangent at the active level
    (None outside a level or when it has none)."""
    current = LEVEL.current
    if level is not None and level != _INDEX:
        raise RuntimeError("Invalid level given to _fw_primal")
    tangent = tangent_of(tensor, current) if current is not None else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    LEVEL.current = None
    try:
        primal = tensor.view_as(tensor)
    finally:
        LEVEL.current = current
    return UnpackedDualTensor(primal, tangent)
