"""The rest of PyTorch's COO routines: products with a sparse result (``smm``, ``hspmm``,
``sspaddmm``), dense ones under their other names (``spmm``, ``dsmm``), ``sparse_mask``,
``to_sparse_coo``, the in-place size changes (``sparse_resize_``,
``sparse_resize_and_clear_``, ``resize_as_sparse_``), ``sparse.softmax`` and
``sparse.log_softmax`` over the specified entries, and ``sparse.spdiags``. Built, as the rest
of tocha.sparse, from dense ops on the values, so autograd reaches them."""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

import tocha

from .. import _dtype
from .._api import export
from .._dispatch import not_a_tensor
from .._storage import sparse_coo, sparse_csc, sparse_csr, strided
from .._tensor import Tensor, _wrap_dim
from ..library import index_arg
from . import COO, _clear_coo, _coalesce, _make, _mm, _wrap, mm, to_sparse
from ._compressed import Compressed, at_entries, layout_title_of


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
    if type(mask._data) is Compressed:
        return _compressed_mask(self, mask._data)
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


def _compressed_mask(self: Tensor, mask: Compressed) -> Tensor:
    """The elements of this tensor at the entries of the compressed `mask`, in its layout."""
    if tuple(self.shape) != mask.shape:
        raise RuntimeError(
            f"sparse_mask(): operands have incompatible sizes; self has size "
            f"{list(self.shape)} but mask has size {list(mask.shape)}"
        )
    return _wrap(mask.with_values(at_entries(self.to_dense(), mask)))


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
        _clear_coo(coo, shape, sd)
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
    _clear_coo(coo, shape, sd)
    return self


def resize_as_sparse_(self: Tensor, the_template: Tensor) -> Tensor:
    """`sparse_resize_` to the size and the sparse and dense dimension counts of
    `the_template` (a dense template has no sparse dimensions)."""
    _sparse_self(self, "resize_as_sparse_")
    return sparse_resize_(
        self, the_template.shape, the_template.sparse_dim(), the_template.dense_dim()
    )


# -- softmax over the specified entries ---------------------------------------------------------
def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """The softmax of a sparse COO tensor along `dim` over its specified entries only (the
    unspecified ones count as absent, not as zeros), as ``torch.sparse.softmax``: a coalesced
    sparse tensor with the input's indices. `dtype` casts the values first.

    Example::

        >>> i = tocha.tensor([[0, 0, 1], [0, 2, 1]])
        >>> s = tocha.sparse_coo_tensor(i, tocha.tensor([1.0, 2.0, 3.0]), (2, 3))
        >>> tocha.sparse.softmax(s, 1).to_dense()
        tensor([[0.2689, 0.0000, 0.7311],
                [0.0000, 1.0000, 0.0000]])
    """
    return _softmax(input, dim, dtype, "softmax")


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """The log of `softmax`: ``log_softmax`` of a sparse COO tensor along `dim` over its
    specified entries, as ``torch.sparse.log_softmax``."""
    return _softmax(input, dim, dtype, "log_softmax")


