"""Signatures the sweep found tocha reading more loosely than PyTorch, checked against it
(recorded): the CUDA-only ``out_dtype`` of mm/bmm/addmm/baddbmm (refused on the CPU; their
Tensor methods have no such parameter),
``keepdim``/``out`` given to a reduction without ``dim`` (PyTorch's overload without ``dim``
has neither), and the same calls with ``dim`` given, which both take."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.fidelity.test_fidelity_fixes import _builtin_base, _outcome


def same_outcome(torch, expression: str, values: bool = True) -> None:
    """The expression gives the same outcome in both libraries: the same exception class, or
    tensors (or tuples of them) of the same shape, dtype and (with `values`) values. It sees
    ``lib`` (torch or tocha), ``x`` (3x4 float64), ``m`` (3x3 ones) and ``full(shape, value,
    dtype_name)``."""

    def call(lib):
        env = {
            "lib": lib,
            "x": lib.arange(12, dtype=lib.float64).reshape(3, 4) / 7,
            "m": lib.ones(3, 3, dtype=lib.float64),
            "full": lambda shape, value, dtype: lib.full(shape, value, dtype=getattr(lib, dtype)),
        }
        return eval(expression, env)

    want, got = _outcome(lambda: call(torch)), _outcome(lambda: call(tocha))
    if isinstance(want, Exception):
        assert isinstance(got, Exception), f"tocha returned {got!r} where PyTorch raised {want!r}"
        assert _builtin_base(got) == _builtin_base(want), (got, want)
        return
    assert not isinstance(got, Exception), f"tocha raised {got!r}"
    pairs = zip(want, got, strict=True) if isinstance(want, tuple) else [(want, got)]
    for w, g in pairs:
        assert tuple(g.shape) == tuple(w.shape)
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        if values:
            rtol = 1e-12 if str(w.dtype).endswith(("float64", "complex128")) else 1e-5
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=rtol)


OUT_DTYPE = [
    "lib.mm(m, m, lib.float32)",
    "lib.mm(m.half(), m.half(), lib.float32)",
    "lib.mm(m, m, lib.float16, out=lib.empty(0))",
    "lib.mm(m, m, 'float32')",
    "lib.bmm(m[None], m[None], lib.float64)",
    "lib.addmm(m, m, m, lib.float32, alpha=0.5)",
    "lib.baddbmm(m[None], m[None], m[None], lib.bfloat16)",
    "lib.mm(m, 2, lib.float32)",
    "lib.addmm(m, m, m, beta=2)",
    "m.mm(m, lib.float32)",
    "m.addmm(m, m, lib.float32)",
    "m[None].bmm(m[None], lib.float16)",
    "m[None].baddbmm(m[None], m[None], lib.float64)",
    "m.mm(m, out_dtype=lib.float32)",
    "m.addmm(m, m, beta=0.5, alpha=2)",
]

NO_DIM = [
    "x.sum(keepdim=True)",
    "x.sum(keepdim=False)",
    "lib.sum(x, keepdim=False, dtype=lib.float32)",
    "lib.sum(x, out=lib.empty(0, dtype=lib.float64))",
    "x.sum(None, keepdim=True)",
    "lib.sum(x, dim=None, keepdim=True)",
    "lib.sum(x, None, out=lib.empty(0, dtype=lib.float64))",
    "x.sum()",
    "x.mean(keepdim=True)",
    "x.mean(None, True)",
    "lib.mean(x, out=lib.empty(0, dtype=lib.float64))",
    "x.prod(keepdim=True)",
    "lib.prod(x, out=lib.empty(0, dtype=lib.float64))",
    "x.prod(1, keepdim=True)",
    "lib.std(x, unbiased=False, keepdim=True)",
    "lib.std(x, True, keepdim=True)",
    "lib.var(x, unbiased=True, out=lib.empty(0, dtype=lib.float64))",
    "lib.std(x, keepdim=True)",
    "lib.std(x, dim=None, unbiased=False, keepdim=True)",
    "lib.var(x, None, False, True)",
    "lib.var(x, False)",
    "lib.std_mean(x, unbiased=False, keepdim=False)",
    "lib.var_mean(x, correction=0, keepdim=True)",
    "lib.median(x, out=lib.empty(0, dtype=lib.float64))",
    "lib.nanmedian(x, out=lib.empty(0, dtype=lib.float64))",
]


@pytest.mark.parametrize("expression", OUT_DTYPE)
def test_out_dtype_of_the_matrix_products(torch, expression):
    same_outcome(torch, expression)


@pytest.mark.parametrize("expression", NO_DIM)
def test_reductions_without_dim(torch, expression):
    same_outcome(torch, expression)


def test_out_dtype_names_the_cuda_only_overload():
    m = tocha.ones(2, 2)
    with pytest.raises(NotImplementedError, match=r"'aten::mm\.dtype' with arguments from"):
        tocha.mm(m, m, tocha.float32)
    with pytest.raises(NotImplementedError, match=r"'aten::addmm\.dtype_out'"):
        tocha.addmm(m, m, m, tocha.float32, out=tocha.empty(0))
