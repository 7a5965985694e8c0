"""tanh's and sigmoid's backward rounded as PyTorch's kernels round them: tanh's in float32
for float16/bfloat16 (rounded once); sigmoid's as ``g * (1 - y) * y``, in float16 itself and
in float32 for bfloat16. Bit for bit against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

X = (np.random.default_rng(0).standard_normal(500) * 3).astype(np.float32)
G = np.random.default_rng(1).standard_normal(500).astype(np.float32)


def _grad(lib, name, dtype):
    x = lib.from_numpy(X.copy()).to(getattr(lib, dtype)).requires_grad_()
    getattr(x, name)().backward(lib.from_numpy(G.copy()).to(getattr(lib, dtype)))
    return x.grad.float().numpy()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_half_gradients_match_torch_bit_for_bit(torch, name, dtype):
    np.testing.assert_array_equal(_grad(tocha, name, dtype), _grad(torch, name, dtype))