def _softmax(input: Tensor, dim, dtype, name: str) -> Tensor:
    if not isinstance(input, Tensor):
        raise not_a_tensor(f"_sparse_{name}", input, "input", 1)
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(
            f"_sparse_{name}(): argument 'dim' (position 2) must be int, not {type(dim).__name__}"
        )
    _dtype_arg(f"_sparse_{name}", dtype)
    coo = input._data
    if type(coo) is Compressed:
        raise NotImplementedError(coo.unsupported(f"_sparse_{name}"))
    if type(coo) is not COO:
        raise NotImplementedError(
            f"Could not run 'aten::_sparse_{name}' with arguments from the "
            f"'{input.device.type.upper()}' backend. This could be because the operator doesn't "
            "exist for this backend, or was omitted during the selective/custom build process (if "
            "using custom build)."
        )
    dim = _wrap_dim(dim, len(coo.shape))
    coo = _coalesce(coo)
    values = coo.values if dtype is None else coo.values.to(dtype)
    if values.dtype not in (tocha.float32, tocha.float64):
        raise NotImplementedError(f"\"{name}\" not implemented for '{_dtype.TITLE[values.dtype]}'")
    sd = coo.sparse_dim
    if dim >= sd:  # a dense dim: each entry's values on their own (in double, as PyTorch)
        out = getattr(tocha, name)(values.double(), dim - sd + 1)
        return _make(coo.indices, out.to(values.dtype), coo.shape, True)
    # entries alike in every sparse dim but `dim` make one softmax (per dense position)
    host = coo.indices._host()
    others = [d for d in range(sd) if d != dim]
    if others and host.shape[1]:
        key = np.ravel_multi_index(tuple(host[others]), tuple(coo.shape[d] for d in others))
    else:
        key = np.zeros(host.shape[1], np.int64)
    unique, inverse = np.unique(key, return_inverse=True)
    group = tocha.tensor(inverse.reshape(-1).astype(np.int64), device=values.device)
    wide = values.double()  # PyTorch's kernel works in double: its float32 results
    rows = (unique.size,) + tuple(values.shape[1:])
    top = np.full(rows, -np.inf)
    np.maximum.at(top, inverse.reshape(-1), wide.detach()._host())
    top[~np.isfinite(top)] = 0  # a group of -inf (or inf) gives nan, as PyTorch's
    shifted = wide - tocha.tensor(top, device=values.device).index_select(0, group)
    exp = shifted.exp()
    total = tocha.zeros(rows, dtype=wide.dtype, device=values.device).index_add(0, group, exp)
    if name == "softmax":
        out = exp * total.reciprocal().index_select(0, group)
    else:
        out = shifted - total.log().index_select(0, group)
    return _make(coo.indices, out.to(values.dtype), coo.shape, True)


def _dtype_arg(fn_name: str, dtype) -> None:
    if dtype is not None and not isinstance(dtype, tocha.dtype):
        raise TypeError(
            f"{fn_name}(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}"
        )


# -- spdiags ------------------------------------------------------------------------------------
def spdiags(diagonals: Tensor, offsets: Tensor, shape: Any, layout: Any = None) -> Tensor:
    """A sparse 2-D tensor of `shape` whose diagonal ``offsets[k]`` (0 the main one, above it
    positive) holds row k of `diagonals`, as ``torch.sparse.spdiags``: the element of column
    j on that diagonal is ``diagonals[k, j]`` (so the first ``offsets[k]`` elements of a
    positive diagonal's row go unused).

    Example::

        >>> tocha.sparse.spdiags(tocha.tensor([[1.0, 2.0, 3.0]]), tocha.tensor([1]), (2, 3))
        ...                      .to_dense()
        tensor([[0., 2., 0.],
                [0., 0., 3.]])
    """
    for position, (argument, value) in enumerate(
        (("diagonals", diagonals), ("offsets", offsets)), 1
    ):
        if not isinstance(value, Tensor):
            raise not_a_tensor("_spdiags", value, argument, position)
    if layout is not None and layout not in (sparse_coo, sparse_csr, sparse_csc):
        got = "Strided" if layout is strided else layout_title_of(layout)
        raise RuntimeError(
            f"Only output layouts (Sparse, SparseCsc, SparseCsr) are supported, got {got}"
        )
    size = tuple(index_arg("_spdiags", n, "shape") for n in shape)
    if diagonals.dim() not in (1, 2):
        raise RuntimeError("Diagonals must be vector or matrix")
    if len(size) != 2:
        raise RuntimeError("Output shape must be 2d")
    if offsets.dim() > 1:
        raise RuntimeError("Offsets must be scalar or vector")
    if offsets.dtype is not tocha.int64:
        raise RuntimeError(
            f"Offset Tensor must have dtype Long but got {_dtype.TITLE[offsets.dtype]}"
        )
    if min(size) < 0:
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(size)}: {list(size)}"
        )
    rows2d = diagonals.reshape(1, -1) if diagonals.dim() == 1 else diagonals
    offs = offsets._host().reshape(-1).astype(np.int64)
    if rows2d.shape[0] != offs.size:
        raise RuntimeError(
            f"Number of diagonals ({rows2d.shape[0]}) does not match the number of offsets "
            f"({offs.size})"
        )
    if np.unique(offs).size != offs.size:
        raise RuntimeError("Offset tensor contains duplicate values")
    n_rows, n_cols = size
    length = rows2d.shape[1]
    cols = [np.arange(max(0, o), max(max(0, o), min(n_cols, n_rows + o, length))) for o in offs]
    counts = [c.size for c in cols]
    col = np.concatenate(cols).astype(np.int64) if cols else np.zeros(0, np.int64)
    row = col - np.repeat(offs, counts)
    flat = np.repeat(np.arange(offs.size) * length, counts) + col
    dev = diagonals.device
    indices = tocha.tensor(np.stack([row, col]), dtype=tocha.int64, device=dev)
    values = rows2d.reshape(-1).index_select(0, tocha.tensor(flat, dtype=tocha.int64, device=dev))
    result = _make(indices, values, size, indices.shape[1] < 2)
    return result if layout is None or layout is sparse_coo else result.to_sparse(layout=layout)


