"""The rest of PyTorch's COO routines: products with a sparse result (``smm``, ``hspmm``,
``sspaddmm``), dense ones under their other names (``spmm``, ``dsmm``), ``sparse_mask``,
``to_sparse_coo`` and the in-place size changes (``sparse_resize_``,
``sparse_resize_and_clear_``, ``resize_as_sparse_``). Built, as the rest of tocha.sparse,
from dense ops on the values, so autograd reaches them."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import tocha

from .._api import export
from .._dispatch import not_a_tensor
from .._tensor import Tensor
from . import COO, _make, _mm, mm, to_sparse


def _dense_backend_error(name: str, t: Tensor) -> NotImplementedError:
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the '{t.device.type.upper()}' backend."
    )


def _expect_tensors(name: str, *named: tuple[str, object]) -> None:
    """PyTorch's TypeError for the first ``(argument, value)`` whose value is not a Tensor."""
    for position, (argument, value) in enumerate(named, 1):
        if not isinstance(value, Tensor):
            raise not_a_tensor(name, value, argument, position)


def _product_rows(mat1: Tensor, mat2: Tensor, name: str) -> tuple[Tensor, Tensor]:
    """The rows of ``mat1 @ mat2`` that `mat1` has entries in (sorted), and those rows of the
    product, ``(rows, values)``."""
    coo = mat1._data
    if mat2.dim() != 2:
        raise RuntimeError(f"{name}: Argument #3: matrices expected, got {mat2.dim()}D tensor")
    if mat2.shape[0] != coo.shape[1]:
        raise RuntimeError(
            f"{name}: Argument #3: Expected dim 0 size {coo.shape[1]}, got {mat2.shape[0]}"
        )
    product = _mm(coo, mat2)
    rows = tocha.tensor(np.unique(coo.indices._host()[0]), device=product.device)
    return rows, product.index_select(0, rows)


def hspmm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """``mat1 @ mat2`` for a 2-D sparse COO `mat1` and a dense `mat2`, as a hybrid COO tensor
    (one sparse dimension: the rows `mat1` has entries in; each value a row of the product,
    shape ``(nnz_rows, m)``)."""
    _expect_tensors("hspmm", ("mat1", mat1), ("mat2", mat2))
    if type(mat1._data) is not COO:
        raise _dense_backend_error("hspmm", mat1)
    rows, values = _product_rows(mat1, mat2, "hspmm")
    return _make(rows.unsqueeze(0), values, (mat1.shape[0], mat2.shape[1]), False)


def smm(input: Tensor, mat: Tensor) -> Tensor:
    """``input @ mat`` for a 2-D sparse COO `input` and a dense `mat`, as a sparse COO tensor
    holding every column of the rows `input` has entries in."""
    _expect_tensors("smm", ("input", input), ("mat", mat))
    if type(input._data) is not COO:
        raise _sparse_only()
    if mat.dim() != 2:
        raise RuntimeError(f"sspaddmm: Argument #3: matrices expected, got {mat.dim()}D tensor")
    empty = tocha.sparse_coo_tensor(
        tocha.zeros(2, 0, dtype=tocha.int64, device=mat.device),
        tocha.zeros(0, dtype=mat.dtype, device=mat.device),
        (input.shape[0], mat.shape[1]),
    )
    return sspaddmm(empty, input, mat)


def _sparse_only() -> RuntimeError:
    return RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")


