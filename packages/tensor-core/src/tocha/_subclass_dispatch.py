"""Tensor subclasses that define ``__torch_function__`` (PyTorch's protocol for extending
torch): every public function, Tensor method and operator given one hands the call to it.

``Tensor.__torch_function__`` is PyTorch's default: it runs the call with subclass dispatch
off and returns its tensors as the subclass (`as_subclass`), so ``x + 1`` of a plain subclass
is of that subclass, and a subclass that overrides it (logging, wrapping) sees every call
and delegates with ``super().__torch_function__``.

Plain tensors pay nothing for this. Every Tensor subclass passes `SUBCLASS_HOOKS`; tocha's
own, and ``nn.Parameter``, opt out with ``__torch_function__ =
_disabled_torch_function_impl`` as PyTorch's do. A subclass that takes part gets dispatching
wrappers of the methods and property getters it inherits from Tensor, on itself (Tensor's own
stay as they are), and *arms* the public functions (`tocha.overrides.overridable`) for the
rest of the process: they look at their arguments (in lists and tuples too) before running.
Until then they hand over only the calls that fail on a tensor-like argument (a library's
duck type). (The elementwise functions, which hand over failed calls themselves and are not
wrapped, and ``tocha.nn.functional``, ``tocha.linalg``, ``tocha.fft`` and ``tocha.special``
are not dispatched: their calls on a subclass run as on a tensor.)
"""

from __future__ import annotations

import sys
import types
from typing import Any

from ._tensor import SUBCLASS_HOOKS, Tensor

__all__ = [
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "default_torch_function",
    "disabled_torch_function_impl",
    "overrides_torch_function",
]


class _State:
    armed = False  # a subclass that takes part exists: the public functions dispatch
    disabled = 0  # > 0 inside DisableTorchFunction(Subclass) and the default implementation


STATE = _State()


class DisableTorchFunctionSubclass:
    """Context manager: calls inside it run the plain functions, whatever their arguments'
    ``__torch_function__`` (as ``torch._C.DisableTorchFunctionSubclass``)."""

    def __enter__(self):
        STATE.disabled += 1
        return self

    def __exit__(self, *exc) -> bool:
        STATE.disabled -= 1
        return False


DisableTorchFunction = DisableTorchFunctionSubclass


def default_torch_function(cls, func, types, args=(), kwargs=None):
    """``Tensor.__torch_function__``: run `func` with dispatch off and give its tensor
    results (in tuples and lists too) the subclass `cls`; NotImplemented when some overriding
    type is not a base of `cls`."""
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        result = func(*args, **(kwargs or {}))
    return _as_subclass(result, cls)


def disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """A ``__torch_function__`` that opts a subclass out of dispatch (PyTorch's
    ``torch._C._disabled_torch_function_impl``, set as a plain class attribute): the plain
    call, plain results."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


def overrides_torch_function(cls: type) -> bool:
    """Whether calls on instances of `cls` go to a ``__torch_function__``: `cls` defines one
    (a tensor-like class) or is a Tensor subclass that does not opt out (its own or the
    default), as PyTorch's ``has_torch_function`` tells."""
    if cls is Tensor:
        return False
    found = getattr(cls, "__torch_function__", None)
    if found is None:
        return False
    found = getattr(found, "__func__", found)
    # PyTorch's own tensors are no tensor-likes of tocha's: their default would call the
    # tocha function straight back
    module = getattr(found, "__module__", None) or ""
    return found is not disabled_torch_function_impl and module.partition(".")[0] != "torch"


def _as_subclass(value, cls):
    if isinstance(value, Tensor):
        return value if isinstance(value, cls) else value.as_subclass(cls)
    if type(value) in (tuple, list):
        return type(value)(_as_subclass(v, cls) for v in value)
    return value


# -- arming ----------------------------------------------------------------------------------
_OVERRIDING: dict[type, bool] = {}  # type -> overrides_torch_function(type), cached


def _overriding_args(args: tuple, kwargs: dict) -> list | None:
    """The arguments (and items of list, tuple or dict arguments) whose types take part in
    ``__torch_function__`` dispatch, in order; None when there are none."""
    found = None
    for arg in (*args, *kwargs.values()) if kwargs else args:
        cls = type(arg)
        if cls is Tensor:
            continue
        items = arg if cls is list or cls is tuple else arg.values() if cls is dict else (arg,)
        for item in items:
            kind = type(item)
            if kind is Tensor:
                continue
            own = _OVERRIDING.get(kind)
            if own is None:
                own = _OVERRIDING[kind] = overrides_torch_function(kind)
            if own:
                found = [item] if found is None else [*found, item]
    return found


def _dispatching_method(cls: type, fn, name: str, reported):
    """`fn`, a Tensor method inherited by subclass `cls`, as a method of `cls` handing calls
    with overriding arguments to their ``__torch_function__``, as the plain function
    `reported` (which PyTorch names for that call)."""
    from .overrides import handle_torch_function

    def method(*args: Any, **kwargs: Any) -> Any:
        if not STATE.disabled:
            overloaded = _overriding_args(args, kwargs)
            if overloaded:
                return handle_torch_function(reported, overloaded, *args, **kwargs)
        return fn(*args, **kwargs)

    method.__doc__ = fn.__doc__
    method.__module__ = cls.__module__
    method.__name__ = name
    method.__qualname__ = f"{cls.__qualname__}.{name}"  # pickled by reference as that
    method.__wrapped__ = fn  # type: ignore[attr-defined]
    return method


