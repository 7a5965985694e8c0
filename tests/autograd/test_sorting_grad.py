"""Gradients of sort, msort, topk and kthvalue: gradcheck (reverse and forward mode) and
gradgradcheck in float64, and PyTorch's gradients and forward-mode tangents. Their values and
errors are in tests/core/test_sorting.py, which needs no tocha-autograd (its sample `G` is used
here)."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.autograd.forward import assert_tangents_match
from tests.core.helpers import assert_tensor
from tests.core.test_sorting import G
from tocha.autograd import gradcheck, gradgradcheck

# -- gradients -----------------------------------------------------------------------------
GRADS = {
    "sort": lambda lib, x: lib.sort(x, 1, descending=True).values,
    "sort_0dim": lambda lib, x: lib.sort(x.sum()).values,
    "argsort_values": lambda lib, x: x.gather(-1, x.argsort(-1)),
    "msort": lambda lib, x: lib.msort(x),
    "topk": lambda lib, x: lib.topk(x, 2, -1).values,
    "topk_smallest": lambda lib, x: x.topk(2, 0, largest=False).values,
    "kthvalue": lambda lib, x: lib.kthvalue(x, 2, 1).values,
    "kthvalue_keepdim": lambda lib, x: x.kthvalue(3, -1, keepdim=True).values,
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradcheck(name):
    x = tocha.from_numpy(G.copy()).requires_grad_()
    assert gradcheck(lambda x: GRADS[name](tocha, x), [x], check_forward_ad=True)
    assert gradgradcheck(lambda x: GRADS[name](tocha, x), [x])


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_against_torch(name, torch):
    grads = []
    for lib in (tocha, torch):
        x = lib.from_numpy(G.copy()).requires_grad_()
        out = GRADS[name](lib, x)
        weights = lib.from_numpy(np.arange(out.numel(), dtype=np.float64).reshape(out.shape))
        (out * weights).sum().backward()
        grads.append(x.grad)
    assert_tensor(grads[0], grads[1])


@pytest.mark.parametrize("name", sorted(GRADS))
def test_tangents_against_torch(name, torch):
    assert_tangents_match(torch, GRADS[name], [G.copy()])
