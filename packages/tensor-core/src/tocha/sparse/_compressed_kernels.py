"""The kernels of the compressed sparse layouts (CSR, CSC, BSR, BSC): what an op does when an
operand is a compressed tensor, ``Compressed.kernels[op name]`` (the dispatcher's layout
routing, as for COO: tocha/sparse/_kernels.py). Each takes the op's kernel arguments with
Tensors for arrays and is written in tocha ops on the values, or on the COO form of the
same entries (`to_coo`) for the products, so gradients reach the values and any dense
operand with no formulas of their own.

Those PyTorch has: the value-wise maps that keep zeros at zero, products with numbers,
dense tensors of the same size and tensors of the same layout, sums with a tensor of the
same layout and with dense tensors (dense), the matrix products, the full sum and the sums
over dims that keep them (CSR), transposes, clones and dtype casts. The other elementwise
ops raise PyTorch's "unsupported tensor layout" RuntimeError; the rest its
NotImplementedError for the SparseCsr backend.
"""

from __future__ import annotations

import numpy as np

import tocha

from .._dtype import FROM_NP, TITLE
from .._ops.pointwise import BINARY_OPS, UNARY_OPS
from .._tensor import Tensor
from . import COO, _add_sparse, _mm, _wrap
from ._compressed import (
    BLOCK_LAYOUTS,
    ROW_LAYOUTS,
    Compressed,
    assemble,
    at_entries,
    entries,
    from_coo,
    from_dense,
    is_compressed,
    to_coo,
    to_dense,
    transposed,
)
from ._kernels import KERNELS as COO_KERNELS
from ._kernels import _mul_sparse

KERNELS = Compressed.kernels


def _unsupported_layout(name: str):
    def kernel(*args, **kwargs):
        x = next((a for a in args if is_compressed(a)), None)
        raise RuntimeError(
            f"unsupported tensor layout: {x._data.title if x is not None else 'SparseCsr'}"
        )

    kernel.__name__ = name
    return kernel


# the elementwise ops PyTorch runs through its TensorIterator, which refuses these layouts
for _name in (*UNARY_OPS, *BINARY_OPS, "where", "clamp"):
    KERNELS[_name] = _unsupported_layout(_name)


# -- value-wise maps -------------------------------------------------------------------------------
_VALUE_MAPS = (
    "abs asin asinh atan atanh ceil erf erfinv expm1 floor frac isinf isnan isneginf isposinf "
    "log1p neg relu sgn sign signbit sin sinh sqrt tan tanh trunc angle"
).split()


def _values_map(name: str):
    def kernel(x: Tensor) -> Tensor:
        a = x._data
        return _wrap(a.with_values(getattr(tocha, name)(a.values)))

    kernel.__name__ = name
    return kernel


for _name in _VALUE_MAPS:
    KERNELS[_name] = _values_map(_name)


def _round(x: Tensor, decimals: int = 0) -> Tensor:
    """``round``: value-wise to integers; PyTorch refuses `decimals` on these layouts."""
    if decimals:
        raise RuntimeError(f"unsupported tensor layout: {x._data.title}")
    a = x._data
    return _wrap(a.with_values(tocha.round(a.values)))


KERNELS["round"] = _round


def _to_dtype(x: Tensor, np_dtype, *args) -> Tensor:
    a = x._data
    return _wrap(a.with_values(a.values.to(FROM_NP[np.dtype(np_dtype)])))


def _clone(x: Tensor, *args) -> Tensor:
    a = x._data
    return _wrap(
        Compressed(a.compressed.clone(), a.plain.clone(), a.values.clone(), a.shape, a.layout)
    )


KERNELS.update(to_dtype=_to_dtype, clone=_clone)


# -- products and sums with another operand --------------------------------------------------------
def _same_pattern(a: Compressed, b: Compressed) -> bool:
    """Whether two compressed arrays hold the same entries in the same order."""
    if a.layout is not b.layout or a.shape != b.shape or a.blocksize != b.blocksize:
        return False
    if a.compressed is b.compressed and a.plain is b.plain:
        return True
    return bool(
        a.plain.shape == b.plain.shape
        and np.array_equal(a.compressed._host(), b.compressed._host())
        and np.array_equal(a.plain._host(), b.plain._host())
    )


