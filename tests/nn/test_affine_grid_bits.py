"""affine_grid's base coordinates round as PyTorch's (``x * (n - 1) / n``, two roundings), so
an identity transform samples exactly at pixel centres and grid_sample's gradient with respect
to the grid (one-sided at those points) is PyTorch's: the spatial transformer tutorial starts
from the identity and trained differently before."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.nn.functional as F


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(1, 1, 28, 28), (2, 3, 7, 13), (1, 1, 5, 6, 9)])
def test_identity_grid_equals_torch_bit_for_bit(torch, size, align_corners):
    nd = len(size) - 2
    theta = np.concatenate([np.eye(nd), np.zeros((nd, 1))], axis=1)[None].repeat(size[0], 0)
    got = F.affine_grid(tocha.tensor(theta, dtype=tocha.float32), size, align_corners)
    want = torch.nn.functional.affine_grid(
        torch.tensor(theta, dtype=torch.float32), size, align_corners=align_corners
    )
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_gradient_at_the_identity_matches_torch(torch, align_corners):
    image = np.random.default_rng(0).random((1, 1, 28, 28), dtype=np.float32)
    theta = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype=np.float32)

    def grad(lib):
        t = lib.tensor(theta, requires_grad=True)
        grid = lib.nn.functional.affine_grid(t, (1, 1, 28, 28), align_corners=align_corners)
        out = lib.nn.functional.grid_sample(
            lib.from_numpy(image), grid, align_corners=align_corners
        )
        (out * out).sum().backward()
        return t.grad.numpy()

    np.testing.assert_allclose(grad(tocha), grad(torch), rtol=1e-4, atol=1e-4)
