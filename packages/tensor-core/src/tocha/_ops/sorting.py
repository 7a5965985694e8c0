"""Ordering: sorting, top-k, k-th values, unique values, binary search and histograms.

Primitives (kernel arguments after the input arrays):

    sort                 dim, descending                  -> (values, indices)
    topk                 k, dim, largest, sorted          -> (values, indices)
    kthvalue             k, dim, keepdim                  -> (values, indices)
    unique               return_inverse, return_counts, dim   -> tuple (not differentiable)
    unique_consecutive   return_inverse, return_counts, dim   -> tuple (not differentiable)
    searchsorted         right, out_int32                 (sorted_sequence, values)
    histc                bins, low, high
    histogram            bins, low, high, density         (input[, bins tensor][, weight])
    bincount             minlength                        (input[, weights])

Sorts are stable and put NaN last (NaN is the largest value), as PyTorch. Small dtypes (up to
32 bits) sort one packed 64-bit key per element: the value's bits, remapped so that unsigned
order is value order, above its position along the dim. One SIMD sort of the keys then gives
values and stable indices together, several times faster than a stable argsort.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import _dtype
from .. import return_types as rt
from .._api import export
from .._dispatch import call, defop, not_a_tensor
from .._tensor import Tensor, _wrap_dim
from ._argcheck import allocation_error, check_bool, check_scalar_fits, flag, index_arg, int_arg
from ._out import CPP_NAMES, write_out, write_out_same_dtype

_INT64 = np.dtype("int64")
_UINT32 = np.dtype("uint32")
_UINT64 = np.dtype("uint64")
_UNSIGNED = {1: np.dtype("uint8"), 2: np.dtype("uint16"), 4: _UINT32}


# -- kernels -------------------------------------------------------------------------------
def _positions(xp, n: int, dim: int, ndim: int, dtype):
    """``arange(n)`` laid along `dim` of an `ndim`-dim array, for broadcasting."""
    shape = [1] * ndim
    shape[dim] = n
    return xp.arange(n, dtype=dtype).reshape(shape)


def _packed_keys(xp, x, dim: int, descending: bool):
    """uint64 keys whose order is the stable order of `x` along `dim`: the value's bits in
    the high word (remapped to unsigned order; NaN canonical and largest, -0 equal to 0), the
    position along `dim` in the low word. None for dtypes over 32 bits or kinds without a
    remapping."""
    kind, size = x.dtype.kind, x.dtype.itemsize
    if size > 4 or kind not in "biuf" or x.shape[dim] >= 2**32:
        return None
    top = 1 << (8 * size - 1)
    if kind == "f":
        x = xp.where(xp.isnan(x), xp.asarray(np.nan, x.dtype), x + x.dtype.type(0))
        high = xp.ascontiguousarray(x).view(_UNSIGNED[size]).astype(_UINT32)
        # Negative values flip every bit of their width, others only the sign bit.
        sign = high >> _UINT32.type(8 * size - 1)
        flip = (_UINT32.type(0) - sign) & _UINT32.type((top << 1) - 1)
        flip |= _UINT32.type(top)
        high ^= flip
    elif kind == "i":
        high = xp.ascontiguousarray(x).view(_UNSIGNED[size]).astype(_UINT32)
        high ^= _UINT32.type(top)
    else:
        high = x.astype(_UINT32)
    if descending:
        high = ~high
    keys = xp.ascontiguousarray(high, dtype=_UINT64)
    keys <<= _UINT64.type(32)
    keys |= _positions(xp, x.shape[dim], dim, x.ndim, _UINT64)
    return keys


def _stable_order(xp, x, dim: int, descending: bool):
    """Indices (int64) of the stable sort of `x` along `dim`, NaN last (first descending)."""
    keys = _packed_keys(xp, x, dim, descending)
    if keys is not None:
        keys.sort(axis=dim)
        low = keys.view(_UINT32).reshape(keys.shape + (2,))[..., 0]
        return low.astype(_INT64)
    if not descending:
        return _argsort(xp, x, dim)
    # Stable descending: a stable ascending sort of the reversed input, reversed back.
    flip = (slice(None),) * dim + (slice(None, None, -1),)
    order = _argsort(xp, x[flip], dim)[flip]
    return (x.shape[dim] - 1) - order


def _argsort(xp, x, dim):
    if xp is np:
        return np.argsort(x, axis=dim, kind="stable")
    return xp.argsort(x, axis=dim)


def _take(xp, x, indices, dim):
    return x.take(indices) if x.ndim == 1 else xp.take_along_axis(x, indices, dim)


def _sort_kernel(xp):
    def kernel(x, dim, descending):
        if x.ndim == 0:
            return x.copy(), xp.zeros((), _INT64)
        indices = _stable_order(xp, x, dim, descending)
        return _take(xp, x, indices, dim), indices

    return kernel


def _topk_kernel(xp):
    def kernel(x, k, dim, largest, sorted):
        if x.ndim == 0:
            return x.copy(), xp.zeros((), _INT64)
        n = x.shape[dim]
        if k == 0:
            shape = list(x.shape)
            shape[dim] = 0
            return xp.empty(shape, x.dtype), xp.empty(shape, _INT64)
        if k < n:
            part = xp.argpartition(x, n - k if largest else k - 1, axis=dim)
            span = slice(n - k, n) if largest else slice(0, k)
            chosen = xp.sort(part[(slice(None),) * dim + (span,)], axis=dim)
        else:
            chosen = _positions(xp, n, dim, x.ndim, _INT64) + xp.zeros_like(x, _INT64)
        values = _take(xp, x, chosen, dim)
        order = _stable_order(xp, values, dim, largest)
        indices = xp.take_along_axis(chosen, order, dim)
        return _take(xp, x, indices, dim), indices

    return kernel


def _kthvalue_kernel(xp):
    def kernel(x, k, dim, keepdim):
        if x.ndim == 0:
            return x.copy(), xp.zeros((), _INT64)
        part = xp.argpartition(x, k - 1, axis=dim)
        indices = part[(slice(None),) * dim + (slice(k - 1, k),)]
        values = xp.take_along_axis(x, indices, dim)
        if not keepdim:
            values, indices = values.squeeze(dim), indices.squeeze(dim)
        return values, indices

    return kernel


def _rows(xp, x, dim):
    """`x` as a 2-D array: one row per slice along `dim`."""
    rest = 1
    for k, n in enumerate(x.shape):
        rest *= 1 if k == dim else n
    return xp.moveaxis(x, dim, 0).reshape(x.shape[dim], rest)


def _runs(xp, x, dim):
    """Bool vector: where a run of equal slices (along `dim`, or of the flat `x`) starts."""
    moved = x.reshape(-1, 1) if dim is None else _rows(xp, x, dim)
    starts = xp.ones(moved.shape[0], dtype=bool)
    if moved.shape[0] > 1:
        starts[1:] = (moved[1:] != moved[:-1]).any(axis=1)
    return starts


def _run_results(xp, x, starts, dim, return_inverse, return_counts):
    """(values, inverse, counts) of the runs of `x` that `starts` marks."""
    where = xp.flatnonzero(starts)
    values = x.reshape(-1)[where] if dim is None else xp.take(x, where, axis=dim)
    result = [values]
    if return_inverse:
        inverse = xp.cumsum(starts, dtype=_INT64) - 1
        result.append(inverse.reshape(x.shape) if dim is None else inverse)
    if return_counts:
        result.append(xp.diff(xp.append(where, starts.size)).astype(_INT64))
    return tuple(result)


def _unique_kernel(xp):
    def kernel(x, return_inverse, return_counts, dim):
        if dim is None:
            flat = x.reshape(-1)
            order = _stable_order(xp, flat, 0, False)
            ordered = flat[order]
            starts = _runs(xp, ordered, None)
        else:
            rows = _rows(xp, x, dim)
            order = _argsort(xp, rows, 0)[:, 0] if rows.shape[1] == 1 else _lexorder(xp, rows)
            ordered = xp.take(x, order, axis=dim)
            starts = _runs(xp, ordered, dim)
        values, *rest = _run_results(xp, ordered, starts, dim, return_inverse, return_counts)
        result = [values]
        if return_inverse:
            inverse = xp.empty_like(rest[0].reshape(-1))
            inverse[order] = rest[0].reshape(-1)
            result.append(inverse.reshape(x.shape) if dim is None else inverse)
        if return_counts:
            result.append(rest[-1])
        return tuple(result)

    return kernel


def _lexorder(xp, rows):
    """Order of the rows of a 2-D array, compared lexicographically."""
    if rows.shape[1] == 0:
        return xp.arange(rows.shape[0], dtype=_INT64)
    return xp.lexsort(rows.T[::-1]).astype(_INT64)


def _unique_consecutive_kernel(xp):
    def kernel(x, return_inverse, return_counts, dim):
        starts = _runs(xp, x, dim)
        return _run_results(xp, x, starts, dim, return_inverse, return_counts)

    return kernel


def _searchsorted_kernel(xp):
    def kernel(sequence, values, right, out_int32):
        side = "right" if right else "left"
        if sequence.ndim == 1:
            result = xp.searchsorted(sequence, values, side=side)
        else:
            result = _batched_search(xp, sequence, values, right)
        return xp.asarray(result, np.int32 if out_int32 else _INT64)

    return kernel


def _batched_search(xp, sequence, values, right: bool):
    """searchsorted along the last dim of each row: one stable sort of every row's boundaries
    and values together, keyed by (row, value, which comes first on ties)."""
    n, m = sequence.shape[-1], values.shape[-1]
    rows = sequence.reshape(-1, n)
    queries = values.reshape(-1, m).astype(rows.dtype)
    count = rows.shape[0]
    both = xp.concatenate([rows, queries], axis=1)
    # On ties, values go before boundaries (left) or after them (right).
    is_query = xp.concatenate([xp.zeros(n, bool), xp.ones(m, bool)])
    tie = xp.broadcast_to(is_query if right else ~is_query, both.shape)
    row = xp.broadcast_to(xp.arange(count)[:, None], both.shape)
    order = xp.lexsort((tie.reshape(-1), both.reshape(-1), row.reshape(-1)))
    queried = is_query[order % (n + m)]
    # A value's place among its row's boundaries: its sorted position, less the values
    # before it, less the boundaries of earlier rows.
    before = xp.cumsum(queried) - queried
    place = xp.arange(order.size) - before - (order // (n + m)) * n
    result = xp.empty(count * m, _INT64)
    target = order[queried]
    result[(target // (n + m)) * m + target % (n + m) - n] = place[queried]
    return result.reshape(values.shape)


def _histc_kernel(xp):
    def kernel(x, bins, low, high):
        flat = x.reshape(-1)
        if low == high and flat.size:
            low, high = float(flat.min()), float(flat.max())
        if low == high:
            low, high = low - 1, high + 1
        inside = flat[(flat >= low) & (flat <= high)]
        position = ((inside - low) * (bins / (high - low))).astype(_INT64)
        position = xp.minimum(position, bins - 1)
        return xp.bincount(position, minlength=bins).astype(x.dtype)

    return kernel


def _search_bins(xp, x, edges):
    """(keep, position): which values of the 1-D `x` lie between the first and the last of
    `edges`, and the bin of each kept value: the one before the edge a binary search finds
    for it (past the end: the last bin). Edges need not increase."""
    n = edges.shape[0]
    keep = (x >= edges[0]) & (x <= edges[-1])
    values = x[keep]
    first = xp.zeros(values.shape, dtype=np.int64)
    count = xp.full(values.shape, n, dtype=np.int64)
    while bool(count.any()):
        step = count // 2
        probe = first + step
        right = (count > 0) & ~(values < edges[xp.minimum(probe, n - 1)])
        first = xp.where(right, probe + 1, first)
        count = xp.where(right, count - step - 1, step)
    return keep, xp.minimum(first - 1, n - 2)


def _histogramdd_kernel(xp):
    def kernel(x, *rest):
        """x: (N, D); rest: D edge arrays (or none, then `counts` and `ranges` give them),
        an optional weight, then counts, ranges, density."""
        arrays, (counts, ranges, density) = rest[:-3], rest[-3:]
        dims = x.shape[1]
        if counts is None:
            edges, arrays = list(arrays[:dims]), arrays[dims:]
        else:
            edges = [
                xp.linspace(low, high, count + 1).astype(x.dtype)
                for count, (low, high) in zip(counts, ranges)
            ]
        if not dims:  # PyTorch's histogram of no dimensions: a 0-dim zero
            return (xp.zeros((), x.dtype),)
        weight = arrays[0] if arrays else None
        keep = xp.ones(x.shape[0], dtype=bool)
        positions = []
        for d in range(dims):
            inside, position = _search_bins(xp, x[:, d], edges[d])
            full = xp.zeros(x.shape[0], dtype=np.int64)
            full[inside] = position
            keep &= inside
            positions.append(full)
        shape = tuple(e.shape[0] - 1 for e in edges)
        flat = xp.ravel_multi_index(tuple(p[keep] for p in positions), shape)
        counted = None if weight is None else weight[keep].astype(np.float64)
        size = math.prod(shape)
        hist = xp.bincount(flat, counted, minlength=size)[:size].astype(np.float64)
        hist = hist.reshape(shape)
        if density:
            volume = xp.ones(shape, dtype=np.float64)
            for d, e in enumerate(edges):
                widths = xp.diff(e.astype(np.float64))
                volume = volume * widths.reshape((-1,) + (1,) * (dims - d - 1))
            hist = hist / (hist.sum() * volume)
        return (hist.astype(x.dtype), *edges)

    return kernel


def _searched_histogram(xp, x, edges, weight, density):
    """PyTorch's counts over `edges` that do not increase (NumPy refuses them): each value
    between the first and the last edge counts in the bin before the edge a binary search
    finds for it (past the end: the last bin)."""
    n = edges.shape[0]
    keep, position = _search_bins(xp, x, edges)
    counted = None if weight is None else weight.reshape(-1)[keep].astype(np.float64)
    hist = xp.bincount(position, counted, minlength=n - 1).astype(np.float64)
    if density:
        hist = hist / (hist.sum() * xp.diff(edges.astype(np.float64)))
    return hist


def _histogram_kernel(xp):
    def kernel(x, *rest):
        arrays, (bins, low, high, density) = rest[:-4], rest[-4:]
        if bins is None:  # the edges are the first array
            bins, arrays = arrays[0], arrays[1:]
        weight = arrays[0] if arrays else None
        if low is None and x.size:
            low, high = float(x.min()), float(x.max())
        elif low is None:
            low, high = 0.0, 0.0
        if not (math.isfinite(low) and math.isfinite(high)):
            raise RuntimeError(
                f"torch.histogramdd: dimension 0's range [{low}, {high}] is not finite"
            )
        if low == high:
            low, high = low - 0.5, high + 0.5
        if not isinstance(bins, int) and bool((bins[:-1] > bins[1:]).any()):
            hist = _searched_histogram(xp, x.reshape(-1), bins, weight, density)
            return hist.astype(x.dtype), bins
        hist, edges = xp.histogram(
            x.reshape(-1),
            bins,
            (low, high),
            weights=None if weight is None else weight.reshape(-1),
            density=density,
        )
        return hist.astype(x.dtype), edges.astype(x.dtype)

    return kernel


def _bincount_kernel(xp):
    def kernel(x, *rest):
        weights, minlength = (rest[0] if len(rest) > 1 else None), rest[-1]
        if weights is None:
            return xp.bincount(x, minlength=minlength).astype(_INT64, copy=False)
        dtype = np.float32 if weights.dtype == np.float32 else np.float64
        return xp.bincount(x, weights.astype(np.float64), minlength).astype(dtype)

    return kernel


sort_op = defop("sort", _sort_kernel)
topk_op = defop("topk", _topk_kernel)
kthvalue_op = defop("kthvalue", _kthvalue_kernel)
unique_op = defop("unique", _unique_kernel)
unique_consecutive_op = defop("unique_consecutive", _unique_consecutive_kernel)
searchsorted_op = defop("searchsorted", _searchsorted_kernel, differentiable=False)
histc_op = defop("histc", _histc_kernel, differentiable=False)
histogram_op = defop("histogram", _histogram_kernel, differentiable=False)
histogramdd_op = defop("histogramdd", _histogramdd_kernel, differentiable=False)
bincount_op = defop("bincount", _bincount_kernel, differentiable=False)


# -- checks ----------------------------------------------------------------------------------
def _title(t: Tensor) -> str:
    return _dtype.TITLE[t.dtype]


def _input(name: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise not_a_tensor(name, x)
    return x


def _write_pair(out, result, rtype):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"argument 'out' must be a tuple of 2 Tensors, not {type(out).__name__}")
    return rtype((write_out(out[0], result[0]), write_out(out[1], result[1])))


def _pair(result, rtype, out):
    result = rtype(result)
    return result if out is None else _write_pair(out, result, rtype)


# -- sorting ---------------------------------------------------------------------------------
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False, out=None):
    """``(values, indices)``: `input` sorted along `dim` (ascending unless `descending`), and
    where each value came from. Always stable: equal values keep their order. NaN counts as
    the largest value."""
    input = _input("sort", input)
    if input._data.dtype.kind == "c":
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    dim = _wrap_dim(dim, input._data.ndim)
    flag("sort", stable, "stable")
    descending = flag("sort", descending, "descending")
    return _pair(call(sort_op, (input,), dim, descending), rt.sort, out)


def argsort(
    input: Tensor,
    dim: int = -1,
    descending: bool = False,
    stable: bool | None = None,
    *,
    out: Tensor | None = None,
):
    """The indices that sort `input` along `dim` (``sort(...).indices``); ``out=`` only with
    `stable` given, as PyTorch's overloads take it."""
    if out is not None and stable is None:
        raise TypeError(
            "argsort() received an invalid combination of arguments - got (Tensor, out=Tensor), "
            "but expected one of:\n * (Tensor input, *, bool stable, int dim = -1, bool "
            "descending = False, Tensor out = None)\n * (Tensor input, int dim = -1, bool "
            "descending = False)\n"
        )
    if stable is not None and type(stable) is not bool:
        raise TypeError(f"argsort(): argument 'stable' must be bool, not {type(stable).__name__}")
    result = _sorting_indices(input, dim, descending, bool(stable))
    return result if out is None else write_out_same_dtype(out, result)


