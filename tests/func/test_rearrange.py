"""torch.func.rearrange (einops' pattern language) against PyTorch: shapes and values of
transposes, groupings, splits, ellipses and unit axes, stacked sequences, gradients, and
the errors of bad patterns."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

X = np.arange(2 * 3 * 4 * 6, dtype=np.float64).reshape(2, 3, 4, 6)

CASES = [
    ("b h w c -> b h w c", {}),
    ("b h w c -> (b h) w c", {}),
    ("b h w c -> h (b w) c", {}),
    ("b h w c -> b c h w", {}),
    ("b h w c -> b (c h w)", {}),
    ("b h (w1 w) c -> (b w1) h w c", {"w1": 2}),
    ("b (h h1) w c -> b h w (c h1)", {"h1": 3}),
    ("b h w (c k) -> k b h w c", {"k": 2}),
    ("b ... -> ... b", {}),
    ("b ... c -> b c (...)", {}),
    ("... -> ...", {}),
    ("b h w c -> b h 1 w c ()", {}),
    ("b h w c -> b (h 1) (w c)", {}),
    ("B H W C -> C W H B", {}),
]


@pytest.mark.parametrize("pattern, lengths", CASES, ids=[c[0] for c in CASES])
def test_rearrange_matches_torch(torch, pattern, lengths):
    got = tocha.func.rearrange(tocha.tensor(X), pattern, **lengths).numpy()
    want = torch.func.rearrange(torch.tensor(X), pattern, **lengths).numpy()
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_rearrange_stacks_a_sequence_and_is_differentiable():
    out = tocha.func.rearrange([tocha.ones(2), tocha.zeros(2)], "n d -> d n")
    np.testing.assert_array_equal(out.numpy(), [[1.0, 0.0], [1.0, 0.0]])
    x = tocha.randn(2, 6, requires_grad=True)
    tocha.func.rearrange(x, "a (b c) -> c b a", b=2).pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


ERRORS = [
    ("b h w c -> b h w", {}),
    ("b h w c -> b h w c e", {}),
    ("b h w -> b h w", {}),
    ("b h w c -> (b b) h w c", {}),
    ("b h w c -> b h w c -> b", {}),
    ("b h w c", {}),
    ("b h w 2 -> b h w", {}),
    ("b h w c_ -> b h w c_", {}),
    ("b h w c -> b h w c", {"e": 2}),
    ("b h (w k) c -> b h w k c", {"k": 3}),
]


@pytest.mark.parametrize("pattern, lengths", ERRORS, ids=[e[0] + str(e[1]) for e in ERRORS])
def test_rearrange_errors_match_torch(torch, pattern, lengths):
    def error(lib):
        with pytest.raises(Exception) as info:
            lib.func.rearrange(lib.tensor(X), pattern, **lengths)
        return str(info.value)

    assert error(tocha) == error(torch)


def test_rearrange_size_mismatch():
    with pytest.raises(ValueError, match=r"Dimension sizes to do not match \(2 != 3\)"):
        tocha.func.rearrange(tocha.tensor(X), "b h w c -> b h w c", b=3)
