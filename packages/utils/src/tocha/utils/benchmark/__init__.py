"""tocha.utils.benchmark, as ``torch.utils.benchmark``: `Timer` times a Python statement
(`timeit`, `blocked_autorange`, `adaptive_autorange`) into a `Measurement` (replicate times,
median, IQR, a readable report with spread warnings); `Compare` tabulates measurements by
label, sub-label, description and thread count."""

from ._compare import Compare
from ._measurement import Measurement, TaskSpec
from ._timer import Language, Timer, timer
from ._units import ordered_unique, select_unit, trim_sigfig, unit_to_english

__all__ = [
    "Compare",
    "Language",
    "Measurement",
    "TaskSpec",
    "Timer",
    "ordered_unique",
    "select_unit",
    "timer",
    "trim_sigfig",
    "unit_to_english",
]