# -- the legacy constructors -----------------------------------------------------------------
class _LegacySparseType(type):
    """The type of ``tocha.sparse.FloatTensor`` and its kin, as ``torch.sparse.FloatTensor``:
    calling one builds a sparse COO tensor (deprecated: ``sparse_coo_tensor``) from
    ``(indices, values[, size])`` (the values' dtype), or an empty one of a size (the type's
    dtype); ``isinstance(t, tocha.sparse.FloatTensor)`` tests a CPU sparse float32 tensor."""

    def __call__(cls, *args, device=None):
        if all(type(a) is int for a in args) or (len(args) == 1 and type(args[0]) is tocha.Size):
            size = tuple(args[0]) if args and type(args[0]) is tocha.Size else args
            form = "shape, *, device=" if args else ""
            _deprecated(form, "shape, " if args else "(0,), ")
            return tocha.sparse_coo_tensor(size or (0,), dtype=cls.dtype, device=device)
        if 2 <= len(args) <= 3 and all(isinstance(a, Tensor) for a in args[:2]):
            shaped = len(args) == 3
            form = "indices, values, shape, *, device=" if shaped else "indices, values, *, device="
            _deprecated(form, "indices, values, shape, " if shaped else "indices, values, ")
            return tocha.sparse_coo_tensor(*args, device=device)
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(
            f"new() received an invalid combination of arguments - got ({got}), but expected one "
            "of:\n * (*, torch.device device = None)\n * (Tensor indices, Tensor values, *, "
            "torch.device device = None)\n * (Tensor indices, Tensor values, tuple of ints size, "
            "*, torch.device device = None)\n * (tuple of ints size, *, torch.device device = "
            "None)\n"
        )

    def __instancecheck__(cls, obj) -> bool:
        return (
            isinstance(obj, Tensor)
            and type(obj._data) is COO
            and obj.dtype is cls.dtype
            and obj.device.type == "cpu"
        )

    def __repr__(cls) -> str:
        return f"<class 'tocha.sparse.{cls.__name__}'>"


def _deprecated(form: str, replacement: str) -> None:
    warnings.warn(
        f"tocha.sparse.SparseTensor({form}) is deprecated.  Please use "
        f"tocha.sparse_coo_tensor({replacement}dtype=, device=).",
        UserWarning,
        stacklevel=3,
    )


LEGACY_TYPES = {
    f"{_dtype.TITLE[d]}Tensor": _LegacySparseType(
        f"{_dtype.TITLE[d]}Tensor",
        (),
        {
            "dtype": d,
            "__module__": "tocha.sparse",
            "__doc__": f"The legacy constructor of sparse COO {d.name} tensors, as "
            f"``torch.sparse.{_dtype.TITLE[d]}Tensor``; also an ``isinstance`` test.",
        },
    )
    for d in (
        _dtype.bfloat16,
        _dtype.uint8,
        _dtype.int8,
        _dtype.float64,
        _dtype.float32,
        _dtype.float16,
        _dtype.int32,
        _dtype.int64,
        _dtype.int16,
    )
}


for _fn in (hspmm, spmm, dsmm):
    export(_fn)
export(hspmm, "hsmm")
export(sspaddmm, method=True)
export(sspaddmm, "saddmm")
export(smm, method=True)
export(resize_as_sparse_, method=True)
for _fn in (sparse_mask, to_sparse_coo, sparse_resize_, sparse_resize_and_clear_):
    export(_fn, method=True, function=False)
