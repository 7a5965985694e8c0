"""Gathering and scattering: ``gather``, the ``scatter`` family, the ``index_*`` ops along one
dim, ``take``, ``put``, ``masked_scatter`` and the ``*_scatter`` embeddings.

Primitives (their kernel arguments after the arrays, what tocha-autograd's formulas receive):

    gather           (x, index), dim                     x sliced to index's size off `dim`
    scatter          (x, index, src), dim                src sliced to index's shape
    scatter_add      (x, index, src), dim
    scatter_reduce   (x, index, src), dim, reduce, include_self
    index_add        (x, index, source), dim, alpha
    index_copy       (x, index, source), dim
    index_fill       (x, index), dim, value

Indices are checked before a kernel runs (NumPy would wrap negative ones), so kernels may
trust them. ``take``, ``take_along_dim``, ``put``, ``masked_scatter`` and the ``*_scatter``
embeddings are composites of other ops: they need no kernel and no derivative of their own.
In-place forms write into their tensor, or, when autograd tracks it, rebase it on the
out-of-place result.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._api import export
from .._dispatch import (
    autocast_op,
    broadcast_error,
    call,
    check_same_device,
    defop,
    expect_tensor,
    not_a_tensor,
)
from .._tensor import Tensor, _wrap_dim, wrap
from ._argcheck import check_scalar_converts, flag, slice_args
from ._out import assign, inplace, write_out, write_out_same_dtype
from .creation import full
from .indexing import getitem_op, index_op, index_put, scalar_value, setitem_op

_INT64 = np.dtype("int64")
_INDEX_DTYPES = ("int32", "int64")
_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_SCATTER_REDUCE = {"add": "sum", "multiply": "prod"}


# -- kernels -------------------------------------------------------------------------------
def _flat_positions(xp, shape, index, dim: int):
    """The C-order flat positions, in an array of `shape`, that `index` names along `dim`:
    the index value on `dim`, each element's own coordinate on the other dims."""
    if index.ndim <= 1:
        return index.astype(_INT64, copy=False).reshape(-1)
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    positions = index * strides[dim]
    for k, n in enumerate(index.shape):
        if k != dim and n > 1:
            view = [1] * index.ndim
            view[k] = n
            positions = positions + (xp.arange(n, dtype=_INT64) * strides[k]).reshape(view)
    return positions.astype(_INT64, copy=False).reshape(-1)


def _target(x, out):
    """The C-contiguous array a scatter writes: `out` (in place) or a copy of `x`."""
    return x.copy() if out is None else out


def _gather_kernel(xp):
    def kernel(x, index, dim):
        if x.ndim == 1:
            return x.take(index)
        return xp.take_along_axis(x, index, dim)

    return kernel


def _scatter_kernel(xp):
    def kernel(x, index, src, dim, out=None):
        out = _target(x, out)
        out.reshape(-1)[_flat_positions(xp, x.shape, index, dim)] = src.reshape(-1)
        return out

    return kernel


def _scatter_add_kernel(xp):
    def kernel(x, index, src, dim, out=None):
        out = _target(x, out)
        xp.add.at(out.reshape(-1), _flat_positions(xp, x.shape, index, dim), src.reshape(-1))
        return out

    return kernel


