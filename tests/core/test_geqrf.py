"""tocha.geqrf / Tensor.geqrf against PyTorch (recorded): LAPACK's compact QR (a, tau) for
real and complex, batched, wide, tall and empty matrices; Q from householder_product; out=;
the errors; no derivative."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

RNG = np.random.default_rng(11)
CASES = {
    "tall": RNG.standard_normal((5, 3)),
    "wide": RNG.standard_normal((3, 5)),
    "batched": RNG.standard_normal((2, 4, 4)),
    "complex": RNG.standard_normal((4, 3)) + 1j * RNG.standard_normal((4, 3)),
    "empty_batch": np.zeros((2, 0, 3)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(torch, name, dtype):
    array = CASES[name]
    if np.iscomplexobj(array):
        dtype = "complex64" if dtype == "float32" else "complex128"
    ours = tocha.geqrf(tocha.tensor(array, dtype=getattr(tocha, dtype)))
    theirs = torch.geqrf(torch.tensor(array, dtype=getattr(torch, dtype)))
    tol = 1e-5 if dtype in ("float32", "complex64") else 1e-12
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)
    assert list(ours._fields) == ["a", "tau"]


def test_q_times_r_gives_back_the_input():
    x = tocha.tensor(CASES["batched"])
    a, tau = x.geqrf()
    q = tocha.linalg.householder_product(a, tau)
    assert tocha.allclose(q @ a.triu(), x)


def test_out_and_errors(torch):
    for lib in (tocha, torch):
        a, tau = lib.empty(0), lib.empty(0)
        result = lib.geqrf(lib.ones(3, 2), out=(a, tau))
        assert result[0] is a and tuple(tau.shape) == (2,)
        with pytest.raises(RuntimeError, match="input must have at least 2 dimensions"):
            lib.geqrf(lib.ones(3))
        with pytest.raises(NotImplementedError, match="geqrf_cpu. not implemented for 'Long'"):
            lib.geqrf(lib.ones(2, 2, dtype=lib.int64))
        with pytest.raises(NotImplementedError, match="derivative for 'geqrf' is not implemented"):
            lib.geqrf(lib.ones(2, 2, requires_grad=True))[0].sum().backward()
