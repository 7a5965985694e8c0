"""`Work`: a collective in flight, waited for by polling against the process group's timeout.

Every collective is started non-blocking (``MPI_Iallreduce``..., or a CUDA event for NCCL) and
waited for by testing it in a loop: a blocking MPI call would wait forever for a rank that
died or never calls the collective, whereas the loop raises `DistBackendError` once the
timeout has passed. The loop spins for the first milliseconds (a collective of a few
kilobytes finishes in microseconds), then sleeps a little between tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

from ._types import DistBackendError

__all__ = ["Work"]

SPIN_SECONDS = 0.002
SLEEP_SECONDS = 0.0001


def _milliseconds(timeout: timedelta) -> int:
    return int(timeout.total_seconds() * 1000)


class Work:
    """The handle that a collective with ``async_op=True`` returns.

    Args:
        test: returns True once the transfers are done (it drives their progress too).
        finish: runs once when they are done (copies back, divides for AVG...), or None.
        timeout: how long `wait` waits before raising `DistBackendError`.
        what: the collective and the rank, for messages (``"all_reduce on rank 1"``).
        result: the output tensors (`result()`).
    """

    __slots__ = ("_test", "_finish", "_timeout", "_what", "_result", "_done", "_error")

    def __init__(
        self,
        test: Callable[[], bool],
        finish: Callable[[], None] | None,
        timeout: timedelta,
        what: str,
        result: list | None = None,
    ) -> None:
        self._test = test
        self._finish = finish
        self._timeout = timeout
        self._what = what
        self._result = result or []
        self._done = False
        self._error = None

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            finish, self._finish = self._finish, None
            try:
                finish()
            except Exception as exc:
                self._error = exc
                raise

    def then(self, fn: Callable[[], None]) -> Work:
        """Run `fn` after the collective's own finishing step, once it is done."""
        previous = self._finish

        def finish() -> None:
            if previous is not None:
                previous()
            fn()

        self._finish = finish
        return self

    def is_completed(self) -> bool:
        """Whether the collective is done (never blocks)."""
        if not self._done and self._test():
            self._complete()
        return self._done

    def wait(self, timeout: timedelta | None = None) -> bool:
        """Block until the collective is done; raise `DistBackendError` after the timeout
        (the process group's, unless `timeout` is given)."""
        if self._error is not None:
            raise self._error
        if self._done:
            return True
        limit = self._timeout if timeout is None else timeout
        start = time.monotonic()
        deadline = start + limit.total_seconds()
        spin_until = start + SPIN_SECONDS
        test = self._test
        while not test():
            now = time.monotonic()
            if now > deadline:
                self._error = DistBackendError(
                    f"Timed out after {_milliseconds(limit)}ms waiting for {self._what} to "
                    "complete: another rank may have died, or not be calling the same "
                    "collective"
                )
                raise self._error
            if now > spin_until:
                time.sleep(SLEEP_SECONDS)
        self._complete()
        return True

    def is_success(self) -> bool:
        """Whether the collective completed without error."""
        return self._done and self._error is None

    def exception(self) -> BaseException | None:
        """The error the collective ended with, or None."""
        return self._error

    def get_future(self):
        """A `tocha.futures.Future` completed with `result()` once the collective is done
        (waiting on it waits for the collective)."""
        from tocha.futures import Future

        def poll(block: bool) -> bool:
            if block:
                self.wait()
            elif not self.is_completed():
                return False
            future.set_result(self._result)
            return True

        future = Future._driven_by(poll)
        return future

    def result(self) -> list:
        """The output tensors of the collective."""
        return self._result