def _argsort_method(
    self: Tensor, dim: int = -1, descending: bool = False, stable: bool = False
) -> Tensor:
    """`tocha.argsort` of this tensor (no ``out=``, as PyTorch's method)."""
    return _sorting_indices(self, dim, descending, stable)


_argsort_method.__name__ = _argsort_method.__qualname__ = "argsort"


def _sorting_indices(input: Tensor, dim, descending, stable) -> Tensor:
    descending = flag("argsort", descending, "descending")
    return sort(input, dim, descending, stable=flag("argsort", stable, "stable")).indices


def msort(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """`input` sorted along its first dim."""
    result = sort(input, 0).values
    return result if out is None else write_out(out, result)


def topk(
    input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *, out=None
):
    """``(values, indices)`` of the `k` largest (smallest unless `largest`) elements along
    `dim`, in order (largest first). NaN counts as the largest value; among equal values the
    earlier index comes first."""
    if type(k) is not int or not -(2**63) <= k < 2**63:
        k = index_arg("topk", k, "k")
    input = _input("topk", input)
    kind = input._data.dtype.kind
    if kind in "bc":
        what = "bool" if kind == "b" else "complex"
        raise RuntimeError(
            f"{'' if kind == 'b' else ' '}topk does not support {what} dtypes on CPU"
        )
    ndim = input._data.ndim
    dim = _wrap_dim(dim, ndim)
    size = input._data.shape[dim] if ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    largest, sorted = flag("topk", largest, "largest"), flag("topk", sorted, "sorted")
    return _pair(call(topk_op, (input,), k, dim, largest, sorted), rt.topk, out)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *, out=None):
    """``(values, indices)`` of the `k`-th smallest element (counting from 1) along `dim`.
    NaN counts as the largest value."""
    if type(k) is not int or not -(2**63) <= k < 2**63:
        k = index_arg("kthvalue", k, "k")
    input = _input("kthvalue", input)
    ndim = input._data.ndim
    dim = _wrap_dim(dim, ndim)
    size = input._data.shape[dim] if ndim else 1
    if size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {dim} to have non-zero size.")
    if input._data.dtype.kind in "bc" and ndim:  # a 0-dim input runs no kernel
        raise NotImplementedError(f"\"kthvalue_cpu\" not implemented for '{_title(input)}'")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    keepdim = flag("kthvalue", keepdim, "keepdim")
    return _pair(call(kthvalue_op, (input,), k, dim, keepdim), rt.kthvalue, out)


