"""Grad mode: thread-local state of the dispatcher, usable with or without tocha-autograd."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar, overload

# A decorated function keeps its own signature.
F = TypeVar("F", bound=Callable[..., Any])
_Mode = TypeVar("_Mode", bound="_BareDecorator")

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "inference_mode",
    "is_inference_mode_enabled",
]


class _State(threading.local):
    grad_enabled = True
    inference = False
    autocast = None  # device type -> dtype of the active autocast regions (tocha.amp)
    # Active function transforms (a forward-AD dual level, vmap levels): while nonzero, the
    # autograd layer sees ops on the tensors it marks even with grad mode off.
    transforms = 0


STATE = _State()


def is_grad_enabled() -> bool:
    """Whether operations on tensors that require grad are recorded for backward."""
    return STATE.grad_enabled


def is_inference_mode_enabled() -> bool:
    return STATE.inference


class _GradModeContext:
    """Base of the grad-mode context managers; each also works as a decorator."""

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def _args(self):
        return ()

    def __enter__(self):
        self._prev = (STATE.grad_enabled, STATE.inference)
        self._apply()
        return None

    def __exit__(self, *exc):
        STATE.grad_enabled, STATE.inference = self._prev
        return False


class _BareDecorator(_GradModeContext):
    """A grad mode that also decorates when named without parentheses (``@tocha.no_grad``)."""

    @overload
    def __new__(cls: type[_Mode], orig_func: None = None) -> _Mode: ...

    @overload
    def __new__(cls, orig_func: F) -> F: ...

    def __new__(cls, orig_func: Any = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_BareDecorator):
    """Context manager and decorator (``@no_grad()`` or ``@no_grad``) that turns gradient
    recording off."""

    def _apply(self):
        STATE.grad_enabled = False


class enable_grad(_BareDecorator):
    """Context manager and decorator (``@enable_grad()`` or ``@enable_grad``) that turns
    gradient recording on."""

    def _apply(self):
        STATE.grad_enabled = True


class set_grad_enabled(_GradModeContext):
    """Sets gradient recording on or off, at once; as a context manager, restores it on exit."""

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self._prev = (STATE.grad_enabled, STATE.inference)
        STATE.grad_enabled = self.mode

    def _args(self):
        return (self.mode,)

    def __repr__(self) -> str:
        from ._dtype import SHOWN_MODULE

        return f"{SHOWN_MODULE}.autograd.grad_mode.set_grad_enabled(mode={self.mode})"

    def __call__(self, fn: F) -> F:
        STATE.grad_enabled, STATE.inference = self._prev
        return super().__call__(fn)

    def _apply(self):
        STATE.grad_enabled = self.mode

    def __enter__(self):
        self._apply()
        return None


class inference_mode(_GradModeContext):
    """Like `no_grad`, and tensors made inside can never join a graph later. Decorates
    with or without parentheses (``@inference_mode`` is ``@inference_mode()``)."""

    def __new__(cls, mode=True):
        if callable(mode):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def _args(self):
        return (self.mode,)

    def _apply(self):
        if self.mode:
            STATE.grad_enabled = False
            STATE.inference = True
        else:
            STATE.inference = False
