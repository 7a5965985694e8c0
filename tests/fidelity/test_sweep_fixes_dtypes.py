"""Dtypes and argument forms the sweep found tocha taking where PyTorch's CPU kernels refuse
them (or refusing where they take them), checked against PyTorch (recorded): bernoulli."""

from __future__ import annotations

import pytest

from tests.fidelity.test_sweep_fixes_signatures import same_outcome

BERNOULLI = [
    "lib.bernoulli(full((3,), 0.5, 'int64'))",
    "lib.bernoulli(full((3,), 0.5, 'bool'))",
    "lib.bernoulli(full((3,), 0.5, 'complex64'))",
    "lib.bernoulli(full((0,), 0.5, 'complex64'))",
    "lib.bernoulli(full((0, 3), 0, 'int64'))",
    "lib.bernoulli(full((3,), 0.5, 'float32'), full((3,), 0.5, 'float32'))",
    "full((3,), 0.5, 'float32').bernoulli(full((3,), 0.5, 'float32'))",
    "lib.bernoulli(full((3,), 0.5, 'float32'), full((), 1, 'int64'))",
    "lib.bernoulli(full((3,), 0.5, 'float32'), full((), -2, 'int64'))",
    "lib.bernoulli(full((3,), 0.5, 'int64'), 0.5)",
    "lib.bernoulli(full((3,), 0.5, 'complex64'), 0.5)",
    "lib.bernoulli(full((0,), 0.5, 'complex64'), 0.5)",
    "full((3,), 0, 'complex64').bernoulli_(0.5)",
    "full((3,), 0, 'complex64').bernoulli_(full((3,), 0.5, 'float32'))",
    "full((3,), 0, 'complex64').bernoulli_(full((3,), 0.5, 'complex64'))",
    "full((3,), 0, 'float32').bernoulli_(full((3,), 0, 'int64'))",
    "full((3,), 0, 'int32').bernoulli_(full((3,), 0, 'int32'))",
    "full((3,), 0, 'int32').bernoulli_(full((3,), 0.5, 'float32'))",
    "full((0,), 0, 'int32').bernoulli_(full((0,), 0, 'int32'))",
    "full((3,), 0, 'bool').bernoulli_(full((3,), 0, 'bool'))",
    "full((3,), 0, 'float32').bernoulli_(full((4,), 0.5, 'float32'))",
]


@pytest.mark.parametrize("expression", BERNOULLI)
def test_bernoulli_dtypes_and_forms(torch, expression):
    same_outcome(torch, expression, values=False)