# -- unique ----------------------------------------------------------------------------------
def _unique_result(result, return_inverse: bool, return_counts: bool):
    if not (return_inverse or return_counts):
        return result[0]
    return result


def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
):
    """The distinct values of `input` (flattened; with `dim`, the distinct slices along it),
    in ascending order; with `return_inverse`, where each element went (input's shape, or
    a vector along `dim`); with `return_counts`, how often each occurs. NaNs are distinct."""
    input = _input("unique", input)
    flag("_unique2", sorted, "sorted")
    return_inverse = flag("_unique2", return_inverse, "return_inverse")
    return_counts = flag("_unique2", return_counts, "return_counts")
    if input._data.dtype.kind == "c":
        kernel = "unique" if dim is None else "unique_dim"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_title(input)}'")
    if dim is not None:
        shape = input._data.shape
        dim = _wrap_dim(dim, len(shape))
        if any(n == 0 for k, n in enumerate(shape) if k != dim):
            raise RuntimeError(
                "There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                "applied"
            )
        if not shape:
            dim = None
    result = call(unique_op, (input,), return_inverse, return_counts, dim)
    return _unique_result(result, return_inverse, return_counts)


def unique_consecutive(
    input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
):
    """`input` (flattened; with `dim`, its slices along it) with each run of equal
    consecutive values kept once; `return_inverse` and `return_counts` as `unique`."""
    input = _input("unique_consecutive", input)
    return_inverse = flag("unique_consecutive", return_inverse, "return_inverse")
    return_counts = flag("unique_consecutive", return_counts, "return_counts")
    if input._data.dtype.kind == "c":
        kernel = "unique" if dim is None else "unique_dim"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_title(input)}'")
    if dim is not None:
        ndim = input._data.ndim
        if ndim == 0 and type(dim) is int:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        dim = _wrap_dim(dim, ndim)
        if any(n == 0 for k, n in enumerate(input._data.shape) if k != dim):
            raise RuntimeError(
                "There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                "applied"
            )
    result = call(unique_consecutive_op, (input,), return_inverse, return_counts, dim)
    return _unique_result(result, return_inverse, return_counts)


