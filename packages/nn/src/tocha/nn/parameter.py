"""`Parameter` (a tensor that a Module registers as learnable), `Buffer`, and the
uninitialized parameters and buffers of lazy modules."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import tocha
from tocha import Size, Tensor
from tocha.library import FROM_NP, disabled_torch_function_impl, expect_tensor, wrap
from tocha.serialization import register_tensor_type

__all__ = [
    "Parameter",
    "UninitializedParameter",
    "is_lazy",
    "Buffer",
    "UninitializedBuffer",
    "UninitializedTensorMixin",
]


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
    __torch_function__ = disabled_torch_function_impl  # its calls are plain tensor calls

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
        data = self.detach().clone()  # laid out as self (a channels-last weight stays so)
        result = type(self)(data, self.requires_grad)
        memo[id(self)] = result
        if self.__dict__:
            import copy

            result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return result


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


# The storage slot itself, reached past UninitializedTensorMixin's `_data` property.
_RAW = Tensor.__dict__["_data"]

_USE_MESSAGE = (
    "Attempted to use an uninitialized parameter. This error happens when you are using a "
    "`LazyModule` or explicitly manipulating `torch.nn.parameter.UninitializedParameter` "
    "objects. When using LazyModules Call `forward` with a dummy batch to initialize the "
    "parameters before calling torch functions"
)


# Type checkers see the mixin as the Tensor it is mixed into.
if TYPE_CHECKING:
    _Base = Tensor
else:
    _Base = object


class UninitializedTensorMixin(_Base):
    """What uninitialized parameters and buffers share: a dtype, a device and
    ``requires_grad`` but no shape or data yet. Changing the dtype or device
    (``to``, ``cpu``, ``double``, ...) gives another uninitialized tensor; `materialize`
    gives it a shape and turns it into its `cls_to_become`; any other use raises."""

    __slots__ = ()
    cls_to_become: type

    @property
    def _data(self):
        raise ValueError(_USE_MESSAGE)

    @_data.setter
    def _data(self, value) -> None:
        _RAW.__set__(self, value)

    @property
    def data(self) -> Tensor:
        return wrap(_RAW.__get__(self), self._device)

    @data.setter
    def data(self, value: Tensor) -> None:
        _RAW.__set__(self, _RAW.__get__(value))
        self._device = value._device

    @property
    def dtype(self):
        return FROM_NP[_RAW.__get__(self).dtype]

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes."
        )

    def size(self, dim=None):
        return Size((0,)) if dim is None else Size((0,))[dim]

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor `shape` (uninitialized memory, on `device` in `dtype`, by default
        its own) and turn it into its `cls_to_become`."""
        data = tocha.empty(
            shape,
            device=self.device if device is None else device,
            dtype=self.dtype if dtype is None else dtype,
        )
        _RAW.__set__(self, data._data)
        self._device = data._device
        self.__class__ = self.cls_to_become

    def _args(self, device=None, dtype=None) -> tuple:
        """The constructor's arguments for a tensor like this one."""
        return (
            self.requires_grad,
            self.device if device is None else device,
            self.dtype if dtype is None else dtype,
        )

    def _converted(self, method: str, *args, **kwargs):
        probe = getattr(wrap(_RAW.__get__(self), self._device), method)(*args, **kwargs)
        return type(self)(*self._args(probe.device, probe.dtype))

    def to(self, *args, **kwargs):
        return self._converted("to", *args, **kwargs)

    def cpu(self, *args, **kwargs):
        return self._converted("cpu", *args, **kwargs)

    def cuda(self, *args, **kwargs):
        return self._converted("cuda", *args, **kwargs)

    def float(self, *args, **kwargs):
        return self._converted("float", *args, **kwargs)

    def double(self, *args, **kwargs):
        return self._converted("double", *args, **kwargs)

    def half(self, *args, **kwargs):
        return self._converted("half", *args, **kwargs)

    def bfloat16(self, *args, **kwargs):
        return self._converted("bfloat16", *args, **kwargs)

    def requires_grad_(self, requires_grad: bool = True):
        raise ValueError(_USE_MESSAGE)

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol):
        return (type(self), self._args())

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(*self._args())
        return memo[id(self)]


def is_lazy(param) -> bool:
    """Whether `param` is an uninitialized parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet: a lazy module's, until its first forward
    infers the shape and `materialize` turns it into a `Parameter`."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        p = Parameter(tocha.empty(0, device=device, dtype=dtype), requires_grad)
        p.__class__ = cls
        return p


register_tensor_type(Parameter, "torch.nn.parameter.Parameter", _rebuild_parameter)


class Buffer(Tensor):
    """A tensor that, assigned as a Module attribute, is registered as a buffer (saved in the
    state dict unless ``persistent=False``)."""

    __slots__ = ("persistent",)
    __torch_function__ = disabled_torch_function_impl  # its calls are plain tensor calls

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            import tocha

            data = tocha.empty(0)
        b = _share(cls, data)
        b.persistent = persistent
        return b


# The ids of the live UninitializedBuffers made with persistent=False: the type has no room
# for the flag, since `materialize` turns the object into a plain Tensor in place.
_NOT_PERSISTENT: set[int] = set()


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (a lazy module's running statistics);
    `materialize` turns it into a plain tensor. Assigned as a module attribute, it is
    registered as a buffer, saved in the state dict unless `persistent` is False."""

    __slots__ = ()
    __torch_function__ = disabled_torch_function_impl  # its calls are plain tensor calls
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None, persistent: bool = True):
        t = tocha.empty(0, device=device, dtype=dtype)
        if requires_grad:
            t.requires_grad_(True)
        t.__class__ = cls
        if not persistent:
            _NOT_PERSISTENT.add(id(t))
            weakref.finalize(t, _NOT_PERSISTENT.discard, id(t))
        return t

    @property
    def persistent(self) -> bool:
        return id(self) not in _NOT_PERSISTENT

    def _args(self, device=None, dtype=None) -> tuple:
        return super()._args(device, dtype) + (self.persistent,)
