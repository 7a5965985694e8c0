"""The sparse COO kernels: what an op does when an operand is a sparse COO tensor.

A dense kernel that reads a `COO` raises `OtherLayout`, and the dispatcher's entry point runs
the op's function here instead (``COO.kernels[op name]``), with the arguments the op's kernel
takes but Tensors in place of arrays: ``abs(x)``, ``mul(a, b)`` (either may be sparse, dense
or a number), ``sum(x, dims, keepdim, np_dtype)``, ``cat(*tensors, dim)``... Each is written
in tocha ops on the indices and values, so autograd records it with no formula of its own
and gradients reach the values and any dense operand. An op missing here raises PyTorch's
NotImplementedError for the sparse backend.

Results follow PyTorch's: which entries a result keeps (the product with a dense tensor keeps
every entry, zeros included; the product of two coalesced tensors keeps the common ones),
and whether it is coalesced (the nonlinear maps coalesce first; a reordering or a selection
of entries is uncoalesced unless it holds fewer than two).
"""

from __future__ import annotations

import numpy as np

import tocha

from .._dispatch import broadcast_error
from .._dtype import FROM_NP
from .._tensor import Tensor
from . import COO, _add_sparse, _coalesce, _linear_index, _make, _mm, _name, _wrap, mm
from . import sum as _sparse_sum

KERNELS = COO.kernels


def _is_sparse(x) -> bool:
    return type(getattr(x, "_data", None)) is COO


def _entries(indices: Tensor, values: Tensor, shape, coalesced: bool | None = None) -> Tensor:
    """A sparse tensor of these entries; coalesced when `coalesced` says so, or, when it is
    None, when it holds fewer than two entries (PyTorch's rule for a tensor it builds)."""
    if coalesced is None:
        coalesced = indices.shape[1] < 2
    return _make(indices, values, tuple(shape), coalesced)


def _host(t: Tensor) -> np.ndarray:
    return t._host()


def _on_device(array: np.ndarray, like: Tensor) -> Tensor:
    return tocha.tensor(np.ascontiguousarray(array, dtype=np.int64), device=like.device)


# -- elementwise maps of the values ------------------------------------------------------------
# Those that keep zeros at zero. The linear ones (neg) map each entry as it is; the others
# first sum the entries at one position (PyTorch coalesces their input).
_NONLINEAR = (
    "abs asin asinh atan atanh ceil erf erfinv expm1 floor frac isinf isnan isneginf isposinf "
    "log1p relu sgn sign signbit sin sinh sqrt square tan tanh trunc"
).split()


def _values_map(name: str, coalesce: bool):
    def kernel(x: Tensor) -> Tensor:
        coo = _coalesce(x._data) if coalesce else x._data
        values = getattr(tocha, name)(coo.values)  # looked up late: tocha imports this module
        return _make(coo.indices, values, coo.shape, coo.coalesced)

    kernel.__name__ = name
    return kernel


for _op in _NONLINEAR:
    KERNELS[_op] = _values_map(_op, True)
KERNELS["neg"] = _values_map("neg", False)


def _to_dtype(x: Tensor, np_dtype, *args) -> Tensor:
    coo = x._data
    values = coo.values.to(FROM_NP[np.dtype(np_dtype)])
    return _make(coo.indices, values, coo.shape, coo.coalesced)


def _clone(x: Tensor, *args) -> Tensor:
    coo = x._data
    return _make(coo.indices.clone(), coo.values.clone(), coo.shape, coo.coalesced)


def _nan_to_num(x: Tensor, nan, posinf, neginf) -> Tensor:
    coo = _coalesce(x._data)
    values = tocha.nan_to_num(coo.values, nan, posinf, neginf)
    return _make(coo.indices, values, coo.shape, True)


def _norm(x: Tensor, p, dims, keepdim: bool, np_dtype) -> Tensor:
    """The p-norm of all the entries (positive p): the norm of the summed values."""
    coo = x._data
    if (dims is not None and len(dims) != len(coo.shape)) or keepdim or not p > 0:
        raise NotImplementedError(coo.unsupported("norm.ScalarOpt_dim"))
    values = _coalesce(coo).values
    if np_dtype is not None:
        values = values.to(FROM_NP[np.dtype(np_dtype)])
    return tocha.norm(values, p)


