"""tocha.tensor / as_tensor of nested data mixing Python numbers with NumPy scalars, arrays or
tensors: PyTorch's dtype, the promotion of each leaf's own dtype (a Python float's is the
default float dtype), not NumPy's (which widens ``[np.float32(1.5), 2.0]`` to float64)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha

CASES = {
    "float32_and_float": lambda lib: [np.float32(1.5), 2.0],
    "float_and_float64": lambda lib: [1.0, np.float64(2.5)],
    "int32_and_int": lambda lib: [np.int32(1), 2],
    "int64_and_float": lambda lib: [np.int64(1), 1.5],
    "bool_and_int8": lambda lib: [True, np.int8(3)],
    "float16_and_int16": lambda lib: [np.float16(1), np.int16(2)],
    "complex_and_float32": lambda lib: [1j, np.float32(2)],
    "nested": lambda lib: [[np.float32(1)], [2.0]],
    "array_and_list": lambda lib: [np.array([1.0], dtype=np.float32), [2.0]],
    "half_tensor_and_float": lambda lib: [lib.tensor(1.0, dtype=lib.float16), 1.0],
    "int32_tensor_row": lambda lib: [[1, 2], lib.tensor([3, 4], dtype=lib.int32)],
    "python_only": lambda lib: [[1.0, 2], [3, 4]],
}


@pytest.mark.parametrize("make", ["tensor", "as_tensor"])
@pytest.mark.parametrize("name", list(CASES))
def test_dtype_and_values_match_torch(torch, name, make):
    results = []
    for lib in (tocha, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            t = getattr(lib, make)(CASES[name](lib))
        results.append((str(t.dtype).split(".")[-1], t.numpy()))
    (our_dtype, ours), (their_dtype, theirs) = results
    assert our_dtype == their_dtype
    np.testing.assert_array_equal(ours, theirs)
