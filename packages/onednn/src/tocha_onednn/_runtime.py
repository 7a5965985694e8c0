"""The loaded library, shared by the kernels, and the thread count its calls run with.

oneDNN runs on GNU OpenMP. Its thread count follows `tocha.set_num_threads`, which sets the
thread count of NumPy's BLAS (through threadpoolctl): before each call the kernels read the
BLAS libraries' count (a ctypes call; `tocha.get_num_threads` reads the same) and hand it to
OpenMP when it changed. GNU OpenMP's thread pool does not survive a fork: in a child process
(a DataLoader worker, a multiprocessing child started by fork) oneDNN's calls run on one
thread, which needs no pool.

OpenMP's threads spin only briefly between oneDNN's calls (``GOMP_SPINCOUNT=10000`` while
libdnnl loads, unless the environment chooses a policy or a spin count), then sleep. GNU
OpenMP's default spin (300,000 rounds) took the cores from NumPy's BLAS threads and the
work in between, which made a small CNN's training step several times slower at two
threads; waiting passively (no spin: every call wakes sleeping threads) cost as much once
matrix products ran on oneDNN. Measured at two threads on a 2-vCPU AMD EPYC, passive against
10,000 rounds: the MLP step 1.03 against 0.67 ms, a ResNet-18-style step 69 against 45 ms,
a compiled GPT block 5.9 against 3.9 ms, layer norm 0.45 against 0.16 ms; the digits demo
3.5 against 3.2 s.
"""

from __future__ import annotations

import os

from . import _dnnl as D

_library: D.Library | None = None
_blas_threads: list = []  # each BLAS library's thread-count getter
_forked = False


def library() -> D.Library:
    """libdnnl, loaded on the first call (the first run of a provided kernel)."""
    global _library
    if _library is None:
        from threadpoolctl import ThreadpoolController

        controllers = ThreadpoolController().select(user_api="blas").lib_controllers
        _blas_threads[:] = [c.get_num_threads for c in controllers]
        _library = _load_with_short_spin()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_after_fork)
    return _library


SPIN_COUNT = "10000"  # GNU OpenMP's spin rounds before a waiting thread sleeps


def _load_with_short_spin() -> D.Library:
    """libdnnl loaded with GNU OpenMP's threads spinning `SPIN_COUNT` rounds before they
    sleep (which it reads from the environment as it loads), the environment then
    restored."""
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        return D.Library()
    os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT
    try:
        return D.Library()
    finally:
        del os.environ["GOMP_SPINCOUNT"]


def _after_fork() -> None:
    global _forked
    _forked = True


def threads() -> int:
    """The thread count tocha's CPU kernels use now, given to OpenMP in this thread."""
    lib = _library or library()
    if _forked:
        n = 1
    elif len(_blas_threads) == 1:
        n = _blas_threads[0]() or _default_threads()
    else:
        n = max([get() or 0 for get in _blas_threads], default=0) or _default_threads()
    lib.set_threads(n)
    return n


def _default_threads() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
