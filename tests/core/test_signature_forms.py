"""Argument forms PyTorch accepts beside the usual ones (keyword names, positional
tolerances, Python numbers), each checked against PyTorch, and device strings it refuses."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.core.helpers import assert_tensor

A = np.arange(12.0).reshape(3, 4) / 7


def _both(torch, fn):
    return fn(tocha, tocha.tensor(A)), fn(torch, torch.tensor(A))


CALLS = {
    "flip_dims_keyword": lambda lib, x: lib.flip(x, dims=(0, 1)),
    "flip_method_varargs": lambda lib, x: x.flip(0, 1),
    "concatenate_dim": lambda lib, x: lib.concatenate([x, x], dim=1),
    "concatenate_axis": lambda lib, x: lib.concatenate([x, x], axis=0),
    "linalg_diagonal_offset": lambda lib, x: lib.linalg.diagonal(x, offset=1),
    "linalg_diagonal_dims": lambda lib, x: lib.linalg.diagonal(x, dim1=1, dim2=0),
    "pinv_positional_rcond": lambda lib, x: lib.linalg.pinv(x, 0.5),
    "matrix_rank_positional_tol": lambda lib, x: lib.linalg.matrix_rank(x, 0.5),
    "copy_number": lambda lib, x: x.clone().copy_(3),
    "copy_bool": lambda lib, x: x.clone().copy_(True),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_argument_forms_match_torch(name, torch):
    got, want = _both(torch, lambda lib, x: CALLS[name](lib, x))
    assert_tensor(got, want, rtol=1e-6)


def test_uniform_takes_from_keyword():
    tocha.manual_seed(0)
    x = tocha.empty(1000).uniform_(**{"from": 2.0, "to": 3.0})
    assert 2.0 <= float(x.min()) and float(x.max()) < 3.0
    with pytest.raises(TypeError, match="unexpected keyword argument 'frm'"):
        tocha.empty(2).uniform_(frm=1.0)


def test_random_factories_take_size_keyword():
    assert tocha.rand(size=(2, 3)).shape == (2, 3)
    assert tocha.randn(size=[4]).shape == (4,)
    with pytest.raises(TypeError, match="both positionally and as size="):
        tocha.zeros(2, size=(2,))


def test_unknown_device_type_raises_as_torch(torch):
    with pytest.raises(RuntimeError) as got:
        tocha.device("notadevice")
    with pytest.raises(RuntimeError) as want:
        torch.device("notadevice")
    assert str(got.value).startswith(str(want.value))
    assert tocha.device("mps").type == "mps"  # a type PyTorch knows: no backend needed yet
