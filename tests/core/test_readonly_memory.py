"""A tensor sharing a read-only NumPy array: PyTorch's warning when it is made, and a clear
error (not NumPy's, and never a silent write) for every way of writing into it."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import tocha


def _read_only():
    a = np.arange(3.0)
    a.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return a, tocha.from_numpy(a)


def test_from_numpy_warns_once_a_program():
    program = (
        "import warnings, numpy as np, tocha\n"
        "a = np.arange(3.0); a.flags.writeable = False\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    tocha.from_numpy(a); tocha.from_numpy(a); tocha.as_tensor(a)\n"
        "print([str(w.message)[:37] for w in caught])\n"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert result.stdout.strip() == "['The given NumPy array is not writable']"


@pytest.mark.parametrize(
    "write",
    [
        lambda t: t.add_(1),
        lambda t: t.__setitem__(0, 5.0),
        lambda t: t.__setitem__(slice(None), tocha.ones(3, dtype=tocha.float64)),
        lambda t: t.zero_(),
        lambda t: t.fill_(2.0),
        lambda t: t.copy_(tocha.ones(3)),
        lambda t: t.uniform_(),
        lambda t: tocha.add(t, 1, out=t),
    ],
    ids=["add_", "setitem", "setitem_tensor", "zero_", "fill_", "copy_", "uniform_", "out"],
)
def test_writes_are_refused_clearly(write):
    a, t = _read_only()
    with pytest.raises(RuntimeError, match="memory is read-only"):
        write(t)
    assert a.tolist() == [0.0, 1.0, 2.0]


def test_reads_and_new_results_work():
    _, t = _read_only()
    assert (t * 2).tolist() == [0.0, 2.0, 4.0]
    assert t.clone().add_(1).tolist() == [1.0, 2.0, 3.0]
