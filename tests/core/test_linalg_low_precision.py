"""float16 and bfloat16 in tocha.linalg as in PyTorch (issue 25 item 4): the norms that need
no factorization take them and keep the dtype; the singular-value norms refuse them."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.core.helpers import assert_tensor

A = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)

NORMS = {
    "vector_norm": lambda lib, x: lib.linalg.vector_norm(x),
    "vector_norm_inf": lambda lib, x: lib.linalg.vector_norm(x, float("inf"), dim=1),
    "vector_norm_dtype": lambda lib, x: lib.linalg.vector_norm(x, dtype=lib.float32),
    "norm": lambda lib, x: lib.linalg.norm(x),
    "matrix_norm_fro": lambda lib, x: lib.linalg.matrix_norm(x),
    "matrix_norm_1": lambda lib, x: lib.linalg.matrix_norm(x, 1),
    "torch_norm": lambda lib, x: lib.norm(x, dim=0),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", list(NORMS))
def test_norms_keep_the_low_precision_dtype(torch, name, dtype):
    mine = NORMS[name](tocha, tocha.tensor(A).to(getattr(tocha, dtype)))
    theirs = NORMS[name](torch, torch.tensor(A).to(getattr(torch, dtype)))
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert_tensor(mine.float(), theirs.float(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("ord", ["nuc", 2])
def test_singular_value_norms_refuse_half(torch, ord):
    with pytest.raises(RuntimeError) as want:
        torch.linalg.matrix_norm(torch.tensor(A).half(), ord)
    with pytest.raises(RuntimeError) as got:
        tocha.linalg.matrix_norm(tocha.tensor(A).half(), ord)
    assert str(got.value) == str(want.value)
