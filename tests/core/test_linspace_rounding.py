"""linspace rounds as PyTorch's CPU kernel (the step in the dtype, the first half counted up
from start and the rest down from end, each value rounded once), so its values, and the grids
built from them (affine_grid, meshgrid), are PyTorch's to the bit."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

CASES = [(-1, 1, 7), (0, 1, 8), (0, 10, 101), (-3.7, 12.2, 1000), (5, -2, 33), (0, 1, 2)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("start, end, steps", CASES)
def test_values_match_torch_to_the_bit(torch, start, end, steps, dtype):
    ours = tocha.linspace(start, end, steps, dtype=getattr(tocha, dtype)).numpy()
    theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
    np.testing.assert_array_equal(ours, theirs)


def test_the_middle_of_a_symmetric_range_is_not_exactly_zero():
    assert tocha.linspace(-1, 1, 7)[3].item() == pytest.approx(-2.9802322387695312e-08, abs=0)
