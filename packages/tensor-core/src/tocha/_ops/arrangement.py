"""Shape extras: flips and rolls, triangles and diagonals, broadcasting helpers, splits and
stacks, repeats and grids, pairwise distances, differences and integrals, covariance.

Primitives are kept to what no composite does well: ``flip``, ``roll``, ``tril``/``triu``,
``logcumsumexp`` (copies) and ``diagonal`` (a view). Everything else is composed of tocha
ops, so it needs no kernel and gets its gradient from theirs.
"""

from __future__ import annotations

import itertools
import numbers
import operator
import warnings

import numpy as np

from .. import _dtype
from .._api import PUBLIC, export
from .._dispatch import (
    autocast_op,
    broadcast_error,
    call,
    call_view,
    defop,
    expect_tensors,
    not_a_tensor,
)
from .._stack import user_stacklevel
from .._tensor import Size, Tensor, _wrap_dim
from ._argcheck import check_dtype, check_tensor_list, check_tensors, index_arg
from ._out import assign, write_out, write_out_same_dtype
from .creation import _from_host
from .shape import _dims, _unaliased, int_tuple, restrider


# -- kernels ---------------------------------------------------------------------------------
def _diagonal_kernel(xp):
    restride = restrider(xp)

    def kernel(x, offset, dim1, dim2):
        length = diagonal_length(x.shape, offset, dim1, dim2)
        start = x
        if length:
            key = [slice(None)] * x.ndim
            key[dim1], key[dim2] = slice(max(-offset, 0), None), slice(max(offset, 0), None)
            start = x[tuple(key)]
        others = [k for k in range(x.ndim) if k not in (dim1, dim2)]
        shape = tuple(x.shape[k] for k in others) + (length,)
        strides = tuple(x.strides[k] for k in others) + (x.strides[dim1] + x.strides[dim2],)
        return restride(start, shape, strides)

    return kernel


def _logcumsumexp_kernel(xp):
    def kernel(x, dim):
        if x.dtype.kind == "c":
            return _complex_logcumsumexp(xp, x, dim)
        if x.ndim == 0:
            return x.copy()
        return xp.logaddexp.accumulate(x, axis=dim)

    return kernel


def _complex_logcumsumexp(xp, x, dim: int):
    """The complex scan ``out[k] = log(exp(out[k-1]) + exp(x[k]))`` from ``-inf+0j``, each
    step taken about its operand of larger real part (so the imaginary parts run on, not
    wrapped into (-pi, pi]), as PyTorch's."""
    out = xp.empty_like(x)
    if x.ndim == 0:
        out[...] = _log_add_exp_complex(xp, xp.asarray(complex(-np.inf, 0), x.dtype), x)
        return out
    steps, results = xp.moveaxis(x, dim, 0), xp.moveaxis(out, dim, 0)
    total = xp.full(steps.shape[1:], complex(-np.inf, 0), x.dtype)
    for k in range(steps.shape[0]):
        total = results[k] = _log_add_exp_complex(xp, total, steps[k])
    return out


def _log_add_exp_complex(xp, total, x):
    """``log(exp(total) + exp(x))`` as ``high + log1p(exp(low - high))``, `low` the operand
    of smaller real part (`total` on a tie); equal infinite real parts are summed directly
    (+inf) or give `low` (-inf); a NaN anywhere gives ``nan+nanj``."""
    total_low = total.real <= x.real
    low, high = xp.where(total_low, total, x), xp.where(total_low, x, total)
    with np.errstate(all="ignore"):
        result = high + xp.log1p(xp.exp(low - high))
        infinite = xp.isinf(low.real) & (low.real == high.real)
        if infinite.any():
            summed = xp.log(xp.exp(low) + xp.exp(high))
            result = xp.where(infinite, xp.where(low.real > 0, summed, low), result)
    return xp.where(xp.isnan(total) | xp.isnan(x), complex(np.nan, np.nan), result)


# laid out as x (by the size of its strides), as PyTorch's
flip_op = defop("flip", lambda xp: lambda x, dims: xp.flip(x, dims).copy(order="K"))
roll_op = defop("roll", lambda xp: lambda x, shifts, dims: xp.roll(x, shifts, dims))
tril_op = defop("tril", lambda xp: lambda x, k: xp.tril(x, k))
triu_op = defop("triu", lambda xp: lambda x, k: xp.triu(x, k))
diagonal_op = defop("diagonal", _diagonal_kernel)
logcumsumexp_op = defop("logcumsumexp", _logcumsumexp_kernel, opmath=True)


def diagonal_length(shape, offset: int, dim1: int, dim2: int) -> int:
    """The number of elements on diagonal `offset` of dims `dim1` and `dim2` of `shape`."""
    n1, n2 = shape[dim1], shape[dim2]
    return max(min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2), 0)


def _func(name: str):
    """A public tocha function looked up when called (its module may load after this one)."""
    return lambda *args, **kwargs: PUBLIC[name](*args, **kwargs)


_zeros, _ones, _arange, _cat = _func("zeros"), _func("ones"), _func("arange"), _func("cat")
_stack, _where, _index_select = _func("stack"), _func("where"), _func("index_select")


def _float(t: Tensor) -> Tensor:
    """`t` in the default float dtype when it is bool or integer (PyTorch's int-to-float)."""
    return t if t.dtype.rank >= _dtype.FLOATING else t.to(_dtype.DEFAULTS.float)


