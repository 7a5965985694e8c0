"""tocha.random (torch.random): the seed and state functions and fork_rng."""

from __future__ import annotations

import pytest

import tocha


def test_functions_are_the_top_level_ones():
    import tocha.random as random

    assert random.manual_seed is tocha.manual_seed
    assert random.get_rng_state is tocha.get_rng_state
    random.manual_seed(7)
    assert random.initial_seed() == 7


def test_fork_rng_restores_the_stream():
    tocha.manual_seed(0)
    with tocha.random.fork_rng():
        inside = tocha.randn(4)
    after = tocha.randn(4)
    assert inside.tolist() == after.tolist()


def test_fork_rng_restores_on_error_and_can_be_disabled():
    tocha.manual_seed(0)
    expected = tocha.randn(2)
    tocha.manual_seed(0)
    with pytest.raises(ValueError), tocha.random.fork_rng():
        tocha.randn(5)
        raise ValueError
    assert tocha.randn(2).tolist() == expected.tolist()
    tocha.manual_seed(0)
    with tocha.random.fork_rng(enabled=False):
        tocha.randn(2)
    assert tocha.randn(2).tolist() != expected.tolist()
