"""The benchmark harness: how a case is declared, found, prepared, timed and judged.

A case is declared once, as a `Case` in the ``CASES`` list of a ``cases_*.py`` module beside
this file (one module per area: core, autograd, nn...). Its callables take the library first
(the ``tocha``, ``torch`` or ``numpy`` module), then the inputs its ``setup`` made, converted
to that library's tensors. tocha has PyTorch's API, so the tocha callable also serves PyTorch
unless the case names another one.

torch runs in a child process (``torch_worker.py``): its OpenMP and the GNU OpenMP of
tocha-onednn contend when both live in one process (a 2-thread GPT block was seen 8x slower),
so `time_side_by_side` takes a worker in place of the torch module.
"""

from __future__ import annotations

import importlib
import math
import os
import time
import timeit
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from functools import partial
from pathlib import Path
from types import ModuleType

__all__ = [
    "Case",
    "Result",
    "SAME",
    "Unavailable",
    "child_cpu_time",
    "extra_over_numpy",
    "faster_than_torch",
    "keep_freed_memory",
    "load_cases",
    "numpy_throughput",
    "plan",
    "prepare",
    "set_thread_variables",
    "time_side_by_side",
]

HERE = Path(__file__).resolve().parent
SAME = "same as tocha"
LIBRARIES = ("tocha", "torch", "numpy")
# Each timed batch is short, so that on a busy machine some batch runs unpreempted; a case
# repeats batches for about SPAN seconds per library, between MIN_REPEATS and MAX_REPEATS.
BATCH, SPAN, MIN_REPEATS, MAX_REPEATS = 0.005, 0.3, 7, 200
QUICK_BATCH, QUICK_REPEATS = 0.001, 2
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def set_thread_variables(threads: int) -> None:
    """Size the thread pools of the libraries loaded from now on (NumPy's BLAS, OpenMP): they
    read these variables once, when they load."""
    for variable in THREAD_VARIABLES:
        os.environ[variable] = str(threads)


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


def keep_freed_memory() -> None:
    """Have glibc keep freed memory for reuse: no mapping of its own for a block under
    32 MB, no memory given back to the OS until 128 MB lie free. Without it a case's figures
    depend on what earlier cases left in the heap (max_pool2d's step measured 0.77 ms in one
    run and 4.2 ms in the next, from page faults). run.py calls it in both processes, tocha's
    and torch's worker, alike. Nothing happens off glibc."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(M_MMAP_THRESHOLD, 32 * 2**20)
    mallopt(M_TRIM_THRESHOLD, 128 * 2**20)


def child_cpu_time() -> float:
    """CPU seconds used by the finished child processes: the clock of cases that time a fresh
    interpreter, which counts its start-up and imports but not the waits of a busy machine."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class Case:
    """One benchmark, declared once.

    Args:
        name: the timed call as a user writes it (``"a + b"``).
        size: its inputs in words (``"100 float32"``).
        setup: makes the inputs as NumPy arrays, the same ones for every library.
        tocha: the timed call ``fn(lib, *inputs)``, run with ``lib=tocha``.
        torch: the same for PyTorch; by default (`SAME`) the tocha callable with
            ``lib=torch``; None: no PyTorch column.
        numpy: the NumPy floor ``fn(numpy, *arrays)``, or None.
        goal: judges a `Result` against the case's target (`faster_than_torch`...), or None.
        loops: a fixed number of calls per batch (None: as many as take `BATCH` seconds).
        repeats: how many batches the minimum is taken over (None: as many as fill `SPAN`).
        clock: the timer (wall-clock `time.perf_counter` by default).
        interleave: alternate the libraries batch by batch (the default, so that drift hits
            all alike); False times each library's batches in one block after flushing the
            disk (``os.sync``), for cases whose calls write so much that one library's
            writeback would slow the next.
    """

    name: str
    size: str
    setup: Callable[[], tuple]
    tocha: Callable
    _: KW_ONLY
    torch: Callable | str | None = SAME
    numpy: Callable | None = None
    goal: Callable | None = None
    loops: int | None = None
    repeats: int | None = None
    clock: Callable[[], float] = time.perf_counter
    interleave: bool = True

    @property
    def label(self) -> str:
        """The case as the table shows it."""
        return f"{self.name} [{self.size}]"

    def callable_for(self, library: str) -> Callable | None:
        """This case's callable for the library named `library`, or None."""
        fn = getattr(self, library)
        return self.tocha if fn is SAME else fn


@dataclass
class Result:
    """Seconds per call of one case for each library (None: not measured), and why not."""

    case: Case
    times: dict
    why_not: dict


class Unavailable(Exception):
    """A case cannot run on a library yet (say, the tocha op it calls does not exist)."""


def load_cases(modules: list[str] | None = None) -> list[Case]:
    """Every case of the ``cases_*.py`` modules beside this file (or of the named modules)."""
    names = modules or sorted(p.stem for p in HERE.glob("cases_*.py"))
    return [case for name in names for case in importlib.import_module(name).CASES]


