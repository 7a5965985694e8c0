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


# -- forward mode -----------------------------------------------------------------------------
@pytest.mark.parametrize("name, fn, values", GRADS, ids=[c[0] for c in GRADS])
def test_forward_ad_gradcheck(name, fn, values):
    assert gradcheck(fn, [_t(v) for v in values], check_forward_ad=True, check_backward_ad=False)


def _tangent(lib, fn, arrays, tangents):
    """The tangent of fn's output, each array a dual tensor (a None tangent: a plain one)."""
    forward_ad = lib.autograd.forward_ad
    with forward_ad.dual_level():
        inputs = [
            lib.from_numpy(a.copy())
            if t is None
            else forward_ad.make_dual(lib.from_numpy(a.copy()), lib.from_numpy(t.copy()))
            for a, t in zip(arrays, tangents)
        ]
        return forward_ad.unpack_dual(fn(lib, *inputs)).tangent.numpy(force=True)


X = np.array([0.3, 1.7, 4.2, 25.0])
Y = np.array([2.5, 0.5, 3.0, 1.5])
dX = np.array([1.0, -0.5, 2.0, 0.25])
dY = np.array([-1.5, 0.75, 0.5, 2.0])
TANGENTS = [
    ("lgamma", lambda L, x: L.lgamma(x), [X]),
    ("digamma", lambda L, x: L.digamma(x), [X]),
    ("polygamma", lambda L, x: L.polygamma(2, x), [X]),
    ("i0", lambda L, x: L.i0(x), [X]),
    ("i0e", lambda L, x: L.special.i0e(x), [X]),
    ("i1", lambda L, x: L.special.i1(x), [X]),
    ("i1e", lambda L, x: L.special.i1e(x), [X]),
    ("erfcx", lambda L, x: L.special.erfcx(x), [X]),
    ("ndtri", lambda L, x: L.special.ndtri(x / 30), [X]),
    ("log_ndtr", lambda L, x: L.special.log_ndtr(x - 3), [X]),
    ("entr", lambda L, x: L.special.entr(x), [X]),
    ("sinc", lambda L, x: L.sinc(x), [X]),
    ("sinc_at_zero", lambda L, x: L.sinc(x), [np.zeros(2)]),
    ("xlogy", lambda L, x, y: L.xlogy(x, y), [X, Y]),
    ("xlogy_at_zero", lambda L, x: L.xlogy(x, 2.0), [np.zeros(2)]),
    ("xlogy_of_number", lambda L, y: L.xlogy(2.0, y), [Y]),
    ("xlog1py", lambda L, x, y: L.special.xlog1py(x, y), [X, Y]),
    ("zeta", lambda L, q: L.special.zeta(3.0, q), [Y]),
]


@pytest.mark.parametrize("name, fn, arrays", TANGENTS, ids=[c[0] for c in TANGENTS])
def test_tangents_match_torch(torch, name, fn, arrays):
    tangents = [d[: a.size] for d, a in zip((dX, dY), arrays)]
    if name == "zeta":  # torch has no forward rule of zeta: its derivative by q, in torch
        q = torch.from_numpy(Y.copy()).requires_grad_()
        (grad,) = torch.autograd.grad(torch.special.zeta(3.0, q).sum(), q)
        want = grad.numpy() * tangents[0]
    else:
        want = _tangent(torch, fn, arrays, tangents)
    np.testing.assert_allclose(_tangent(tocha, fn, arrays, tangents), want, rtol=1e-9)


def test_tangent_of_one_operand():
    """A binary op with a tangent on one operand: the other contributes nothing."""
    got = _tangent(tocha, lambda L, x, y: L.xlogy(x, y), [X, Y], [None, dY])
    np.testing.assert_allclose(got, X / Y * dY)
    got = _tangent(tocha, lambda L, x, y: L.special.xlog1py(x, y), [X, Y], [dX, None])
    np.testing.assert_allclose(got, np.log1p(Y) * dX)


def test_zeta_first_argument_has_no_forward_rule():
    with tocha.autograd.forward_ad.dual_level():
        s = tocha.autograd.forward_ad.make_dual(_t([2.0, 3.0]).detach(), _t([1.0, 1.0]).detach())
        with pytest.raises(NotImplementedError, match="first argument"):
            SP.zeta(s, tocha.tensor([1.0, 2.0], dtype=tocha.float64))