# -- binary search ---------------------------------------------------------------------------
def _values_tensor(values, like: Tensor) -> Tensor:
    if isinstance(values, Tensor):
        return values
    from .creation import tensor

    return tensor(values, device=like._device)


def searchsorted(
    sorted_sequence: Tensor,
    input,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    out: Tensor | None = None,
    sorter: Tensor | None = None,
) -> Tensor:
    """For each value of `input` (a tensor or a number), the index at which it would be
    inserted in the innermost dim of `sorted_sequence` to keep it sorted: before equal
    boundaries, or after them with ``right=True`` / ``side="right"``. A sequence of several
    dims searches row by row; `input` then shares its leading dims. `sorter` sorts the
    sequence first. Result int64 (int32 with `out_int32`)."""
    if not isinstance(sorted_sequence, Tensor):
        raise not_a_tensor("searchsorted", sorted_sequence, "sorted_sequence")
    right = flag("searchsorted", right, "right")
    out_int32 = flag("searchsorted", out_int32, "out_int32")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of "
                "left while right was True"
            )
        right = side == "right"
    values = _values_tensor(input, sorted_sequence)
    for t in (sorted_sequence, values):
        if t._data.dtype.kind == "c" and values._data.size:  # the kernel runs on no value
            raise NotImplementedError(f"\"searchsorted_out_cpu\" not implemented for '{_title(t)}'")
    if _dtype.promote_operands((sorted_sequence, input)) is _dtype.bool and values._data.size:
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    seq_shape, val_shape = sorted_sequence._data.shape, values._data.shape
    if sorted_sequence._data.ndim == 0:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq_shape)} and input value tensor {list(val_shape)}"
        )
    if len(seq_shape) > 1 and seq_shape[:-1] != val_shape[:-1]:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq_shape)} and input value tensor {list(val_shape)}"
        )
    if sorter is not None:
        if not isinstance(sorter, Tensor):
            raise not_a_tensor("searchsorted", sorter, "sorter", None)
        if sorter._data.dtype != np.dtype("int64"):
            raise RuntimeError(
                f"torch.searchsorted(): sorter must be a tensor of long dtype but got "
                f"{_title(sorter)}"
            )
        if sorter._data.shape != seq_shape:
            raise RuntimeError(
                "torch.searchsorted(): boundary and sorter must have the same size, but got "
                f"boundary tensor {list(seq_shape)}and got sorter tensor {list(sorter.shape)}"
            )
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    dtype = _dtype.promote_types(sorted_sequence.dtype, values.dtype)
    result = call(searchsorted_op, (sorted_sequence.to(dtype), values.to(dtype)), right, out_int32)
    return result if out is None else write_out(out, result)


