"""``record``: the decorator a torchrun script puts on its ``main`` so that an exception
that ends a worker is written to the worker's ``TORCHELASTIC_ERROR_FILE``, where the
launcher finds it and reports it as the root cause of the failure (`ChildFailedError`).

Example::

    from torch.distributed.elastic.multiprocessing.errors import record

    @record
    def main():
        ...
"""

from __future__ import annotations

import functools
import json
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ChildFailedError", "ErrorHandler", "ProcessFailure", "get_error_handler", "record"]

ERROR_FILE = "TORCHELASTIC_ERROR_FILE"


class ErrorHandler:
    """Writes the exception that ends a worker to ``TORCHELASTIC_ERROR_FILE`` as JSON:
    ``{"message": {"message": "ValueError: ...", "extraInfo": {"py_callstack": ...,
    "timestamp": ...}}}``."""

    def initialize(self) -> None:
        """Nothing to prepare: Python's own fault handler is left as it is."""

    def record_exception(self, e: BaseException) -> None:
        """Write `e` and its traceback to the error file, when the launcher gave one."""
        path = os.environ.get(ERROR_FILE)
        if not path:
            return
        data = {
            "message": {
                "message": f"{type(e).__name__}: {e}",
                "extraInfo": {
                    "py_callstack": "".join(
                        traceback.format_exception(type(e), e, e.__traceback__)
                    ),
                    "timestamp": str(int(time.time())),
                },
            }
        }
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w") as fh:
            json.dump(data, fh)


def get_error_handler() -> ErrorHandler:
    """The error handler `record` uses by default."""
    return ErrorHandler()


def record(fn: Callable, error_handler: ErrorHandler | None = None) -> Callable:
    """`fn`, with any exception it raises written to the worker's error file (then
    raised again); ``SystemExit(0)`` returns None."""
    handler = error_handler or get_error_handler()

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any):
        handler.initialize()
        try:
            return fn(*args, **kwargs)
        except SystemExit as exit_:
            if exit_.code in (0, None):
                return None
            raise
        except Exception as exc:
            handler.record_exception(exc)
            raise

    return wrapper


@dataclass
class ProcessFailure:
    """One failed worker: its rank, exit code, and the error it recorded (if any)."""

    local_rank: int
    pid: int
    exitcode: int
    error_file: str
    message: str = ""
    timestamp: int = 0
    error_file_data: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.error_file and os.path.isfile(self.error_file):
            with open(self.error_file) as fh:
                self.error_file_data = json.load(fh)
            message = self.error_file_data.get("message", {})
            extra = message.get("extraInfo", {}) if isinstance(message, dict) else {}
            self.message = extra.get("py_callstack") or str(message)
            self.timestamp = int(extra.get("timestamp", 0) or 0)
        else:
            self.message = (
                "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
            )

    def signal_name(self) -> str:
        """The signal that ended the worker, or ``<N/A>``."""
        if self.exitcode < 0:
            import signal

            try:
                return signal.Signals(-self.exitcode).name
            except ValueError:
                return "<N/A>"
        return "<N/A>"


class ChildFailedError(Exception):
    """Workers of the launch `name` failed; `failures` maps their ranks to `ProcessFailure`."""

    def __init__(self, name: str, failures: dict[int, ProcessFailure]) -> None:
        self.name = name
        self.failures = failures
        super().__init__(self.format_msg())

    def get_first_failure(self) -> tuple[int, ProcessFailure]:
        """The failure recorded first (by its timestamp), with its rank."""
        rank = min(self.failures, key=lambda r: (self.failures[r].timestamp or 0, r))
        return rank, self.failures[rank]

    def format_msg(self, boarder_delim: str = "=", section_delim: str = "-") -> str:
        """The report torchrun prints: the root cause, then the other failures."""
        rank, first = self.get_first_failure()
        others = [self._format(r, f) for r, f in self.failures.items() if r != rank]
        width = 60
        lines = [
            "",
            boarder_delim * width,
            f"{self.name} FAILED",
            section_delim * width,
            "Failures:",
            *("\n".join(others).splitlines() if others else ["  <NO_OTHER_FAILURES>"]),
            section_delim * width,
            "Root Cause (first observed failure):",
            self._format(rank, first),
            boarder_delim * width,
        ]
        return "\n".join(lines)

    @staticmethod
    def _format(rank: int, failure: ProcessFailure) -> str:
        when = time.strftime("%Y-%m-%d_%H:%M:%S", time.localtime(failure.timestamp or time.time()))
        trace = failure.message.replace("\n", "\n  ")
        return (
            f"[{rank}]:\n  time      : {when}\n  host      : localhost\n"
            f"  rank      : {rank} (local_rank: {failure.local_rank})\n"
            f"  exitcode  : {failure.exitcode} (pid: {failure.pid})\n"
            f"  error_file: {failure.error_file or '<N/A>'}\n  traceback : {trace}"
        )