# -- flips, rolls, rotations -----------------------------------------------------------------
def flip(input: Tensor, *dim_args, dims=None) -> Tensor:
    """A copy of `input` with the order of elements reversed along `dims` (given as
    ``dims=``, as one sequence or, on the Tensor method, one by one)."""
    if dims is None:
        dims = dim_args
    elif dim_args:
        raise TypeError("flip() got multiple values for argument 'dims'")
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("flip", input, "input", 1) from None
    dims = _dims(int_tuple(dims, "flip", "dims"), ndim)
    if not input._data.ndim:
        return input.clone()
    return call(flip_op, (input,), dims)


def fliplr(input: Tensor) -> Tensor:
    """`input` flipped left to right (along dim 1); at least 2-D."""
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("fliplr", input, "input", 1) from None
    if ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    """`input` flipped up to down (along dim 0); at least 1-D."""
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("flipud", input, "input", 1) from None
    if ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """`input` rolled by `shifts` along `dims` (elements moving past the end come back at the
    start); without `dims` the flattened tensor is rolled and its shape restored."""
    shifts = int_tuple(
        (shifts,) if isinstance(shifts, (tuple, list)) else (shifts,), "roll", "shifts"
    )
    dims = (
        ()
        if dims is None
        else int_tuple((dims,) if isinstance(dims, (tuple, list)) else (dims,), "roll", "dims")
    )
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        return call(roll_op, (input,), shifts[0], None)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    dims = tuple(_wrap_dim(d, input._data.ndim) for d in dims)
    return call(roll_op, (input,), shifts, dims)


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """`input` rotated by 90 degrees `k` times in the plane of `dims`, from the first
    towards the second."""
    if type(k) is not int or not -(2**63) <= k < 2**63:
        k = index_arg("rot90", k, "k")
    dims = int_tuple((dims,), "rot90", "dims")
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("rot90", input, "input", 1) from None
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    d0, d1 = _wrap_dim(dims[0], ndim), _wrap_dim(dims[1], ndim)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    k %= 4
    if k == 2:
        return flip(input, (d0, d1))
    if k == 0:
        return input.clone()
    # The transposed view of a fresh flip nobody else sees (PyTorch transposes it in place).
    return _unaliased(flip(input, (d1 if k == 1 else d0,)).transpose(d0, d1))


# -- triangles and diagonals -----------------------------------------------------------------
def _triangle(op, input: Tensor, diagonal: int) -> Tensor:
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor(op.name, input, "input", 1) from None
    if ndim < 2:
        raise RuntimeError(f"{op.name}: input tensor must have at least 2 dimensions")
    return call(op, (input,), operator.index(diagonal))