def _dispatching_property(prop: property) -> property:
    """`prop` whose getter hands a read on an overriding tensor to its
    ``__torch_function__`` (as the function ``__get__``)."""
    from .overrides import handle_torch_function

    fget = prop.fget

    def __get__(self):  # noqa: N807 - the name PyTorch reports a property read by
        return fget(self)

    def read(self):
        if not STATE.disabled and _overriding_args((self,), {}):
            return handle_torch_function(__get__, (self,), self)
        return fget(self)

    return property(read, prop.fset, prop.fdel, prop.__doc__)


def __rdiv__(self, other):  # noqa: N807 - the name PyTorch reports ``2 / x`` by
    return Tensor.__rtruediv__(self, other)


# Operators PyTorch reports as the method they compute (``x + 1`` as ``Tensor.add``); the
# others are reported as themselves (``__getitem__``, ``__eq__``, ``__rsub__``...).
_REPORTED_AS = {
    "__add__": "add",
    "__radd__": "add",
    "__iadd__": "add_",
    "__sub__": "sub",
    "__isub__": "sub_",
    "__mul__": "mul",
    "__rmul__": "mul",
    "__imul__": "mul_",
    "__truediv__": "div",
    "__rtruediv__": "__rdiv__",
    "__itruediv__": "div_",
    "__mod__": "remainder",
    "__rand__": "bitwise_and",
    "__ror__": "bitwise_or",
    "__rxor__": "bitwise_xor",
    "__ne__": "ne",
    "__lt__": "lt",
    "__le__": "le",
    "__gt__": "gt",
    "__ge__": "ge",
    "__neg__": "neg",
    "__pos__": "positive",
    "__abs__": "abs",
    "__pow__": "pow",
    "__ipow__": "pow_",
    "__matmul__": "matmul",
}
# Methods that are not calls on the tensor's values (object protocol, pickling, arrays).
_NOT_DISPATCHED = frozenset(
    {
        "__new__",
        "__init__",
        "__init_subclass__",
        "__torch_function__",
        "__getattribute__",
        "__getattr__",
        "__setattr__",
        "__delattr__",
        "__reduce__",
        "__reduce_ex__",
        "__getstate__",
        "__setstate__",
        "__copy__",
        "__deepcopy__",
        "__hash__",
        "__sizeof__",
        "__dir__",
        "__class_getitem__",
        "__array__",
        "__array_wrap__",
        "__array_ufunc__",
        "__array_function__",
        "__dlpack__",
        "__dlpack_device__",
        "as_subclass",
        "_make_subclass",
    }
)


def _install_on(cls: type) -> None:
    """Dispatching wrappers, on subclass `cls`, of the methods and property getters it
    inherits from Tensor (not those it or a base between defines): calls on its instances
    reach its ``__torch_function__``, and Tensor's own methods stay as they are, at no cost
    to other tensors and with their identity (which the tracers know them by) kept."""
    plain = vars(Tensor)
    for name, value in list(plain.items()):
        if name in _NOT_DISPATCHED or _owner(cls, name) is not Tensor:
            continue
        if isinstance(value, property) and value.fget is not None:
            setattr(cls, name, _dispatching_property(value))
        elif isinstance(value, types.FunctionType):
            if name == "__rtruediv__":
                reported = __rdiv__
            else:
                shown = _REPORTED_AS.get(name, name)
                reported = _named(plain.get(shown, value), shown)
            setattr(cls, name, _dispatching_method(cls, value, name, reported))


def _named(fn, name: str):
    """`fn`, as ``__torch_function__`` is told of the method ``Tensor.name``: itself when
    that is its name and it is no public function too, else a call of it under that name."""
    if fn.__name__ == name and vars(sys.modules["tocha"]).get(name) is not fn:
        return fn

    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    call.__name__ = name
    call.__qualname__ = f"Tensor.{name}"
    return call


def _owner(cls: type, name: str) -> type | None:
    """The class of `cls`'s MRO whose own attribute `name` is."""
    for klass in cls.__mro__:
        if name in vars(klass):
            return klass
    return None


def _on_new_subclass(cls: type) -> None:
    """A Tensor subclass that takes part in dispatch: the public functions look at their
    arguments from now on, and its instances' methods dispatch."""
    if overrides_torch_function(cls):
        STATE.armed = True
        _install_on(cls)


def _make_subclass(cls, data: Tensor, require_grad: bool = False) -> Tensor:
    """A tensor of subclass `cls` sharing `data`'s memory, with no history, requiring
    gradients as asked (PyTorch's ``Tensor._make_subclass``, which subclasses' ``__new__``
    call)."""
    if not isinstance(data, Tensor):
        raise TypeError(f"data must be a Tensor, not {type(data).__name__}")
    with DisableTorchFunctionSubclass():
        out = data.detach().as_subclass(cls)
    if require_grad:
        out.requires_grad_(True)
    return out


Tensor.__torch_function__ = classmethod(default_torch_function)  # type: ignore[attr-defined]
Tensor._make_subclass = staticmethod(_make_subclass)  # type: ignore[attr-defined]
SUBCLASS_HOOKS.append(_on_new_subclass)
