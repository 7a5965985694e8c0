"""The compressed sparse layouts, as PyTorch's: CSR, CSC, BSR and BSC.

A compressed tensor's array is a `Compressed`: `compressed` indices ``(*batch, n + 1)`` (the
running count of entries per row, or per column, or per block row or column), `plain`
indices ``(*batch, nnz)`` (each entry's column, or row, or block column or row), and
`values` ``(*batch, nnz, *block, *dense)``. The row layouts (CSR, BSR) compress the rows,
the column layouts (CSC, BSC) the columns; the block layouts' entries are blocks.

Every conversion goes through one form of the entries: host arrays of each entry's flattened
batch index, compressed index and plain index, with the values flattened to ``(entries,
*block, *dense)`` (`entries`), and back (`assemble`, which orders them). The values move
only through tocha ops (reshape, indexing, `index_put`), so gradients reach them.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

import tocha

from .. import _dtype
from .._api import export
from .._dispatch import OtherLayout, not_a_tensor
from .._printing import _add_suffixes, _autograd_suffixes
from .._storage import sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided
from .._tensor import Tensor
from . import COO, SparseArray, _coalesce, _inner_repr, _wrap, layout_title
from ._invariants import STATE

ROW_LAYOUTS = (sparse_csr, sparse_bsr)
BLOCK_LAYOUTS = (sparse_bsr, sparse_bsc)
LAYOUTS = (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)
TITLES = {
    sparse_csr: "SparseCsr",
    sparse_csc: "SparseCsc",
    sparse_bsr: "SparseBsr",
    sparse_bsc: "SparseBsc",
}
# the names of the compressed and plain indices, per layout
NAMES = {layout: ("crow_indices", "col_indices") for layout in ROW_LAYOUTS}
NAMES.update({layout: ("ccol_indices", "row_indices") for layout in (sparse_csc, sparse_bsc)})
_INDEX_DTYPES = (_dtype.int32, _dtype.int64)


class _NoMemory(OtherLayout):
    """What a compressed array answers when asked for its strides or contiguity: an op's
    kernel that asks runs the layout's kernel instead (`OtherLayout`); a caller outside the
    dispatcher (``stride()``, ``is_contiguous()``) gets PyTorch's message (a RuntimeError,
    as OtherLayout's NotImplementedError is)."""

    def __init__(self, array, what: str):
        Exception.__init__(self, f"Sparse CSR tensors do not have {what}")
        self.array = array


