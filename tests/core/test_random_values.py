"""With `tocha.compat.use_pytorch_random`, the CPU's random stream gives PyTorch's values for
the same seed (tocha._cpu_random): every sampler below, after ``manual_seed``, against
PyTorch (the oracle) on the same calls. Uniform, integer and Bernoulli draws agree to the
bit; normal draws within float32's ulp (their logarithm and cosine are NumPy's)."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tocha.compat import use_pytorch_random


@pytest.fixture(autouse=True)
def pytorch_stream():
    previous = use_pytorch_random(True)
    yield
    use_pytorch_random(previous)


SAMPLES = {
    "rand": lambda lib: lib.rand(3, 7),
    "rand_f64": lambda lib: lib.rand(9, dtype=lib.float64),
    "randn_small": lambda lib: lib.randn(5),
    "randn_blocks": lambda lib: lib.randn(2, 16),
    "randn_partial_block": lambda lib: lib.randn(37),
    "randn_f64": lambda lib: lib.randn(40, dtype=lib.float64),
    "randn_cached_sine": lambda lib: lib.cat(
        [lib.randn(3, dtype=lib.float64), lib.randn(4, dtype=lib.float64)]
    ),
    "normal_": lambda lib: lib.empty(33).normal_(1.5, 0.02),
    "uniform_": lambda lib: lib.empty(9).uniform_(-0.25, 0.5),
    "exponential_": lambda lib: lib.empty(6).exponential_(2.0),
    "randint": lambda lib: lib.randint(0, 10, (3, 4)),
    "randint_wide": lambda lib: lib.randint(-5, 2**40, (4,)),
    "random_": lambda lib: lib.empty(4, dtype=lib.int64).random_(),
    "randperm": lambda lib: lib.randperm(50),
    "bernoulli_scalar": lambda lib: lib.empty(30).bernoulli_(0.3),
    "bernoulli_tensor": lambda lib: lib.bernoulli(lib.full((30,), 0.4)),
    "bernoulli_tensor_f64": lambda lib: lib.bernoulli(lib.full((30,), 0.4, dtype=lib.float64)),
    "multinomial": lambda lib: lib.multinomial(
        lib.tensor([[0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 2.0, 1.0]]), 5, replacement=True
    ),
    "multinomial_one_with_replacement": lambda lib: lib.multinomial(
        lib.tensor([[0.3, 0.7], [0.5, 0.5]]), 1, replacement=True
    ),
    "categorical_sample": lambda lib: lib.distributions.Categorical(
        logits=lib.tensor([[0.1, 2.0, -1.0, 0.5], [1.0, 1.0, 1.0, 0.0]])
    ).sample((3,)),
    "multinomial_without_replacement": lambda lib: lib.multinomial(
        lib.tensor([0.1, 0.2, 0.3, 0.4, 0.5]), 4
    ),
    "dropout": lambda lib: lib.nn.functional.dropout(lib.ones(40), 0.25),
    "dropout2d": lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 6, 2, 2), 0.5),
    "linear_init": lambda lib: lib.nn.Linear(20, 7).weight,
    "embedding_init": lambda lib: lib.nn.Embedding(11, 8).weight,
    "generator": lambda lib: lib.rand(3, generator=lib.Generator().manual_seed(42)),
    "geometric_": lambda lib: lib.empty(6).geometric_(0.3),
    "cauchy_": lambda lib: lib.empty(6).cauchy_(1.0, 2.0),
    "log_normal_": lambda lib: lib.empty(6).log_normal_(0.5, 0.25),
    "normal_tensors": lambda lib: lib.normal(lib.zeros(20), lib.full((20,), 2.0)),
    "randn_like": lambda lib: lib.randn_like(lib.zeros(3, 7)),
    "randint_like": lambda lib: lib.randint_like(lib.zeros(3, 7), 10),
    # gradgradcheck draws its grad_outputs from the default generator, as PyTorch's
    "after_gradgradcheck": lambda lib: (
        lib.autograd.gradgradcheck(lib.exp, (lib.ones(3, dtype=lib.float64, requires_grad=True),)),
        lib.rand(4),
    )[1],
    # trunc_normal_ with most of the mass inside [a, b]: whole normal draws until inside
    "trunc_normal": lambda lib: lib.nn.init.trunc_normal_(lib.empty(8, 50), std=0.02),
    "trunc_normal_f64": lambda lib: lib.nn.init.trunc_normal_(
        lib.empty(300, dtype=lib.float64), std=0.5, a=-0.4, b=0.6
    ),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_values_match_torch(torch, name):
    tocha.manual_seed(0)
    torch.manual_seed(0)
    got = SAMPLES[name](tocha).detach().numpy()
    want = SAMPLES[name](torch).detach().numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    else:
        np.testing.assert_array_equal(got, want)


# Draws whose values are uniforms mapped by ``u * (high - low) + low``: to the bit, the
# affine map rounded once as PyTorch's fused multiply-add (a float32 range computed from the
# bounds rounded to float32).
EXACT = {
    "uniform_": lambda lib: lib.empty(4000).uniform_(-0.2182178902359924, 0.2182178902359924),
    "uniform_shifted": lambda lib: lib.empty(4000).uniform_(0.1, 7.3),
    "uniform_f64": lambda lib: lib.empty(4000, dtype=lib.float64).uniform_(-1 / 3**0.5, 0.25),
    "linear_init": lambda lib: lib.nn.Linear(30, 40).weight,
    "conv_init": lambda lib: lib.nn.Conv2d(3, 8, 3).bias,
    "linear_init_f64": lambda lib: lib.nn.Linear(30, 40, dtype=lib.float64).weight,
    "uniform_bf16": lambda lib: lib.empty(4000, dtype=lib.bfloat16).uniform_().float(),
    "linear_init_f16": lambda lib: lib.nn.Linear(50, 60, dtype=lib.float16).weight.float(),
    "rrelu": lambda lib: lib.nn.functional.rrelu(lib.linspace(-2, 1, 41), training=True),
    "rrelu_f64": lambda lib: lib.nn.functional.rrelu(
        lib.linspace(-2, 1, 41, dtype=lib.float64), 0.05, 0.4, training=True
    ),
    # trunc_normal_ with little of the mass inside [a, b]: uniforms kept by rejection
    "trunc_normal_tail": lambda lib: lib.nn.init.trunc_normal_(lib.empty(300), a=2.0, b=3.0),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_uniform_values_match_torch_to_the_bit(torch, name):
    tocha.manual_seed(0)
    torch.manual_seed(0)
    got = EXACT[name](tocha).detach().numpy()
    want = EXACT[name](torch).detach().numpy()
    np.testing.assert_array_equal(got, want)


def test_state_restores_the_stream_and_the_cached_normal():
    tocha.manual_seed(7)
    tocha.randn(3, dtype=tocha.float64)  # leaves a cached normal value
    state = tocha.get_rng_state()
    first = tocha.randn(5, dtype=tocha.float64)
    tocha.rand(1000)
    tocha.set_rng_state(state)
    assert tocha.equal(tocha.randn(5, dtype=tocha.float64), first)


def test_seeds_use_their_low_32_bits_as_torch_does(torch):
    tocha.manual_seed(2**32 + 5)
    torch.manual_seed(2**32 + 5)
    np.testing.assert_array_equal(tocha.rand(4).numpy(), torch.rand(4).numpy())


def test_switching_streams_restarts_the_default_stream_from_its_seed():
    use_pytorch_random(False)
    tocha.manual_seed(0)
    numpy_stream = tocha.rand(3)
    assert use_pytorch_random(True) is False
    pytorch_stream = tocha.rand(3)  # the default generator starts again from seed 0
    tocha.manual_seed(0)
    assert tocha.equal(tocha.rand(3), pytorch_stream)
    use_pytorch_random(False)
    assert tocha.equal(tocha.rand(3), numpy_stream)


def test_generator_states_of_either_stream_round_trip():
    for enabled in (True, False):
        use_pytorch_random(enabled)
        gen = tocha.Generator().manual_seed(3)
        state = gen.get_state()
        first = tocha.randn(20, generator=gen)
        gen.set_state(state)
        assert tocha.equal(tocha.randn(20, generator=gen), first)


STATE_STEPS = {
    "seeded": lambda lib: None,
    "after_words": lambda lib: lib.rand(3),
    "cached_normal": lambda lib: lib.randn(1),
    "used_cache": lambda lib: (lib.randn(1), lib.randn(1, dtype=lib.float64)),
    "after_twists": lambda lib: (lib.rand(700), lib.randint(0, 5, (1300,))),
}


@pytest.mark.parametrize("step", sorted(STATE_STEPS))
def test_rng_state_is_torchs_bytes(torch, step):
    tocha.manual_seed(123)
    torch.manual_seed(123)
    STATE_STEPS[step](tocha)
    STATE_STEPS[step](torch)
    mine = tocha.get_rng_state()
    assert mine.dtype == tocha.uint8 and mine.shape == (5056,)
    np.testing.assert_array_equal(mine.numpy(), torch.get_rng_state().numpy())


def test_torchs_rng_state_restores_torchs_stream(torch):
    torch.manual_seed(5)
    torch.rand(10)
    torch.randn(3, dtype=torch.float64)  # leaves a cached normal value
    state = torch.get_rng_state().numpy()
    want = torch.randn(4, dtype=torch.float64).numpy()
    tocha.set_rng_state(tocha.from_numpy(state))
    np.testing.assert_array_equal(tocha.randn(4, dtype=tocha.float64).numpy(), want)
    assert tocha.initial_seed() == 5


def test_a_state_of_another_layout_is_refused():
    with pytest.raises(RuntimeError, match="Invalid RNG state"):
        tocha.set_rng_state(tocha.zeros(100, dtype=tocha.uint8))
    bad = tocha.get_rng_state().clone()
    bad[8:12] = 0  # no word left before the twist
    with pytest.raises(RuntimeError, match="Invalid RNG state"):
        tocha.set_rng_state(bad)
