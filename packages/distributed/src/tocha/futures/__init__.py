"""``tocha.futures``, as ``torch.futures``: `Future`, the result of an asynchronous call
(a collective's ``Work.get_future()``, a DDP communication hook), with `collect_all` and
`wait_all`.

tocha runs no background threads: a `Future` that waits on a collective completes it when
`wait` (or `value`, `done`) asks, and its `then` callbacks run then, in order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")
S = TypeVar("S")


class Future(Generic[T]):
    """A value that is set later (`set_result`), or an error (`set_exception`).

    Example::

        >>> fut = torch.futures.Future()
        >>> doubled = fut.then(lambda f: f.value() * 2)
        >>> fut.set_result(torch.ones(2))
        >>> doubled.wait()
        tensor([2., 2.])
    """

    def __init__(self, *, devices=None) -> None:
        self._done = False
        self._value: Any = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[Future[T]], None]] = []
        self._poll: Callable[[bool], bool] | None = None

    @classmethod
    def _driven_by(cls, poll: Callable[[bool], bool]) -> Future:
        """A future completed by `poll(block)`, which returns whether it is done (and sets
        the result through `set_result` once it is)."""
        fut = cls()
        fut._poll = poll
        return fut

    def done(self) -> bool:
        """Whether the value (or an error) is set."""
        if not self._done and self._poll is not None:
            self._drive(block=False)
        return self._done

    def _drive(self, block: bool) -> None:
        poll, self._poll = self._poll, None
        try:
            if not poll(block):
                self._poll = poll
        except BaseException as exc:  # noqa: BLE001 - kept for wait() to raise
            self.set_exception(exc)

    def wait(self) -> T:
        """The value, once set (waiting for what sets it); raises the error if one was set."""
        if not self._done and self._poll is not None:
            self._drive(block=True)
        if not self._done:
            raise RuntimeError("Future.wait(): the value is never set (no result was given)")
        if self._error is not None:
            raise self._error
        return self._value

    def value(self) -> T:
        """The value of a completed future (raises its error, if any)."""
        return self.wait()

    def set_result(self, result: T) -> None:
        """Complete the future with `result` and run its callbacks."""
        if self._done:
            raise RuntimeError("Future can only be marked completed once, but got another result.")
        self._value, self._done = result, True
        self._run_callbacks()

    def set_exception(self, result: BaseException) -> None:
        """Complete the future with the error `result` (`wait` raises it)."""
        if not isinstance(result, BaseException):
            raise TypeError(f"{result!r} is of type {type(result)}, not an Exception.")
        self._error, self._done = result, True
        self._run_callbacks()

    def _run_callbacks(self) -> None:
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    def add_done_callback(self, callback: Callable[[Future[T]], None]) -> None:
        """Run `callback(self)` once the future is completed (at once if it is)."""
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def then(self, callback: Callable[[Future[T]], S]) -> Future[S]:
        """A new future holding ``callback(self)``, computed once this one completes."""
        parent = self

        def poll(block: bool) -> bool:
            if block:
                parent.wait() if parent._error is None else None
            return parent.done()

        child: Future[S] = Future._driven_by(poll)

        def run(done: Future[T]) -> None:
            child._poll = None
            try:
                child.set_result(callback(done))
            except BaseException as exc:  # noqa: BLE001 - the child future carries it
                if not child._done:
                    child.set_exception(exc)

        self.add_done_callback(run)
        return child


def collect_all(futures: list[Future]) -> Future[list[Future]]:
    """A future whose value is `futures`, completed once all of them are."""

    def poll(block: bool) -> bool:
        if block:
            for fut in futures:
                if not fut.done():
                    fut._drive(block=True)
        if all(fut.done() for fut in futures):
            result.set_result(futures)
            return True
        return False

    result: Future[list[Future]] = Future._driven_by(poll)
    return result


def wait_all(futures: list[Future]) -> list:
    """The values of `futures`, waiting for each (raises the first error)."""
    return [fut.wait() for fut in futures]