def _identity(xp, dtype, reduce: str):
    """The value a scattered position starts from when `include_self` is false."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "b":
        return reduce == "amin"
    info = xp.finfo(dtype) if dtype.kind in "fV" else xp.iinfo(dtype)
    if dtype.kind in "fV":
        return -np.inf if reduce == "amax" else np.inf
    return info.min if reduce == "amax" else info.max


_UFUNCS = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def _scatter_reduce_kernel(xp):
    def kernel(x, index, src, dim, reduce, include_self, out=None):
        out = _target(x, out)
        flat = out.reshape(-1)
        positions = _flat_positions(xp, x.shape, index, dim)
        if not include_self:
            flat[positions] = _identity(xp, x.dtype, reduce)
        getattr(xp, _UFUNCS[reduce]).at(flat, positions, src.reshape(-1))
        if reduce == "mean":
            count = xp.bincount(positions, minlength=flat.size) + int(include_self)
            count = xp.maximum(count, 1)
            if x.dtype.kind in "fcV":
                flat[...] = flat / count.astype(x.dtype)
            else:
                flat[...] = flat // count
        return out

    return kernel


def _along(dim: int, index) -> tuple:
    return (slice(None),) * dim + (index,)


def _index_add_kernel(xp):
    def kernel(x, index, source, dim, alpha, out=None):
        out = _target(x, out)
        target = out.reshape(1) if out.ndim == 0 else out
        if alpha != 1:
            source = source * xp.asarray(alpha, dtype=source.dtype)
        xp.add.at(target, _along(dim, index), source.reshape(-1) if out.ndim == 0 else source)
        return out

    return kernel


def _index_copy_kernel(xp):
    def kernel(x, index, source, dim, out=None):
        out = _target(x, out)
        target = out.reshape(1) if out.ndim == 0 else out
        target[_along(dim, index)] = source.reshape(-1) if out.ndim == 0 else source
        return out

    return kernel


def _index_fill_kernel(xp):
    def kernel(x, index, dim, value, out=None):
        out = _target(x, out)
        target = out.reshape(1) if out.ndim == 0 else out
        target[_along(dim, index)] = value
        return out

    return kernel


gather_op = defop("gather", _gather_kernel)
scatter_op = defop("scatter", _scatter_kernel)
scatter_add_op = defop("scatter_add", _scatter_add_kernel)
scatter_reduce_op = defop("scatter_reduce", _scatter_reduce_kernel)
index_add_op = defop("index_add", _index_add_kernel)
index_copy_op = defop("index_copy", _index_copy_kernel)
index_fill_op = defop("index_fill", _index_fill_kernel)


# -- checks --------------------------------------------------------------------------------
def _title(t: Tensor) -> str:
    return _dtype.TITLE[t.dtype]


def _check_bounds(index: Tensor, size: int, dim: int, error=RuntimeError, prefix: str = ""):
    """PyTorch's error for an index outside ``[0, size)`` along `dim` (one pass: seen as
    unsigned, negative indices are larger than any size)."""
    data = index._data
    if data.size and int(data.view(data.dtype.str.replace("i", "u")).max()) >= size:
        bad = data[(data < 0) | (data >= size)].reshape(-1)[0]
        raise error(
            f"{prefix}index {int(bad)} is out of bounds for dimension {dim} with size {size}"
        )


def _check_flat_bounds(index: Tensor, numel: int) -> None:
    """take's and put's error for an index outside ``[-numel, numel)``."""
    data = index._data
    if data.size and (int(data.min()) < -numel or int(data.max()) >= numel):
        bad = data[(data < -numel) | (data >= numel)].reshape(-1)[0]
        raise IndexError(
            f"out of range: tried to access index {int(bad)} on a tensor of {numel} elements."
        )


def _src_dims_error(idx_shape, shape, src_shape, dim: int):
    """PyTorch's error for a `src` of other dims than self: it first compares index's sizes
    with self's (apart from `dim`) and, when they fit, with src's, reading src's size at
    each dim in turn (an IndexError past src's last dim) until one is smaller."""
    if all(n <= m for k, (n, m) in enumerate(zip(idx_shape, shape)) if k != dim):
        for k, n in enumerate(idx_shape):
            if src_shape and k >= len(src_shape):
                last = len(src_shape) - 1
                raise IndexError(
                    f"Dimension out of range (expected to be in range of [{-last - 1}, {last}], "
                    f"but got {k})"
                )
            if n > (src_shape[k] if src_shape else 1):
                break
    raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")


def _scatter_args(name: str, input: Tensor, dim, index: Tensor, src=None):
    """Check a gather or scatter and return ``(dim, index, src)``: dim in range, and `src`
    (when a Tensor) sliced to index's shape. ``index`` is None when it is empty (nothing to
    do)."""
    expect_tensor(name, index, "index", 3)
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor(name, input, "input", 1) from None
    dim = _wrap_dim(dim, ndim)
    if index._data.dtype.name not in _INDEX_DTYPES:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if isinstance(src, Tensor) and src._data.dtype != input._data.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if index._data.size == 0:
        return dim, None, src
    idx_shape, shape = index._data.shape, input._data.shape
    if max(index._data.ndim, 1) != max(ndim, 1):
        other = "input" if src is None else "self"
        raise RuntimeError(
            f"Index tensor must have the same number of dimensions as {other} tensor"
        )
    if isinstance(src, Tensor) and max(src._data.ndim, 1) != max(ndim, 1):
        _src_dims_error(index._data.shape, input._data.shape, src._data.shape, dim)
    if ndim == 0:
        size = 1
    else:
        size = shape[dim]
        if src is None:
            for k, (n, m) in enumerate(zip(idx_shape, shape)):
                if k != dim and n > m:
                    raise RuntimeError(
                        f"Size does not match at dimension {k} expected index "
                        f"{list(idx_shape)} to be no larger than self {list(shape)} apart from "
                        f"dimension {dim}"
                    )
        else:
            src_shape = src._data.shape if isinstance(src, Tensor) else idx_shape
            if any(
                (k != dim and n > m) or n > s
                for k, (n, m, s) in enumerate(zip(idx_shape, shape, src_shape))
            ):
                raise RuntimeError(
                    f"Expected index {list(idx_shape)} to be no larger than self {list(shape)} "
                    f"apart from dimension {dim} and to be no larger size than src "
                    f"{list(src_shape)}"
                )
    _check_bounds(index, size, dim)
    if isinstance(src, Tensor) and src._data.shape != idx_shape:
        key = tuple(slice(0, n) for n in idx_shape)
        src = call_view_getitem(src, key)
    return dim, index, src


def call_view_getitem(x: Tensor, key) -> Tensor:
    """``x[key]`` for a key of slices, as a view autograd sees."""
    from .._dispatch import call_view

    return call_view(getitem_op, x, key)


def _in_place(self: Tensor, op, inputs: tuple, *args, fills: bool = False) -> Tensor:
    """Run a scatter-family `op` on `self` (with tensor `inputs`) in place."""
    out_of_place = lambda: call(op, (self, *inputs), *args)  # noqa: E731
    return _write_plan(self, (op, inputs, args), out_of_place, fills)


def _write_plan(self: Tensor, plan, out_of_place, fills: bool = False) -> Tensor:
    """Run the plan ``(op, inputs, args)`` in place: its kernel writes into self's memory,
    unless autograd tracks self or an input (then `out_of_place()` is written into self);
    `fills` as `inplace`'s."""
    op, inputs, args = plan

    def direct():
        check_same_device((self, *inputs))
        data = self._data
        kernel = op.kernels[self._device]
        arrays = [t._data for t in inputs]
        if data.flags.c_contiguous:
            kernel(data, *arrays, *args, out=data)
        else:
            data[...] = kernel(data, *arrays, *args)

    return inplace(self, inputs, out_of_place, direct, fills=fills)


# -- gather and scatter --------------------------------------------------------------------
def gather(
    input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False, out: Tensor | None = None
) -> Tensor:
    """Values of `input` picked along `dim` by `index`:
    ``out[i][j][k] = input[index[i][j][k]][j][k]`` for ``dim == 0``.

    `index` (int64 or int32) has input's number of dims and, apart from `dim`, sizes no larger
    than input's. Shape: index's.
    """
    if sparse_grad is not False and sparse_grad is not True:
        flag("gather", sparse_grad, "sparse_grad")
    dim, idx, _ = _scatter_args("gather", input, dim, index)
    if idx is None:
        result = full(tuple(index.shape), 0, dtype=input.dtype, device=input._device)
    elif input._data.ndim == 0:
        result = call(gather_op, (input.reshape(1), idx.reshape(-1)), 0).reshape(index.shape)
    else:
        shape = input._data.shape
        key = tuple(slice(None) if k == dim else slice(0, n) for k, n in enumerate(idx._data.shape))
        if any(n != shape[k] for k, n in enumerate(idx._data.shape) if k != dim):
            input = call_view_getitem(input, key)
        result = call(gather_op, (input, idx), dim)
    return result if out is None else _write(out, result)


def _write(out: Tensor, result: Tensor) -> Tensor:
    from ._out import write_out

    return write_out(out, result)


def _src_tensor(input: Tensor, index: Tensor, src) -> Tensor:
    """scatter's `src`, or its scalar `value` as a tensor of index's shape."""
    if isinstance(src, Tensor):
        return src
    value = scalar_value(src, input.dtype)
    return full(tuple(index.shape), value, dtype=input.dtype, device=input._device)


def _scatter_call(name: str, input: Tensor, dim, index: Tensor, src, reduce=None):
    """(op, inputs, args) of a scatter, or None when the index is empty."""
    dim, idx, src = _scatter_args(name, input, dim, index, src)
    if reduce is not None and reduce not in _SCATTER_REDUCE:
        raise RuntimeError("reduce argument must be either add or multiply.")
    if idx is None:
        return None
    src = _src_tensor(input, idx, src)
    inputs = (idx.reshape(-1), src.reshape(-1)) if input._data.ndim == 0 else (idx, src)
    if reduce is None:
        return scatter_op, inputs, (dim,)
    return scatter_reduce_op, inputs, (dim, _SCATTER_REDUCE[reduce], True)


def _run(input: Tensor, plan) -> Tensor:
    """Run a scatter plan out of place (a copy of input for an empty index)."""
    if plan is None:
        return input.clone()
    op, inputs, args = plan
    if input._data.ndim == 0:
        return call(op, (input.reshape(1), *inputs), *args).reshape(())
    return call(op, (input, *inputs), *args)


def _run_(self: Tensor, plan) -> Tensor:
    """Run a scatter plan in place."""
    if plan is None:
        return self
    return _write_plan(self, plan, lambda: _run(self, plan))


def scatter(
    input: Tensor,
    dim: int,
    index: Tensor,
    src=None,
    *,
    value=None,
    reduce: str | None = None,
    out: Tensor | None = None,
) -> Tensor:
    """A copy of `input` with `src` (a tensor, or a number `value`) written at the positions
    `index` names along `dim`: ``out[index[i][j]][j] = src[i][j]`` for ``dim == 0``.
    With ``reduce="add"`` or ``"multiply"`` the values combine with those present.
    Where indices repeat, which write wins is unspecified."""
    src = value if src is None else src
    result = _run(input, _scatter_call("scatter", input, dim, index, src, reduce))
    return result if out is None else _write(out, result)


def scatter_(
    self: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce: str | None = None
) -> Tensor:
    """In-place form of `scatter`."""
    src = value if src is None else src
    return _run_(self, _scatter_call("scatter", self, dim, index, src, reduce))


def _add_call(input, dim, index, src):
    expect_tensor("scatter_add", src, "src", 4)
    dim, idx, src = _scatter_args("scatter", input, dim, index, src)
    if idx is None:
        return None
    if input._data.ndim == 0:
        return scatter_add_op, (idx.reshape(-1), src.reshape(-1)), (0,)
    return scatter_add_op, (idx, src), (dim,)


def scatter_add(
    input: Tensor, dim: int, index: Tensor, src: Tensor, *, out: Tensor | None = None
) -> Tensor:
    """A copy of `input` with every value of `src` added at the position `index` names along
    `dim`: ``out[index[i][j]][j] += src[i][j]`` for ``dim == 0`` (repeats accumulate)."""
    result = _run(input, _add_call(input, dim, index, src))
    return result if out is None else _write(out, result)


def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """In-place form of `scatter_add`."""
    return _run_(self, _add_call(self, dim, index, src))


def _reduce_call(input, dim, index, src, reduce, include_self):
    expect_tensor("scatter_reduce", src, "src", 4)
    include_self = flag("scatter_reduce", include_self, "include_self")
    if reduce not in _REDUCTIONS:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    try:
        dtype = input._data.dtype
    except AttributeError:
        raise not_a_tensor("scatter_reduce", input, "input", 1) from None
    if dtype.kind == "c" and reduce in ("amax", "amin"):
        raise NotImplementedError(
            f"\"scatter_gather_tensor_cpu_reduce_{reduce}\" not implemented for '{_title(input)}'"
        )
    dim, idx, src = _scatter_args("scatter", input, dim, index, src)
    if idx is None:
        return None
    if input._data.ndim == 0:
        idx, src, dim = idx.reshape(-1), src.reshape(-1), 0
    return scatter_reduce_op, (idx, src), (dim, reduce, include_self)


def scatter_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
    out: Tensor | None = None,
) -> Tensor:
    """A copy of `input` where the values of `src` sent by `index` along `dim` to one position
    are reduced with ``reduce`` ("sum", "prod", "mean", "amax" or "amin"), together with the
    value present unless ``include_self=False``. Integer means round down."""
    result = _run(input, _reduce_call(input, dim, index, src, reduce, include_self))
    return result if out is None else _write(out, result)


