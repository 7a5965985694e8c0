"""Gradients of tocha.special (and tocha.lgamma, digamma, polygamma, mvlgamma, i0, xlogy,
logit, sinc): gradcheck and gradgradcheck in float64, and PyTorch's gradients. Their values and
errors are in tests/core/test_special.py, which needs no tocha-autograd."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tocha.autograd import gradcheck, gradgradcheck

SP = tocha.special


def _t(a):
    return tocha.from_numpy(np.asarray(a, dtype=np.float64)).requires_grad_()


GRADS = [
    ("lgamma", tocha.lgamma, [[0.3, 1.7, 4.2, -0.5]]),
    ("digamma", tocha.digamma, [[0.3, 1.7, 4.2, -0.5]]),
    ("polygamma", lambda x: tocha.polygamma(2, x), [[0.3, 1.7, 4.2]]),
    ("mvlgamma", lambda x: tocha.mvlgamma(x, 3), [[1.7, 4.2]]),
    ("i0", tocha.i0, [[-2.0, 0.0, 0.5, 25.0]]),
    ("i0e", SP.i0e, [[-2.0, 0.3, 25.0]]),
    ("i1", SP.i1, [[-2.0, 0.0, 0.5, 25.0]]),
    ("i1e", SP.i1e, [[-2.0, 0.3, 25.0]]),
    ("erfcx", SP.erfcx, [[-1.0, 0.2, 3.0, 30.0]]),
    ("ndtri", SP.ndtri, [[0.01, 0.3, 0.9]]),
    ("log_ndtr", SP.log_ndtr, [[-40.0, -2.0, 0.5, 3.0]]),
    ("ndtr", SP.ndtr, [[-2.0, 0.5]]),
    ("entr", SP.entr, [[0.2, 1.5]]),
    ("sinc", tocha.sinc, [[-1.3, 0.4, 2.5]]),
    ("xlogy", tocha.xlogy, [[0.0, 1.5, -2.0], [0.5, 2.0, 3.0]]),
    ("xlog1py", SP.xlog1py, [[0.0, 1.5, -2.0], [0.5, 2.0, 3.0]]),
    ("zeta", lambda q: SP.zeta(3.0, q), [[0.5, 2.0, 7.0]]),
    ("logit", lambda x: SP.logit(x, eps=0.2), [[0.1, 0.5, 0.7]]),
    ("softmax", lambda x: SP.softmax(x, 0), [[0.1, 0.5, 0.7]]),
]


@pytest.mark.parametrize("name, fn, values", GRADS, ids=[c[0] for c in GRADS])
def test_gradcheck(name, fn, values):
    inputs = [_t(v) for v in values]
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_gradients_match_torch(torch):
    x = np.array([0.3, 1.7, 4.2, 25.0])
    pairs = [
        (tocha.lgamma, torch.lgamma),
        (tocha.digamma, torch.digamma),
        (tocha.i0, torch.i0),
        (SP.i1, torch.special.i1),
        (SP.i1e, torch.special.i1e),
        (SP.i0e, torch.special.i0e),
        (SP.erfcx, torch.special.erfcx),
        (SP.log_ndtr, torch.special.log_ndtr),
        (tocha.sinc, torch.sinc),
        (SP.entr, torch.special.entr),
    ]
    for mine_fn, torch_fn in pairs:
        mine, theirs = _t(x), torch.from_numpy(x.copy()).requires_grad_()
        mine_fn(mine).sum().backward()
        torch_fn(theirs).sum().backward()
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-9)


def test_gradients_at_zero_follow_torch(torch):
    for mine_fn, torch_fn in (
        (tocha.sinc, torch.sinc),
        (lambda x: tocha.xlogy(x, 2.0), lambda x: torch.xlogy(x, 2.0)),
    ):
        mine, theirs = _t([0.0]), torch.zeros(1, dtype=torch.float64, requires_grad=True)
        mine_fn(mine).sum().backward()
        torch_fn(theirs).sum().backward()
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy())


def test_zeta_first_argument_has_no_derivative():
    s = _t([2.0, 3.0])
    with pytest.raises(NotImplementedError):
        SP.zeta(s, tocha.tensor([1.0, 2.0], dtype=tocha.float64)).sum().backward()