def tril(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
    """The lower triangle of each matrix of `input` (on and below diagonal `diagonal`; 0 is
    the main one, positive ones are above it); the other elements are 0."""
    if type(diagonal) is not int or not -(2**63) <= diagonal < 2**63:
        diagonal = index_arg("tril", diagonal, "diagonal")
    result = _triangle(tril_op, input, diagonal)
    return result if out is None else write_out(out, result)


def triu(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
    """The upper triangle of each matrix of `input` (on and above diagonal `diagonal`)."""
    if type(diagonal) is not int or not -(2**63) <= diagonal < 2**63:
        diagonal = index_arg("triu", diagonal, "diagonal")
    result = _triangle(triu_op, input, diagonal)
    return result if out is None else write_out(out, result)


def _triangle_(op, self: Tensor, diagonal: int) -> Tensor:
    return assign(self, _triangle(op, self, diagonal))


def tril_(self: Tensor, diagonal: int = 0) -> Tensor:
    """In-place form of `tril`."""
    if type(diagonal) is not int or not -(2**63) <= diagonal < 2**63:
        diagonal = index_arg("tril_", diagonal, "diagonal")
    return _triangle_(tril_op, self, diagonal)


def triu_(self: Tensor, diagonal: int = 0) -> Tensor:
    """In-place form of `triu`."""
    if type(diagonal) is not int or not -(2**63) <= diagonal < 2**63:
        diagonal = index_arg("triu_", diagonal, "diagonal")
    return _triangle_(triu_op, self, diagonal)


def _triangle_indices(lower: bool, row: int, col: int, offset: int, dtype, device) -> Tensor:
    row, col, offset = (operator.index(v) for v in (row, col, offset))
    if not all(-(2**63) <= v < 2**63 for v in (row, col, offset)):
        raise ValueError("Overflow when unpacking long long")
    if row < 0 or col < 0:
        raise RuntimeError(
            f"row must be non-negative, got{row}"
            if row < 0
            else f"col must be non-negative, got{col}"
        )
    dtype = _dtype.int64 if dtype is None else dtype
    if dtype not in (_dtype.int32, _dtype.int64):
        name = "tril_indices" if lower else "triu_indices"
        check_dtype(name, dtype)
        raise NotImplementedError(f"\"{name}\" not implemented for '{_dtype.TITLE[dtype]}'")
    pick = np.tril_indices if lower else np.triu_indices
    values = np.stack(pick(row, offset, col)) if row and col else np.zeros((2, 0), np.int64)
    return _from_host(values, dtype, device, False)


def tril_indices(
    row: int, col: int, offset: int = 0, *, dtype=_dtype.int64, device=None, layout=None
) -> Tensor:
    """The (row, column) coordinates of the lower triangle of a ``row x col`` matrix, a
    ``(2, N)`` tensor in row-major order."""
    return _triangle_indices(True, row, col, offset, dtype, device)


def triu_indices(
    row: int, col: int, offset: int = 0, *, dtype=_dtype.int64, device=None, layout=None
) -> Tensor:
    """The (row, column) coordinates of the upper triangle of a ``row x col`` matrix."""
    return _triangle_indices(False, row, col, offset, dtype, device)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A view of the diagonal `offset` of the matrices that dims `dim1` and `dim2` make.

    Shape: the other dims, then the diagonal's length.
    """
    if type(offset) is not int or not -(2**63) <= offset < 2**63:
        offset = index_arg("diagonal", offset, "offset")
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("diagonal", input, "input", 1) from None
    d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return call_view(diagonal_op, input, operator.index(offset), d1, d2)


_diagonal = diagonal


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices (in dims `dim1` and `dim2` of the result) with the last dimension of `input`
    on their diagonal `offset`, zeros elsewhere.

    Shape: ``(*, n)`` -> a tensor of one more dimension with ``n + |offset|`` in dims `dim1`
    and `dim2` and the dims of ``*`` in the others, in order.
    """
    if type(offset) is not int or not -(2**63) <= offset < 2**63:
        offset = index_arg("diag_embed", offset, "offset")
    try:
        ndim = input._data.ndim + 1
    except AttributeError:
        raise not_a_tensor("diag_embed", input, "input", 1) from None
    d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if ndim == 1:
        input = input.reshape(1)
    m = input._data.shape[-1] + abs(offset)
    rest = iter(input._data.shape[:-1])
    shape = [m if k in (d1, d2) else next(rest) for k in range(ndim)]
    zeros = _zeros(shape, dtype=input.dtype, device=input.device)
    return _unaliased(PUBLIC["diagonal_scatter"](zeros, input, offset, d1, d2))


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A matrix with the flattened `input` on its diagonal `offset`."""
    if type(offset) is not int or not -(2**63) <= offset < 2**63:
        offset = index_arg("diagflat", offset, "offset")
    if not isinstance(input, Tensor):
        raise not_a_tensor("diagflat", input)
    return diag_embed(input.reshape(-1), offset)


def diag(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
    """A vector's diagonal matrix, or a copy of a matrix's diagonal `diagonal`."""
    if type(diagonal) is not int or not -(2**63) <= diagonal < 2**63:
        diagonal = index_arg("diag", diagonal, "diagonal")
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("diag", input, "input", 1) from None
    if ndim == 1:
        result = diag_embed(input, diagonal)
    elif ndim == 2:
        result = _diagonal(input, diagonal).clone()
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")
    return result if out is None else write_out(out, result)


@autocast_op("trace")
def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix (integers sum to int64)."""
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("trace", input, "input", 1) from None
    if input._data.dtype.kind == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input._data.ndim}")
    return diagonal(input).sum()


# -- broadcasting ----------------------------------------------------------------------------
def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of `shapes` (ints or sequences of ints) broadcast to."""
    shapes = [(s,) if isinstance(s, numbers.Integral) else tuple(s) for s in shapes]
    result = [1] * max((len(s) for s in shapes), default=0)
    for i, shape in enumerate(shapes):
        for k in range(1, len(shape) + 1):
            n = operator.index(shape[-k])
            if n < 0:
                raise RuntimeError(
                    f"Trying to create tensor with negative dimension {n}: {list(shape)}"
                )
            if result[-k] == 1:
                result[-k] = n
            elif n not in (1, result[-k]):
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {n} at -{k}! Mismatching "
                    f"argument at index {i} had {tuple(shape)}; but expected shape should be "
                    f"broadcastable to {result}"
                )
    return Size(result)


def broadcast_tensors(*tensors) -> tuple:
    """Views of the tensors expanded to their common broadcast shape."""
    shape = ()
    for t in tensors:
        try:
            shape = np.broadcast_shapes(shape, t._data.shape)
        except ValueError:
            raise broadcast_error(shape, t._data.shape) from None
        except AttributeError:
            expect_tensors(tensors, 0)
            raise
    return tuple(t.expand(shape) for t in tensors)


def broadcast_to(input: Tensor, size) -> Tensor:
    """A view of `input` expanded to `size` (``input.expand(size)``)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("broadcast_to", input)
    return input.expand(size)


# -- at least n dims, column and depth stacks --------------------------------------------------
def _at_least(ndim: int, shape_of):
    def fn(*tensors):
        one = len(tensors) == 1 and isinstance(tensors[0], Tensor)
        if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
            tensors = tuple(tensors[0])
        try:
            results = tuple(
                t if t._data.ndim >= ndim else t.reshape(shape_of(t._data.shape)) for t in tensors
            )
        except AttributeError:
            expect_tensors(tensors, 0)
            raise
        return results[0] if one else results

    fn.__name__ = fn.__qualname__ = f"atleast_{ndim}d"
    fn.__doc__ = (
        f"Views of the tensors with at least {ndim} dimensions: one tensor gives "
        "one, several (or a sequence) give a tuple."
    )
    return fn


atleast_1d = _at_least(1, lambda s: (1,))
atleast_2d = _at_least(2, lambda s: (1,) * (2 - len(s)) + s)
atleast_3d = _at_least(3, lambda s: {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}[len(s)])


def column_stack(tensors, *, out: Tensor | None = None) -> Tensor:
    """The tensors joined as columns: 0-D and 1-D tensors become columns, the others are
    joined along dimension 1."""
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    try:
        tensors = [t.reshape(t.numel(), 1) if t._data.ndim <= 1 else t for t in tensors]
    except AttributeError:
        check_tensor_list("column_stack", tensors)
        raise
    return PUBLIC["hstack"](tensors, out=out)


def dstack(tensors, *, out: Tensor | None = None) -> Tensor:
    """The tensors joined depth-wise (along dimension 2, after `atleast_3d`)."""
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return _cat(atleast_3d(tuple(tensors)), 2, out=out)


# -- splits ----------------------------------------------------------------------------------
# The most sections tensor_split makes: each is a tensor object (PyTorch runs out of memory).
MAX_SECTIONS = 2**26


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """Views of `input` cut along `dim`: into `n` near-equal parts (an int: the first
    ``size % n`` parts have one element more), or at the given indices (a sequence)."""
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("tensor_split", input, "input", 1) from None
    if ndim == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    if isinstance(indices_or_sections, Tensor):
        ios = indices_or_sections
        if ios.dtype is not _dtype.int64:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have dtype "
                f"of long, but got {_dtype.TITLE[ios.dtype]}"
            )
        if ios._data.ndim > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a "
                "zero-dimensional or one-dimensional tensor, but got a tensor "
                f"with {ios._data.ndim} dims"
            )
        indices_or_sections = ios.item() if ios._data.ndim == 0 else ios.tolist()
    dim = _wrap_dim(dim, ndim)
    size = input._data.shape[dim]
    if isinstance(indices_or_sections, (tuple, list)):
        bounds = [
            min(max(operator.index(i) if i >= 0 else size + i, 0), size)
            for i in indices_or_sections
        ]
    else:
        n = indices_or_sections
        if type(n) is not int or not -(2**63) <= n < 2**63:
            n = index_arg("tensor_split", n, "sections")
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        if n > MAX_SECTIONS:
            raise RuntimeError(f"tensor_split: {n} sections are more than {MAX_SECTIONS}")
        step, extra = divmod(size, n)
        bounds = list(itertools.accumulate(step + (i < extra) for i in range(n - 1)))
    starts = [0, *bounds]
    ends = [*bounds, size]
    return tuple(input.narrow(dim, s, max(e - s, 0)) for s, e in zip(starts, ends))


