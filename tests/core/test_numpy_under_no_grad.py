"""``Tensor.numpy()`` of a tensor that requires grad: refused with grad mode on, allowed
under ``no_grad`` (nothing could record a use of the array then), as PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tocha


def test_numpy_of_a_tensor_requiring_grad():
    x = tocha.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    with tocha.no_grad():
        np.testing.assert_array_equal(x.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(x.detach()), [1.0, 1.0])