def prepare(case: Case, lib) -> Callable[[], object] | None:
    """The zero-argument call to time for `case` on the library module `lib`, run once.

    Returns None when the case has no callable for `lib`. Raises `Unavailable` when the call
    fails because an op, a method or a package is missing (AttributeError, TypeError such as
    an operator the tensor type lacks, NotImplementedError, ImportError).
    """
    fn = case.callable_for(lib.__name__)
    if fn is None:
        return None
    arrays = case.setup()
    inputs = arrays if lib.__name__ == "numpy" else tuple(lib.from_numpy(a) for a in arrays)
    call = partial(fn, lib, *inputs)
    try:
        call()
    except (AttributeError, TypeError, NotImplementedError, ImportError) as exc:
        raise Unavailable(f"{type(exc).__name__}: {exc}") from exc
    return call


def _calibrate(timer: timeit.Timer, batch: float) -> tuple[int, float]:
    """The smallest of 1, 2, 5, 10, 20, 50... calls taking at least `batch` seconds, and the
    seconds they took."""
    scale = 1
    while True:
        for step in (1, 2, 5):
            loops = scale * step
            seconds = timer.timeit(loops)
            if seconds >= batch:
                return loops, seconds
        scale *= 10


def _plan(case: Case, timer: timeit.Timer, quick: bool) -> tuple[int, int]:
    """How many calls per batch and how many batches to time `case` with."""
    if quick:
        loops = case.loops or _calibrate(timer, QUICK_BATCH)[0]
        return loops, min(case.repeats or QUICK_REPEATS, QUICK_REPEATS)
    if case.loops:
        return case.loops, case.repeats or MIN_REPEATS
    loops, seconds = _calibrate(timer, BATCH)
    fill = max(MIN_REPEATS, min(MAX_REPEATS, math.ceil(SPAN / seconds)))
    return loops, case.repeats or fill


def plan(case: Case, lib, quick: bool) -> tuple[Callable[[int], float], int, int] | None:
    """How to time `case` on the library module `lib` in this process: ``(batch, loops,
    repeats)``, where ``batch(loops)`` returns the seconds `loops` calls take on the case's
    clock. None when the case has no callable for `lib`; raises `Unavailable` as `prepare`."""
    call = prepare(case, lib)
    if call is None:
        return None
    timer = timeit.Timer(call, timer=case.clock)
    return (timer.timeit, *_plan(case, timer, quick))


def _plan_on(lib, case: Case, quick: bool) -> tuple[Callable[[int], float], int, int] | None:
    """`plan` for `lib`: a library module timed here, or a worker timing its library in
    another process (its ``plan(case, quick)`` method)."""
    return plan(case, lib, quick) if isinstance(lib, ModuleType) else lib.plan(case, quick)


def time_side_by_side(case: Case, libs: dict, *, quick: bool = False, settle: float = 0) -> Result:
    """Time `case` on each library of `libs` (name -> module, a worker timing that library in
    another process, or None when not installed). `settle`: seconds to pause before each
    batch, so that the threads of the library timed before (in another process) stop
    spinning and leave the cores (with several threads on few cores they take them from the
    next batch otherwise).

    timeit-style: each repeat times a batch of calls per library, the libraries interleaved so
    that drift hits all alike; the figure is the minimum over repeats of the time per call. The
    time of one Python call (tens of nanoseconds) is in every figure alike.
    """
    plans, times, why_not = {}, {}, {}
    for name in LIBRARIES:
        times[name] = None
        if libs.get(name) is None:
            why_not[name] = "not installed"
            continue
        try:
            planned = _plan_on(libs[name], case, quick)
        except Unavailable as exc:
            why_not[name] = str(exc)
            continue
        if planned is not None:
            plans[name] = planned
            times[name] = math.inf
    if case.interleave:
        for repeat in range(max((planned[2] for planned in plans.values()), default=0)):
            for name, (batch, loops, repeats) in plans.items():
                if repeat < repeats:
                    if settle:
                        time.sleep(settle)
                    times[name] = min(times[name], batch(loops) / loops)
    else:
        for name, (batch, loops, repeats) in plans.items():
            os.sync()
            time.sleep(settle)
            times[name] = min(batch(loops) / loops for _ in range(repeats))
    return Result(case, times, why_not)


def faster_than_torch(limit: float = 1.0) -> Callable:
    """Goal: tocha's time at most `limit` times PyTorch's."""

    def judge(result: Result):
        tocha, torch = result.times["tocha"], result.times["torch"]
        if tocha is None or torch is None:
            return None
        return tocha / torch <= limit, f"tocha/torch <= {limit:g}"

    return judge


def numpy_throughput(fraction: float = 0.95) -> Callable:
    """Goal: tocha's throughput at least `fraction` of NumPy's (numpy time / tocha time)."""

    def judge(result: Result):
        tocha, numpy = result.times["tocha"], result.times["numpy"]
        if tocha is None or numpy is None:
            return None
        share = numpy / tocha
        return share >= fraction, f"numpy/tocha = {share:.2f} >= {fraction:g}"

    return judge


def extra_over_numpy(seconds: float) -> Callable:
    """Goal: tocha's time at most `seconds` more than NumPy's (for import times)."""

    def judge(result: Result):
        tocha, numpy = result.times["tocha"], result.times["numpy"]
        if tocha is None or numpy is None:
            return None
        extra = tocha - numpy
        return extra <= seconds, f"+{extra * 1e3:.1f} ms <= +{seconds * 1e3:g} ms"

    return judge