def bucketize(
    input,
    boundaries: Tensor,
    *,
    out_int32: bool = False,
    right: bool = False,
    out: Tensor | None = None,
) -> Tensor:
    """For each value of `input`, the index of the bucket of the 1-D `boundaries` it falls in:
    ``boundaries[i-1] < x <= boundaries[i]`` (``<=``, ``<`` with `right`)."""
    if not isinstance(boundaries, Tensor):
        raise not_a_tensor("bucketize", boundaries, "boundaries", 2)
    if boundaries._data.ndim != 1:
        raise RuntimeError(
            f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})"
        )
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


# -- histograms ------------------------------------------------------------------------------
def _check_float(name: str, x: Tensor, kernel: str) -> None:
    if x._data.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_title(x)}'")


def histc(
    input: Tensor,
    bins: int = 100,
    min=0,
    max=0,
    *,  # noqa: A002
    out: Tensor | None = None,
) -> Tensor:
    """Counts of the elements of `input` in `bins` equal-width bins spanning ``[min, max]``
    (the data's range when both are 0); elements outside are ignored. Input's dtype."""
    input = _input("histc", input)
    bins = int_arg("histc", bins, "bins")
    _check_float("histc", input, "histogram_cpu")
    for bound in (min, max):
        check_scalar_fits(bound, input.dtype)
    if bins <= 0:
        raise RuntimeError("torch.histc(): bins must be > 0, but got " + str(bins) + " for dim 0")
    if not (math.isfinite(min) and math.isfinite(max)):
        raise RuntimeError(f"torch.histc: range of [{min:g}, {max:g}] is not finite")
    if max < min:
        raise RuntimeError("torch.histc: max must be larger than min")
    try:
        result = call(histc_op, (input,), bins, builtins.float(min), builtins.float(max))
    except (MemoryError, ValueError) as exc:
        raise allocation_error(exc, (bins,), input._data.itemsize) from None
    return result if out is None else write_out(out, result)


