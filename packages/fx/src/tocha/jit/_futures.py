"""`fork` and `wait`: TorchScript's asynchronous calls, run at once on the calling thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Future(Generic[T]):
    """The result of a `fork`: `wait` (or ``.wait()``) returns the value."""

    def __init__(self, value: T) -> None:
        self._value = value

    def wait(self) -> T:
        """The forked call's result."""
        return self._value

    def done(self) -> bool:
        """Always True: the call ran when it was forked."""
        return True

    def value(self) -> T:
        """The forked call's result."""
        return self._value


def fork(func: Callable[..., T], *args: Any, **kwargs: Any) -> Future[T]:
    """Call ``func(*args, **kwargs)`` and return a `Future` holding its result.

    PyTorch may run a forked call on another thread; tocha runs it at once, which gives
    the same results for code without side effects on shared state.

    Example::

        >>> fut = tocha.jit.fork(tocha.neg, tocha.ones(2))
        >>> tocha.jit.wait(fut)
        tensor([-1., -1.])
    """
    return Future(func(*args, **kwargs))


def wait(future: Future[T]) -> T:
    """The result of a `fork`."""
    return future.wait()