KERNELS["to_dtype"] = _to_dtype
KERNELS["clone"] = _clone
KERNELS["nan_to_num"] = _nan_to_num
KERNELS["norm"] = _norm


# -- sums and products with another operand ------------------------------------------------------
def _add(a, b) -> Tensor:
    """``a + b`` (the caller has scaled `b` by alpha): sparse for two sparse tensors, dense for
    a dense tensor of the same size plus a sparse one; PyTorch refuses sparse plus dense."""
    if _is_sparse(a):
        if not _is_sparse(b):
            raise RuntimeError(
                "add(sparse, dense) is not supported. Use add(dense, sparse) instead."
            )
        return _wrap(_add_sparse(a._data, b._data))
    return _dense_plus(a, b._data, 1)


def _sub(a, b) -> Tensor:
    if _is_sparse(a):
        if not _is_sparse(b):
            raise RuntimeError(
                "add(sparse, dense) is not supported. Use add(dense, sparse) instead."
            )
        coo = b._data
        return _wrap(_add_sparse(a._data, COO(coo.indices, -coo.values, coo.shape, coo.coalesced)))
    return _dense_plus(a, b._data, -1)


def _dense_plus(dense, coo: COO, sign: int) -> Tensor:
    """``dense + sign * sparse``: dense, the entries added into a copy of `dense`."""
    if not isinstance(dense, Tensor):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if tuple(dense.shape) != coo.shape:
        raise RuntimeError(
            f"add: expected 'self' and 'other' to have same size, but self has size "
            f"{list(dense.shape)} while other has size {list(coo.shape)} (FYI: dense-sparse "
            "addition does not currently support broadcasting)"
        )
    dtype = tocha.promote_types(dense.dtype, coo.values.dtype)
    values = coo.values.to(dtype)
    if sign < 0:
        values = -values
    result = dense.to(dtype)
    if not coo.nnz:
        return result.clone() if result is dense else result
    if not coo.sparse_dim:
        return result + values.sum(0)
    return result.index_put(tuple(coo.indices.unbind(0)), values, accumulate=True)


def _mul(a, b) -> Tensor:
    """``a * b``: sparse. With a number or a 0-dim tensor, each value scaled; with a dense
    tensor (broadcast to the sparse one's size), each entry times the dense element at its
    position, every entry kept; with a sparse tensor of the same size, the product at the
    positions both hold (both coalesced), or at each entry of the uncoalesced one."""
    if not _is_sparse(a):
        a, b = b, a
    coo = a._data
    if _is_sparse(b):
        return _wrap(_mul_sparse(coo, b._data))
    if not isinstance(b, Tensor) or b.dim() == 0:
        return _make(coo.indices, coo.values * b, coo.shape, coo.coalesced)
    shape = _broadcast_shape(tuple(b.shape), coo.shape)
    if shape != coo.shape:
        coo = _broadcast(coo, shape)
    gathered = _at_entries(b.expand(shape), coo)
    return _make(coo.indices, coo.values * gathered, shape, coo.coalesced)


def _broadcast_shape(a: tuple, b: tuple) -> tuple:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        raise broadcast_error(a, b) from None


def _at_entries(dense: Tensor, coo: COO) -> Tensor:
    """The elements (rows, for a hybrid tensor) of `dense`, of the sparse tensor's size, at
    its entries: shape ``(nnz, *dense_dims)``."""
    if not coo.sparse_dim:
        return dense.unsqueeze(0).expand((coo.nnz,) + tuple(dense.shape))
    return dense[tuple(coo.indices.unbind(0))]


def _broadcast(coo: COO, shape: tuple) -> COO:
    """The sparse tensor broadcast to `shape`: new leading dims and sparse dims of size 1
    become sparse dims whose entries repeat, dense dims of size 1 expand in the values."""
    lead = len(shape) - len(coo.shape)
    old = (1,) * lead + tuple(coo.shape)
    sd = lead + coo.sparse_dim
    nnz = coo.nnz
    repeated = [d for d in range(sd) if old[d] == 1 and shape[d] != 1]
    grid = np.indices([shape[d] for d in repeated]).reshape(len(repeated), -1)
    copies = grid.shape[1]
    base = np.concatenate([np.zeros((lead, nnz), np.int64), _host(coo.indices)])
    host = np.tile(base, (1, copies))
    for row, d in enumerate(repeated):
        host[d] = np.repeat(grid[row], nnz)
    values = coo.values.expand((nnz,) + tuple(shape[sd:]))
    values = values.repeat((copies,) + (1,) * (values.dim() - 1))
    out = COO(_on_device(host, coo.indices), values, shape, False)
    return _coalesce(out) if coo.coalesced else out