def scatter_reduce_(
    self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """In-place form of `scatter_reduce`."""
    return _run_(self, _reduce_call(self, dim, index, src, reduce, include_self))


# -- along one dim with a vector of indices ------------------------------------------------
def _index_args(
    name: str,
    input: Tensor,
    dim,
    index: Tensor,
    source=None,
    *,
    int64_only=False,
    error=RuntimeError,
    prefix: str = "",
):
    """Check an ``index_*`` op: dim in range, `index` a vector of ints in range, `source`
    shaped as input with ``len(index)`` along `dim`. Returns the wrapped dim."""
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor(name, input, "input", 1) from None
    dim = _wrap_dim(dim, ndim)
    idx = index._data
    if idx.ndim > 1:
        if name == "index_fill_":
            raise RuntimeError("Index has to be a vector/scalar")
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    size = input._data.shape[dim] if ndim else 1
    if source is not None:
        if source._data.dtype != input._data.dtype:
            raise RuntimeError(
                f"{name}(): self ({_title(input)}) and source ({_title(source)}) must have the "
                "same scalar type"
            )
        shape, sshape = list(input._data.shape), list(source._data.shape)
        mismatch = any(k != dim and n != m for k, (n, m) in enumerate(zip(shape, sshape)))
        if (
            mismatch
            or max(len(shape), 1) != max(len(sshape), 1)
            or (not shape and source._data.size != 1)
        ):
            raise RuntimeError(
                "source tensor shape must match self tensor shape, excluding the specified "
                f"dimension. Got self.shape = {shape} source.shape = {sshape}"
            )
        n = sshape[dim] if sshape else 1
        if idx.size != n:
            raise RuntimeError(
                f"{name}(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                f"({n}), for dim: {dim}"
            )
    _check_bounds(index, size, dim, error, prefix)
    return dim


def _index_dtype(
    name: str, index: Tensor, allowed: tuple, message: str, error=RuntimeError
) -> None:
    """Refuse an index tensor whose dtype is not in `allowed`, with PyTorch's `message`."""
    expect_tensor(name, index, "index", 3)
    if index._data.dtype.name not in allowed:
        raise error(message.format(title=_title(index)))


def _vector(index: Tensor) -> Tensor:
    return index.reshape(1) if index._data.ndim == 0 else index


def _out_of_range_in_self(_message: str) -> IndexError:
    """index_add's bounds error from PyTorch's kernel of a vector (or 0-dim) self."""
    return IndexError("index out of range in self")


def _add_plan(input, dim, index, source, alpha):
    if isinstance(index, Tensor) and index._data.ndim > 1:
        raise IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {index._data.ndim} "
            f"with type: {_title(index)} and size: {list(index._data.shape)}"
        )
    _index_dtype(
        "index_add",
        index,
        _INDEX_DTYPES,
        "index_add_(): Expected dtype int32/int64 for index but got: {title}",
    )
    expect_tensor("index_add", source, "source", 4)
    # a vector (or 0-dim) self takes PyTorch's one-dim kernel, whose error names no index
    error = _out_of_range_in_self if input._data.ndim <= 1 else RuntimeError
    dim = _index_args("index_add_", input, dim, index, source, error=error)
    if type(alpha) is float and not -65504.0 <= alpha <= 65504.0:
        check_scalar_converts(alpha, input.dtype)
    if input._data.dtype.kind == "b":  # a bool alpha: whether it is nonzero, as PyTorch
        alpha = bool(alpha)
    elif input._data.dtype.kind in "iu" and not isinstance(alpha, bool):
        alpha = int(alpha)
    return index_add_op, (_vector(index), source), (dim, alpha)


