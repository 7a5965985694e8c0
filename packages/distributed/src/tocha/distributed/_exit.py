"""How MPI ends with the process, so that a rank that fails stops the launch instead of
waiting for the others.

``MPI_Finalize`` waits for every rank (a barrier of the process manager). mpi4py calls it
at exit; a rank that raised would then wait there for ranks still inside a collective, and
its launcher would never see it fail and stop them, as torchrun and PyTorch's spawn do. So
tocha takes the call over (before MPI starts):

- a rank that mpiexec started finalizes at exit unless an uncaught exception or
  ``sys.exit`` with a failing status ends it (then it exits at once, and mpiexec stops the
  others and reports the failure);
- the ranks of a world met by rendezvous (``multiprocessing.spawn``) never finalize: their
  parent watches their exit codes itself.

Every collective of tocha has completed when it returns, so skipping it loses nothing.
"""

from __future__ import annotations

import atexit
import sys

__all__ = ["take_over_finalize"]

_failed = False


def _note_failure(previous):
    def hook(kind, value, trace) -> None:
        global _failed
        _failed = True
        previous(kind, value, trace)

    return hook


def _note_exit(previous):
    def exit_(status=None):
        global _failed
        if status not in (0, None):
            _failed = True
        previous(status)

    return exit_


def _finalize() -> None:
    from mpi4py import MPI

    if not _failed and MPI.Is_initialized() and not MPI.Is_finalized():
        MPI.Finalize()


def take_over_finalize(finalize: bool) -> None:
    """Call before MPI starts: mpi4py will not finalize MPI at exit; tocha will, when
    `finalize`, unless an uncaught exception or a failing ``sys.exit`` ends the process."""
    import mpi4py

    mpi4py.rc.finalize = False
    if finalize:
        sys.excepthook = _note_failure(sys.excepthook)
        sys.exit = _note_exit(sys.exit)
        atexit.register(_finalize)
