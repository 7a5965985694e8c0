"""Linear algebra the sweep found tocha answering otherwise than PyTorch, checked against it
(recorded): the legacy cholesky of an input with no elements (returned as it is), the LU
functions' kernel refusals (integer inputs; none on no elements), matrix_rank with tensor
tolerances (broadcast with the batch) and its low-precision refusals."""

from __future__ import annotations

import pytest

from tests.fidelity.test_sweep_fixes_signatures import same_outcome

CALLS = [
    "lib.cholesky(full((0, 3), 0, 'float32'))",
    "lib.cholesky(full((0,), 0, 'int64'))",
    "full((2, 0, 0), 0, 'bool').cholesky()",
    "lib.cholesky(full((0, 3), 0, 'float32'), upper=True)",
    "lib.linalg.lu_factor(full((3, 4), 1, 'int32'))",
    "lib.linalg.lu_factor(full((0, 3), 1, 'int64'))",
    "lib.linalg.lu_factor_ex(full((3, 3), 1, 'int64'))",
    "lib.linalg.lu(full((0, 3), 1, 'float16'))",
    "lib.linalg.lu(full((2, 2), 1, 'bfloat16'))",
    "lib.linalg.matrix_rank(x, full((3, 4), 0.5, 'float64'))",
    "lib.linalg.matrix_rank(x, full((4,), 0.1, 'float64'))",
    "lib.linalg.matrix_rank(x[None].expand(2, 3, 4), atol=full((2,), 0.5, 'float64'))",
    "lib.linalg.matrix_rank(x, rtol=full((), 0.9, 'float64'))",
    "lib.linalg.matrix_rank(x, 0.5)",
    "lib.linalg.matrix_rank(full((3, 4), 1, 'float16'), full((3, 4), 1, 'float16'))",
    "lib.linalg.matrix_rank(full((3, 4), 1, 'bfloat16'))",
]


@pytest.mark.parametrize("expression", CALLS)
def test_linalg(torch, expression):
    same_outcome(torch, expression)
