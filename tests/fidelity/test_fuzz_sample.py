"""The bad-input fuzzer's CI sample: tocha against PyTorch's recorded answers
(``answers/fuzz.pkl.xz``, written by ``python -m tests.fidelity.fuzz --record``), each call
bounded in time. A hang, raw error or silent acceptance missing from ``known_fuzz.txt``
fails, and so does a listed one that is gone (remove its line)."""

from __future__ import annotations

from tests.fidelity.fuzz import NAME, TIMEOUT
from tests.fidelity.sweep import replay


def test_bad_input_sample_answers_as_recorded():
    new, fixed = replay(NAME, TIMEOUT)
    lines = [f"new: {op} | {cls} | {text}" for (op, cls), text in sorted(new.items())]
    relist = "python -m tests.fidelity.fuzz --relist"
    lines += [f"fixed (remove its line, or run `{relist}`): {op} | {cls}" for op, cls in fixed]
    assert not lines, "\n".join(lines)
