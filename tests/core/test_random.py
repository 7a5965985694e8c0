"""Random sampling: generators and seeding, dtypes and shapes (against PyTorch), distribution
statistics with a fixed seed, in-place samplers and PyTorch's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tocha

# bfloat16 is stored with ml_dtypes, tocha-core's optional dependency.
NO_BFLOAT16 = "bfloat16 needs ml_dtypes: pip install tocha-core[bfloat16]"

# Each case runs on `lib` (tocha, or torch as the oracle): same dtype and shape expected.
CALLS = {
    "rand": lambda lib, g: lib.rand(2, 3, generator=g),
    "rand_tuple": lambda lib, g: lib.rand((4,), generator=g),
    "rand_f64": lambda lib, g: lib.rand(3, dtype=lib.float64, generator=g),
    "rand_f16": lambda lib, g: lib.rand(3, 2, dtype=lib.float16, generator=g),
    "rand_bf16": lambda lib, g: lib.rand(3, dtype=lib.bfloat16, generator=g),
    "rand_c64": lambda lib, g: lib.rand(2, 2, dtype=lib.complex64, generator=g),
    "rand_0d": lambda lib, g: lib.rand((), generator=g),
    "rand_empty": lambda lib, g: lib.rand(0, 3, generator=g),
    "randn": lambda lib, g: lib.randn(5, generator=g),
    "randn_f64": lambda lib, g: lib.randn(2, 2, dtype=lib.float64, generator=g),
    "randn_c128": lambda lib, g: lib.randn(3, dtype=lib.complex128, generator=g),
    "rand_like": lambda lib, g: lib.rand_like(lib.ones(2, 5, dtype=lib.float64), generator=g),
    "randn_like": lambda lib, g: lib.randn_like(lib.ones(3), dtype=lib.float16, generator=g),
    "randint_high": lambda lib, g: lib.randint(10, (3, 2), generator=g),
    "randint_low_high": lambda lib, g: lib.randint(-5, 5, (7,), generator=g),
    "randint_kw": lambda lib, g: lib.randint(low=2, high=4, size=(2,), generator=g),
    "randint_f32": lambda lib, g: lib.randint(0, 3, (3,), dtype=lib.float32, generator=g),
    "randint_u8": lambda lib, g: lib.randint(0, 256, (3,), dtype=lib.uint8, generator=g),
    "randint_bool": lambda lib, g: lib.randint(0, 2, (3,), dtype=lib.bool, generator=g),
    "randint_like": lambda lib, g: lib.randint_like(lib.ones(4), 5, generator=g),
    "randint_like_lh": lambda lib, g: lib.randint_like(
        lib.ones(4, dtype=lib.int32), 2, 5, generator=g
    ),
    "randperm": lambda lib, g: lib.randperm(6, generator=g),
    "randperm_f32": lambda lib, g: lib.randperm(6, dtype=lib.float32, generator=g),
    "randperm_0": lambda lib, g: lib.randperm(0, generator=g),
    "normal_tt": lambda lib, g: lib.normal(lib.zeros(2, 3), lib.ones(3), generator=g),
    "normal_tt_f64": lambda lib, g: lib.normal(
        lib.zeros(3, dtype=lib.float64), lib.ones(3), generator=g
    ),
    "normal_tf": lambda lib, g: lib.normal(lib.zeros(2, 2), 2.0, generator=g),
    "normal_t": lambda lib, g: lib.normal(lib.zeros(4, dtype=lib.float16), generator=g),
    "normal_ft": lambda lib, g: lib.normal(1.0, lib.ones(3, dtype=lib.float64), generator=g),
    "normal_ffs": lambda lib, g: lib.normal(1.0, 2.0, (2, 3), generator=g),
    "normal_ffs_int": lambda lib, g: lib.normal(1, 2, size=(2,), dtype=lib.float64, generator=g),
    "bernoulli": lambda lib, g: lib.bernoulli(lib.full((3, 2), 0.5), generator=g),
    "bernoulli_f64": lambda lib, g: lib.bernoulli(
        lib.full((3,), 0.5, dtype=lib.float64), generator=g
    ),
    "bernoulli_p": lambda lib, g: lib.bernoulli(lib.ones(3), 0.3, generator=g),
    "bernoulli_p_int": lambda lib, g: lib.bernoulli(lib.ones(3, dtype=lib.int64), 0.3, generator=g),
    "bernoulli_method": lambda lib, g: lib.full((2,), 0.5).bernoulli(generator=g),
    "multinomial_1d": lambda lib, g: lib.multinomial(lib.ones(5), 3, generator=g),
    "multinomial_2d": lambda lib, g: lib.multinomial(lib.ones(2, 5), 7, True, generator=g),
    "multinomial_method": lambda lib, g: lib.ones(4).multinomial(2, generator=g),
    "multinomial_rows0": lambda lib, g: lib.multinomial(lib.ones(0, 3), 1, generator=g),
    "uniform_": lambda lib, g: lib.zeros(3, dtype=lib.float64).uniform_(-1, 1, generator=g),
    "normal_": lambda lib, g: lib.zeros(2, 3).normal_(2, 3, generator=g),
    "bernoulli_": lambda lib, g: lib.zeros(3, dtype=lib.int64).bernoulli_(0.5, generator=g),
    "bernoulli_t": lambda lib, g: lib.zeros(2, 3).bernoulli_(lib.full((3,), 0.5), generator=g),
    "random_": lambda lib, g: lib.zeros(5, dtype=lib.uint8).random_(generator=g),
    "random_to": lambda lib, g: lib.zeros(5).random_(5, generator=g),
    "random_from_to": lambda lib, g: lib.zeros(5, dtype=lib.int16).random_(-3, 3, generator=g),
    "exponential_": lambda lib, g: lib.zeros(5).exponential_(2.0, generator=g),
}


def _gen(lib, seed=1):
    return lib.Generator().manual_seed(seed)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_dtype_and_shape_like_torch(torch, name):
    got = CALLS[name](tocha, _gen(tocha))
    want = CALLS[name](torch, _gen(torch))
    assert got.dtype.name == str(want.dtype)[6:]
    assert tuple(got.shape) == tuple(want.shape)
    assert got.device.type == "cpu"


@pytest.mark.parametrize("name", sorted(CALLS))
def test_same_seed_same_values(name):
    if name.endswith("bf16"):
        pytest.importorskip("ml_dtypes", reason=NO_BFLOAT16)
    first = CALLS[name](tocha, _gen(tocha, 5)).numpy(force=True)
    again = CALLS[name](tocha, _gen(tocha, 5)).numpy(force=True)
    np.testing.assert_array_equal(first, again)
    tocha.manual_seed(5)
    default = CALLS[name](tocha, None).numpy(force=True)
    np.testing.assert_array_equal(first, default)


# (name, sample of 200_000 values from a seeded generator, mean, standard deviation)
N = 200_000
MOMENTS = [
    ("rand", lambda g: tocha.rand(N, generator=g), 0.5, math.sqrt(1 / 12)),
    ("rand_f64", lambda g: tocha.rand(N, dtype=tocha.float64, generator=g), 0.5, math.sqrt(1 / 12)),
    ("rand_f16", lambda g: tocha.rand(N, dtype=tocha.float16, generator=g), 0.5, math.sqrt(1 / 12)),
    ("randn", lambda g: tocha.randn(N, generator=g), 0.0, 1.0),
    ("randn_f64", lambda g: tocha.randn(N, dtype=tocha.float64, generator=g), 0.0, 1.0),
    ("randn_bf16", lambda g: tocha.randn(N, dtype=tocha.bfloat16, generator=g), 0.0, 1.0),
    (
        "randn_complex_real",
        lambda g: tocha.randn(N, dtype=tocha.complex64, generator=g).numpy().real,
        0.0,
        math.sqrt(0.5),
    ),
    (
        "randn_complex_imag",
        lambda g: tocha.randn(N, dtype=tocha.complex128, generator=g).numpy().imag,
        0.0,
        math.sqrt(0.5),
    ),
    (
        "rand_complex_imag",
        lambda g: tocha.rand(N, dtype=tocha.complex64, generator=g).numpy().imag,
        0.5,
        math.sqrt(1 / 12),
    ),
    ("normal_ffs", lambda g: tocha.normal(3.0, 2.0, (N,), generator=g), 3.0, 2.0),
    ("normal_tf", lambda g: tocha.normal(tocha.full((N,), -1.0), 0.5, generator=g), -1.0, 0.5),
    ("normal_ft", lambda g: tocha.normal(4.0, tocha.full((N,), 3.0), generator=g), 4.0, 3.0),
    (
        "normal_tt",
        lambda g: tocha.normal(tocha.full((N // 4, 1), 1.0), tocha.full((4,), 2.0), generator=g),
        1.0,
        2.0,
    ),
    ("uniform_", lambda g: tocha.empty(N).uniform_(-2, 4, generator=g), 1.0, math.sqrt(3)),
    (
        "normal_",
        lambda g: tocha.empty(N, dtype=tocha.float64).normal_(5, 0.1, generator=g),
        5.0,
        0.1,
    ),
    ("exponential_", lambda g: tocha.empty(N).exponential_(4.0, generator=g), 0.25, 0.25),
    ("bernoulli", lambda g: tocha.bernoulli(tocha.full((N,), 0.2), generator=g), 0.2, 0.4),
    (
        "bernoulli_p",
        lambda g: tocha.bernoulli(tocha.empty(N), 0.7, generator=g),
        0.7,
        math.sqrt(0.21),
    ),
    (
        "bernoulli_",
        lambda g: tocha.empty(N, dtype=tocha.int64).bernoulli_(0.9, generator=g),
        0.9,
        0.3,
    ),
    ("randint", lambda g: tocha.randint(-3, 7, (N,), generator=g), 1.5, math.sqrt(99 / 12)),
    ("random_to", lambda g: tocha.empty(N).random_(4, generator=g), 1.5, math.sqrt(15 / 12)),
    (
        "random_u8",
        lambda g: tocha.empty(N, dtype=tocha.uint8).random_(generator=g),
        127.5,
        math.sqrt((256**2 - 1) / 12),
    ),
]


@pytest.mark.parametrize("name, sample, mean, std", MOMENTS, ids=[m[0] for m in MOMENTS])
def test_moments(name, sample, mean, std):
    """Mean within 6 standard errors and standard deviation within 2% (both about 6 sigma
    for 200_000 draws)."""
    if name.endswith("bf16"):
        pytest.importorskip("ml_dtypes", reason=NO_BFLOAT16)
    x = sample(_gen(tocha, 2024))
    x = np.asarray(x.numpy(force=True) if isinstance(x, tocha.Tensor) else x, np.float64).ravel()
    assert abs(x.mean() - mean) <= 6 * std / math.sqrt(x.size)
    assert abs(x.std() - std) <= 0.02 * std


SUPPORT = [
    ("rand", lambda g: tocha.rand(N, generator=g), 0.0, 1.0, False),
    (
        "uniform_",
        lambda g: tocha.empty(N, dtype=tocha.float64).uniform_(3, 5, generator=g),
        3.0,
        5.0,
        False,
    ),
    ("randint", lambda g: tocha.randint(-3, 7, (N,), generator=g), -3, 6, True),
    ("random_", lambda g: tocha.empty(N, dtype=tocha.int8).random_(generator=g), 0, 127, True),
    (
        "random_f16",
        lambda g: tocha.empty(N, dtype=tocha.float16).random_(generator=g),
        0,
        2048,
        True,
    ),
    (
        "random_from",
        lambda g: tocha.empty(N, dtype=tocha.int16).random_(-5, None, generator=g),
        -5,
        32767,
        True,
    ),
    ("random_bool", lambda g: tocha.empty(N, dtype=tocha.bool).random_(generator=g), 0, 1, True),
    ("exponential_", lambda g: tocha.empty(N).exponential_(generator=g), 0.0, math.inf, False),
]


@pytest.mark.parametrize("name, sample, low, high, inclusive", SUPPORT, ids=[s[0] for s in SUPPORT])
def test_support(name, sample, low, high, inclusive):
    """Every value lies in the range, and (for integers) both ends are drawn."""
    x = sample(_gen(tocha, 7)).numpy().astype(np.float64)
    assert x.min() >= low
    assert x.max() <= high if inclusive else x.max() < high
    if inclusive:
        counts = np.bincount((x - low).astype(np.int64))
        if counts.size <= 1024:
            assert x.min() == low and x.max() == high
            expected = N / counts.size
            assert np.all(np.abs(counts - expected) <= 6 * math.sqrt(expected))


def test_float32_drawn_as_float32():
    """float32 uniforms are drawn as float32 (multiples of 2**-24), not rounded float64."""
    x = tocha.rand(10_000, generator=_gen(tocha)).numpy().astype(np.float64) * 2**24
    assert np.array_equal(x, np.floor(x))
    y = tocha.rand(10_000, dtype=tocha.float64, generator=_gen(tocha)).numpy() * 2**24
    assert not np.array_equal(y, np.floor(y))


def test_randperm_is_a_permutation():
    for n in (1, 2, 10, 1000):
        p = tocha.randperm(n, generator=_gen(tocha, n)).numpy()
        assert sorted(p.tolist()) == list(range(n))
    first = np.stack([tocha.randperm(4, generator=_gen(tocha, s)).numpy()[0] for s in range(4000)])
    assert np.all(np.abs(np.bincount(first, minlength=4) - 1000) <= 6 * math.sqrt(1000))


def test_bernoulli_per_element_probabilities():
    p = tocha.tensor(np.tile([0.0, 0.25, 1.0], (N // 3, 1)))
    x = tocha.bernoulli(p, generator=_gen(tocha)).numpy()
    assert x.dtype == np.float64
    assert np.all(x[:, 0] == 0) and np.all(x[:, 2] == 1)
    assert abs(x[:, 1].mean() - 0.25) <= 6 * math.sqrt(0.25 * 0.75 / x.shape[0])
    t = tocha.zeros(N // 3, 3).bernoulli_(tocha.tensor([1.0, 0.5, 0.0]), generator=_gen(tocha))
    col = t.numpy()
    assert np.all(col[:, 0] == 1) and np.all(col[:, 2] == 0)
    assert abs(col[:, 1].mean() - 0.5) <= 6 * math.sqrt(0.25 / col.shape[0])


WEIGHTS = np.array([0.0, 1.0, 2.0, 0.0, 5.0, 2.0])


def test_multinomial_with_replacement_frequencies():
    x = tocha.multinomial(
        tocha.tensor(np.stack([WEIGHTS, WEIGHTS[::-1]])), N // 2, True, generator=_gen(tocha)
    ).numpy()
    assert x.dtype == np.int64 and x.shape == (2, N // 2)
    for row, w in zip(x, (WEIGHTS, WEIGHTS[::-1])):
        p = w / w.sum()
        counts = np.bincount(row, minlength=w.size)
        assert np.all(counts[p == 0] == 0)
        expected = p * row.size
        assert np.all(np.abs(counts - expected) <= 6 * np.sqrt(expected * (1 - p)) + 1e-9)


def test_multinomial_without_replacement():
    """Draws in a row are distinct; the first draw follows the weights; zero weights come
    only after every positive one, in index order (as PyTorch)."""
    probs = tocha.tensor(np.tile(WEIGHTS, (20_000, 1)), dtype=tocha.float32)
    x = tocha.multinomial(probs, 4, generator=_gen(tocha)).numpy()
    assert all(len(set(r)) == 4 for r in x[:1000])
    assert set(np.unique(x)) == {1, 2, 4, 5}
    p = WEIGHTS / WEIGHTS.sum()
    expected = p * x.shape[0]
    counts = np.bincount(x[:, 0], minlength=WEIGHTS.size)
    assert np.all(np.abs(counts - expected) <= 6 * np.sqrt(expected * (1 - p)) + 1e-9)
    full = tocha.multinomial(tocha.tensor(WEIGHTS), 6, generator=_gen(tocha)).numpy()
    assert sorted(full[:4].tolist()) == [1, 2, 4, 5] and full[4:].tolist() == [0, 3]


def test_generator_api():
    g = tocha.Generator()
    assert g.device == tocha.device("cpu") and g.initial_seed() == 67280421310721
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    assert tocha.Generator().manual_seed(-1).initial_seed() == 2**64 - 1
    s = g.seed()
    assert isinstance(s, int) and g.initial_seed() == s
    state = g.get_state()
    assert state.dtype is tocha.uint8 and state.ndim == 1
    a = tocha.rand(5, generator=g).numpy()
    assert g.set_state(state) is g
    np.testing.assert_array_equal(tocha.rand(5, generator=g).numpy(), a)
    assert g.initial_seed() == s
    other = tocha.Generator().manual_seed(4)
    assert not np.array_equal(
        tocha.rand(5, generator=other).numpy(),
        tocha.rand(5, generator=tocha.Generator().manual_seed(3)).numpy(),
    )


def test_default_generator_and_global_seed():
    assert tocha.manual_seed(11) is tocha.default_generator
    assert tocha.initial_seed() == 11
    a = tocha.randn(4).numpy()
    np.testing.assert_array_equal(
        a, tocha.randn(4, generator=tocha.Generator().manual_seed(11)).numpy()
    )
    state = tocha.get_rng_state()
    b = tocha.rand(3).numpy()
    tocha.set_rng_state(state)
    np.testing.assert_array_equal(tocha.rand(3).numpy(), b)
    s = tocha.seed()
    assert tocha.initial_seed() == s
    tocha.manual_seed(True)
    assert tocha.initial_seed() == 1


def test_inplace_samplers_on_views():
    base = tocha.zeros(4, 4)
    view = base[::2]
    version = base._version
    assert view.uniform_(1, 2, generator=_gen(tocha)) is view
    data = base.numpy()
    assert np.all((data[::2] >= 1) & (data[::2] < 2)) and np.all(data[1::2] == 0)
    assert base._version > version


ERRORS = [
    # (call on lib, exception type, message; "{lib}" is the library's name)
    (
        lambda lib: lib.rand(2, dtype=lib.int64),
        NotImplementedError,
        "\"check_uniform_bounds\" not implemented for 'Long'",
    ),
    (
        lambda lib: lib.randn(2, dtype=lib.int32),
        NotImplementedError,
        "\"normal_kernel_cpu\" not implemented for 'Int'",
    ),
    (
        lambda lib: lib.rand(-1),
        RuntimeError,
        "Trying to create tensor with negative dimension -1: [-1]",
    ),
    (
        lambda lib: lib.randint(5, 5, (3,)),
        RuntimeError,
        "random_ expects 'from' to be less than 'to', but got from=5 >= to=5",
    ),
    (
        lambda lib: lib.randint(0, 300, (3,), dtype=lib.uint8),
        RuntimeError,
        "to - 1 is out of bounds for unsigned char",
    ),
    (
        lambda lib: lib.randint(-1, 3, (3,), dtype=lib.uint8),
        RuntimeError,
        "from is out of bounds for unsigned char",
    ),
    (
        lambda lib: lib.randint(0, 3, (3,), dtype=lib.bool),
        RuntimeError,
        "to - 1 is out of bounds for bool",
    ),
    (
        lambda lib: lib.randint(0, 2**20, (3,), dtype=lib.int16),
        RuntimeError,
        "to - 1 is out of bounds for short int",
    ),
    (
        lambda lib: lib.randperm(-1),
        RuntimeError,
        "Trying to create tensor with negative dimension -1: [-1]",
    ),
    (
        lambda lib: lib.randperm(5, dtype=lib.bool),
        NotImplementedError,
        "\"randperm\" not implemented for 'Bool'",
    ),
    (
        lambda lib: lib.normal(1.0, -2.0, (2,)),
        RuntimeError,
        "normal expects std >= 0.0, but found std -2",
    ),
    (
        lambda lib: lib.normal(lib.zeros(2), -1.5),
        RuntimeError,
        "normal expects std >= 0.0, but found std -1.5",
    ),
    (
        lambda lib: lib.normal(lib.zeros(2), -lib.ones(2)),
        RuntimeError,
        "normal expects all elements of std >= 0.0",
    ),
    (
        lambda lib: lib.normal(lib.zeros(2), lib.ones(3)),
        RuntimeError,
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0",
    ),
    (
        lambda lib: lib.normal(lib.zeros(3, dtype=lib.int64), lib.ones(3)),
        NotImplementedError,
        "\"normal_kernel_cpu\" not implemented for 'Long'",
    ),
    (lambda lib: lib.normal(1.0, 2.0), TypeError, "normal() received an invalid combination"),
    (
        lambda lib: lib.bernoulli(lib.tensor([0.5, 1.5])),
        RuntimeError,
        "Expected p_in >= 0 && p_in <= 1 to be true, but got false.",
    ),
    (
        lambda lib: lib.bernoulli(lib.tensor([0.5, float("nan")])),
        RuntimeError,
        "Expected p_in >= 0 && p_in <= 1 to be true, but got false.",
    ),
    (
        lambda lib: lib.bernoulli(lib.ones(2), 1.3),
        RuntimeError,
        "bernoulli_ expects p to be in [0, 1], but got p=1.3",
    ),
    (
        lambda lib: lib.bernoulli(lib.tensor([1, 0])),
        NotImplementedError,
        "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'",
    ),
    (
        lambda lib: lib.ones(3).bernoulli_(lib.tensor([0.5, 1.5, 0.0])),
        RuntimeError,
        "Expected p_in >= 0 && p_in <= 1 to be true, but got false.",
    ),
    (
        lambda lib: lib.ones(3).bernoulli_(lib.tensor([0.5, 1.0])),
        RuntimeError,
        "The expanded size of the tensor (3) must match the existing size (2) at non-singleton "
        "dimension 0.  Target sizes: [3].  Tensor sizes: [2]",
    ),
    (
        lambda lib: lib.multinomial(lib.tensor([1.0, 2, 3]), 4),
        RuntimeError,
        "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
    ),
    (
        lambda lib: lib.multinomial(lib.tensor([0.0, 0, 0]), 1),
        RuntimeError,
        "invalid multinomial distribution (sum of probabilities <= 0)",
    ),
    (
        lambda lib: lib.multinomial(lib.tensor([[1.0, 1], [0, 0]]), 1, True),
        RuntimeError,
        "invalid multinomial distribution (sum of probabilities <= 0)",
    ),
    (
        lambda lib: lib.multinomial(lib.tensor([-1.0, 2]), 1),
        RuntimeError,
        "probability tensor contains either `inf`, `nan` or element < 0",
    ),
    (
        lambda lib: lib.multinomial(lib.tensor([float("inf"), 2]), 1),
        RuntimeError,
        "probability tensor contains either `inf`, `nan` or element < 0",
    ),
    (
        lambda lib: lib.multinomial(lib.tensor([1, 2]), 1),
        RuntimeError,
        "multinomial only supports floating-point dtypes for input, got: Long",
    ),
    (lambda lib: lib.multinomial(lib.tensor(1.0), 1), RuntimeError, "prob_dist must be 1 or 2 dim"),
    (
        lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
        RuntimeError,
        "prob_dist must be 1 or 2 dim",
    ),
    (
        lambda lib: lib.multinomial(lib.tensor([1.0, 2]), 0),
        RuntimeError,
        "cannot sample n_sample <= 0 samples",
    ),
    (
        lambda lib: lib.ones(3).uniform_(2, 1),
        RuntimeError,
        "uniform_ expects to return a [from, to) range, but found from=2 > to=1",
    ),
    (
        lambda lib: lib.ones(3, dtype=lib.int64).uniform_(),
        NotImplementedError,
        "\"check_uniform_bounds\" not implemented for 'Long'",
    ),
    (
        lambda lib: lib.ones(3).normal_(0, -1),
        RuntimeError,
        "normal expects std >= 0.0, but found std -1",
    ),
    (
        lambda lib: lib.ones(3).exponential_(0),
        RuntimeError,
        "exponential_ expects lambda > 0.0, but found lambda=0",
    ),
    (
        lambda lib: lib.ones(3, dtype=lib.int64).exponential_(),
        RuntimeError,
        "Exponential distribution is a continuous probability distribution. dtype must be a "
        "floating point but you specified Long",
    ),
    (
        lambda lib: lib.ones(3).random_(5, 2),
        RuntimeError,
        "random_ expects 'from' to be less than 'to', but got from=5 >= to=2",
    ),
    (
        lambda lib: lib.ones(3, dtype=lib.uint8).random_(0, 300),
        RuntimeError,
        "to - 1 is out of bounds for unsigned char",
    ),
    (
        lambda lib: lib.Generator().set_state(lib.zeros(3)),
        TypeError,
        "RNG state must be a {lib}.ByteTensor",
    ),
    (
        lambda lib: lib.Generator().manual_seed(1.5),
        RuntimeError,
        "manual_seed expected a long, but got float",
    ),
    (lambda lib: lib.manual_seed(2**64), ValueError, "Overflow when unpacking long long"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    call, exc_type, message = ERRORS[case]
    with pytest.raises(exc_type) as info:
        call(tocha)
    assert str(info.value).startswith(message.format(lib="tocha"))


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(torch, case):
    call, exc_type, message = ERRORS[case]
    with pytest.raises(exc_type) as info:
        call(torch)
    assert str(info.value).startswith(message.format(lib="torch"))


def test_set_state_refuses_a_damaged_state():
    with pytest.raises(RuntimeError, match="Invalid RNG state"):
        tocha.Generator().set_state(tocha.zeros(3, dtype=tocha.uint8))


def test_generator_device_must_match():
    g = tocha.Generator()
    g.device = tocha.device("cuda")  # stands for a generator of another device type
    with pytest.raises(
        RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"
    ):
        tocha.rand(2, generator=g)