def _split_along(name: str, least: int, dim_of, input: Tensor, indices_or_sections) -> tuple:
    try:
        ndim = input._data.ndim
    except AttributeError:
        check_tensors(name, ("input", input))
        raise
    if ndim < least:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {least} dimension, "
            f"but got a tensor with {ndim} dimensions!"
        )
    dim = dim_of(ndim)
    if isinstance(indices_or_sections, bool):
        raise TypeError(f"{name}(): argument 'sections' must be int, not bool")
    if isinstance(indices_or_sections, numbers.Integral):
        size = input._data.shape[dim]
        if indices_or_sections == 0 or size % indices_or_sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {size} is not divisible by the split_size {indices_or_sections}!"
            )
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input: Tensor, indices_or_sections) -> tuple:
    """`tensor_split` along dim 1 (dim 0 for 1-D tensors); an int must divide the size."""
    return _split_along("hsplit", 1, lambda n: 1 if n > 1 else 0, input, indices_or_sections)


def vsplit(input: Tensor, indices_or_sections) -> tuple:
    """`tensor_split` along dim 0 of a tensor of at least 2 dims."""
    return _split_along("vsplit", 2, lambda n: 0, input, indices_or_sections)


def dsplit(input: Tensor, indices_or_sections) -> tuple:
    """`tensor_split` along dim 2 of a tensor of at least 3 dims."""
    return _split_along("dsplit", 3, lambda n: 2, input, indices_or_sections)


# -- repeats, grids, combinations -------------------------------------------------------------
def _repeat_counts(repeats, n: int) -> np.ndarray:
    if isinstance(repeats, Tensor):
        if repeats.dtype not in (_dtype.int64, _dtype.int32):
            raise NotImplementedError(
                f"\"repeat_interleave_cpu\" not implemented for '{_dtype.TITLE[repeats.dtype]}'"
            )
        if repeats._data.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        counts = repeats._host().reshape(-1).astype(np.int64)
        if counts.size == 1:
            counts = np.full(n, counts[0])
        elif counts.size != n:
            raise RuntimeError(
                f"repeats must have the same size as input along dim, but got "
                f"repeats.size(0) = {counts.size} and input.size(0) = {n}"
            )
    else:
        counts = np.full(n, operator.index(repeats), dtype=np.int64)
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    return counts