def _mul(x, y) -> Tensor:
    """``x * y`` with a compressed operand: of its layout. By a number or a 0-dim tensor each
    value scaled; by a dense tensor of its size, each entry times the element there; by a
    compressed tensor of its layout, the product at the positions both hold."""
    if not is_compressed(x):
        x, y = y, x
    a = x._data
    if is_compressed(y):
        other = y._data
        if _same_pattern(a, other):
            return _wrap(a.with_values(a.values * other.values))
        if a.layout is not other.layout or a.layout in BLOCK_LAYOUTS or a.batch_dim:
            raise RuntimeError(
                f"mul: expected two sparse compressed tensors of one layout and no batch or "
                f"block dims, but got {a.title} and {other.title}"
            )
        product = _mul_sparse(to_coo(a), to_coo(other))
        return _relaid_from_coo(product, a)
    if not isinstance(y, Tensor) or y.dim() == 0:
        return _wrap(a.with_values(a.values * y))
    if type(y._data) is COO:  # a COO operand masked by this tensor's entries, as a dense one
        y = y.to_dense()
    if tuple(y.shape) != a.shape:
        raise RuntimeError(
            f"sparse_mask(): operands have incompatible sizes; self has size {list(y.shape)} "
            f"but mask has size {list(a.shape)}"
        )
    return _wrap(a.with_values(a.values * at_entries(y, a)))


def _relaid_from_coo(coo, like: Compressed) -> Tensor:
    """A 2-D COO result in the layout (and index dtype) of `like`."""
    out = from_coo(coo, like.layout, like.blocksize)._data
    dtype = like.compressed.dtype
    if out.compressed.dtype is not dtype:
        out = Compressed(
            out.compressed.to(dtype), out.plain.to(dtype), out.values, out.shape, out.layout
        )
    return _wrap(out)


def _size_error(dense, a: Compressed) -> RuntimeError:
    shape = list(dense.shape) if isinstance(dense, Tensor) else []
    return RuntimeError(
        f"add: expected 'self' and 'other' to have same size, but self has size {shape} while "
        f"other has size {list(a.shape)} (FYI: op2-sparse addition does not currently support "
        "broadcasting)"
    )


def _add(x, y) -> Tensor:
    """``x + y`` (the caller has scaled `y` by alpha): of the layout for two CSR (or BSR)
    tensors, dense with a dense tensor of the same size."""
    if is_compressed(x) and is_compressed(y):
        a, b = x._data, y._data
        if a.layout is not b.layout or a.layout not in ROW_LAYOUTS:
            bad = b if a.layout in ROW_LAYOUTS else a
            raise RuntimeError(
                f"crow_indices expected sparse row compressed tensor layout but got {bad.title}"
            )
        if a.values.dtype is not b.values.dtype:
            raise RuntimeError(
                f"expected scalar type {TITLE[b.values.dtype]} but found {TITLE[a.values.dtype]}"
            )
        if a.shape != b.shape:
            raise _size_error(y, a)
        if _same_pattern(a, b):
            return _wrap(a.with_values(a.values + b.values))
        if a.layout in BLOCK_LAYOUTS or a.batch_dim:
            return from_dense(to_dense(a) + to_dense(b), a.layout, a.blocksize, a.dense_dim)
        return _relaid_from_coo(_add_sparse(to_coo(a), to_coo(b)), a)
    dense, a = (y, x._data) if is_compressed(x) else (x, y._data)
    if type(getattr(dense, "_data", None)) is COO:
        raise RuntimeError(
            f"add: expected a dense operand or one of the layout {a.title}, but got Sparse"
        )
    if not isinstance(dense, Tensor) or tuple(dense.shape) != a.shape:
        raise _size_error(dense, a)
    return to_dense(a) + dense if is_compressed(x) else dense + to_dense(a)


KERNELS.update(mul=_mul, add=_add)


# -- matrix products -------------------------------------------------------------------------------
def _check_product(a: Compressed, other_title: str) -> None:
    if a.layout in BLOCK_LAYOUTS and a.layout not in ROW_LAYOUTS:
        raise RuntimeError(
            f"addmm: computation on CPU is not implemented for Strided + {a.title} @ {other_title}"
        )
    if a.batch_dim:
        raise RuntimeError("Sparse CSR tensors do not have strides")
    if a.dense_dim:
        raise RuntimeError(f"addmm: matrices expected, got {len(a.shape)}D tensor")


