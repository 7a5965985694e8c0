"""`Timer`: `timeit.Timer` with warm-up, replicates and labels, as
``torch.utils.benchmark.Timer``."""

from __future__ import annotations

import contextlib
import enum
import timeit

import numpy as np

import tocha

from ._measurement import Measurement, TaskSpec

__all__ = ["Language", "Timer", "timer"]

timer = timeit.default_timer


class Language(enum.Enum):
    """The language of a Timer's statement (tocha times Python only)."""

    PYTHON = 0
    CPP = 1


_LANGUAGES = {Language.PYTHON: Language.PYTHON, "py": Language.PYTHON, "python": Language.PYTHON}
# A block of runs is timed once; it is grown until the timer's own cost is this small a part
# of the block's time.
_OVERHEAD_SHARE = 1e-3


class Timer:
    """Times a Python statement: `timeit` for a fixed number of runs, `blocked_autorange`
    and `adaptive_autorange` for replicates whose spread can be judged. `label`,
    `sub_label`, `description` and `env` label the `Measurement` (and group it in a
    `Compare` table); `num_threads` sets tocha's thread count while the statement runs."""

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer=timer,
        globals: dict | None = None,  # noqa: A002 - timeit's name
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if _LANGUAGES.get(language) is None:
            if language in (Language.CPP, "cpp", "c++"):
                raise NotImplementedError("tocha's Timer times Python statements only")
            raise ValueError(f"Invalid language `{language}`.")
        namespace = dict(globals or {})
        namespace.setdefault("torch", tocha)
        self._timer = timer
        self._timeit = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=namespace)
        self._task_spec = TaskSpec(
            stmt=stmt,
            setup=setup,
            global_setup=global_setup,
            label=label,
            sub_label=sub_label,
            description=description,
            env=env,
            num_threads=num_threads,
        )

    @contextlib.contextmanager
    def _threads(self):
        before = tocha.get_num_threads()
        tocha.set_num_threads(self._task_spec.num_threads)
        try:
            yield
        finally:
            tocha.set_num_threads(before)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run the statement `number` times (after a short warm-up) and time them together:
        one measurement."""
        with self._threads():
            self._timeit.timeit(number=max(number // 100, 2))
            return Measurement(number, [self._timeit.timeit(number=number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self) -> int:
        """The number of runs whose time dwarfs the timer's own cost, found by doubling."""
        overhead = float(np.median([self._timeit.timeit(0) for _ in range(5)]))
        number = 1
        while True:
            elapsed = self._timeit.timeit(number)
            if elapsed >= overhead / _OVERHEAD_SHARE or elapsed >= 0.1:
                return number
            number *= 2

    def _measure(self, stop, callback) -> Measurement:
        with self._threads():
            number = self._block_size()
            times: list[float] = []
            while not stop(times):
                elapsed = self._timeit.timeit(number)
                times.append(elapsed)
                if callback is not None:
                    callback(number, elapsed)
        return Measurement(number, times, self._task_spec)

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        """Time blocks of runs until they add up to `min_run_time` seconds; the block size
        is grown in a warm-up until the timer's cost is under 0.1% of a block's time.
        `callback(number, time)` is called after each block."""
        return self._measure(lambda times: sum(times) >= min_run_time, callback)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback=None,
    ) -> Measurement:
        """As `blocked_autorange`, until the blocks' interquartile range is under
        `threshold` of their median (with more than 3 blocks and `min_run_time` seconds
        spent), or `max_run_time` seconds are spent."""

        def stop(times) -> bool:
            total = sum(times)
            if total >= max_run_time:
                return True
            if len(times) > 3 and total > min_run_time:
                q25, median, q75 = np.quantile(times, [0.25, 0.5, 0.75])
                return (q75 - q25) / median < threshold
            return False

        return self._measure(stop, callback)

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError("tocha's Timer has no Callgrind instruction counts")
