"""What a benchmark measured: `TaskSpec` (the statement and its labels) and `Measurement`
(its replicate times, their statistics and a readable report)."""

from __future__ import annotations

import dataclasses
import math
import textwrap

import numpy as np

from ._units import select_unit

__all__ = ["Measurement", "TaskSpec"]

# Relative spread (interquartile range over median) above which a report warns, and above
# which it calls the noise environmental.
_IQR_WARNING = 0.1
_IQR_GROSS_WARNING = 0.25
# Timing resolution below which a difference means nothing.
_RESOLUTION = 25e-9
_MAX_SIGNIFICANT_FIGURES = 4


@dataclasses.dataclass(frozen=True, repr=False)
class TaskSpec:
    """The statement a Timer measures, with the labels reports group it by (not its
    globals)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or the statement) and the sub-label: a report's heading."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        named = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{named}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        """The setup as a report shows it: nothing for the default ``pass``."""
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" not in self.setup:
            return f"setup: {self.setup}"
        return f"setup:\n{textwrap.indent(self.setup, '  ')}"

    def summarize(self) -> str:
        """Title, description and setup, one block of lines."""
        lines = [self.title]
        if "\n" in self.title:
            lines.append("")
        if self.description:
            lines.append(self.description)
        setup = self.setup_str()
        if setup:
            lines.append(setup)
            if "\n" in setup:
                lines.append("")
        return "\n".join(lines)


class Measurement:
    """The times of one statement: `raw_times` are the times of blocks of `number_per_run`
    runs each; `times` the time of one run in each block. Statistics are over `times`."""

    def __init__(
        self,
        number_per_run: int,
        raw_times: list[float],
        task_spec: TaskSpec,
        metadata: dict | None = None,
    ):
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata

    def __getattr__(self, name):
        # The task's fields read through (stmt, label, num_threads...).
        spec = self.__dict__.get("task_spec")
        if spec is not None and name in {f.name for f in dataclasses.fields(TaskSpec)}:
            return getattr(spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    def __getstate__(self):
        return dict(self.__dict__)

    def __setstate__(self, state):
        self.__dict__.update(state)

    # -- statistics ---------------------------------------------------------------------
    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        return float(np.median(self.times))

    @property
    def mean(self) -> float:
        return float(np.mean(self.times))

    @property
    def iqr(self) -> float:
        q25, q75 = np.quantile(self.times, [0.25, 0.75])
        return float(q75 - q25)

    @property
    def significant_figures(self) -> int:
        """How many digits of the median the spread supports (1 to 4): the width of the
        median's 95% notch (1.58 IQR / sqrt(n), halved), at least the timer's resolution."""
        half_width = 0.79 * self.iqr / math.sqrt(len(self.times))
        half_width = max(half_width, _RESOLUTION)
        if self.median <= 0:
            return 1
        digits = math.floor(math.log10(self.median / half_width))
        return min(max(digits, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        """Whether the spread is wide enough for the report to warn."""
        return self._relative_iqr() > _IQR_WARNING

    def meets_confidence(self, threshold: float = _IQR_WARNING) -> bool:
        """Whether the interquartile range is within `threshold` of the median."""
        return self._relative_iqr() < threshold

    def _relative_iqr(self) -> float:
        median = self.median
        return self.iqr / median if median > 0 else 0.0

    # -- labels -------------------------------------------------------------------------
    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str | None:
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        """The name of this measurement's row in a `Compare` table."""
        return self.task_spec.sub_label or self.task_spec.stmt or "[Unknown]"

    # -- reports ------------------------------------------------------------------------
    def __repr__(self) -> str:
        lines = [object.__repr__(self), self.task_spec.summarize()]
        times = self.times
        unit, scale = select_unit(self.median)
        threads = self.task_spec.num_threads
        thread_word = f"{threads} thread{'s' if threads != 1 else ''}"
        if len(times) == 1:
            lines.append(f"  {self.median / scale:.2f} {unit}")
            lines.append(f"  1 measurement, {self.number_per_run} runs , {thread_word}")
        else:
            lines.append(f"  Median: {self.median / scale:.2f} {unit}")
            if len(times) >= 4:
                q25, q75 = np.quantile(times, [0.25, 0.75])
                lines.append(
                    f"  IQR:    {self.iqr / scale:.2f} {unit} "
                    f"({q25 / scale:.2f} to {q75 / scale:.2f})"
                )
            lines.append(
                f"  {len(times)} measurements, {self.number_per_run} runs per measurement, "
                f"{thread_word}"
            )
        if self.has_warnings:
            cause = (
                "This suggests significant environmental influence."
                if self._relative_iqr() > _IQR_GROSS_WARNING
                else "This could indicate system fluctuation."
            )
            lines.append(
                f"  WARNING: Interquartile range is {self._relative_iqr() * 100:.1f}% of the "
                "median measurement."
            )
            lines.append(f"           {cause}")
        return "\n".join(lines)

    __str__ = __repr__

    @staticmethod
    def merge(measurements) -> list[Measurement]:
        """One measurement per task: the times of the measurements of each task pooled (each
        time then counts as one run), tasks in the order they first appear."""
        pooled: dict[TaskSpec, list[float]] = {}
        for m in measurements:
            pooled.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(1, times, spec) for spec, times in pooled.items()]