def _mul_sparse(a: COO, b: COO) -> COO:
    if a.shape != b.shape or a.sparse_dim != b.sparse_dim:
        raise RuntimeError(
            "sparse_binary_op_intersection_cpu(): expects sparse inputs with equal "
            "dimensionality, number of sparse dimensions, and shape of sparse dimensions"
        )
    if a.coalesced and b.coalesced:  # the positions both hold
        keys_a, keys_b = _linear_index(a), _linear_index(b)
        pos = np.searchsorted(keys_b, keys_a)
        found = pos < keys_b.size
        found[found] = keys_b[pos[found]] == keys_a[found]
        ia, ib = _on_device(np.nonzero(found)[0], a.indices), _on_device(pos[found], a.indices)
        values = a.values.index_select(0, ia) * b.values.index_select(0, ib)
        return COO(a.indices.index_select(1, ia), values, a.shape, True)
    # each entry of the uncoalesced one (the first, if both are) times the other's sum there
    entries, other = (b, a) if a.coalesced else (a, b)
    other = _coalesce(other)
    keys, keys_other = _linear_index(entries), _linear_index(other)
    pos = np.searchsorted(keys_other, keys)
    found = pos < keys_other.size
    found[found] = keys_other[pos[found]] == keys[found]
    at = _on_device(np.where(found, pos, 0), entries.indices)
    products = entries.values * other.values.index_select(0, at) if other.nnz else entries.values
    held = tocha.tensor(found, device=products.device).reshape((-1,) + (1,) * (products.dim() - 1))
    values = tocha.where(held, products, tocha.zeros((), dtype=products.dtype))
    return COO(entries.indices, values, a.shape, False)


def _divisor_error(b) -> RuntimeError:
    return RuntimeError(
        "Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
        f"{list(b.shape)} for divisor)"
    )


def _quotient(fn, coalesce: bool):
    """The quotient of a sparse tensor by a number or a 0-dim dense tensor: sparse."""

    def kernel(a, b) -> Tensor:
        if _is_sparse(b):
            raise _divisor_error(b)
        if isinstance(b, Tensor) and b.dim():
            raise _divisor_error(b)
        coo = _coalesce(a._data) if coalesce else a._data
        return _make(coo.indices, fn(coo.values, b), coo.shape, coo.coalesced)

    return kernel


def _pow(a, b) -> Tensor:
    """A sparse tensor to a nonzero number's power: sparse (coalesced first)."""
    if not _is_sparse(a):
        name = "pow.Tensor_Tensor" if isinstance(a, Tensor) else "pow.Scalar"
        raise NotImplementedError(b._data.unsupported(name))
    if isinstance(b, Tensor):
        raise NotImplementedError(a._data.unsupported("pow.Tensor_Tensor"))
    if b == 0:
        raise RuntimeError(
            "pow: cannot raise to zeroth power on sparse tensor; it would make the result "
            "tensor dense"
        )
    coo = _coalesce(a._data)
    return _make(coo.indices, coo.values**b, coo.shape, True)


KERNELS.update(
    add=_add,
    sub=_sub,
    mul=_mul,
    div=_quotient(lambda v, b: v / b, False),
    div_floor=_quotient(lambda v, b: tocha.div(v, b, rounding_mode="floor"), True),
    div_trunc=_quotient(lambda v, b: tocha.div(v, b, rounding_mode="trunc"), True),
    floor_divide=_quotient(lambda v, b: tocha.floor_divide(v, b), True),
    pow=_pow,
)