def index_add(
    input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1, out: Tensor | None = None
) -> Tensor:
    """A copy of `input` with ``alpha * source`` added along `dim` at the positions of the
    vector `index`: ``out[index[i]] += alpha * source[i]`` for ``dim == 0`` (repeats add)."""
    op, inputs, args = _add_plan(input, dim, index, source, alpha)
    result = call(op, (input, *inputs), *args)
    return result if out is None else _write(out, result)


def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """In-place form of `index_add`."""
    op, inputs, args = _add_plan(self, dim, index, source, alpha)
    return _in_place(self, op, inputs, *args)


def _copy_plan(input, dim, index, source):
    _index_dtype(
        "index_copy",
        index,
        ("int64",),
        "index_copy_(): Expected a long tensor for index, but got {title}",
    )
    expect_tensor("index_copy", source, "source", 4)
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("index_copy", input, "input", 1) from None
    d = _wrap_dim(dim, ndim)
    if source._data.ndim and (index._data.size != source._data.shape[d if ndim else 0]):
        raise IndexError(
            f"index_copy_(): Number of indices ({index._data.size}) should be equal to "
            f"source.size(dim) ({source._data.shape[d if ndim else 0]})"
        )
    d = _index_args(
        "index_copy_", input, dim, index, source, error=IndexError, prefix="index_copy_(): "
    )
    return index_copy_op, (_vector(index), source), (d,)