def repeat_interleave(
    input: Tensor, repeats=None, dim: int | None = None, *, output_size: int | None = None
) -> Tensor:
    """Each element (or slice along `dim`) of `input` repeated `repeats` times in place
    (an int, or a tensor with one count per element); without `dim` the input is flattened.

    ``repeat_interleave(repeats)`` alone gives the indices ``0, 1, ...`` repeated by the
    counts of the tensor `repeats`.
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("repeat_interleave", input, "repeats" if repeats is None else "input", 1)
    if repeats is None:
        if input.dtype not in (_dtype.int32, _dtype.int64):
            raise NotImplementedError(
                f"\"repeat_interleave_cpu\" not implemented for '{_dtype.TITLE[input.dtype]}'"
            )
        if input._data.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        counts = _repeat_counts(input, input.numel())
        return _check_output_size(
            _from_host(np.repeat(np.arange(counts.size), counts), input.dtype, input.device, False),
            output_size,
        )
    if dim is None:
        input, dim = input.reshape(-1), 0
    elif not input._data.ndim and isinstance(repeats, Tensor):
        input.size(dim)  # a 0-dim tensor has no dim to repeat along: PyTorch's IndexError
    dim = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[dim] if input._data.ndim else 1
    index = np.repeat(np.arange(n), _repeat_counts(repeats, n))
    index = _from_host(index, _dtype.int64, input.device, False)
    return _check_output_size(_index_select(input, dim, index), output_size, dim)


def _check_output_size(result: Tensor, output_size, dim: int = 0) -> Tensor:
    if output_size is not None and result.shape[dim] != output_size:
        raise RuntimeError(
            f"repeat_interleave: Invalid output_size, expected "
            f"{result.shape[dim]} but got {output_size}"
        )
    return result


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-D (or 0-D) tensors: views of shape ``(n1, n2, ...)`` where
    the i-th grid varies along dim i (``"ij"``), or with the first two dims swapped
    (``"xy"``, Cartesian indexing)."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    expect_tensors(tensors, 0)
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the "
            "indexing argument.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    if not tensors:
        raise RuntimeError("torch.meshgrid: Expected at least one tensor")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}"
            )
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    sizes = [t.numel() for t in tensors]
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    grids = []
    for i, t in enumerate(tensors):
        axis = {0: 1, 1: 0}.get(i, i) if swap else i
        shape = [1] * len(sizes)
        shape[axis] = sizes[axis]
        grids.append(t.reshape(shape).expand(sizes))
    return tuple(grids)


def cartesian_prod(*tensors) -> Tensor:
    """The Cartesian product of 1-D tensors: a ``(N, len(tensors))`` tensor of all tuples
    (the one tensor itself when given one)."""
    expect_tensors(tensors, 0)
    for t in tensors:
        if t._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return _stack([g.reshape(-1) for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-`r` combinations of the elements of a 1-D tensor, in lexicographic order
    of their positions: a ``(N, r)`` tensor (``(0,)`` for ``r = 0``)."""
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("combinations", input, "input", 1) from None
    if ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _zeros(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = np.array(list(pick(range(input.numel()), r)), dtype=np.int64).reshape(-1, r)
    index = _from_host(index.reshape(-1), _dtype.int64, input.device, False)
    return _index_select(input, 0, index).reshape(-1, r)


def block_diag(*tensors) -> Tensor:
    """A block diagonal matrix of the tensors (0-D and 1-D ones count as one row), in the
    promoted dtype."""
    expect_tensors(tensors, 0)
    shapes = []
    for i, t in enumerate(tensors):
        if t._data.ndim > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer "
                f"dimensions. Input {i} has {t._data.ndim} dimensions"
            )
        shapes.append({0: (1, 1), 1: (1, t.numel())}.get(t._data.ndim, t._data.shape))
    if not tensors:
        return _zeros(1, 0)
    d = _dtype.promote_operands(tensors)
    width = sum(c for _, c in shapes)
    rows, left = [], 0
    for t, (r, c) in zip(tensors, shapes):
        pieces = [
            _zeros(r, left, dtype=d, device=t.device),
            t.reshape(r, c).to(d),
            _zeros(r, width - left - c, dtype=d, device=t.device),
        ]
        rows.append(_cat(pieces, 1))
        left += c
    return _cat(rows, 0)


# -- distances -------------------------------------------------------------------------------
def _check_distance(name: str, p: float, *tensors) -> None:
    if not p >= 0:  # NaN too
        raise RuntimeError(f"{name} only supports non-negative p values")
    for label, t in zip(("X1", "X2"), tensors):
        if not t.dtype.is_floating_point:
            who = f", {label} got" if name == "cdist" else ", got"
            raise RuntimeError(
                f"{name} only supports floating-point dtypes{who}: {_dtype.TITLE[t.dtype]}"
            )
    for t in tensors:
        if t.dtype in (_dtype.float16, _dtype.bfloat16):
            raise NotImplementedError(f"\"{name}\" not implemented for '{_dtype.TITLE[t.dtype]}'")


_CDIST_MODES = (
    None,
    "use_mm_for_euclid_dist_if_necessary",
    "use_mm_for_euclid_dist",
    "donot_use_mm_for_euclid_dist",
)


