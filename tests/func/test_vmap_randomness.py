"""vmap's randomness="different" and "same" for dropout: the values PyTorch draws after the
same seed (one draw of the batched shape, or one of the example's shape), and the
generator left where PyTorch leaves it."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.nn.functional as F
from tocha.compat import use_pytorch_random
from tocha.func import vmap


@pytest.fixture(autouse=True)
def pytorch_stream():
    previous = use_pytorch_random(True)
    yield
    use_pytorch_random(previous)


def _dropped(lib, randomness, in_dims=0):
    lib.manual_seed(1)
    x = lib.ones(3, 4) if in_dims == 0 else lib.ones(4, 3)
    masks = lib.func.vmap(
        lambda t: lib.nn.functional.dropout(t, 0.5), in_dims=in_dims, randomness=randomness
    )(x)
    return masks.numpy(), lib.rand(2).numpy()


@pytest.mark.parametrize("randomness, in_dims", [("different", 0), ("different", 1), ("same", 0)])
def test_dropout_draws_match_torch(torch, randomness, in_dims):
    got, got_next = _dropped(tocha, randomness, in_dims)
    want, want_next = _dropped(torch, randomness, in_dims)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_next, want_next)


def test_different_is_one_draw_of_the_batch():
    """Whatever the stream: the batch's masks are the dropout of the whole batch."""
    use_pytorch_random(False)
    tocha.manual_seed(3)
    got = vmap(lambda t: F.dropout(t, 0.3), randomness="different")(tocha.ones(5, 6))
    tocha.manual_seed(3)
    np.testing.assert_array_equal(got.numpy(), F.dropout(tocha.ones(5, 6), 0.3).numpy())
