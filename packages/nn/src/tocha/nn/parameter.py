"""`Parameter` (a tensor that a Module registers as learnable) and `Buffer`."""

from __future__ import annotations

from tocha import Tensor
from tocha.library import expect_tensor, wrap
from tocha.serialization import register_tensor_type

__all__ = ["Parameter", "Buffer", "UninitializedParameter"]


def _share(cls, data: Tensor):
    """A new `cls` instance sharing `data`'s memory."""
    t = object.__new__(cls)
    t._data = data._data
    t._device = data._device
    t._ag = None
    t._base = None
    t._vc = None
    return t


class Parameter(Tensor):
    """A tensor that is a module parameter: assigned as a Module attribute it is registered
    in ``parameters()``. Shares memory with `data`; ``requires_grad`` defaults to True.
    Like PyTorch's, it takes attributes of its own (libraries mark parameters with them)."""

    __slots__ = ("__dict__",)

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            import tocha

            data = tocha.empty(0)
        expect_tensor("Parameter", data, "data", None)
        p = _share(cls, data)
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (wrap(self._data, self._device), self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        data = wrap(self._data.copy(), self._device)
        result = type(self)(data, self.requires_grad)
        memo[id(self)] = result
        if self.__dict__:
            import copy

            result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return result


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (lazy modules); tocha has no lazy modules, so
    it exists for ``isinstance`` checks only."""

    __slots__ = ()


register_tensor_type(Parameter, "torch.nn.parameter.Parameter", _rebuild_parameter)


class Buffer(Tensor):
    """A tensor that, assigned as a Module attribute, is registered as a buffer (saved in the
    state dict unless ``persistent=False``)."""

    __slots__ = ("persistent",)

    def __new__(cls, data: Tensor, *, persistent: bool = True):
        b = _share(cls, data)
        b.persistent = persistent
        return b
