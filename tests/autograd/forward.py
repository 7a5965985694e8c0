"""Forward-mode tangents of an op call in tocha or PyTorch, for the tests that compare the two
(tocha's `gradcheck(..., check_forward_ad=True)` checks them against finite differences)."""

from __future__ import annotations

import importlib
import warnings

import numpy as np

import tocha


def _load_torch_forward_ad() -> None:
    """PyTorch builds its forward-mode decompositions on the first make_dual of a process,
    warning (TorchScript is deprecated) as it does: built here, outside any test, the warnings
    land in no test's recorded answers, whichever test runs first. Without PyTorch (or in a
    replay run, which hides it), nothing to do."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            importlib.import_module("torch._decomp.decompositions_for_jvp")
        except ImportError:
            pass


_load_torch_forward_ad()


def _random_like(rng, a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "c":
        return (rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)).astype(a.dtype)
    return rng.standard_normal(a.shape).astype(a.dtype)


def tangents(lib, fn, arrays, seed: int = 0) -> list:
    """The tangents of the floating-point and complex outputs of ``fn(lib, *duals)``, as NumPy
    arrays (None for an output without one): each dual holds one of `arrays` (its strides
    kept) and a fixed random tangent."""
    rng = np.random.default_rng(seed + 2)
    forward_ad = lib.autograd.forward_ad
    with forward_ad.dual_level():
        duals = [
            forward_ad.make_dual(
                lib.from_numpy(a.copy(order="K")), lib.from_numpy(_random_like(rng, a))
            )
            for a in arrays
        ]
        result = fn(lib, *duals)
        outputs = [result] if not isinstance(result, (tuple, list)) else list(result)
        found = [
            forward_ad.unpack_dual(o).tangent
            for o in outputs
            if o.is_floating_point() or o.is_complex()
        ]
        return [None if t is None else t.numpy(force=True) for t in found]


def assert_tangents_match(torch, fn, arrays, seed: int = 0, rtol=1e-9, atol=1e-12) -> None:
    """tocha's forward-mode tangents of ``fn(lib, *arrays)`` equal PyTorch's."""
    want = tangents(torch, fn, arrays, seed)
    got = tangents(tocha, fn, arrays, seed)
    assert len(got) == len(want), f"{len(got)} outputs with tangents, torch {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert (g is None) == (w is None), f"tangent of output {i}: tocha {g}, torch {w}"
        if w is not None:
            assert g.shape == w.shape, f"tangent of output {i}: shape {g.shape}, torch {w.shape}"
            assert g.dtype == w.dtype, f"tangent of output {i}: dtype {g.dtype}, torch {w.dtype}"
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"tangent of output {i}")