@autocast_op("index_copy")
def index_copy(
    input: Tensor, dim: int, index: Tensor, source: Tensor, *, out: Tensor | None = None
) -> Tensor:
    """A copy of `input` with the slices of `source` written along `dim` at the positions of
    the vector `index` (int64): ``out[index[i]] = source[i]`` for ``dim == 0``."""
    op, inputs, args = _copy_plan(input, dim, index, source)
    result = call(op, (input, *inputs), *args)
    return result if out is None else _write(out, result)


def index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """In-place form of `index_copy`."""
    op, inputs, args = _copy_plan(self, dim, index, source)
    return _in_place(self, op, inputs, *args)


def _fill_plan(input, dim, index, value):
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value._data.ndim} dimension(s)."
        )
    _index_dtype(
        "index_fill",
        index,
        ("int64",),
        "index_fill_(): Expected dtype int64 for index.",
        IndexError,
    )
    if isinstance(value, Tensor):
        value = value.item()
    dim = _index_args("index_fill_", input, dim, index, error=IndexError)
    return index_fill_op, (_vector(index),), (dim, scalar_value(value, input.dtype))


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """A copy of `input` with `value` (a number or 0-dim tensor) written along `dim` at the
    positions of the vector `index` (int64)."""
    op, inputs, args = _fill_plan(input, dim, index, value)
    return call(op, (input, *inputs), *args)