@autocast_op("cdist")
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode=None) -> Tensor:
    """The p-norm distance between each row of `x1` and each row of `x2`.

    Shape: ``(*, P, M)`` and ``(*, R, M)`` (batch dims broadcast) -> ``(*, P, R)``.
    """
    for position, (label, t) in enumerate((("X1", x1), ("X2", x2)), 1):
        if not isinstance(t, Tensor):
            raise not_a_tensor("cdist", t, label.lower(), position)
        if t._data.ndim < 2:
            raise RuntimeError(
                f"cdist only supports at least 2D tensors, {label} got: {t._data.ndim}D"
            )
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    _check_distance("cdist", p, x1, x2)
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return (x1.unsqueeze(-2) - x2.unsqueeze(-3)).norm(p, -1)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distances between the rows of a ``(N, M)`` matrix, pairs ``i < j`` in
    row-major order: shape ``(N * (N - 1) / 2,)``."""
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("pdist", input, "input", 1) from None
    if ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input._data.ndim}D")
    _check_distance("pdist", p, input)
    i, j = triu_indices(input.shape[0], input.shape[0], 1, device=input.device)
    return (_index_select(input, 0, i) - _index_select(input, 0, j)).norm(p, -1)


# -- differences and integrals ---------------------------------------------------------------
def diff(
    input: Tensor,
    n: int = 1,
    dim: int = -1,
    prepend: Tensor | None = None,
    append: Tensor | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The n-th forward difference along `dim` (``out[i] = x[i + 1] - x[i]``, applied `n`
    times), after joining `prepend` and `append` to `input` along `dim`; bool tensors give
    ``x[i + 1] != x[i]``."""
    if type(n) is not int or not -(2**63) <= n < 2**63:
        n = index_arg("diff", n, "n")
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("diff", input, "input", 1) from None
    if ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = _wrap_dim(dim, input._data.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    for name, t in (("prepend", prepend), ("append", append)):
        if t is not None and not isinstance(t, Tensor):
            raise not_a_tensor("diff", t, name, None)
    for t in parts:
        if t._data.ndim != input._data.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    x = _cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[dim]
        if size == 0:
            break
        ahead, behind = x.narrow(dim, 1, size - 1), x.narrow(dim, 0, size - 1)
        x = ahead.ne(behind) if x.dtype is _dtype.bool else ahead - behind
    if x is input and n > 0:
        result = input  # an empty dim: PyTorch returns the input itself
    else:
        result = input.clone() if x is input else x
    return result if out is None else write_out(out, result)


def _along(t: Tensor, dim: int, ndim: int) -> Tensor:
    """A 1-D `t` viewed along `dim` of an `ndim`-dimensional tensor."""
    shape = [1] * ndim
    shape[dim] = -1
    return t.reshape(shape)


def _spacing(y: Tensor, x, dx, dim: int, name: str) -> Tensor | float:
    """The widths of the intervals along `dim`: from sample points `x`, or the constant
    `dx` (1 by default)."""
    if x is None:
        return 1 if dx is None else dx
    if not isinstance(x, Tensor):
        return x
    if x._data.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        x = _along(x, dim, y._data.ndim)
    return diff(x, dim=dim)


def _no_bool(name: str, y: Tensor, x) -> None:
    """PyTorch's refusal of bool samples or sample points in the trapezoidal rules."""
    if isinstance(x, Tensor):
        if y.dtype is _dtype.bool or x.dtype is _dtype.bool:
            raise RuntimeError(
                f"{name}: received a bool input for `x` or `y`, but bool is not supported"
            )
    elif y.dtype is _dtype.bool:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")


def trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The integral of `y` along `dim` by the trapezoidal rule, with sample points `x` (a
    tensor: 1-D along `dim`, or of `y`'s shape) or a constant spacing `dx` (default 1)."""
    try:
        ndim = y._data.ndim
    except AttributeError:
        raise not_a_tensor("trapezoid", y, "y", 1) from None
    n = y.size(dim)
    dim = _wrap_dim(dim, ndim)
    if n == 0:  # zeros of y's dtype, as PyTorch's (whatever the dtypes)
        return y.new_zeros([s for d, s in enumerate(y.shape) if d != dim])
    _no_bool("trapezoid", y, x)
    h = _spacing(y, x, dx, dim, "trapezoid")
    pairs = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    return (h * pairs).sum(dim) / 2 if isinstance(h, Tensor) else pairs.sum(dim) * (h / 2)


def trapz(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """Alias of `trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running integral of `y` along `dim` by the trapezoidal rule (one element fewer
    than `y` along `dim`); sample points as `trapezoid`'s."""
    try:
        ndim = y._data.ndim
    except AttributeError:
        raise not_a_tensor("cumulative_trapezoid", y, "y", 1) from None
    _no_bool("cumulative_trapezoid", y, x)
    if ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, ndim)
    n = y.shape[dim]
    h = _spacing(y, x, dx, dim, "cumulative_trapezoid")
    pairs = y.narrow(dim, min(n, 1), max(n - 1, 0)) + y.narrow(dim, 0, max(n - 1, 0))
    areas = h * pairs / 2 if isinstance(h, Tensor) else pairs * (h / 2)
    return areas.cumsum(dim)


def _gradient_dims(input: Tensor, spacing, dim, edge_order: int) -> tuple:
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("gradient", input, "input", 1) from None
    if dim is None:
        dims = tuple(range(ndim))
    else:
        dims = _dims(dim if isinstance(dim, (tuple, list)) else (dim,), ndim)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1"
            )
    if isinstance(spacing, (tuple, list)):
        if len(spacing) != len(dims):
            expected = (
                f"'self.dim() = {ndim}', since dim argument was not given"
                if dim is None
                else f"'len(dim) = {len(dims)}'"
            )
            raise RuntimeError(
                f"torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                f"length equal to {expected}, but got a list of length {len(spacing)}"
            )
        spacings = tuple(spacing)
    else:
        spacings = (spacing,) * len(dims)
    return dims, spacings


def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:
    """Estimates of the derivative of `input` along each of `dim` (default: every dim) by
    second-order central differences inside and first- or second-order (`edge_order`)
    one-sided differences at the ends.

    `spacing`: a number (the same step everywhere), a list of numbers (one step per dim) or
    a list of 1-D tensors (the coordinates of the samples along each dim).
    """
    if type(edge_order) is not int:
        edge_order = index_arg("gradient", edge_order, "edge_order")
    dims, spacings = _gradient_dims(input, spacing, dim, edge_order)
    if input.dtype is _dtype.bool:  # PyTorch's differences of bools
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
            "`^` or `logical_xor()` operator instead."
        )
    ndim = input._data.ndim
    x = _float(input)
    return tuple(_gradient_1d(x, d, h, edge_order, ndim) for d, h in zip(dims, spacings))


