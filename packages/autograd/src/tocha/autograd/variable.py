"""`Variable`: PyTorch's name from before tensors carried autograd, kept so that older
programs (``from torch.autograd import Variable``) run. Every tensor is a Variable."""

from __future__ import annotations

import warnings

import tocha

from ._running import ExecutionEngine

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, tocha.Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False)``: a tensor sharing `data`'s memory, detached
    from its history, that requires grad as asked. ``isinstance(t, Variable)`` holds for
    every tensor. `volatile` has no effect (use ``tocha.no_grad()``), as in PyTorch."""

    _execution_engine = ExecutionEngine()

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if volatile:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                UserWarning,
                stacklevel=2,
            )
        if data is None:
            data = tocha.empty(0)
        elif not isinstance(data, tocha.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