# -- matrix products ---------------------------------------------------------------------------
def _matmul(x: Tensor, y: Tensor) -> Tensor:
    """``x @ y`` with a sparse operand: sparse @ dense (a matrix or a vector) and dense @
    sparse are dense, sparse @ sparse is sparse (``sparse.mm``)."""
    if _is_sparse(x):
        if _is_sparse(y) or y.dim() == 2:
            return mm(x, y)
        if y.dim() == 1:
            return _mm(x._data, y.unsqueeze(1)).squeeze(1)
        raise RuntimeError("expand is unsupported for Sparse tensors")
    coo = y._data
    if coo.sparse_dim != 2 or len(coo.shape) != 2:
        raise RuntimeError(
            "sparse transpose: transposed dimensions must be sparse Got sparse_dim: "
            f"{coo.sparse_dim}, d0: 0, d1: 1"
        )
    k, m = coo.shape
    if x.shape[-1] != k:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({x.numel() // max(x.shape[-1], 1)}x"
            f"{x.shape[-1]} and {k}x{m})"
        )
    if x.dtype is not coo.values.dtype:
        raise RuntimeError(
            f"expected scalar type {_name(coo.values.dtype)} but found {_name(x.dtype)}"
        )
    rows, cols = coo.indices.unbind(0)
    # (x @ y)[..., j] is the sum over entries (i, j) of x[..., i] * value
    products = x.index_select(-1, rows) * coo.values
    out = tocha.zeros(tuple(x.shape[:-1]) + (m,), dtype=x.dtype, device=x.device)
    return out.index_add(x.dim() - 1, cols, products)


def _linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` for a sparse 2-D `input`: dense."""
    if not _is_sparse(input) or _is_sparse(weight) or input.dim() != 2:
        raise NotImplementedError(
            (input if _is_sparse(input) else weight)._data.unsupported("linear")
        )
    out = _mm(input._data, weight.t())
    return out if bias is None else out + bias


KERNELS["matmul"] = _matmul
KERNELS["linear"] = _linear


# -- sums ---------------------------------------------------------------------------------------
def _sum(x: Tensor, dims=None, keepdim: bool = False, np_dtype=None) -> Tensor:
    """The sum of the entries over `dims` (all when None or empty), as ``Tensor.sum``: dense
    when no sparse dim is left, else sparse and coalesced (uncoalesced with `keepdim`)."""
    dtype = None if np_dtype is None else FROM_NP[np.dtype(np_dtype)]
    n = x.dim()
    if dims is None or not len(dims):
        dims = tuple(range(n))
    result = _sparse_sum(x, tuple(dims), dtype)
    if keepdim:
        for d in sorted(d % n for d in dims):
            result = result.unsqueeze(d)
    return result


KERNELS["sum"] = _sum


# -- dimensions and selections ------------------------------------------------------------------
def _permute(x: Tensor, dims: tuple) -> Tensor:
    """The dimensions reordered: the sparse ones among themselves, the dense ones among
    themselves (PyTorch moves none across)."""
    coo = x._data
    sd = coo.sparse_dim
    dims = tuple(dims)
    if dims == tuple(range(len(coo.shape))):
        return x
    if sorted(dims[:sd]) != list(range(sd)):
        raise RuntimeError(
            "permute(sparse_coo): transpositions between sparse and dense dimensions are not "
            "allowed.Only transpositions within sparse and dense dimensions are supported."
        )
    values = coo.values
    if dims[sd:] != tuple(range(sd, len(dims))):
        values = values.permute(0, *(d - sd + 1 for d in dims[sd:]))
    indices = coo.indices.index_select(0, _on_device(np.array(dims[:sd]), coo.indices))
    return _make(indices, values, tuple(coo.shape[d] for d in dims), False)


def _unsqueeze(x: Tensor, dim: int) -> Tensor:
    """A dimension of size 1 inserted at `dim`: sparse (index 0 for every entry) within or
    just after the sparse dims, else dense."""
    coo = x._data
    sd = coo.sparse_dim
    shape = coo.shape[:dim] + (1,) + coo.shape[dim:]
    if dim > sd:
        return _make(coo.indices, coo.values.unsqueeze(dim - sd + 1), shape, False)
    zeros = tocha.zeros((1, coo.nnz), dtype=tocha.int64, device=coo.indices.device)
    indices = tocha.cat([coo.indices[:dim], zeros, coo.indices[dim:]])
    return _make(indices, coo.values, shape, False)


def _squeeze(x: Tensor, dims) -> Tensor:
    """The dims `dims` (all of size 1) removed."""
    coo = x._data
    sd = coo.sparse_dim
    dims = sorted(set(range(len(coo.shape)) if dims is None else dims))
    dims = [d for d in dims if coo.shape[d] == 1]
    keep = [d for d in range(sd) if d not in dims]
    dense = [d - sd + 1 for d in dims if d >= sd]
    values = coo.values.squeeze(tuple(dense)) if dense else coo.values
    indices = coo.indices.index_select(0, _on_device(np.array(keep), coo.indices))
    shape = tuple(s for d, s in enumerate(coo.shape) if d not in dims)
    return _entries(indices, values, shape)


def _narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """The entries with index in ``[start, start + length)`` along `dim` (a copy: the sparse
    layout has no views), as ``narrow_copy``."""
    coo = x._data
    sd = coo.sparse_dim
    shape = coo.shape[:dim] + (length,) + coo.shape[dim + 1 :]
    if dim >= sd:
        values = coo.values.narrow(dim - sd + 1, start, length)
        return _make(coo.indices, values, shape, coo.coalesced)
    along = _host(coo.indices)[dim]
    keep = _on_device(np.nonzero((along >= start) & (along < start + length))[0], coo.indices)
    indices = coo.indices.index_select(1, keep)
    if start:
        shift = tocha.zeros((sd, 1), dtype=tocha.int64, device=indices.device)
        shift[dim] = start
        indices = indices - shift
    return _make(indices, coo.values.index_select(0, keep), shape, coo.coalesced)


def _select_entries(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """``index_select``: for each position j of `index`, the entries at index ``index[j]``
    along `dim`, moved to j (in that order: by j, then as stored)."""
    coo = x._data
    sd = coo.sparse_dim
    shape = coo.shape[:dim] + (index.numel(),) + coo.shape[dim + 1 :]
    if dim >= sd:
        return _entries(coo.indices, coo.values.index_select(dim - sd + 1, index), shape)
    wanted = _host(index).reshape(-1).astype(np.int64)
    along = _host(coo.indices)[dim]
    order = np.argsort(along, kind="stable")
    ordered = along[order]
    first = np.searchsorted(ordered, wanted, "left")
    counts = np.searchsorted(ordered, wanted, "right") - first
    total = int(counts.sum())
    starts = np.repeat(first - (np.cumsum(counts) - counts), counts)
    picked = _on_device(order[starts + np.arange(total)], coo.indices)
    indices = coo.indices.index_select(1, picked)
    moved = _on_device(np.repeat(np.arange(wanted.size), counts), coo.indices)
    indices = tocha.cat([indices[:dim], moved.unsqueeze(0), indices[dim + 1 :]])
    return _entries(indices, coo.values.index_select(0, picked), shape)


def _index(x: Tensor, *args) -> Tensor:
    """Indexing by one index tensor along one dim (what ``index_select`` and ``x[index]``
    run); other advanced indexing PyTorch lacks for sparse tensors too."""
    *tensors, pattern = args
    if len(tensors) == 1 and all(p is None for p in pattern[:-1]) and pattern[-1] == 0:
        if tensors[0].dtype is not tocha.int64 or tensors[0].dim() != 1:
            raise IndexError(
                "index_select() argument index must be 1-D strided (non-sparse) long-tensor."
            )
        return _select_entries(x, len(pattern) - 1, tensors[0])
    raise NotImplementedError(x._data.unsupported("index.Tensor"))


def _getitem(x: Tensor, key) -> Tensor:
    """``x[key]`` for ints (a selection), whole slices, None and Ellipsis."""
    key = key if isinstance(key, tuple) else (key,)
    n = x.dim()
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if Ellipsis in key:
        at = key.index(Ellipsis)
        key = key[:at] + (slice(None),) * (n - used) + key[at + 1 :]
    dim = 0
    for k in key:
        if k is None:
            x = _unsqueeze(x, dim)
            dim += 1
        elif isinstance(k, slice) and k == slice(None):
            dim += 1
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            size = x.shape[dim]
            x = _squeeze(_narrow(x, dim, int(k) % size, 1), (dim,))
        else:
            raise NotImplementedError(x._data.unsupported("as_strided"))
    return x


def _no_expand(x: Tensor, *args) -> Tensor:
    raise RuntimeError("expand is unsupported for Sparse tensors")


def _unbind(x: Tensor, dim: int) -> tuple:
    """The selections at each index along `dim`."""
    return tuple(_squeeze(_narrow(x, dim, i, 1), (dim,)) for i in range(x.shape[dim]))


KERNELS.update(
    unbind=_unbind,
    expand=_no_expand,
    repeat=_no_expand,
    permute=_permute,
    unsqueeze=_unsqueeze,
    squeeze=_squeeze,
    narrow=_narrow,
    index=_index,
    getitem=_getitem,
)


# -- joins -----------------------------------------------------------------------------------
def _cat(*args) -> Tensor:
    """The sparse tensors joined along `dim`: along a sparse dim their indices shift past the
    tensors before; along a dense dim each one's values fill its own slice (zeros elsewhere)."""
    *tensors, dim = args
    for i, t in enumerate(tensors):
        if not _is_sparse(t):
            if _is_sparse(tensors[0]):
                raise RuntimeError(
                    f"Concatenating sparse tensors, but a dense tensor was found at position {i}."
                )
            raise NotImplementedError(
                "Could not run 'aten::_values' with arguments from the "
                f"'{t.device.type.upper()}' backend. This could be because the operator doesn't "
                "exist for this backend, or was omitted during the selective/custom build process "
                "(if using custom build)."
            )
    first = tensors[0]._data
    sd, dd = first.sparse_dim, len(first.shape) - first.sparse_dim
    for i, t in enumerate(tensors):
        coo = t._data
        if coo.sparse_dim != sd or len(coo.shape) - coo.sparse_dim != dd:
            raise RuntimeError(
                f"All tensors must have the same sparse_dim and dense_dim: {sd}, {dd}, but tensor "
                f"at position {i} has {coo.sparse_dim}, {len(coo.shape) - coo.sparse_dim}."
            )
        if coo.shape[:dim] + coo.shape[dim + 1 :] != first.shape[:dim] + first.shape[dim + 1 :]:
            raise RuntimeError(
                f"All tensors must have the same shape: {list(first.shape)} (except in the "
                f"concatenating dimension), but found shape: {list(coo.shape)} at position {i}."
            )
    sizes = [t._data.shape[dim] for t in tensors]
    shape = first.shape[:dim] + (int(np.sum(sizes)),) + first.shape[dim + 1 :]
    dtype = tocha.promote_types(*[t.dtype for t in tensors[:2]]) if len(tensors) > 1 else None
    for t in tensors[2:]:
        dtype = tocha.promote_types(dtype, t.dtype)
    indices, values, offset = [], [], 0
    for t, size in zip(tensors, sizes, strict=True):
        coo = t._data
        v = coo.values if dtype is None else coo.values.to(dtype)
        if dim < sd:
            shift = tocha.zeros((sd, 1), dtype=tocha.int64, device=coo.indices.device)
            shift[dim] = offset
            indices.append(coo.indices + shift)
        else:
            v = _pad(v, dim - sd + 1, offset, shape[dim])
            indices.append(coo.indices)
        values.append(v)
        offset += size
    return _make(tocha.cat(indices, 1), tocha.cat(values), shape, False)


def _pad(v: Tensor, d: int, offset: int, total: int) -> Tensor:
    """`v` placed at `offset` along dim `d` of zeros of size `total` there."""
    shape = list(v.shape)
    shape[d] = total
    out = tocha.zeros(shape, dtype=v.dtype, device=v.device)
    return out.index_copy(d, tocha.arange(offset, offset + v.shape[d], device=v.device), v)


def _stack(*args) -> Tensor:
    """The sparse tensors stacked along a new dim `dim`: each unsqueezed there, then joined."""
    *tensors, dim = args
    if not all(_is_sparse(t) for t in tensors):
        return _cat(*tensors, dim)  # its error for a dense tensor
    return _cat(*[_unsqueeze(t, dim) for t in tensors], dim)


KERNELS.update(cat=_cat, stack=_stack)

__all__ = ["KERNELS"]