def histogram(
    input: Tensor,
    bins=100,
    *,
    range=None,
    weight: Tensor | None = None,  # noqa: A002
    density: bool = False,
    out=None,
):
    """``(hist, bin_edges)``: the histogram of `input` over `bins` (a count of equal-width bins
    over `range`, by default the data's, or a tensor of increasing edges), each element
    counting `weight` (default 1); with `density`, normalised to integrate to 1."""
    input = _input("histogram", input)
    if weight is not None and not isinstance(weight, Tensor):
        raise not_a_tensor("histogram", weight, "weight", None)
    check_bool("histogram", density, "density")
    if not isinstance(bins, Tensor):
        bins = int_arg("histogram", bins, "bins")
        if input.dtype in (_dtype.float16, _dtype.bfloat16) and input._data.size:
            # PyTorch's equal-width kernel has no such form (its bin-edges one has)
            raise NotImplementedError(f"\"histogramdd\" not implemented for '{_title(input)}'")
    _check_float("histogram", input, "histogramdd")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
            f"should have the same dtype, but got input({CPP_NAMES[input.dtype.name]}), and "
            f"weight({CPP_NAMES[weight.dtype.name]})"
        )
    low = high = None
    if range is not None:
        for bound in range:
            check_scalar_fits(bound, input.dtype)
        low, high = builtins.float(range[0]), builtins.float(range[1])
        if not (math.isfinite(low) and math.isfinite(high)):
            raise RuntimeError(
                f"torch.histogramdd: dimension 0's range [{low:g}, {high:g}] is not finite"
            )
        if low > high:
            raise RuntimeError(
                f"torch.histogram(): min should not exceed max, but got min {low} max {high}"
            )
    elif input._data.size == 0 and not isinstance(bins, Tensor):
        low, high = 0.0, 1.0  # PyTorch's range for no data
    inputs = [input]
    if isinstance(bins, Tensor):
        if bins.ndim != 1:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have one dimension, but got "
                f"{bins.ndim} dimensions in the bins tensor for dimension 0"
            )
        count = bins.shape[0] - 1
        inputs.append(bins.to(input.dtype))
        bins = None
    else:
        count = bins
    if count <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for dimension 0")
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with "
                f"shape {[input.numel(), 1]} and weight with shape {list(weight.shape)}"
            )
        inputs.append(weight)
    try:
        result = rt.histogram(call(histogram_op, tuple(inputs), bins, low, high, density))
    except (MemoryError, ValueError) as exc:
        raise allocation_error(exc, (count,), input._data.itemsize) from None
    return result if out is None else _write_pair(out, result, rt.histogram)


