"""``out=`` on the ops PyTorch accepts it for (issue 25 item 3): the result is written into
`out` and `out` returned; a dtype PyTorch refuses is refused with its message."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.core.helpers import assert_tensor

A = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)

CALLS = {
    "argmax": lambda lib, x, out: lib.argmax(x, 1, out=out),
    "argmin": lambda lib, x, out: lib.argmin(x, out=out),
    "softmax": lambda lib, x, out: lib.softmax(x, 0, out=out),
    "log_softmax": lambda lib, x, out: lib.log_softmax(x, 1, out=out),
    "take": lambda lib, x, out: lib.take(x, lib.tensor([0, 5, -1]), out=out),
    "diff": lambda lib, x, out: lib.diff(x, out=out),
    "isin": lambda lib, x, out: lib.isin(x, x[0], out=out),
    "renorm": lambda lib, x, out: lib.renorm(x, 2, 0, 1.0, out=out),
    "slice_scatter": lambda lib, x, out: lib.slice_scatter(x, lib.zeros(3, 2), 1, 0, 2, out=out),
}
# The out dtype each op writes, and one it refuses.
DTYPES = {
    "argmax": ("int64", "float32"),
    "argmin": ("int64", "float32"),
    "softmax": ("float32", "float64"),
    "log_softmax": ("float32", "int64"),
    "take": ("float32", "int64"),
    "diff": ("float64", "int64"),
    "isin": ("bool", "float32"),
    "renorm": ("float32", "float64"),
    "slice_scatter": ("float32", "bool"),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_out_receives_the_result(torch, name):
    dtype = DTYPES[name][0]
    out = tocha.empty(0, dtype=getattr(tocha, dtype))
    mine = CALLS[name](tocha, tocha.tensor(A), out)
    theirs = CALLS[name](torch, torch.tensor(A), torch.empty(0, dtype=getattr(torch, dtype)))
    assert mine is out
    assert_tensor(mine, theirs, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", list(CALLS))
def test_an_out_dtype_pytorch_refuses_is_refused(torch, name):
    dtype = DTYPES[name][1]
    with pytest.raises(RuntimeError) as want:
        CALLS[name](torch, torch.tensor(A), torch.empty(0, dtype=getattr(torch, dtype)))
    with pytest.raises(RuntimeError) as got:
        CALLS[name](tocha, tocha.tensor(A), tocha.empty(0, dtype=getattr(tocha, dtype)))
    assert str(got.value) == str(want.value)
