"""Comparison helpers shared by the tocha-core tests."""

from __future__ import annotations

import numpy as np

import tocha


def assert_tensor(actual, expected, *, dtype=None, rtol=None, atol=None, check_dtype=True):
    """Check a tocha tensor against an expected NumPy array (or torch tensor): shape, values,
    and dtype (the expected array's, or `dtype` when given)."""
    assert isinstance(actual, tocha.Tensor), type(actual)
    if hasattr(expected, "detach"):  # a torch tensor
        expected_dtype = str(expected.dtype).replace("torch.", "")
        expected = (
            expected.detach().cpu().numpy()
            if expected_dtype != "bfloat16"
            else expected.detach().float().numpy()
        )
    else:
        expected = np.asarray(expected)
        expected_dtype = expected.dtype.name
    if check_dtype:
        want = dtype.name if dtype is not None else expected_dtype
        assert actual.dtype.name == want, f"dtype {actual.dtype} != {want}"
    assert tuple(actual.shape) == tuple(expected.shape), (
        f"shape {tuple(actual.shape)} != {expected.shape}"
    )
    got = actual.numpy(force=True)
    name = got.dtype.name
    if name == "bfloat16":
        got = got.astype(np.float32)
    if got.dtype.kind in "fc" or expected.dtype.kind in "fc":
        tol = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 1e-5, "complex64": 1e-5}
        r = rtol if rtol is not None else tol.get(name, 1e-7)
        np.testing.assert_allclose(
            got, expected, rtol=r, atol=atol if atol is not None else r, equal_nan=True
        )
    else:
        np.testing.assert_array_equal(got, expected)