class Compressed(SparseArray):
    """The backend array of a compressed sparse tensor (see the module). Its kernels are
    ``Compressed.kernels`` (tocha/sparse/_compressed_kernels.py)."""

    __slots__ = ("compressed", "plain", "values", "shape", "layout")
    backend = "SparseCsr"
    impl = "SparseCsrTensorImpl"
    kernels: dict = {}
    sparse_dim = 2

    def __init__(self, compressed: Tensor, plain: Tensor, values: Tensor, shape, layout):
        self.compressed, self.plain, self.values = compressed, plain, values
        self.shape, self.layout = tuple(shape), layout

    @property
    def title(self) -> str:
        return TITLES[self.layout]

    def __getattr__(self, name: str):
        if name == "strides" or name == "flags":
            raise _NoMemory(self, "strides" if name == "strides" else "is_contiguous")
        raise OtherLayout(self, name)

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def batch_dim(self) -> int:
        return self.compressed._data.ndim - 1

    @property
    def nnz(self) -> int:
        return self.plain._data.shape[-1]

    @property
    def blocksize(self) -> tuple:
        """The block's (rows, columns): (1, 1) for CSR and CSC."""
        if self.layout not in BLOCK_LAYOUTS:
            return (1, 1)
        b = self.batch_dim
        return tuple(self.values._data.shape[b + 1 : b + 3])

    @property
    def dense_dim(self) -> int:
        return len(self.shape) - self.batch_dim - 2

    def check_strided(self, what: str) -> None:
        raise RuntimeError(f"Sparse CSR tensors do not have {what}")

    def with_values(self, values: Tensor) -> Compressed:
        compressed, plain = self.compressed, self.plain
        if compressed.device is not values.device:
            compressed, plain = compressed.to(values.device), plain.to(values.device)
        return Compressed(compressed, plain, values, self.shape, self.layout)

    def record(self) -> tuple:
        return self.layout, (self.compressed, self.plain, self.values, self.shape)

    def clear(self) -> None:
        """Remove every entry (`zero_`)."""
        b = self.batch_dim
        values, index = self.values, self.plain
        self.compressed = tocha.zeros_like(self.compressed)
        self.plain = tocha.zeros(self.shape[:b] + (0,), dtype=index.dtype, device=index.device)
        rest = tuple(values.shape[b + 1 :])
        self.values = tocha.zeros(
            self.shape[:b] + (0,) + rest, dtype=values.dtype, device=values.device
        )

    def __setitem__(self, key, value) -> None:
        """``self[...] = value``: an in-place op's result (of this layout) written in."""
        if (
            key is not Ellipsis
            or not isinstance(value, Compressed)
            or value.layout is not self.layout
        ):
            raise RuntimeError(
                "copy_() between dense and sparse Tensors is not implemented! Found self type = "
                f"torch.{self.layout.name} tensor and src type = another layout"
            )
        values = self.values
        if values.requires_grad and values.is_leaf and tocha.is_grad_enabled():
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        self.compressed, self.plain, self.shape = value.compressed, value.plain, value.shape
        self.values = value.values.to(values.dtype)

    def dense(self, dtype=None) -> Tensor:
        """This tensor as a dense one (`to_dense`)."""
        if dtype is not None:
            raise RuntimeError(
                f"dtype argument is not supported by sparse_{self.layout.name[7:]}_to_dense"
            )
        return to_dense(self)

    def repr_tensor(self, t: Tensor) -> str:
        """PyTorch's repr: the indices and values (without their dtypes), then size, nnz,
        the dtype unless a default one, the layout and the autograd state, wrapped."""
        cname, pname = NAMES[self.layout]
        pad = " " * len("tensor(")
        text = (
            f"tensor({cname}={_inner_repr(self.compressed, len(pad + cname) + 1)},\n"
            f"{pad}{pname}={_inner_repr(self.plain, len(pad + pname) + 1)},\n"
            f"{pad}values={_inner_repr(self.values.detach(), len(pad) + len('values='))}"
        )
        suffixes = []
        if t.device.type != "cpu":
            suffixes.append(f"device='{t.device}'")
        size = ", ".join(map(str, self.shape)) + ("," if len(self.shape) == 1 else "")
        suffixes += [f"size=({size})", f"nnz={self.nnz}"]
        d = self.values.dtype
        if d is not tocha.get_default_dtype() and d is not tocha.int64 and d is not tocha.bool:
            suffixes.append(f"dtype={d}")
        suffixes.append(f"layout={self.layout}")
        return _add_suffixes(text, suffixes + _autograd_suffixes(t), len(pad))


def make_compressed(compressed, plain, values, shape, layout) -> Tensor:
    """A compressed sparse tensor of these parts (unchecked)."""
    return _wrap(Compressed(compressed, plain, values, shape, layout))


def is_compressed(t) -> bool:
    return type(getattr(t, "_data", None)) is Compressed


# -- the entries form ---------------------------------------------------------------------------
def entries(a: Compressed) -> tuple[np.ndarray, np.ndarray, np.ndarray, Tensor]:
    """``(batch, compressed, plain, values)``: each entry's flattened batch index, compressed
    and plain index (host arrays, in storage order) and the values flattened to ``(entries,
    *block, *dense)``."""
    b = a.batch_dim
    comp = a.compressed._host().astype(np.int64)
    n = comp.shape[-1] - 1
    comp = comp.reshape(-1, n + 1)
    batches, nnz = comp.shape[0], a.nnz
    counts = np.diff(comp, axis=1).reshape(-1)
    major = np.repeat(np.tile(np.arange(n, dtype=np.int64), batches), counts)
    batch = np.repeat(np.arange(batches, dtype=np.int64), nnz)
    plain = a.plain._host().astype(np.int64).reshape(-1)
    values = a.values.reshape((batches * nnz,) + tuple(a.values.shape[b + 1 :]))
    return batch, major, plain, values


def assemble(layout, shape, batch, major, plain, values: Tensor, index_dtype) -> Compressed:
    """The compressed array of `layout` and `shape` holding these entries (any order; as
    `entries` gives them), ordered by batch, compressed and plain index."""
    b = len(shape) - 2 - (values.dim() - 1 - (2 if layout in BLOCK_LAYOUTS else 0))
    batch_shape = tuple(shape[:b])
    batches = math.prod(batch_shape)
    n = _compressed_count(layout, shape, b, values)
    per_batch = np.bincount(batch, minlength=batches)
    if batches and (per_batch != per_batch[0]).any():
        raise RuntimeError("Expect the same number of specified elements per batch.")
    nnz = int(per_batch[0]) if batches else 0
    order = np.lexsort((plain, major, batch))
    counts = np.bincount(batch * n + major, minlength=batches * n).reshape(batches, n)
    comp = np.concatenate([np.zeros((batches, 1), np.int64), np.cumsum(counts, axis=1)], axis=1)
    dev = values.device
    compressed = tocha.tensor(comp.reshape(batch_shape + (n + 1,)), device=dev).to(index_dtype)
    plain_t = tocha.tensor(plain[order].reshape(batch_shape + (nnz,)), device=dev)
    if (order != np.arange(order.size)).any():
        values = values.index_select(0, tocha.tensor(order, device=dev))
    values = values.reshape(batch_shape + (nnz,) + tuple(values.shape[1:]))
    return Compressed(compressed, plain_t.to(index_dtype), values, shape, layout)