def _histogramdd_bins_type(bins) -> None:
    """PyTorch's parser refusing `bins` that is neither an int nor a sequence."""
    if isinstance(bins, Tensor) or not isinstance(bins, (int, list, tuple)) or bins is True:
        got = "Tensor" if isinstance(bins, Tensor) else type(bins).__name__
        raise TypeError(
            f"histogramdd() received an invalid combination of arguments - got (Tensor, "
            f"bins={got}), but expected one of:\n"
            " * (Tensor input, int bins, tuple of floats range = None, Tensor weight = None, "
            "bool density = False)\n"
            " * (Tensor input, tuple of ints bins, tuple of floats range = None, Tensor weight = "
            "None, bool density = False)\n"
            " * (Tensor input, tuple of Tensors bins, tuple of floats range = None, Tensor weight "
            "= None, bool density = False)\n"
        )


def _histogramdd_bins(input: Tensor, bins, dims: int):
    """(counts, edge tensors): `bins` read as an int, D ints or D 1-D edge tensors."""
    if isinstance(bins, int):
        bins = [bins] * dims
    bins = list(bins)
    if bins and isinstance(bins[0], Tensor):
        for i, b in enumerate(bins):
            if not isinstance(b, Tensor):
                raise TypeError(
                    f"expected Tensor as element {i} in argument 1, but got {type(b).__name__}"
                )
        if len(bins) != dims:
            raise RuntimeError(
                f"torch.histogramdd: expected {dims} sequences of bin edges for a {dims}-"
                f"dimensional histogram but got {len(bins)}"
            )
        for d, b in enumerate(bins):
            if b.ndim != 1:
                raise RuntimeError(
                    "torch.histogramdd: bins tensor should have one dimension, but got "
                    f"{b.ndim} dimensions in the bins tensor for dimension {d}"
                )
            if b.dtype is not input.dtype:
                raise RuntimeError(
                    "torch.histogramdd: input tensor and bins tensors should have the same "
                    f"dtype, but got input with dtype {CPP_NAMES[input.dtype.name]} and bins "
                    f"for dimension {d} with dtype {CPP_NAMES[b.dtype.name]}"
                )
        return [b.shape[0] - 1 for b in bins], bins
    counts = [int_arg("histogramdd", b, "bins") for b in bins]
    if len(counts) != dims:
        raise RuntimeError(
            "histogramdd: The size of bins must be equal to the innermost dimension of the input."
        )
    return counts, None


