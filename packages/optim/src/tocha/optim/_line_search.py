"""A line search for the strong Wolfe conditions, after Nocedal & Wright, *Numerical
Optimization* (2nd ed.), algorithms 3.5 (bracketing) and 3.6 (zoom), with the minimizer of
an interpolating cubic (their eq. 3.59) choosing each trial step.

The search looks at the objective along one direction, ``phi(step) = f(x + step * d)``, through
`probe`, which evaluates it at a step length and returns a `Trial`. A step is accepted when

- its value has decreased enough: ``phi(step) <= phi(0) + c1 * step * phi'(0)``, and
- its slope has flattened enough: ``|phi'(step)| <= c2 * |phi'(0)|``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class Trial(NamedTuple):
    """The objective at one step length along the direction: its value, the flat gradient
    there, and the slope (the gradient's projection on the direction)."""

    step: float
    value: float
    grad: Any
    slope: float


def cubic_minimizer(p: Trial, q: Trial, bounds: tuple[float, float] | None = None) -> float:
    """The minimizer of the cubic with the values and slopes of `p` and `q`, clamped to
    `bounds` (by default the interval between the two steps); the middle of the bounds when
    the cubic has no minimizer."""
    left, right = (p, q) if p.step <= q.step else (q, p)
    low, high = bounds if bounds is not None else (left.step, right.step)
    d1 = p.slope + q.slope - 3 * (p.value - q.value) / (p.step - q.step)
    squared = d1**2 - p.slope * q.slope
    if squared >= 0:
        d2 = squared**0.5
        width = right.step - left.step
        step = right.step - width * ((right.slope + d2 - d1) / (right.slope - left.slope + 2 * d2))
        return min(max(step, low), high)
    return (low + high) / 2.0


def _away_from_ends(step: float, ends: list[Trial], stalled: bool) -> tuple[float, bool]:
    """`step` moved a tenth of the bracket inside when it falls outside the bracket, or near
    an end for the second trial running; and whether this trial fell near an end."""
    a, b = min(ends[0].step, ends[1].step), max(ends[0].step, ends[1].step)
    margin = 0.1 * (b - a)
    if min(b - step, step - a) < margin:
        if stalled or step >= b or step <= a:
            return (b - margin if abs(step - b) < abs(step - a) else a + margin), False
        return step, True
    return step, False


def strong_wolfe(
    probe: Callable[[float], Trial],
    start: Trial,
    step: float,
    direction_size: float,
    budget: int,
    tolerance_change: float,
    c1: float = 1e-4,
    c2: float = 0.9,
) -> tuple[Trial, int]:
    """Search for a step meeting the strong Wolfe conditions, from `start` (step 0).

    Args:
        probe: evaluates the objective at a step length.
        start: the objective at step 0 (its slope must be negative: a descent direction).
        step: the first step length tried.
        direction_size: the largest magnitude in the direction: the zoom stops when the
            bracket moves the parameters by less than `tolerance_change`.
        budget: how many evaluations may follow the first one.
        tolerance_change: see `direction_size`.
        c1, c2: the constants of the two conditions.

    Returns:
        The trial taken (the lowest found when none met the conditions within the budget)
        and the number of evaluations made.
    """

    def rose(trial: Trial) -> bool:
        return trial.value > start.value + c1 * trial.step * start.slope

    def flat(trial: Trial) -> bool:
        return abs(trial.slope) <= -c2 * start.slope

    # Bracketing: lengthen the step until [previous, trial] holds an acceptable one.
    previous, trial = start, probe(step)
    tries = 0
    while tries < budget:
        went_up = rose(trial) or (tries > 1 and trial.value >= previous.value)
        if not went_up and flat(trial):
            return trial, tries + 1
        if went_up or trial.slope >= 0:
            ends = [previous, trial]
            break
        bounds = (trial.step + 0.01 * (trial.step - previous.step), trial.step * 10)
        previous, trial = trial, probe(cubic_minimizer(previous, trial, bounds))
        tries += 1
    else:
        return (start if start.value <= trial.value else trial), tries + 1

    # Zoom: shrink the bracket, keeping at ends[low] the lowest value that decreased enough.
    low = 0 if ends[0].value <= ends[1].value else 1
    stalled = False
    while tries < budget:
        if abs(ends[1].step - ends[0].step) * direction_size < tolerance_change:
            break
        step, stalled = _away_from_ends(cubic_minimizer(ends[0], ends[1]), ends, stalled)
        trial = probe(step)
        tries += 1
        high = 1 - low
        if rose(trial) or trial.value >= ends[low].value:
            ends[high] = trial
            low = 0 if ends[0].value <= ends[1].value else 1
            continue
        if flat(trial):
            return trial, tries + 1
        if trial.slope * (ends[high].step - ends[low].step) >= 0:
            ends[high] = ends[low]
        ends[low] = trial
    return ends[low], tries + 1