def index_fill_(self: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """In-place form of `index_fill`."""
    op, inputs, args = _fill_plan(self, dim, index, value)
    return _in_place(self, op, inputs, *args, fills=True)


# -- flat indices ------------------------------------------------------------------------------
def _long_index(name: str, index: Tensor) -> None:
    expect_tensor(name, index, "index", 2)
    if index._data.dtype != _INT64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {_title(index)}")


def take(input: Tensor, index: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The elements of `input`, read as a flat vector, at `index` (int64; negative counts from
    the end). Shape: index's."""
    _long_index("take", index)
    try:
        value = input._data.size
    except AttributeError:
        raise not_a_tensor("take", input, "input", 1) from None
    _check_flat_bounds(index, value)
    result = call(index_op, (input.reshape(-1), index), (0,))
    if out is None:
        return result
    if isinstance(out, Tensor) and out.dtype != input.dtype:
        raise RuntimeError(
            "take(): self and out expected to have the same dtype, but got self.dtype = "
            f"{_title(input)} and out.dtype = {_title(out)}"
        )
    return write_out(out, result)


def take_along_dim(
    input: Tensor, indices: Tensor, dim: int | None = None, *, out: Tensor | None = None
) -> Tensor:
    """`gather` after broadcasting `input` and `indices` on every dim but `dim`; with `dim`
    None, `gather` from the flattened input at the flattened indices."""
    expect_tensor("take_along_dim", input, "input", 1)
    expect_tensor("take_along_dim", indices, "indices", 2)
    if indices._data.dtype != _INT64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {_title(indices)}"
        )
    if dim is None:
        result = gather(input.reshape(-1), 0, indices.reshape(-1))
    else:
        ndim = input._data.ndim
        dim = _wrap_dim(dim, ndim)
        if not ndim:  # PyTorch reads the 0-dim input's size at `dim`
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        if indices._data.ndim != ndim:
            raise RuntimeError(
                "torch.take_along_dim(): input and indices should have the same number of "
                f"dimensions, but got {ndim} dimensions for input, and {indices._data.ndim} "
                "dimensions for indices"
            )
        shape = list(
            np.broadcast_shapes(
                tuple(1 if k == dim else n for k, n in enumerate(input._data.shape)),
                tuple(1 if k == dim else n for k, n in enumerate(indices._data.shape)),
            )
        )
        if ndim:
            shape[dim] = input._data.shape[dim]
            input = input.expand(shape)
            shape[dim] = indices._data.shape[dim]
            indices = indices.expand(shape)
        result = gather(input, dim, indices)
    return result if out is None else _write(out, result)


def _put_args(input: Tensor, index: Tensor, source: Tensor) -> None:
    expect_tensor("put", input, "input", 1)
    _long_index("put_", index)
    expect_tensor("put_", source, "source", 3)
    try:
        dtype = source._data.dtype
    except AttributeError:
        raise not_a_tensor("put", source, "source", 3) from None
    if dtype != input._data.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{_title(input)} and source.dtype = {_title(source)}."
        )
    if source._data.size != index._data.size:
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source._data.size}, index.numel() = {index._data.size}"
        )
    _check_flat_bounds(index, input._data.size)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of `input` with `source` written at the flat positions `index` (int64; negative
    counts from the end), or added there with `accumulate` (repeats then add up)."""
    _put_args(input, index, source)
    flat = index_put(input.reshape(-1), (index.reshape(-1),), source.reshape(-1), accumulate)
    return flat.reshape(input.shape)


def put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """In-place form of `put`."""
    _put_args(self, index, source)
    if not self._data.flags.c_contiguous:
        return assign(self, put(self, index, source, accumulate))

    def direct():
        flat = wrap(self._data.reshape(-1), self._device)
        flat.index_put_((index.reshape(-1),), source.reshape(-1), accumulate)

    return inplace(self, (source,), lambda: put(self, index, source, accumulate), direct)


# -- masks and embeddings ------------------------------------------------------------------
def _masked_args(input: Tensor, mask: Tensor, source: Tensor, shape) -> int:
    """Check a masked_scatter; returns the number of True entries of the broadcast mask."""
    expect_tensor("masked_scatter", source, "source", 3)
    try:
        dtype = mask._data.dtype
    except AttributeError:
        raise not_a_tensor("masked_scatter", mask, "mask", 2) from None
    if dtype.kind != "b":
        raise RuntimeError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{_LONG_NAMES.get(mask.dtype.name, _title(mask))}"
        )
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{_title(input)} and {_title(source)}"
        )
    count = int(mask.expand(shape)._data.sum())
    if count > source._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return count


_LONG_NAMES = {"int64": "Long"}


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of `input` (broadcast with `mask`) whose entries where `mask` is True take the
    leading values of `source`, in order."""
    for position, (name, t) in enumerate((("input", input), ("mask", mask), ("source", source))):
        if not isinstance(t, Tensor):
            raise not_a_tensor("masked_scatter", t, name, position + 1)
    try:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    except ValueError:
        raise broadcast_error(tuple(mask.shape), tuple(input.shape)) from None
    count = _masked_args(input, mask, source, shape)
    values = source.reshape(-1)[:count]
    return index_put(input.expand(shape), (mask.expand(shape),), values)