def sspaddmm(
    input: Tensor,
    mat1: Tensor,
    mat2: Tensor,
    *,
    beta: Any = 1,
    alpha: Any = 1,
    out: Tensor | None = None,
) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` for sparse COO `input` and `mat1` and a dense
    `mat2`, as a sparse COO tensor: the entries of `input` then those of the product's rows
    that `mat1` has entries in (uncoalesced)."""
    if out is not None:
        raise RuntimeError("sspaddmm: out= is not supported by tocha")
    _expect_tensors("sspaddmm", ("input", input), ("mat1", mat1), ("mat2", mat2))
    if type(input._data) is not COO or type(mat1._data) is not COO:
        raise _sparse_only()
    base = input._data
    rows, values = _product_rows(mat1, mat2, "sspaddmm")
    n, m = mat1.shape[0], mat2.shape[1]
    if tuple(base.shape) != (n, m):
        raise RuntimeError(
            f"sspaddmm: Argument #1: Expected dim 1 size {m}, got {base.shape[1]}"
            if base.shape[0] == n
            else f"sspaddmm: Argument #1: Expected dim 0 size {n}, got {base.shape[0]}"
        )
    cols = tocha.arange(m, device=values.device)
    indices = tocha.stack([rows.repeat_interleave(m), cols.repeat(rows.shape[0])])
    joined = tocha.cat([base.indices, indices], 1)
    scaled = tocha.cat([base.values * beta, values.reshape(-1) * alpha], 0)
    return _make(joined, scaled, (n, m), False)


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """``input @ mat2`` for a sparse COO `input` and a dense `mat2`: dense."""
    return mm(input, mat2)


def dsmm(input: Tensor, mat2: Tensor) -> Tensor:
    """``input @ mat2`` for a sparse COO `input` and a dense `mat2`: dense."""
    return mm(input, mat2)


def sparse_mask(self: Tensor, mask: Tensor) -> Tensor:
    """The entries of this dense tensor at the indices of the sparse COO `mask`: a sparse
    tensor with `mask`'s indices (and coalesced flag) and this tensor's values there."""
    _expect_tensors("sparse_mask", ("input", self), ("mask", mask))
    if type(mask._data) is not COO:
        raise _dense_backend_error("sparse_mask", mask)
    coo = mask._data
    if tuple(self.shape) != tuple(coo.shape):
        raise RuntimeError(
            f"sparse_mask(): operands have incompatible sizes; self has size "
            f"{list(self.shape)} but mask has size {list(coo.shape)}"
        )
    if type(self._data) is COO:
        self = self.to_dense()
    values = self[tuple(coo.indices.unbind(0))] if coo.sparse_dim else self.unsqueeze(0)
    return _make(coo.indices, values, coo.shape, coo.coalesced)


def to_sparse_coo(self: Tensor) -> Tensor:
    """This tensor as a sparse COO tensor (``to_sparse()``)."""
    return to_sparse(self)


_SHRINK_HELP = (
    "You could try the following options:\n"
    "1. If you need an empty sparse tensor of this size, call "
    "`x = tocha.sparse_coo_tensor(size)`.\n"
    "2. If you need to resize this tensor, you have the following options:\n"
    "    1. For both sparse and dense dimensions, keep the number of them constant and the size "
    "of them non-shrinking, and then try the same call again.\n"
    "    2. Or, create a new sparse tensor with the correct indices and values from this "
    "sparse tensor."
)


def _new_size(size, sparse_dim, dense_dim) -> tuple[tuple, int, int]:
    shape = tuple(operator.index(n) for n in size)
    sd, dd = operator.index(sparse_dim), operator.index(dense_dim)
    if len(shape) != sd + dd:
        raise RuntimeError(
            f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(shape)}, "
            f"sparse_dim = {sd}, dense_dim = {dd}"
        )
    return shape, sd, dd


def _clear(coo: COO, shape: tuple, sd: int) -> None:
    values = coo.values
    coo.indices = tocha.zeros(sd, 0, dtype=tocha.int64, device=values.device)
    coo.values = tocha.zeros((0,) + shape[sd:], dtype=values.dtype, device=values.device)
    coo.shape, coo.coalesced = shape, True


def _sparse_self(self: Tensor, name: str) -> COO:
    """The COO of a sparse tensor that a sparse-only in-place op changes; for a dense one,
    PyTorch's error (its dispatcher has no dense kernel for the op)."""
    if not isinstance(self, Tensor):
        raise not_a_tensor(name, self)
    if type(self._data) is not COO:
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. This could be "
            "because the operator doesn't exist for this backend."
        )
    return self._data


def sparse_resize_(self: Tensor, size: Any, sparse_dim: int, dense_dim: int) -> Tensor:
    """Give this sparse tensor `size` in place, with `sparse_dim` sparse and `dense_dim`
    dense dimensions; a tensor with entries keeps them, so its dimension counts must stay
    and its sizes may only grow."""
    coo = _sparse_self(self, "sparse_resize_")
    shape, sd, dd = _new_size(size, sparse_dim, dense_dim)
    if coo.nnz == 0:
        _clear(coo, shape, sd)
        return self
    for kind, old_n, n in (
        ("sparse", coo.sparse_dim, sd),
        ("dense", len(coo.shape) - coo.sparse_dim, dd),
    ):
        if old_n != n:
            raise RuntimeError(
                f"changing the number of {kind} dimensions (from {old_n} to {n}) on a "
                f"non-empty sparse tensor is not supported.\n{_SHRINK_HELP}"
            )
    old = tuple(coo.shape)
    if any(a < b for a, b in zip(shape[:sd], old[:sd])):
        raise RuntimeError(
            f"shrinking the size of sparse dimensions (from {list(old[:sd])} to "
            f"{list(shape[:sd])}) on a non-empty sparse tensor is not supported.\n{_SHRINK_HELP}"
        )
    if shape[sd:] != old[sd:]:
        raise RuntimeError(
            f"resizing dense dimensions (from {list(old[sd:])} to {list(shape[sd:])}) on a "
            f"non-empty sparse tensor is not supported by tocha.\n{_SHRINK_HELP}"
        )
    coo.shape = shape
    return self


def sparse_resize_and_clear_(self: Tensor, size: Any, sparse_dim: int, dense_dim: int) -> Tensor:
    """Empty this sparse tensor (no entries) and give it `size`, with `sparse_dim` sparse and
    `dense_dim` dense dimensions, in place."""
    coo = _sparse_self(self, "sparse_resize_and_clear_")
    shape, sd, _ = _new_size(size, sparse_dim, dense_dim)
    _clear(coo, shape, sd)
    return self


def resize_as_sparse_(self: Tensor, the_template: Tensor) -> Tensor:
    """`sparse_resize_` to the size and the sparse and dense dimension counts of
    `the_template` (a dense template has no sparse dimensions)."""
    _sparse_self(self, "resize_as_sparse_")
    return sparse_resize_(
        self, the_template.shape, the_template.sparse_dim(), the_template.dense_dim()
    )


for _fn in (hspmm, spmm, dsmm):
    export(_fn)
export(hspmm, "hsmm")
export(sspaddmm, method=True)
export(sspaddmm, "saddmm")
export(smm, method=True)
export(resize_as_sparse_, method=True)
for _fn in (sparse_mask, to_sparse_coo, sparse_resize_, sparse_resize_and_clear_):
    export(_fn, method=True, function=False)
