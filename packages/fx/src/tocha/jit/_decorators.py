"""Decorators and markers of ``tocha.jit``: ignore, unused, export, annotate, Attribute."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from . import _interp, _types

F = TypeVar("F", bound=Callable[..., Any])

_TRACING = [0]


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """Leave a function or method as a Python call that scripted code makes into Python.

    A model that calls an ignored function cannot be saved (PyTorch's rule); with
    ``drop=True`` the function is treated like `unused` and replaced by a raise.

    Example::

        @tocha.jit.ignore
        def debug(self, x):
            ...
    """
    if callable(drop):
        drop._tocha_jit_ignore = True
        return drop

    def decorate(fn: F) -> F:
        if drop:
            fn._tocha_jit_unused = True  # type: ignore[attr-defined]
        else:
            fn._tocha_jit_ignore = True  # type: ignore[attr-defined]
        return fn

    return decorate


def unused(fn: F) -> F:
    """Compile a function or method as a raise: it may stay in a saved model but not run."""
    fn._tocha_jit_unused = True  # type: ignore[attr-defined]
    return fn


def export(fn: F) -> F:
    """Compile this method of a scripted module too, so that it can be called from Python."""
    fn._tocha_jit_export = True  # type: ignore[attr-defined]
    return fn


def script_method(fn: F) -> F:
    """Mark a method of a subclass of ``tocha.jit.ScriptModule`` to be compiled (PyTorch's
    older API; `tocha.jit.script` of an ``nn.Module`` is the newer one)."""
    return export(fn)


def ignored(fn: Any) -> bool:
    """Whether ``fn`` was marked with `ignore`."""
    return getattr(fn, "_tocha_jit_ignore", False) is True


def is_unused(fn: Any) -> bool:
    """Whether ``fn`` was marked with `unused` (or ``ignore(drop=True)``)."""
    return getattr(fn, "_tocha_jit_unused", False) is True


def is_exported(fn: Any) -> bool:
    """Whether ``fn`` was marked with `export`."""
    return getattr(fn, "_tocha_jit_export", False) is True


def interface(obj: Any) -> Any:
    """Mark a class as a TorchScript interface; returned unchanged."""
    return obj


def script_if_tracing(fn: F) -> F:
    """Script ``fn`` only when it is called while tracing; tocha's traces record the calls
    ``fn`` makes, so it is returned unchanged."""
    return fn


def annotate(the_type: Any, the_value: Any) -> Any:
    """Give ``the_value`` a TorchScript type; in Python and in scripted code it returns it."""
    return the_value


def Attribute(value: Any, type: Any) -> Any:  # noqa: N802, A002
    """Declare a module attribute's TorchScript type; returns ``value`` unchanged."""
    return value


def is_scripting() -> bool:
    """True while scripted code runs (a call made from a scripted function), else False.

    Example::

        if not tocha.jit.is_scripting():
            print("eager")
    """
    return _interp.scripting()


def is_tracing() -> bool:
    """True while `tocha.jit.trace` records a function, else False."""
    return _TRACING[0] > 0


def isinstance(obj: Any, target_type: Any) -> bool:  # noqa: A001
    """Whether ``obj`` is of TorchScript type ``target_type`` (``List[int]``,
    ``Optional[Tensor]``, ``Dict[str, Tensor]``...), looking into containers' elements.

    Example::

        >>> tocha.jit.isinstance([1, 2], List[int])
        True
    """
    return _types.matches(_types.from_python(target_type), obj)