def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """In-place form of `masked_scatter`; `mask` broadcasts to self's shape."""
    shape = tuple(self.shape)
    count = _masked_args(self, mask, source, shape)
    return self.index_put_((mask.expand(shape),), source.reshape(-1)[:count])


def _embed(input: Tensor, src: Tensor, key: tuple, slice_shape) -> Tensor:
    """A copy of `input` with `src` written at the basic-index `key` (slice shape checked)."""
    expect_tensor("scatter", src, "src", 2)
    if tuple(src.shape) != tuple(slice_shape):
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(slice_shape)}"
        )
    if src._data.dtype != input._data.dtype:
        src = src.to(input.dtype)
    return call(setitem_op, (input, src), key)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of `input` with `src` written at `index` along `dim` (``input.select(dim,
    index)``'s place); `src` has that slice's shape."""
    try:
        shape = input._data.shape
    except AttributeError:
        raise not_a_tensor("select_scatter", input, "input", 1) from None
    dim = _wrap_dim(dim, len(shape))
    if not -shape[dim] <= index < shape[dim]:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(shape)} at "
            f"dimension {dim}"
        )
    key = (slice(None),) * dim + (index,)
    return _embed(input, src, key, shape[:dim] + shape[dim + 1 :])


def slice_scatter(
    input: Tensor,
    src: Tensor,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """A copy of `input` with `src` written at ``start:end:step`` along `dim`."""
    try:
        shape = input._data.shape
    except AttributeError:
        raise not_a_tensor("slice_scatter", input, "input", 1) from None
    dim = _wrap_dim(dim, len(shape))
    key = (slice(None),) * dim + (slice_args("slice_scatter", start, end, step),)
    result = _embed(input, src, key, np.empty(shape, dtype=np.bool_)[key].shape)
    return result if out is None else write_out_same_dtype(out, result)


def diagonal_scatter(
    input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1
) -> Tensor:
    """A copy of `input` with `src` written on the diagonal ``input.diagonal(offset, dim1,
    dim2)`` names; `src` has that diagonal's shape (the other dims, then the diagonal)."""
    expect_tensor("diagonal_scatter", src, "src", 2)
    try:
        shape = input._data.shape
    except AttributeError:
        raise not_a_tensor("diagonal_scatter", input, "input", 1) from None
    d1, d2 = _wrap_dim(dim1, len(shape)), _wrap_dim(dim2, len(shape))
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n1, n2 = shape[d1], shape[d2]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    rest = [n for k, n in enumerate(shape) if k not in (d1, d2)]
    if list(src.shape) != rest + [length]:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {rest + [length]}"
        )
    dev = input._device
    rows = _arange(length, max(0, -offset), dev)
    cols = _arange(length, max(0, offset), dev)
    moved = input.movedim((d1, d2), (0, 1))
    values = src.movedim(-1, 0).to(input.dtype)
    result = index_put(moved, (rows, cols), values)
    return result.movedim((0, 1), (d1, d2)).contiguous()


def _arange(n: int, start: int, dev) -> Tensor:
    from .creation import arange

    return arange(start, start + n, device=dev)


for _fn in (
    gather,
    scatter,
    scatter_add,
    scatter_reduce,
    index_add,
    index_copy,
    index_fill,
    take,
    take_along_dim,
    put,
    masked_scatter,
    select_scatter,
    slice_scatter,
    diagonal_scatter,
):
    export(_fn, method=True)
for _fn in (
    scatter_,
    scatter_add_,
    scatter_reduce_,
    index_add_,
    index_copy_,
    index_fill_,
    put_,
    masked_scatter_,
):
    export(_fn, method=True, function=False)
