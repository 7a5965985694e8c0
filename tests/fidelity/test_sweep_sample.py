"""The differential sweep's CI sample: tocha against PyTorch's recorded answers
(``answers/sweep.pkl.xz``, written by ``python -m tests.fidelity.sweep --record``).
Agreement must not regress: a disagreement missing from ``known_sweep.txt`` fails, and so
does a listed one that is gone (remove its line)."""

from __future__ import annotations

from tests.fidelity.sweep import NAME, replay


def test_the_sample_agrees_with_pytorch_as_recorded():
    new, fixed = replay(NAME)
    lines = [f"new: {op} | {cls} | {text}" for (op, cls), text in sorted(new.items())]
    relist = "python -m tests.fidelity.sweep --relist"
    lines += [f"fixed (remove its line, or run `{relist}`): {op} | {cls}" for op, cls in fixed]
    assert not lines, "\n".join(lines)
