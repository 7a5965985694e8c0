"""Normalization in reduced precision: bfloat16/float16 inputs are normalized in float32 and
come back in their own dtype (with float32 statistics and affine parameters too, as PyTorch's
CPU kernels allow); any other mix of dtypes raises PyTorch's error. Against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.nn.functional as F

DTYPES = ["float32", "float64", "bfloat16", "float16"]


def _batch_norm(lib, x_dtype, p_dtype, training, only_weight=False):
    x = lib.tensor(np.linspace(-2.0, 3.0, 24).reshape(2, 3, 4)).to(getattr(lib, x_dtype))
    xd, pd = getattr(lib, x_dtype), getattr(lib, p_dtype)
    stats = xd if only_weight else pd
    mean = lib.tensor([0.1, -0.2, 0.3], dtype=stats)
    var = lib.tensor([1.5, 0.5, 2.0], dtype=stats)
    weight = lib.tensor([1.0, 2.0, -1.0], dtype=pd)
    bias = None if only_weight else lib.tensor([0.5, 0.0, -0.5], dtype=pd)
    return lib.nn.functional.batch_norm(x, mean, var, weight, bias, training=training)


def _outcome(*args):
    try:
        y = _batch_norm(*args)
    except RuntimeError as exc:
        return ("error", str(exc))
    return (str(y.dtype).split(".")[-1], y.float().detach().numpy())


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("p_dtype", DTYPES)
@pytest.mark.parametrize("x_dtype", DTYPES)
def test_batch_norm_dtypes_match_torch(torch, x_dtype, p_dtype, training):
    for only_weight in (False, True):
        got = _outcome(tocha, x_dtype, p_dtype, training, only_weight)
        want = _outcome(torch, x_dtype, p_dtype, training, only_weight)
        assert got[0] == want[0]
        if got[0] == "error":
            assert got[1] == want[1]
        else:
            tol = 1e-2 if x_dtype in ("bfloat16", "float16") else 1e-5
            np.testing.assert_allclose(got[1], want[1], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_reduced_precision_norms_keep_their_dtype(torch, dtype):
    def run(lib):
        d = getattr(lib, dtype)
        x = lib.tensor(np.linspace(-2.0, 3.0, 48).reshape(2, 4, 6)).to(d).requires_grad_()
        w = lib.tensor(np.linspace(0.5, 1.5, 6)).to(d).requires_grad_()
        outs = [
            lib.nn.functional.layer_norm(x, (6,), w, None),
            lib.nn.functional.batch_norm(x, None, None, training=True),
            lib.nn.functional.instance_norm(x),
            lib.nn.functional.group_norm(x, 2),
        ]
        g = lib.sin(lib.arange(48.0) * 1.7).reshape(2, 4, 6)
        total = sum((o.float() * g).sum() for o in outs)
        total.backward()
        return [str(o.dtype) for o in outs] + [str(x.grad.dtype), str(w.grad.dtype)], [
            o.float().detach().numpy() for o in outs
        ] + [x.grad.float().numpy(), w.grad.float().numpy()]

    got_dtypes, got = run(tocha)
    want_dtypes, want = run(torch)
    assert [d.split(".")[-1] for d in got_dtypes] == [d.split(".")[-1] for d in want_dtypes]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=3e-2, atol=3e-2 * max(1.0, np.abs(w).max()))


def test_layer_norm_in_bfloat16_is_float32_math_rounded():
    x = tocha.randn(4, 32).to(tocha.bfloat16)
    want = F.layer_norm(x.float(), (32,)).to(tocha.bfloat16)
    assert tocha.equal(F.layer_norm(x, (32,)), want)