def _matmul(x: Tensor, y: Tensor) -> Tensor:
    """``x @ y`` with a compressed operand: compressed @ dense (a matrix or a vector) and
    dense @ compressed are dense; compressed @ compressed is CSR."""
    if not is_compressed(x):
        b = y._data
        _check_product(b, "Strided")
        return COO_KERNELS["matmul"](x, _wrap(to_coo(b)))
    a = x._data
    if type(y._data) is COO:
        raise RuntimeError(
            f"addmm: computation on CPU is not implemented for Sparse + {a.title} @ Sparse"
        )
    _check_product(a, "Strided")
    n, k = a.shape
    if is_compressed(y):
        other = y._data
        _check_product(other, a.title)
        if other.shape[0] != k:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and "
                f"{other.shape[0]}x{other.shape[1]})"
            )
        product = _mm(to_coo(a), to_dense(other))
        return from_dense(product, ROW_LAYOUTS[0], None, None)
    if y.dtype is not a.values.dtype:
        raise RuntimeError(
            f"expected scalar type {TITLE[a.values.dtype]} but found {TITLE[y.dtype]}"
        )
    if not (y.is_floating_point() or y.is_complex()):
        raise NotImplementedError(
            f"\"addmm_out_sparse_csr_impl_mkl\" not implemented for '{TITLE[y.dtype]}'"
        )
    if y.dim() == 1:
        if y.shape[0] != k:
            raise RuntimeError(f"size mismatch, got input ({n}), mat ({n}x{k}), vec ({y.shape[0]})")
        return _mm(to_coo(a), y.unsqueeze(1)).squeeze(1)
    if y.dim() != 2:
        raise RuntimeError(f"expand is unsupported for {a.title} tensors")
    if y.shape[0] != k:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {y.shape[0]}x{y.shape[1]})"
        )
    return _mm(to_coo(a), y)


def _linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` with a compressed `input` or `weight`: dense."""
    out = _matmul(input, weight.t())
    return out if bias is None else out + bias


KERNELS.update(matmul=_matmul, linear=_linear)


# -- sums ------------------------------------------------------------------------------------------
def _sum(x: Tensor, dims=None, keepdim: bool = False, np_dtype=None) -> Tensor:
    """The sum of all the values (dense, 0-dim); with `keepdim`, the sums of a 2-D CSR tensor
    over `dims` (CSR, an entry for each row or column that holds one)."""
    a = x._data
    values = a.values if np_dtype is None else a.values.to(FROM_NP[np.dtype(np_dtype)])
    if dims is None or not len(dims):
        return values.sum()
    if not keepdim:
        raise RuntimeError("reduction operations on CSR tensors with keepdim=False is unsupported")
    if a.layout is not ROW_LAYOUTS[0]:
        raise RuntimeError(
            "Currently the only compressed sparse format supported for sum.dim_IntList is CSR, "
            f"but got layout {a.title}"
        )
    if a.batch_dim or a.dense_dim:
        raise RuntimeError("sum: tocha sums over dims of 2-D CSR tensors only")
    dims = {d % 2 for d in dims}
    _, rows, cols, flat = entries(a)
    key = np.zeros_like(rows)
    if 0 not in dims:
        key = rows
    elif 1 not in dims:
        key = cols
    unique, inverse = np.unique(key, return_inverse=True)
    summed = tocha.zeros(unique.size, dtype=values.dtype, device=values.device)
    summed = summed.index_add(
        0, tocha.tensor(inverse.reshape(-1), device=values.device), flat.to(values.dtype)
    )
    shape = tuple(1 if d in dims else n for d, n in enumerate(a.shape))
    zeros = np.zeros(unique.size, np.int64)
    major, plain = (zeros, unique) if 0 in dims else (unique, zeros)
    if dims == {0, 1}:
        major, plain = zeros, zeros
    out = assemble(a.layout, shape, zeros, major, plain, summed, a.compressed.dtype)
    return _wrap(out)


KERNELS["sum"] = _sum


# -- transposes ------------------------------------------------------------------------------------
def _permute(x: Tensor, dims: tuple) -> Tensor:
    """The two sparse dims swapped (``t``, ``transpose``, ``mT``): the other layout of the
    same orientation pair, the indices unchanged; no other reordering."""
    a = x._data
    b = a.batch_dim
    dims = tuple(dims)
    n = len(a.shape)
    if dims == tuple(range(n)):
        return x
    swap = tuple(range(b)) + (b + 1, b) + tuple(range(b + 2, n))
    if dims != swap:
        moved = [d for d in range(n) if dims[d] != d]
        kinds = ["Batch" if d < b else "Sparse" if d < b + 2 else "Dense" for d in moved[:2]]
        raise RuntimeError(
            "transpose(): can only transpose dimensions of the same type (Batch, Sparse, Dense), "
            f"got {moved[0]}({kinds[0]}) and {moved[-1]}({kinds[-1]})"
        )
    return _wrap(transposed(a))


def _no_expand(x: Tensor, *args) -> Tensor:
    raise RuntimeError(f"expand is unsupported for {x._data.title} tensors")


def _as_coo(name: str):
    """An op PyTorch runs on the COO form of the entries (its result a COO tensor)."""

    def kernel(x: Tensor, *args):
        out = COO_KERNELS[name](_wrap(to_coo(x._data)), *args)
        return out.to_dense() if isinstance(out, Tensor) and not out.dim() else out

    kernel.__name__ = name
    return kernel


KERNELS.update(permute=_permute, expand=_no_expand, getitem=_as_coo("getitem"))
KERNELS["unbind"] = _as_coo("unbind")

__all__ = ["KERNELS"]
