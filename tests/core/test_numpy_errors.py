"""NumPy's error state belongs to the user: ``import tocha`` leaves it as it was, and tocha's
ops are silent on overflow, division by zero and invalid values (as PyTorch's are) whatever
it says, while the user's own NumPy code keeps warning or raising as the user asked."""

from __future__ import annotations

import math
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import tocha

INF, NAN = math.inf, math.nan


def _inplace_div():
    t = tocha.tensor([1.0, 0.0])
    t.div_(0)
    return t


def _zero_weight_draw():
    return tocha.multinomial(tocha.tensor([0.0, 1.0]), 2)[0]


# (id, computation, expected values): each would warn in NumPy's default state.
CASES = [
    ("divide", lambda: tocha.tensor([1.0, 0.0]) / 0, [INF, NAN]),
    ("log", lambda: tocha.log(tocha.tensor([0.0, -1.0])), [-INF, NAN]),
    ("sqrt", lambda: tocha.sqrt(tocha.tensor([-1.0])), [NAN]),
    ("exp", lambda: tocha.exp(tocha.tensor([1000.0])), [INF]),
    ("scalar-pow", lambda: tocha.tensor([0.0]) ** -1, [INF]),
    ("inplace-div", _inplace_div, [INF, NAN]),
    ("sum", lambda: tocha.tensor([INF, -INF]).sum().reshape(1), [NAN]),
    ("mean", lambda: tocha.tensor([INF, -INF]).mean().reshape(1), [NAN]),
    ("matmul", lambda: (tocha.full((1, 2), 1e30) @ tocha.full((2, 1), 1e30)).reshape(1), [INF]),
    ("half-scalar", lambda: tocha.ones(1, dtype=tocha.float16) * 1e6, [INF]),
    ("half-tensor", lambda: tocha.tensor([1e6], dtype=tocha.float16), [INF]),
    ("half-full", lambda: tocha.full((1,), 1e6, dtype=tocha.float16), [INF]),
    ("to-half", lambda: tocha.tensor([1e6]).half(), [INF]),
    ("normal", lambda: tocha.normal(tocha.full((64,), 3e38), 1e38).isinf().any().reshape(1), [1]),
    ("multinomial", _zero_weight_draw, [1]),
]


@pytest.mark.parametrize("compute, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("user_state", ["warn", "raise"])
def test_ops_are_silent(compute, expected, user_state):
    with warnings.catch_warnings(), np.errstate(all=user_state):
        warnings.simplefilter("error")
        result = compute()
    np.testing.assert_array_equal(result.float().numpy(), np.array(expected, np.float32))


def test_user_numpy_state_is_kept():
    with np.errstate(all="raise"):
        tocha.log(tocha.tensor([0.0]))
        assert np.geterr()["divide"] == "raise"
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(1))
    tocha.tensor([1.0]) / 0
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.log(np.zeros(1))


def test_import_leaves_numpy_state_alone():
    code = (
        "import numpy as np\n"
        "before = np.geterr()\n"
        "import tocha\n"
        "tocha.tensor([1.0]) / 0\n"
        "assert np.geterr() == before, (before, np.geterr())\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_silent_in_threads():
    """Kernels enter their context from several threads at once (NumPy lets go of the GIL
    inside large ops), and from the main thread meanwhile."""
    big = tocha.full((1 << 20,), 1e30)
    failures = []

    def work():
        try:
            for _ in range(20):
                assert math.isinf((big * big)[0].item())
        except Exception as exc:  # reported below, in the main thread
            failures.append(exc)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        work()
        for t in threads:
            t.join()
    assert failures == []