def _histogramdd_ranges(input: Tensor, flat: Tensor, range, dims: int) -> list:
    """The (low, high) of each dimension: `range`'s pairs, else the data's extremes (0 to 1
    for no data), widened by a half on each side where they meet."""
    if range is not None:
        range = [builtins.float(r) for r in range]
        if len(range) != 2 * dims:
            raise RuntimeError(
                f"torch.histogramdd: for a {dims}-dimensional histogram range should have "
                f"{2 * dims} elements, but got {len(range)}"
            )
        pairs = list(zip(range[::2], range[1::2]))
    elif flat.shape[0]:
        data = flat._host()
        pairs = list(zip(data.min(0).tolist(), data.max(0).tolist()))
    else:
        pairs = [(0.0, 1.0)] * dims
    ranges = []
    for d, (low, high) in enumerate(pairs):
        if low > high:
            raise RuntimeError(
                f"torch.histogramdd: min should not exceed max, but got min {low:g} max "
                f"{high:g} for dimension {d}"
            )
        if not (math.isfinite(low) and math.isfinite(high)):
            raise RuntimeError(
                f"torch.histogramdd: dimension {d}'s range [{low:g}, {high:g}] is not finite"
            )
        ranges.append((low - 0.5, high + 0.5) if low == high else (low, high))
    return ranges


def histogramdd(
    input: Tensor,
    bins,
    range=None,
    weight: Tensor | None = None,  # noqa: A002
    density: bool = False,
):
    """``(hist, bin_edges)``: the D-dimensional histogram of the points in the last dim of
    `input` (shape ``(*, D)``). `bins` is an int, D ints (equal-width bins over `range`,
    a flat sequence of D (min, max) pairs, by default the data's) or D 1-D tensors of bin
    edges; each point counts `weight` (shape ``(*)``, default 1); with `density`, the
    histogram is normalised to integrate to 1. `hist` has one dim per input dim, in
    input's dtype; `bin_edges` is a tuple of D tensors."""
    input = _input("histogramdd", input)
    if weight is not None and not isinstance(weight, Tensor):
        raise not_a_tensor("histogramdd", weight, "weight", None)
    check_bool("histogramdd", density, "density")
    _histogramdd_bins_type(bins)
    if input.ndim == 0 and isinstance(bins, int):  # PyTorch reads the last dim to expand it
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_title(input)}'")
    dims = input.shape[-1]
    counts, edges = _histogramdd_bins(input, bins, dims)
    if weight is not None:
        if weight.dtype is not input.dtype:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight "
                f"tensor should have the same dtype, but got input({CPP_NAMES[input.dtype.name]}"
                f"), and weight({CPP_NAMES[weight.dtype.name]})"
            )
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with "
                f"shape {list(input.shape)} and weight with shape {list(weight.shape)}"
            )
    for d, count in enumerate(counts):
        if count <= 0:
            raise RuntimeError(
                f"torch.histogram(): bins must be > 0, but got {count} for dimension {d}"
            )
    flat = input.reshape(math.prod(input.shape[:-1]), dims)
    inputs = [flat]
    ranges = None
    if edges is None:
        ranges = _histogramdd_ranges(input, flat, range, dims)
    else:
        inputs.extend(edges)
        counts = None
    if weight is not None:
        inputs.append(weight.reshape(-1))
    try:
        hist, *bin_edges = call(histogramdd_op, tuple(inputs), counts, ranges, bool(density))
    except (MemoryError, ValueError) as exc:
        raise _histogramdd_allocation_error(exc, counts, input._data.dtype) from None
    return rt.histogramdd((hist, tuple(bin_edges)))


def _histogramdd_allocation_error(exc: Exception, counts, dtype) -> Exception:
    """PyTorch's error where histogramdd's arrays do not fit: it allocates each dim's edges
    first (beyond memory: the allocator's error), then the histogram (a numel beyond int64:
    its overflow error)."""
    if counts is None:  # the edges were given: nothing to allocate beyond them
        return exc
    widest = (max(counts) + 1,)
    try:
        np.empty(widest, dtype)
    except (MemoryError, ValueError):
        return allocation_error(exc, widest, dtype.itemsize)
    if math.prod(counts) >= 2**63:
        return RuntimeError("numel: integer multiplication overflow")
    return allocation_error(exc, tuple(counts), dtype.itemsize)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """Counts of each value of the 1-D non-negative integer `input` (or the sums of their
    `weights`), of length ``max(input) + 1`` or `minlength`."""
    input = _input("bincount", input)
    data = input._data
    if data.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_title(input)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if data.ndim != 1 or (data.size and int(data.min()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return call(bincount_op, (input,), int(minlength))
    if weights._data.shape != data.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    return call(bincount_op, (input, weights), int(minlength))


for _fn in (sort, msort, topk, kthvalue, unique, unique_consecutive, histc, histogram):
    export(_fn, method=True)
export(argsort)
export(_argsort_method, "argsort", method=True, function=False)
export(bincount, method=True)
export(histogramdd)
export(searchsorted)
export(bucketize)
