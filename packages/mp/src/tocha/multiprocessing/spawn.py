"""`spawn` / `start_processes`: run ``fn(i, *args)`` in N processes and wait for them, as
``torch.multiprocessing.spawn``. The first process to fail stops the others, and its
exception (with the child's traceback) is raised in the parent."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import traceback
from typing import Any

__all__ = [
    "ProcessContext",
    "ProcessException",
    "ProcessExitedException",
    "ProcessRaisedException",
    "spawn",
    "start_processes",
]


class ProcessException(Exception):
    """A process started by `spawn` failed."""

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """Exception raised when a process failed due to an exception raised by the code."""


class ProcessExitedException(ProcessException):
    """Exception raised when a process failed due to signal or exited with a specific code."""

    def __init__(
        self,
        msg: str,
        error_index: int,
        error_pid: int,
        exit_code: int,
        signal_name: str | None = None,
    ):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_file):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # SIGINT: stopped by the parent
    except Exception:
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """The processes `start_processes` started; `join` waits for them."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self) -> list:
        return [int(process.pid) for process in self.processes]

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait for the processes (at most `timeout` seconds).

        If one exited with a non-zero status, stop the others (SIGTERM, then SIGKILL after
        `grace_period` seconds, default 30) and raise `ProcessRaisedException` with its
        traceback, or `ProcessExitedException` with its exit code or signal.

        Returns:
            True once all processes have exited successfully, else False.
        """
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            if not self.sentinels:
                self._remove_error_files()
            return not self.sentinels
        self._stop_all(30 if grace_period is None else grace_period)
        raise self._failure(error_index)

    def _stop_all(self, grace_period: float) -> None:
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        for process in self.processes:
            process.join(grace_period)
            if process.is_alive():
                process.kill()
                process.join()

    def _failure(self, index: int) -> ProcessException:
        process = self.processes[index]
        try:
            with open(self.error_files[index], "rb") as fh:
                trace = pickle.load(fh)
        except OSError:
            trace = None
        finally:
            self._remove_error_files()
        if trace is not None:
            msg = f"\n\n-- Process {index:d} terminated with the following error:\n{trace}"
            return ProcessRaisedException(msg, index, process.pid)
        code = process.exitcode
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"<Unknown signal {-code}>"
            return ProcessExitedException(
                f"process {index:d} terminated with signal {name}", index, process.pid, code, name
            )
        return ProcessExitedException(
            f"process {index:d} terminated with exit code {code:d}", index, process.pid, code
        )

    def _remove_error_files(self) -> None:
        for path in self.error_files:
            try:
                os.unlink(path)
            except OSError:
                pass


def start_processes(
    fn,
    args=(),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
):
    """Start `nprocs` processes running ``fn(i, *args)`` with the given start method.

    Returns:
        None after joining them when `join`, else their `ProcessContext`.
    """
    mp: Any = multiprocessing.get_context(start_method)  # typeshed's BaseContext has no Process
    processes, error_files = [], []
    for i in range(nprocs):
        fd, path = tempfile.mkstemp(prefix="tocha-errorfile-", suffix=".pickle")
        os.close(fd)
        os.unlink(path)
        process = mp.Process(target=_wrap, args=(fn, i, args, path), daemon=daemon)
        process.start()
        processes.append(process)
        error_files.append(path)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass


def spawn(
    fn,
    args=(),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
):
    """Spawn `nprocs` processes running ``fn(i, *args)``, ``i`` being the process index.

    If one fails, the others are stopped and its exception is raised here.

    Example::

        >>> def work(i, x):
        ...     x[i] = i
        >>> x = tocha.zeros(4).share_memory_()
        >>> tocha.multiprocessing.spawn(work, args=(x,), nprocs=4)
    """
    return start_processes(fn, args, nprocs, join, daemon, start_method)