def _compressed_count(layout, shape, b: int, values: Tensor) -> int:
    """How many rows (row layouts) or columns, or blocks of them, the layout compresses."""
    size = shape[b] if layout in ROW_LAYOUTS else shape[b + 1]
    if layout in BLOCK_LAYOUTS:
        size //= values.shape[1 if layout in ROW_LAYOUTS else 2]
    return size


def _blocked(x: Tensor, layout, blocksize, b: int) -> Tensor:
    """Dense `x` ``(*batch, M, N, *dense)`` as ``(*batch, C, P, bh, bw, *dense)``: its blocks
    by compressed then plain block index."""
    bh, bw = blocksize
    shape = tuple(x.shape)
    m, n = shape[b], shape[b + 1]
    split = x.reshape(shape[:b] + (m // bh, bh, n // bw, bw) + shape[b + 2 :])
    batch = list(range(b))
    dense = list(range(b + 4, len(shape) + 2))
    if layout in ROW_LAYOUTS:
        return split.permute(*batch, b, b + 2, b + 1, b + 3, *dense)
    return split.permute(*batch, b + 2, b, b + 1, b + 3, *dense)


def to_dense(a: Compressed) -> Tensor:
    """The dense tensor of a compressed array (gradients reach its values)."""
    b = a.batch_dim
    bh, bw = a.blocksize
    batch, major, plain, values = entries(a)
    shape = a.shape
    m, n = shape[b] // bh, shape[b + 1] // bw
    dense_shape = tuple(shape[b + 2 :])
    grid = (m, n) if a.layout in ROW_LAYOUTS else (n, m)
    batches = math.prod(shape[:b])
    blocks = tocha.zeros(
        (batches,) + grid + (bh, bw) + dense_shape, dtype=a.values.dtype, device=values.device
    )
    if batch.size:
        values = values.reshape((batch.size, bh, bw) + dense_shape)
        at = tuple(tocha.tensor(i, device=values.device) for i in (batch, major, plain))
        blocks = blocks.index_put(at, values, accumulate=True)
    dense = list(range(5, 5 + len(dense_shape)))
    if a.layout in ROW_LAYOUTS:
        blocks = blocks.permute(0, 1, 3, 2, 4, *dense)
    else:
        blocks = blocks.permute(0, 2, 3, 1, 4, *dense)
    return blocks.reshape(shape)


def from_dense(x: Tensor, layout, blocksize, dense_dim) -> Tensor:
    """Dense `x` as a compressed tensor of `layout`: the entries (blocks) not all zero."""
    kind = layout.name[7:]
    n = x.dim()
    dd = 0 if dense_dim is None else operator.index(dense_dim)
    if n < 2:
        raise RuntimeError(
            f"dense_to_sparse_{kind}: expected a tensor of at least 2 dimensions (rows and "
            f"columns), but got a {n}-D tensor"
        )
    if not 0 <= dd <= n - 2:
        raise RuntimeError(
            f"dense_to_sparse_{kind}: dense_dim argument must be in [0,{max(n - 2, 0)}] range, "
            f"but {dd} is given"
        )
    b = n - 2 - dd
    shape = tuple(x.shape)
    bh, bw = blocksize if layout in BLOCK_LAYOUTS else (1, 1)
    if shape[b] % bh or shape[b + 1] % bw:
        raise RuntimeError(
            f"dense_to_sparse_{kind}: tensor sparse size ({shape[b]},{shape[b + 1]}) must be "
            f"divisible by given blocksize ({bh},{bw})"
        )
    blocks = _blocked(x, layout, (bh, bw), b)
    grid = tuple(blocks.shape[b : b + 2])
    batches = math.prod(shape[:b])
    flat = blocks.reshape((batches,) + grid + (bh, bw) + shape[b + 2 :])
    host = flat.detach()._host()
    mask = (host != 0).reshape((batches,) + grid + (-1,)).any(-1)
    batch, major, plain = (np.asarray(i, np.int64) for i in np.nonzero(mask))
    at = tuple(tocha.tensor(i, device=x.device) for i in (batch, major, plain))
    values = flat[at]
    if layout not in BLOCK_LAYOUTS:
        values = values.reshape((batch.size,) + shape[b + 2 :])
    return _wrap(assemble(layout, shape, batch, major, plain, values, tocha.int64))


def to_coo(a: Compressed) -> COO:
    """The COO array of the same entries (a block's elements each an entry, in the block's
    row-major order), sparse over the batch and the two compressed dims; coalesced when
    its entries are in row-major order (CSR, and BSR of 1x1 blocks)."""
    b = a.batch_dim
    bh, bw = a.blocksize
    batch, major, plain, values = entries(a)
    rows, cols = (major, plain) if a.layout in ROW_LAYOUTS else (plain, major)
    within_r, within_c = np.divmod(np.arange(bh * bw, dtype=np.int64), bw)
    rows = (rows[:, None] * bh + within_r).reshape(-1)
    cols = (cols[:, None] * bw + within_c).reshape(-1)
    batch = np.repeat(batch, bh * bw)
    lead = np.unravel_index(batch, a.shape[:b]) if b else ()
    host = np.stack([*lead, rows, cols]).astype(np.int64).reshape(b + 2, -1)
    indices = tocha.tensor(host, device=values.device)
    values = values.reshape((rows.size,) + tuple(a.shape[b + 2 :]))
    sorted_ = a.layout is sparse_csr or (a.layout is sparse_bsr and (bh, bw) == (1, 1))
    return COO(indices, values, a.shape, sorted_ or rows.size < 2)


def from_coo(coo: COO, layout, blocksize) -> Tensor:
    """A 2-D COO array (sparse over both dims) as a compressed tensor of `layout`: its entries
    summed per position, and for the block layouts gathered into the blocks that hold them."""
    kind = layout.name[7:]
    if coo.sparse_dim != 2:
        raise RuntimeError(
            f"coo_to_sparse_{kind}: conversion from Sparse to {TITLES[layout]} for input tensors "
            "with sparse_dim()!=2 is not supported"
        )
    coo = _coalesce(coo)
    shape = coo.shape
    bh, bw = blocksize if layout in BLOCK_LAYOUTS else (1, 1)
    if shape[0] % bh or shape[1] % bw:
        raise RuntimeError(
            f"coo_to_sparse_{kind}: tensor sparse size ({shape[0]},{shape[1]}) must be "
            f"divisible by given blocksize ({bh},{bw})"
        )
    rows, cols = coo.indices._host().astype(np.int64)
    values = coo.values
    dense = tuple(shape[2:])
    if (bh, bw) != (1, 1):
        key = (rows // bh) * (shape[1] // bw) + cols // bw
        unique, inverse = np.unique(key, return_inverse=True)
        blocks = tocha.zeros(
            (unique.size, bh, bw) + dense, dtype=values.dtype, device=values.device
        )
        at = tuple(
            tocha.tensor(i.reshape(-1), device=values.device)
            for i in (inverse, rows % bh, cols % bw)
        )
        values = blocks.index_put(at, values, accumulate=True)
        rows, cols = unique // (shape[1] // bw), unique % (shape[1] // bw)
    elif layout in BLOCK_LAYOUTS:
        values = values.reshape((values.shape[0], 1, 1) + dense)
    major, plain = (rows, cols) if layout in ROW_LAYOUTS else (cols, rows)
    batch = np.zeros(major.size, np.int64)
    return _wrap(assemble(layout, shape, batch, major, plain, values, tocha.int64))


def at_entries(dense: Tensor, a: Compressed) -> Tensor:
    """The elements (blocks) of `dense`, of the compressed tensor's size, at its entries,
    shaped as its values."""
    b = a.batch_dim
    batch, major, plain, _ = entries(a)
    bh, bw = a.blocksize
    shape = a.shape
    batches = int(np.prod(shape[:b], dtype=np.int64))
    flat = dense.reshape((batches,) + tuple(shape[b:]))
    rows, cols = (major, plain) if a.layout in ROW_LAYOUTS else (plain, major)
    within_r, within_c = np.divmod(np.arange(bh * bw, dtype=np.int64), bw)
    at = (
        np.repeat(batch, bh * bw),
        (rows[:, None] * bh + within_r).reshape(-1),
        (cols[:, None] * bw + within_c).reshape(-1),
    )
    picked = flat[tuple(tocha.tensor(i, device=dense.device) for i in at)]
    return picked.reshape(tuple(a.values.shape))


def sampled_addmm(
    input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1.0, alpha=1.0, out: Tensor | None = None
) -> Tensor:
    """``alpha * (mat1 @ mat2)`` at the entries of the CSR `input`, plus ``beta * input``, as
    ``torch.sparse.sampled_addmm``: a CSR tensor of `input`'s pattern (batches included)."""
    for position, (argument, value) in enumerate(
        (("input", input), ("mat1", mat1), ("mat2", mat2)), 1
    ):
        if not isinstance(value, Tensor):
            raise not_a_tensor("sparse_sampled_addmm", value, argument, position)
    a = input._data
    if type(a) is not Compressed:
        raise NotImplementedError(
            "Could not run 'aten::sparse_sampled_addmm' with arguments from the "
            f"'{input.device.type.upper()}' backend. This could be because the operator doesn't "
            "exist for this backend."
        )
    if a.layout is not sparse_csr:
        if a.layout in BLOCK_LAYOUTS:
            raise RuntimeError(
                "empty_sparse_compressed expected sparse compressed (non-block) tensor layout but "
                f"got {a.title}"
            )
        raise RuntimeError(
            f"sampled_addmm: Expected result to have sparse csr layout, but got {a.title}"
        )
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.dim() < 2:
            raise RuntimeError(
                f"sampled_addmm: Expected {name} to be a matrix, got {m.dim()}-D tensor"
            )
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(
            "sampled_addmm: Expected mat1 and mat2 to have the same dtype, but got "
            f"{_dtype.TITLE[mat1.dtype]} and {_dtype.TITLE[mat2.dtype]}"
        )
    if a.shape[-2] != mat1.shape[-2]:
        raise RuntimeError("sampled_addmm: self.shape[-2] must match mat1.shape[-2]")
    if a.shape[-1] != mat2.shape[-1]:
        raise RuntimeError("sampled_addmm: self.shape[-1] must match mat2.shape[-1]")
    if mat1.shape[-1] != mat2.shape[-2]:
        raise RuntimeError(
            f"sampled_addmm: mat1 and mat2 shapes cannot be multiplied ({mat1.shape[-2]}x"
            f"{mat1.shape[-1]} and {mat2.shape[-2]}x{mat2.shape[-1]})"
        )
    if a.dense_dim:
        raise RuntimeError(
            "sampled_addmm: tocha samples products of CSR tensors without dense dims"
        )
    product = at_entries(mat1 @ mat2, a)
    values = product if alpha == 1 else product * alpha
    if beta != 0:
        values = values + (a.values if beta == 1 else a.values * beta)
    result = _wrap(a.with_values(values))
    if out is not None:
        out.copy_(result)
        return out
    return result


def transposed(a: Compressed) -> Compressed:
    """The transpose of the two sparse dims: the same indices read in the other layout (CSR
    and CSC, BSR and BSC swap), each block transposed."""
    b = a.batch_dim
    layout = _OTHER[a.layout]
    values = a.values
    if layout in BLOCK_LAYOUTS:
        values = values.transpose(b + 1, b + 2)
    shape = list(a.shape)
    shape[b], shape[b + 1] = shape[b + 1], shape[b]
    return Compressed(a.compressed, a.plain, values, shape, layout)


_OTHER = {sparse_csr: sparse_csc, sparse_csc: sparse_csr, sparse_bsr: sparse_bsc}
_OTHER[sparse_bsc] = sparse_bsr


def relaid(a: Compressed, layout) -> Compressed:
    """The same entries in the layout of the other orientation (CSR <-> CSC, BSR <-> BSC),
    the index dtype kept."""
    batch, major, plain, values = entries(a)
    return assemble(layout, a.shape, batch, plain, major, values, a.compressed.dtype)


# -- conversions: the Tensor methods ------------------------------------------------------------
def _blocksize_arg(name: str, blocksize) -> tuple:
    if blocksize is None:
        raise RuntimeError(
            f"{name}: conversion from Strided to {TITLES[sparse_bsr]} without blocksize argument "
            "given is not supported"
        )
    if isinstance(blocksize, int):
        return (blocksize, blocksize)
    size = tuple(operator.index(n) for n in blocksize)
    if len(size) != 2:
        raise RuntimeError(f"{name}: blocksize needs to be a tuple of size 2, but got {len(size)}")
    return size


def to_layout(self: Tensor, layout, blocksize=None, dense_dim=None) -> Tensor:
    """This tensor in a compressed `layout` (from dense, COO or another compressed layout)."""
    kind = layout.name[7:]
    data = self._data
    if layout in BLOCK_LAYOUTS:
        if blocksize is None and type(data) is Compressed and data.layout is layout:
            blocksize = data.blocksize
        blocksize = _blocksize_arg(f"to_sparse_{kind}", blocksize)
    if type(data) is Compressed:
        if dense_dim is not None:
            raise RuntimeError(
                f"to_sparse_{kind}: conversion from {data.title} to {TITLES[layout]} with "
                "dense_dim argument given is not supported"
            )
        if data.layout is layout:
            if layout in BLOCK_LAYOUTS and tuple(blocksize) != data.blocksize:
                raise RuntimeError(
                    f"to_sparse_{kind}: conversion from {data.title} to {TITLES[layout]} with "
                    f"blocksize changed from {list(data.blocksize)} to {list(blocksize)} is not "
                    "supported"
                )
            return self
        if data.layout is _OTHER[layout]:
            return _wrap(relaid(data, layout))
        if layout not in BLOCK_LAYOUTS:
            raise RuntimeError(
                f"sparse_compressed_to_sparse_{kind}: expected SparseCsr or SparseCsc layout but "
                f"got {data.title}"
            )
        if data.batch_dim:
            return from_dense(to_dense(data), layout, blocksize, data.dense_dim)
        return from_coo(to_coo(data), layout, blocksize)
    if type(data) is COO:
        if dense_dim is not None:
            raise RuntimeError(
                f"to_sparse_{kind}: conversion from Sparse to {TITLES[layout]} with dense_dim "
                "argument given is not supported"
            )
        return from_coo(data, layout, blocksize)
    return from_dense(self, layout, blocksize, dense_dim)


def to_sparse_csr(self: Tensor, dense_dim: int | None = None) -> Tensor:
    """This tensor in the CSR layout (a dense one: its nonzero elements; with `dense_dim`,
    the last dims stay dense in the values)."""
    return to_layout(self, sparse_csr, None, dense_dim)


def to_sparse_csc(self: Tensor, dense_dim: int | None = None) -> Tensor:
    """This tensor in the CSC layout."""
    return to_layout(self, sparse_csc, None, dense_dim)


def to_sparse_bsr(self: Tensor, blocksize: Any, dense_dim: int | None = None) -> Tensor:
    """This tensor in the BSR layout, of blocks of `blocksize` (an int or a pair)."""
    return to_layout(self, sparse_bsr, blocksize, dense_dim)


def to_sparse_bsc(self: Tensor, blocksize: Any, dense_dim: int | None = None) -> Tensor:
    """This tensor in the BSC layout, of blocks of `blocksize` (an int or a pair)."""
    return to_layout(self, sparse_bsc, blocksize, dense_dim)


def compressed_to_coo(self: Tensor, sparse_dim: int | None) -> Tensor:
    """A compressed tensor as a COO one (`to_sparse`, `to_sparse_coo`)."""
    data = self._data
    if sparse_dim is not None and sparse_dim != 2:
        raise RuntimeError(
            f"sparse_compressed_to_sparse: conversion from {data.title} to Sparse with "
            "sparse_dim argument !=2 is not supported"
        )
    return _wrap(to_coo(data))


# -- accessors ----------------------------------------------------------------------------------
def _indices_of(self: Tensor, name: str, row: bool, part: str) -> Tensor:
    data = self._data
    if type(data) is not Compressed or (data.layout in ROW_LAYOUTS) is not row:
        kind = "row" if row else "column"
        raise RuntimeError(
            f"{name} expected sparse {kind} compressed tensor layout but got {layout_title(data)}"
        )
    return getattr(data, part)


def crow_indices(self: Tensor) -> Tensor:
    """The compressed row indices of a CSR or BSR tensor, ``(*batch, rows + 1)``."""
    return _indices_of(self, "crow_indices", True, "compressed")


def col_indices(self: Tensor) -> Tensor:
    """The column indices of a CSR or BSR tensor's entries, ``(*batch, nnz)``."""
    return _indices_of(self, "col_indices", True, "plain")


def ccol_indices(self: Tensor) -> Tensor:
    """The compressed column indices of a CSC or BSC tensor, ``(*batch, columns + 1)``."""
    return _indices_of(self, "ccol_indices", False, "compressed")


def row_indices(self: Tensor) -> Tensor:
    """The row indices of a CSC or BSC tensor's entries, ``(*batch, nnz)``."""
    return _indices_of(self, "row_indices", False, "plain")


def _is_sparse_csr(self: Tensor) -> bool:
    data = self._data
    return type(data) is Compressed and data.layout is sparse_csr


# -- construction -------------------------------------------------------------------------------
def _index_tensor(value, device) -> Tensor:
    if isinstance(value, Tensor):
        return value if device is None else value.to(device)
    return tocha.tensor(value, dtype=tocha.int64, device=device)


def _invariant(ok: bool, text: str) -> None:
    if not ok:
        raise RuntimeError(f"`{text}` is not satisfied.")


def _check_indices(layout, compressed: Tensor, plain: Tensor, n: int, limit: int) -> None:
    """PyTorch's invariants of the indices (``check_invariants=True``), in its order."""
    cname, pname = NAMES[layout]
    major, minor = ("rows", "cols") if layout in ROW_LAYOUTS else ("cols", "rows")
    comp = compressed._host().astype(np.int64).reshape(-1, n + 1)
    nnz = plain.shape[-1]
    flat = plain._host().astype(np.int64).reshape(comp.shape[0], nnz)
    _invariant(not comp.size or (comp[:, 0] == 0).all(), f"{cname}[..., 0] == 0")
    _invariant(not comp.size or (comp[:, -1] == nnz).all(), f"{cname}[..., -1] == nnz")
    _invariant(((flat >= 0) & (flat < limit)).all(), f"0 <= {pname} < n{minor}")
    steps = np.diff(comp, axis=1)
    _invariant(
        ((steps >= 0) & (steps <= limit)).all(),
        f"0 <= {cname}[..., 1:] - {cname}[..., :-1] <= n{minor}",
    )
    if nnz > 1:
        same = np.zeros_like(flat[:, 1:], dtype=bool)
        for i, row in enumerate(comp):
            starts = np.zeros(nnz - 1, bool)
            starts[row[1:-1][(row[1:-1] > 0) & (row[1:-1] < nnz)] - 1] = True
            same[i] = ~starts
        increasing = flat[:, 1:] > flat[:, :-1]
        _invariant(
            (increasing | ~same).all(),
            f"{pname}[..., {cname}[..., i - 1]:{cname}[..., i]] for all i = 1, ..., n{major} are "
            "sorted and distinct along the last dimension values",
        )


def sparse_compressed_tensor(
    compressed_indices: Any,
    plain_indices: Any,
    values: Any,
    size: Any = None,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
) -> Tensor:
    """A compressed sparse tensor of `layout` (CSR, CSC, BSR or BSC) from its compressed and
    plain indices and its values, as ``torch.sparse_compressed_tensor``. Without `size`,
    the compressed dim counts the compressed indices (less one), the plain dim is one past
    the largest plain index (times the block size) and the dense dims are the values'.
    Index Tensors keep their dtype (int32 or int64; others, or two different ones, become
    int64 unless `check_invariants` refuses them); lists become int64. The invariants of the
    indices' values are always checked, `check_invariants` or not: a tensor that breaks them
    would give wrong answers later."""
    if layout not in LAYOUTS:
        got = "none" if layout is None else layout_title_of(layout)
        raise RuntimeError(
            f"sparse_compressed_tensor expected sparse compressed tensor layout but got {got}"
        )
    if dtype is not None and not isinstance(dtype, tocha.dtype):
        raise TypeError(
            f"sparse_compressed_tensor(): argument 'dtype' must be torch.dtype, not "
            f"{type(dtype).__name__}"
        )
    compressed = _index_tensor(compressed_indices, device)
    plain = _index_tensor(plain_indices, device)
    if isinstance(values, Tensor):
        vals = values.to(device=device or values.device, dtype=dtype or values.dtype)
    else:
        vals = tocha.tensor(values, dtype=dtype, device=device)
    cname, pname = NAMES[layout]
    if compressed.dtype is not plain.dtype or compressed.dtype not in _INDEX_DTYPES:
        if compressed.is_floating_point() or plain.is_floating_point():
            raise RuntimeError(f"{cname} and {pname} must be an int32 or int64 tensor")
        if check_invariants or (check_invariants is None and STATE.enabled):
            first, second = _dtype.TITLE[compressed.dtype], _dtype.TITLE[plain.dtype]
            if first != second:
                raise RuntimeError(
                    f"{cname} and {pname} must have the same dtype, bot got {first} and "
                    f"{second}, respectively"
                )
            raise RuntimeError(f"{cname} and {pname} dtype must be Int or Long, but got {first}")
        compressed, plain = compressed.to(tocha.int64), plain.to(tocha.int64)
    if compressed.dim() < 1 or plain.dim() != compressed.dim():
        raise RuntimeError(
            f"{cname} and {pname} must have the same number of dimensions (at least 1), but got "
            f"{compressed.dim()} and {plain.dim()}"
        )
    b = compressed.dim() - 1
    block = 2 if layout in BLOCK_LAYOUTS else 0
    if vals.dim() < b + 1 + block:
        raise RuntimeError(
            f"values must have dimensionality > sum of batch and block dimensionalities (={b} + "
            f"{block}) but got {vals.dim()}"
        )
    blocksize = tuple(vals.shape[b + 1 : b + 1 + block]) or (1, 1)
    dense = tuple(vals.shape[b + 1 + block :])
    nnz = vals.shape[b]
    row = layout in ROW_LAYOUTS
    if size is None:
        n = compressed.shape[-1] - 1
        top = int(plain._host().max()) + 1 if plain.numel() else 0
        major, minor = (n * blocksize[0], top * blocksize[1])
        if not row:
            major, minor = top * blocksize[0], n * blocksize[1]
        shape = tuple(compressed.shape[:-1]) + (major, minor) + dense
    else:
        shape = tuple(operator.index(n) for n in size)
    if len(shape) != b + 2 + len(dense):
        raise RuntimeError(
            f"tensor dimensionality must be sum of batch, base, and dense dimensionalities (={b} "
            f"+ 2 + {len(dense)}) but got {len(shape)}"
        )
    if tuple(compressed.shape[:-1]) != shape[:b] or tuple(plain.shape[:-1]) != shape[:b]:
        raise RuntimeError(
            f"all batch dimensions of {cname}, {pname} and values must be equal to the batch "
            f"dimensions of the size {list(shape[:b])}"
        )
    if shape[b] % blocksize[0] or shape[b + 1] % blocksize[1]:
        raise RuntimeError(
            f"tensor shape[{b}] (={shape[b]}) and shape[{b + 1}] (={shape[b + 1]}) must be "
            f"divisible by the blocksize {list(blocksize)}"
        )
    n = (shape[b] // blocksize[0]) if row else (shape[b + 1] // blocksize[1])
    limit = (shape[b + 1] // blocksize[1]) if row else (shape[b] // blocksize[0])
    what = (
        ("number of rows" if row else "number of columns")
        if not block
        else ("number of row blocks" if row else "number of column blocks")
    )
    if compressed.shape[-1] != n + 1:
        raise RuntimeError(
            f"{cname}.shape[-1] must be equal to the {what} + 1 (={n + 1}), but got "
            f"{compressed.shape[-1]}"
        )
    if plain.shape[-1] != nnz:
        raise RuntimeError(
            f"{pname}.shape[-1] must be equal to nnz (={nnz}) as defined by values.shape[{b}], but "
            f"got {plain.shape[-1]}"
        )
    if tuple(shape[b + 2 :]) != dense:
        raise RuntimeError(
            f"values.shape[{b + 1 + block}:] must be equal to the dense size {list(shape[b + 2 :])}"
            f", but got {list(dense)}"
        )
    _check_indices(layout, compressed, plain, n, limit)
    if requires_grad:
        if not (vals.is_floating_point() or vals.is_complex()):
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        vals = vals.detach().requires_grad_(True)
    return _wrap(Compressed(compressed, plain, vals, shape, layout))


def layout_title_of(layout) -> str:
    return {strided: "Strided", sparse_coo: "Sparse"}.get(layout, TITLES.get(layout))


def _constructor(layout):
    cname, pname = NAMES[layout]

    def construct(
        compressed_indices: Any,
        plain_indices: Any,
        values: Any,
        size: Any = None,
        *,
        dtype: Any = None,
        device: Any = None,
        pin_memory: bool = False,
        requires_grad: bool = False,
        check_invariants: bool | None = None,
    ) -> Tensor:
        for position, (argument, value) in enumerate(
            ((cname, compressed_indices), (pname, plain_indices)), 1
        ):
            if value is None:
                raise not_a_tensor(f"sparse_{layout.name[7:]}_tensor", value, argument, position)
        return sparse_compressed_tensor(
            compressed_indices,
            plain_indices,
            values,
            size,
            dtype=dtype,
            layout=layout,
            device=device,
            requires_grad=requires_grad,
            check_invariants=check_invariants,
        )

    name = f"sparse_{layout.name[7:]}_tensor"
    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = (
        f"A {TITLES[layout][6:].upper()} tensor from `{cname}`, `{pname}` and `values`, as "
        f"``torch.{name}``: `sparse_compressed_tensor` with ``layout=tocha.{layout.name}``."
    )
    return construct


sparse_csr_tensor = _constructor(sparse_csr)
sparse_csc_tensor = _constructor(sparse_csc)
sparse_bsr_tensor = _constructor(sparse_bsr)
sparse_bsc_tensor = _constructor(sparse_bsc)

for _fn in (sparse_compressed_tensor, sparse_csr_tensor, sparse_csc_tensor, sparse_bsr_tensor):
    export(_fn)
export(sparse_bsc_tensor)
for _fn in (
    to_sparse_csr,
    to_sparse_csc,
    to_sparse_bsr,
    to_sparse_bsc,
    crow_indices,
    col_indices,
    ccol_indices,
    row_indices,
):
    export(_fn, method=True, function=False)
Tensor.is_sparse_csr = property(_is_sparse_csr, doc="Whether the tensor is in the CSR layout.")