def _gradient_1d(f: Tensor, dim: int, h, edge_order: int, ndim: int) -> Tensor:
    n = f.shape[dim]

    def part(start, length):
        return f.narrow(dim, start, length)

    if isinstance(h, Tensor):
        if h._data.ndim != 1 or h.shape[0] != n:
            raise RuntimeError(
                "torch.gradient expected each tensor to be on the same device "
                "and of the same size as the dimension it spaces"
            )
        dx = _along(diff(_float(h)), dim, ndim)
        d1, d2 = dx.narrow(dim, 0, n - 2), dx.narrow(dim, 1, n - 2)
        a = -d2 / (d1 * (d1 + d2))
        b = (d2 - d1) / (d1 * d2)
        c = d1 / (d2 * (d1 + d2))
        inner = a * part(0, n - 2) + b * part(1, n - 2) + c * part(2, n - 2)
        first, last = _uneven_edges(part, dx, dim, n, edge_order)
    else:
        inner = (part(2, n - 2) - part(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / h
            last = (part(n - 1, 1) - part(n - 2, 1)) / h
        else:
            first = (-1.5 * part(0, 1) + 2 * part(1, 1) - 0.5 * part(2, 1)) / h
            last = (0.5 * part(n - 3, 1) - 2 * part(n - 2, 1) + 1.5 * part(n - 1, 1)) / h
    return _cat([first, inner, last], dim)


def _uneven_edges(part, dx: Tensor, dim: int, n: int, edge_order: int) -> tuple:
    """One-sided differences at both ends with uneven steps `dx` (NumPy's formulas)."""
    if edge_order == 1:
        first = (part(1, 1) - part(0, 1)) / dx.narrow(dim, 0, 1)
        last = (part(n - 1, 1) - part(n - 2, 1)) / dx.narrow(dim, n - 2, 1)
        return first, last
    d1, d2 = dx.narrow(dim, 0, 1), dx.narrow(dim, 1, 1)
    a = -(2 * d1 + d2) / (d1 * (d1 + d2))
    b = (d1 + d2) / (d1 * d2)
    c = -d1 / (d2 * (d1 + d2))
    first = a * part(0, 1) + b * part(1, 1) + c * part(2, 1)
    d1, d2 = dx.narrow(dim, n - 3, 1), dx.narrow(dim, n - 2, 1)
    a = d2 / (d1 * (d1 + d2))
    b = -(d2 + d1) / (d1 * d2)
    c = (2 * d2 + d1) / (d2 * (d1 + d2))
    last = a * part(n - 3, 1) + b * part(n - 2, 1) + c * part(n - 1, 1)
    return first, last


def logcumsumexp(input: Tensor, dim: int, *, out: Tensor | None = None) -> Tensor:
    """``log(cumsum(exp(input), dim))``, computed without overflow."""
    try:
        kind = input._data.dtype.kind
    except AttributeError:
        raise not_a_tensor("logcumsumexp", input, "input", 1) from None
    if kind not in "fVc":
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{_dtype.TITLE[input.dtype]}'"
        )
    dim = _wrap_dim(dim, input._data.ndim)
    result = call(logcumsumexp_op, (input,), dim)
    return result if out is None else write_out(out, result)


# -- products and norms ----------------------------------------------------------------------
def cross(
    input: Tensor, other: Tensor, dim: int | None = None, *, out: Tensor | None = None
) -> Tensor:
    """The cross product of 3-vectors along `dim` (default: the first dim of size 3, with a
    deprecation warning, as PyTorch), broadcast."""
    check_tensors("cross", ("input", input), ("other", other))
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease "
            "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
            "default value of dim will change to agree with that of linalg.cross in "
            "a future release.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        shape = broadcast_shapes(input.shape, other.shape)
        dim = next((k for k, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    from .. import linalg

    return linalg.cross(input, other, dim=dim, out=out)


def renorm(
    input: Tensor, p: float, dim: int, maxnorm: float, *, out: Tensor | None = None
) -> Tensor:
    """`input` with each slice along `dim` whose p-norm exceeds `maxnorm` scaled down to
    norm `maxnorm`."""
    check_tensors("renorm", ("input", input))
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor "
            f"as input. Got {_dtype.TITLE[input.dtype]}"
        )
    if not p > 0:  # NaN too
        raise RuntimeError("renorm: non-positive-norm not supported")
    if not maxnorm >= 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    ndim = input._data.ndim
    if ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {ndim} dimensions")
    dim = _wrap_dim(dim, ndim)
    others = tuple(k for k in range(ndim) if k != dim)
    norms = input.norm(p, others, keepdim=True)
    factor = _where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    result = input * factor.to(input.dtype.to_real())
    return result if out is None else write_out_same_dtype(out, result)


def renorm_(self: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """In-place form of `renorm`."""
    return self.copy_(renorm(self, p, dim, maxnorm))


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of a 1-D tensor: columns are powers of `x`, from
    ``x ** (N - 1)`` down to ``x ** 0`` (or up, when `increasing`). Integers give int64."""
    try:
        ndim = x._data.ndim
    except AttributeError:
        raise not_a_tensor("vander", x, "x", 1) from None
    if ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else operator.index(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    d = _dtype.promote_types(x.dtype, _dtype.int64)
    columns = [_ones(x.shape[0], 1, dtype=d, device=x.device)]
    if n > 1:
        columns.append(x.to(d).unsqueeze(1).expand(x.shape[0], n - 1).cumprod(1))
    result = _cat(columns, 1).narrow(1, 0, n) if n else _ones(x.shape[0], 0, dtype=d)
    return result if increasing else flip(result, (1,))


def cov(
    input: Tensor,
    *,
    correction: int = 1,
    fweights: Tensor | None = None,
    aweights: Tensor | None = None,
) -> Tensor:
    """The covariance matrix of the variables in the rows of `input` (observations in
    columns; a 1-D input is one variable), with frequency weights `fweights` (integers) and
    observation weights `aweights`; `correction` 1 is Bessel's correction."""
    if type(correction) is not int or not -(2**63) <= correction < 2**63:
        correction = index_arg("cov", correction, "correction")
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("cov", input, "input", 1) from None
    if ndim > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an "
            f"input with {ndim} dimensions"
        )
    if input.dtype is _dtype.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = _float(input if ndim == 2 else input.reshape(1, -1))
    n_obs = x.shape[1]
    w = None
    for name, weights, integral in (("fweights", fweights, True), ("aweights", aweights, False)):
        if weights is None:
            continue
        _check_weights(name, weights, integral, n_obs)
        w = weights if w is None else w * weights
    if w is None:
        w_sum = n_obs
        avg = x.mean(1)
        norm_factor = w_sum - correction
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if correction == 0:
            norm_factor = w_sum
        elif aweights is None:
            norm_factor = w_sum - correction
        else:
            norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    if float(norm_factor) <= 0:
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less "
            "than the number of observations.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        norm_factor = 0 * norm_factor
    x = x - avg.unsqueeze(1)
    weighted = x if w is None else x * w
    c = x @ (weighted.mT.conj() if x.is_complex() else weighted.mT)
    return (c / norm_factor).squeeze()


def _check_weights(name: str, weights: Tensor, integral: bool, n_obs: int) -> None:
    try:
        ndim = weights._data.ndim
    except AttributeError:
        raise not_a_tensor("cov", weights, name, None) from None
    if ndim > 1:
        raise RuntimeError(
            f"cov(): expected {name} to have one or fewer dimensions but got "
            f"{name} with {weights._data.ndim} dimensions"
        )
    kind = weights._data.dtype.kind
    if integral and kind not in "iu":
        raise RuntimeError(
            f"cov(): expected {name} to have integral dtype but got {name} "
            f"with {_dtype.TITLE[weights.dtype]} dtype"
        )
    if not integral and kind not in "fV":
        raise RuntimeError(
            f"cov(): expected {name} to have floating point dtype but got "
            f"{name} with {_dtype.TITLE[weights.dtype]} dtype"
        )
    if weights.numel() != n_obs:
        raise RuntimeError(
            f"cov(): expected {name} to have the same numel as there are "
            f"observations in the input but got {weights.numel()} != {n_obs}"
        )
    if weights.numel() and bool((weights < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def corrcoef(input: Tensor) -> Tensor:
    """The Pearson correlation coefficients of the variables in the rows of `input`,
    clipped to [-1, 1]."""
    c = cov(input)
    if c._data.ndim == 0:
        return c / c
    std = diagonal(c)
    std = (std.real if c.is_complex() else std).sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    if c.is_complex():
        return PUBLIC["complex"](c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


# -- publishing ------------------------------------------------------------------------------
for _fn in (
    flip,
    roll,
    rot90,
    tril,
    triu,
    diagonal,
    diag_embed,
    diag,
    trace,
    broadcast_to,
    tensor_split,
    hsplit,
    vsplit,
    dsplit,
    diff,
    logcumsumexp,
    cross,
    renorm,
    cov,
    corrcoef,
    fliplr,
    flipud,
    diagflat,
):
    export(_fn, method=True)
export(repeat_interleave)


def _repeat_interleave_method(
    self: Tensor, repeats, dim: int | None = None, *, output_size: int | None = None
) -> Tensor:
    """`repeat_interleave` of this tensor (`repeats` required: the form without it is the
    function's alone)."""
    if repeats is None:
        raise TypeError(
            "repeat_interleave() received an invalid combination of arguments - got "
            "(NoneType), but expected (Tensor repeats, int dim = None, *, int output_size = "
            "None) or (int repeats, int dim = None, *, int output_size = None)"
        )
    return repeat_interleave(self, repeats, dim, output_size=output_size)


_repeat_interleave_method.__name__ = _repeat_interleave_method.__qualname__ = "repeat_interleave"
export(_repeat_interleave_method, "repeat_interleave", method=True, function=False)
for _fn in (tril_, triu_, renorm_):
    export(_fn, method=True, function=False)
for _fn in (
    tril_indices,
    triu_indices,
    broadcast_shapes,
    broadcast_tensors,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    column_stack,
    dstack,
    meshgrid,
    cartesian_prod,
    combinations,
    block_diag,
    cdist,
    pdist,
    trapezoid,
    trapz,
    cumulative_trapezoid,
    gradient,
    vander,
):
    export(_fn)
