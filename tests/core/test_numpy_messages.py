"""Shapes that do not broadcast get PyTorch's RuntimeError and message, not NumPy's
ValueError (found by tests/fidelity/fuzz.py)."""

from __future__ import annotations

import pytest

import tocha

SHAPES = [((3, 4), (7,)), ((2, 3), (3, 2))]


@pytest.mark.parametrize("a, b", SHAPES, ids=["3x4-7", "2x3-3x2"])
def test_complex_of_shapes_that_do_not_broadcast(torch, a, b):
    with pytest.raises(RuntimeError) as want:
        torch.complex(torch.ones(a), torch.ones(b))
    with pytest.raises(RuntimeError) as got:
        tocha.complex(tocha.ones(a), tocha.ones(b))
    assert str(got.value) == str(want.value)
