"""Tensor subclasses that define ``__torch_function__`` (PyTorch's protocol for extending
torch): every public function, Tensor method and operator given one hands the call to it.

``Tensor.__torch_function__`` is PyTorch's default: it runs the call with subclass dispatch
off and returns its tensors as the subclass (`as_subclass`), so ``x + 1`` of a plain subclass
is of that subclass, and a subclass that overrides it (logging, wrapping) sees every call
and delegates with ``super().__torch_function__``.

Plain tensors pay nothing for this: until a Tensor subclass that takes part is defined
(`SUBCLASS_HOOKS` sees every Tensor subclass; tocha's own, and ``nn.Parameter``, opt out with
``__torch_function__ = _disabled_torch_function_impl`` as PyTorch's do), Tensor's methods are
the plain ones, and tocha's public functions (`tocha.overrides.overridable`) hand over only
the calls that fail on a tensor-like argument (a library's duck type). The first such class
*arms* dispatch for the rest of the process: the public functions look at their arguments
(in lists and tuples too) before running, and Tensor's methods and its properties' getters
are replaced by wrappers that do. (The elementwise functions, which hand over failed calls
themselves and are not wrapped, and ``tocha.nn.functional``, ``tocha.linalg``, ``tocha.fft``
and ``tocha.special`` are not dispatched: their calls on a subclass run as on a tensor.)
"""

from __future__ import annotations

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
    armed = False
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
    return found is not None and getattr(found, "__func__", found) is not (
        disabled_torch_function_impl
    )


def _as_subclass(value, cls):
    if isinstance(value, Tensor):
        return value if isinstance(value, cls) else value.as_subclass(cls)
    if type(value) in (tuple, list):
        return type(value)(_as_subclass(v, cls) for v in value)
    return value


# -- arming ----------------------------------------------------------------------------------
_OVERRIDING: dict[type, bool] = {}  # type -> overrides_torch_function(type), cached


def _overriding_args(args: tuple, kwargs: dict) -> list | None:
    found = None
    for arg in (*args, *kwargs.values()) if kwargs else args:
        cls = type(arg)
        if cls is Tensor:
            continue
        items = arg if cls is list or cls is tuple else (arg,)
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


def _dispatching_method(fn, name: str, reported=None):
    """Tensor method `fn` (``Tensor.name``) handing calls with overriding arguments to their
    ``__torch_function__``, as the function `reported` (itself by default)."""
    from .overrides import handle_torch_function

    def public(*args: Any, **kwargs: Any) -> Any:
        if not STATE.disabled:
            overloaded = _overriding_args(args, kwargs)
            if overloaded:
                return handle_torch_function(reported or public, overloaded, *args, **kwargs)
        return fn(*args, **kwargs)

    public.__doc__ = fn.__doc__
    public.__module__ = "tocha"
    public.__name__ = name
    public.__qualname__ = f"Tensor.{name}"  # pickled by reference as tocha.Tensor.<name>
    public.__wrapped__ = fn  # type: ignore[attr-defined]
    return public


def _dispatching_property(prop: property) -> property:
    """`prop` whose getter hands a read on an overriding tensor to its
    ``__torch_function__`` (as the function ``__get__``)."""
    from .overrides import handle_torch_function

    fget = prop.fget

    def __get__(self):  # noqa: N807 - the name PyTorch reports a property read by
        return fget(self)

    def read(self):
        if not STATE.disabled and type(self) is not Tensor:
            if _overriding_args((self,), {}):
                return handle_torch_function(__get__, (self,), self)
        return fget(self)

    return property(read, prop.fset, prop.fdel, prop.__doc__)


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
    }
)


def arm() -> None:
    """Turn subclass dispatch on, once: the public functions of ``tocha`` (published through
    `tocha.overrides.overridable`) start looking at their arguments, and Tensor's methods and
    its properties' getters are replaced by wrappers that do."""
    if STATE.armed:
        return
    STATE.armed = True
    _arm_methods()


def _arm_methods() -> None:
    methods = vars(Tensor)
    Tensor.__rdiv__ = methods["__rtruediv__"]  # type: ignore[attr-defined]
    for name, value in list(methods.items()):
        if isinstance(value, property) and value.fget is not None:
            setattr(Tensor, name, _dispatching_property(value))
        elif isinstance(value, types.FunctionType) and name not in _NOT_DISPATCHED:
            if name not in _REPORTED_AS:
                setattr(Tensor, name, _dispatching_method(value, name))
    for name, reported in _REPORTED_AS.items():
        original = methods.get(name)
        if isinstance(original, types.FunctionType):
            setattr(Tensor, name, _dispatching_method(original, name, getattr(Tensor, reported)))


def _on_new_subclass(cls: type) -> None:
    if overrides_torch_function(cls):
        arm()


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
