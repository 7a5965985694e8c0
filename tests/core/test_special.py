"""tocha.special (and tocha.lgamma, digamma, polygamma, mvlgamma, i0, xlogy, logit, sinc)
against math, mpmath-free references and PyTorch: values, dtypes and errors. Their gradients
need tocha-autograd: tests/autograd/test_special_grad.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_tensor

import tocha

SP = tocha.special
_RNG = np.random.default_rng(0)
WIDE = np.concatenate(
    [
        _RNG.uniform(-30, 30, 200),
        _RNG.uniform(0, 3, 200),
        np.exp(_RNG.uniform(-30, 6, 200)),
        [1.0, 2.0, 0.5, 1.5, -0.5, 0.0],
    ]
)
POSITIVE = np.abs(WIDE) + 0.05
UNIT = np.concatenate(
    [_RNG.uniform(0, 1, 200), np.exp(_RNG.uniform(-700, 0, 100)), [0.0, 1.0, 0.5, -0.5, 2.0]]
)


def test_lgamma_matches_math():
    x = WIDE[WIDE != np.round(WIDE)]
    got = tocha.lgamma(tocha.from_numpy(x)).numpy()
    want = np.array([math.lgamma(v) for v in x])
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    assert tocha.lgamma(tocha.tensor([1.0, 2.0])).tolist() == [0.0, 0.0]


# name, tocha function, torch function, input
UNARY = [
    ("lgamma", tocha.lgamma, "lgamma", WIDE, 1e-13),
    ("gammaln", SP.gammaln, "special.gammaln", WIDE, 1e-13),
    ("digamma", tocha.digamma, "digamma", WIDE, 1e-11),
    ("psi", SP.psi, "special.psi", POSITIVE, 1e-13),
    ("i0", tocha.i0, "i0", WIDE, 1e-13),
    ("i0e", SP.i0e, "special.i0e", WIDE, 1e-13),
    ("i1", SP.i1, "special.i1", WIDE, 1e-13),
    ("i1e", SP.i1e, "special.i1e", WIDE, 1e-13),
    ("erfcx", SP.erfcx, "special.erfcx", WIDE, 1e-13),
    ("ndtr", SP.ndtr, "special.ndtr", WIDE, 1e-13),
    ("log_ndtr", SP.log_ndtr, "special.log_ndtr", WIDE, 1e-13),
    ("ndtri", SP.ndtri, "special.ndtri", UNIT, 1e-12),
    ("entr", SP.entr, "special.entr", WIDE, 1e-13),
    ("sinc", tocha.sinc, "sinc", WIDE, 1e-12),
    ("expit", SP.expit, "special.expit", WIDE, 1e-13),
    ("logit", SP.logit, "special.logit", UNIT, 1e-13),
    ("erf", SP.erf, "special.erf", WIDE, 1e-13),
    ("erfinv", SP.erfinv, "special.erfinv", UNIT, 1e-12),
    ("expm1", SP.expm1, "special.expm1", WIDE, 1e-13),
]


def _torch_fn(torch, path):
    fn = torch
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, fn, torch_name, x, tol", UNARY, ids=[c[0] for c in UNARY])
def test_unary_match_torch(torch, name, fn, torch_name, x, tol, dtype):
    if dtype == "float32":  # PyTorch overflows in float32 where tocha rounds a float64 result
        x = x[np.abs(x) < 20]
    x = x.astype(dtype)
    want = _torch_fn(torch, torch_name)(torch.from_numpy(x.copy()))
    assert_tensor(
        fn(tocha.from_numpy(x.copy())),
        want,
        rtol=tol if dtype == "float64" else 1e-5,
        atol=1e-13 if dtype == "float64" else 1e-6,
    )


def test_polygamma_and_zeta(torch):
    x = tocha.from_numpy(POSITIVE)
    for n in range(5):
        want = torch.polygamma(n, torch.from_numpy(POSITIVE))
        assert_tensor(tocha.polygamma(n, x), want, rtol=1e-8 if n == 1 else 1e-11)
        assert_tensor(x.polygamma(n), want, rtol=1e-8 if n == 1 else 1e-11)
    s = _RNG.uniform(1.01, 20, POSITIVE.size)
    assert_tensor(
        SP.zeta(tocha.from_numpy(s), x),
        torch.special.zeta(torch.from_numpy(s), torch.from_numpy(POSITIVE)),
        rtol=1e-12,
    )
    edge_s = np.array([2.0, 3, 2, 3, 0.5, 1, 2.5])
    edge_q = np.array([-1.5, -2.5, -2, 0, 1, 1, -1.5])
    assert_tensor(
        SP.zeta(tocha.from_numpy(edge_s), tocha.from_numpy(edge_q)),
        torch.special.zeta(torch.from_numpy(edge_s), torch.from_numpy(edge_q)),
    )
    assert_tensor(
        SP.zeta(2.0, tocha.tensor([1.0, 2.0])), torch.special.zeta(2.0, torch.tensor([1.0, 2.0]))
    )


def test_binary_and_composites(torch):
    a, b = _RNG.standard_normal(20), np.abs(_RNG.standard_normal(20))
    a[:3] = 0
    b[0] = np.nan
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    ma, mb = tocha.from_numpy(a), tocha.from_numpy(b)
    assert_tensor(tocha.xlogy(ma, mb), torch.xlogy(ta, tb))
    assert_tensor(SP.xlog1py(ma, mb), torch.special.xlog1py(ta, tb))
    assert_tensor(tocha.xlogy(2, mb), torch.xlogy(2, tb))
    assert_tensor(ma.xlogy(3.0), ta.xlogy(3.0))
    assert_tensor(tocha.mvlgamma(tocha.from_numpy(b + 2), 3), torch.mvlgamma(tb + 2, 3))
    assert_tensor(
        SP.multigammaln(tocha.from_numpy(b + 2), 1), torch.special.multigammaln(tb + 2, 1)
    )
    assert_tensor(SP.logit(mb, eps=0.1), torch.special.logit(tb, eps=0.1))
    assert_tensor(mb.logit(), tb.logit())
    x = _RNG.standard_normal((3, 4))
    assert_tensor(SP.softmax(tocha.from_numpy(x), 1), torch.special.softmax(torch.from_numpy(x), 1))
    assert_tensor(
        SP.log_softmax(tocha.from_numpy(x), 0), torch.special.log_softmax(torch.from_numpy(x), 0)
    )
    assert_tensor(
        SP.softmax(tocha.tensor([1, 2]), 0, dtype=tocha.float64),
        torch.special.softmax(torch.tensor([1, 2]), 0, dtype=torch.float64),
    )
    assert_tensor(
        SP.logsumexp(tocha.from_numpy(x), 1), torch.special.logsumexp(torch.from_numpy(x), 1)
    )
    assert_tensor(SP.round(tocha.tensor([1.5, 2.5])), torch.special.round(torch.tensor([1.5, 2.5])))


def test_dtypes_and_methods():
    ints = tocha.tensor([1, 2, 3])
    for fn in (tocha.lgamma, tocha.digamma, tocha.i0, tocha.sinc, SP.i1e, SP.ndtri):
        assert fn(ints).dtype == tocha.float32
    assert tocha.polygamma(1, ints).dtype == tocha.float32
    assert tocha.xlogy(tocha.tensor([0, 1]), 3).dtype == tocha.float32
    x = tocha.tensor([0.5, 1.5])
    for name in ("lgamma", "digamma", "i0", "sinc", "logit"):
        assert_tensor(getattr(x, name)(), getattr(tocha, name)(x).numpy())
    assert_tensor(x.mvlgamma(1), tocha.lgamma(x).numpy())


def test_edges(torch):
    x = np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan])
    for name in ("lgamma", "digamma"):
        assert_tensor(
            getattr(tocha, name)(tocha.from_numpy(x)), getattr(torch, name)(torch.from_numpy(x))
        )


@pytest.mark.parametrize(
    "fn, exc, message",
    [
        (
            lambda: tocha.polygamma(-1, tocha.ones(2)),
            RuntimeError,
            "polygamma(n, x) does not support negative n.",
        ),
        (
            lambda: tocha.lgamma(tocha.ones(2, dtype=tocha.complex64)),
            NotImplementedError,
            "not implemented for 'ComplexFloat'",
        ),
        (
            lambda: SP.softmax(tocha.tensor([1, 2]), 0),
            NotImplementedError,
            "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'",
        ),
        (lambda: tocha.lgamma([1.0]), TypeError, "must be Tensor, not list"),
    ],
)
def test_errors(fn, exc, message):
    with pytest.raises(exc) as info:
        fn()
    assert message in str(info.value)
