"""Reductions: sums, means, products, extrema, statistics, norms, cumulative ops, median, mode.

Each reduction is one primitive op whose kernel, written once against ``xp``, takes the input
array and normalised arguments and returns backend arrays (a tuple for ops with two results).
The public functions parse PyTorch's signatures and check dtypes and dims, then call the op.

Kernel arguments after the input array (what tocha-autograd's derivatives receive):

    sum, nansum, prod, mean, nanmean    dims, keepdim, dtype
    amax, amin, all, any                dims, keepdim
    max_dim, min_dim                    dim, keepdim           -> (values, indices)
    argmax, argmin                      dim, keepdim           (dim None: the flattened input)
    aminmax                             dim, keepdim           -> (min, max)
    var, std                            dims, correction, keepdim
    var_mean, std_mean                  dims, correction, keepdim  -> (var or std, mean)
    norm                                p, dims, keepdim, dtype    (p a number or "nuc")
    logsumexp                           dims, keepdim
    cumsum, cumprod                     dim, dtype
    cummax, cummin                      dim                    -> (values, indices)
    count_nonzero                       dims
    median, nanmedian                   (none: the lower median of every element)
    median_dim, nanmedian_dim, mode     dim, keepdim           -> (values, indices)

``dims`` is None (every dim) or a tuple of distinct dims in range (empty for a 0-dim input);
``dim`` an int in range; ``dtype`` a NumPy dtype or None.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from .. import _dtype
from .. import return_types as rt
from .._api import PUBLIC, export
from .._cpu import kernel_context
from .._dispatch import LAYERS, OtherLayout, call, call_one, defop, in_layout, not_a_tensor
from .._grad_mode import STATE
from .._tensor import Tensor, _wrap_dim, wrap
from ._argcheck import check_dtype
from ._out import write_out, write_out_same_dtype

_INT64 = np.dtype("int64")
_FLOAT32 = np.dtype("float32")
_UINT8 = np.dtype("uint8")
_INF = float("inf")


class _Accumulation(dict):
    """NumPy dtype -> (accumulation dtype, result dtype) of a sum or product, or None where the
    input's own dtype serves: bool and integers sum into int64 (as PyTorch), half-precision
    floats accumulate in float32 and round back."""

    def __missing__(self, dt):
        if dt.kind in "biu" and dt != _INT64:
            entry = (_INT64, _INT64)
        elif dt.kind in "fV" and dt.itemsize == 2:
            entry = (_FLOAT32, dt)
        else:
            entry = None
        self[dt] = entry
        return entry


_ACC = _Accumulation()


def _cast(x, dtype):
    """`x` as `dtype` (None: unchanged); complex to real keeps the real part, as PyTorch."""
    if dtype is None or x.dtype == dtype:
        return x
    if x.dtype.kind == "c" and dtype.kind != "c":
        x = x.real
    return x.astype(dtype)


def _count(shape, dims) -> int:
    """How many elements each reduction over `dims` of an array of `shape` combines."""
    n = 1
    for d in range(len(shape)) if dims is None else dims:
        n *= shape[d]
    return n


def _span(dim: int, start: int, stop: int) -> tuple:
    """An index selecting ``start:stop`` along `dim`."""
    return (slice(None),) * dim + (slice(start, stop),)


def _positions(xp, n: int, dim: int, ndim: int):
    """``arange(n)`` laid along `dim` of an `ndim`-dim array, for broadcasting."""
    shape = [1] * ndim
    shape[dim] = n
    return xp.arange(n, dtype=_INT64).reshape(shape)


def _argsort(xp, x, dim):
    """Stable argsort along `dim` (NaN last); CuPy's sort is always stable and takes no kind."""
    if xp is np:
        return np.argsort(x, axis=dim, kind="stable")
    return xp.argsort(x, axis=dim)


def _no_index(xp, x):
    """The (values, indices) of reducing a 0-dim array: itself at index 0."""
    return x.copy(), xp.zeros((), _INT64)


# -- kernels ----------------------------------------------------------------------------------
def _array_out(xp):
    """The ``out`` that makes a ufunc reduction return an array: NumPy's ``...`` (it would
    otherwise give a NumPy scalar for a full reduction); other namespaces return arrays."""
    return ... if xp is np else None


def _sum_kernel(ufunc: str, half=None):
    """A sum's or product's kernel factory; `half(xp, x, dims, keepdim)`, when given, forms a
    float16/bfloat16 result (in its dtype) instead of the float32 accumulation."""

    def factory(xp):
        reduce, whole = getattr(xp, ufunc).reduce, _array_out(xp)

        def kernel(x, dims, keepdim, dtype):
            if dims is not None and x.ndim > 2 and not x.flags.c_contiguous:
                x = xp.ascontiguousarray(x)  # PyTorch's result is row-major, NumPy's in x's order
            if dtype is not None:
                x = _cast(x, dtype)
            acc = _ACC[x.dtype]
            if acc is None:
                return reduce(x, dims, None, out=whole, keepdims=keepdim)
            if half is not None and acc[1] == x.dtype and x.dtype.kind in "fV" and x.size:
                return half(xp, x, dims, keepdim)
            result = reduce(x, dims, acc[0], out=whole, keepdims=keepdim)
            return result.astype(acc[1] if dtype is None else dtype, copy=False)

        return kernel

    return factory


def _half_product(xp, x, dims, keepdim):
    """A float16/bfloat16 product as PyTorch's CPU kernel forms it: in the input's dtype,
    one element after another along the reduced dims (rounded at each step; PyTorch's vector
    loop over a long contiguous row keeps several such products, whose count depends on the
    SIMD width)."""
    axes = tuple(range(x.ndim)) if dims is None else tuple(dims)
    if not axes:
        return x.copy()
    kept = x.ndim - len(axes)
    moved = xp.moveaxis(x, axes, tuple(range(kept, x.ndim)))
    flat = moved.reshape(moved.shape[:kept] + (-1,))
    result = xp.multiply.accumulate(flat, axis=-1)[..., -1]
    if keepdim:
        result = result.reshape(tuple(1 if i in axes else n for i, n in enumerate(x.shape)))
    return xp.asarray(result)


def _nansum_kernel(xp):
    sum_kernel = _sum_kernel("add")(xp)

    def kernel(x, dims, keepdim, dtype):
        if x.dtype.kind in "fV":
            x = xp.where(xp.isnan(x), 0, x)
        return sum_kernel(x, dims, keepdim, dtype)

    return kernel


def _mean_kernel(skip_nan: bool):
    def factory(xp):
        def kernel(x, dims, keepdim, dtype):
            if dims is not None and x.ndim > 2 and not x.flags.c_contiguous:
                x = xp.ascontiguousarray(x)  # as sum's
            x = _cast(x, dtype)
            acc = _ACC[x.dtype]
            total_dtype = x.dtype if acc is None else acc[0]
            if skip_nan:
                valid = ~xp.isnan(x)
                total = xp.where(valid, x, 0).sum(dims, total_dtype, None, keepdim)
                result = total / valid.sum(dims, total_dtype, None, keepdim)
            else:
                result = x.sum(dims, total_dtype, None, keepdim) / _count(x.shape, dims)
            return xp.asarray(result, x.dtype)

        return kernel

    return factory


def _extreme_kernel(ufunc: str, function: str):
    """amax/amin: NumPy's ufunc `ufunc` reduced (an array even for a full reduction); other
    namespaces' `function` (CuPy has no ``maximum.reduce``)."""

    def factory(xp):
        if xp is not np:
            extreme = getattr(xp, function)
            return lambda x, dims, keepdim: extreme(x, axis=dims, keepdims=keepdim)
        reduce = getattr(xp, ufunc).reduce

        def kernel(x, dims, keepdim):
            if dims is not None and x.ndim > 2 and not x.flags.c_contiguous:
                x = xp.ascontiguousarray(x)  # as sum's
            return reduce(x, dims, out=..., keepdims=keepdim)

        return kernel

    return factory


def _extreme_dim_kernel(arg_method: str):
    def factory(xp):
        def kernel(x, dim, keepdim):
            if x.ndim == 0:
                return _no_index(xp, x)
            if dim is not None and x.ndim > 2 and not x.flags.c_contiguous:
                x = xp.ascontiguousarray(x)  # as sum's
            indices = getattr(x, arg_method)(dim, keepdims=True)
            values = xp.take_along_axis(x, indices, dim)
            if not keepdim:
                values, indices = values.squeeze(dim), indices.squeeze(dim)
            return values, indices.astype(_INT64, copy=False)

        return kernel

    return factory


def _arg_kernel(method: str):
    def factory(xp):
        def kernel(x, dim, keepdim):
            if dim is None:
                result = xp.asarray(getattr(x, method)(), _INT64)
                return result.reshape((1,) * x.ndim) if keepdim else result
            if x.ndim > 2 and not x.flags.c_contiguous:
                x = xp.ascontiguousarray(x)  # as sum's
            return getattr(x, method)(dim, keepdims=keepdim).astype(_INT64, copy=False)

        return kernel

    return factory


def _aminmax_kernel(xp):
    def kernel(x, dim, keepdim):
        dims = None if dim is None or x.ndim == 0 else (dim,)
        return xp.asarray(x.min(dims, None, keepdim)), xp.asarray(x.max(dims, None, keepdim))

    return kernel


def _moments(xp, x, dims, correction, keepdim):
    """(variance, mean) over `dims`, computed in the accumulation dtype, and the dtype the
    results round back to (None: no rounding)."""
    acc = _ACC[x.dtype]
    if acc is not None:
        x = x.astype(acc[0])
    n = _count(x.shape, dims)
    mean = x.sum(dims, None, None, True) / n
    dev = x - mean
    square = dev.real * dev.real + dev.imag * dev.imag if x.dtype.kind == "c" else dev * dev
    # an empty reduction is NaN whatever the correction (0 / 0), as PyTorch's
    dof = builtins.max(0, n - correction) if n else 0
    var = xp.asarray(square.sum(dims, None, None, keepdim) / dof)
    if not keepdim:
        mean = mean.squeeze(dims)
    return var, mean, None if acc is None else acc[1]


def _moments_kernel(root: bool, with_mean: bool):
    def factory(xp):
        def kernel(x, dims, correction, keepdim):
            if dims is not None and x.ndim > 2 and not x.flags.c_contiguous:
                x = xp.ascontiguousarray(x)  # as sum's
            var, mean, back = _moments(xp, x, dims, correction, keepdim)
            if root:
                var = xp.sqrt(var)
            if back is not None:
                var, mean = var.astype(back), mean.astype(back)
            return (var, mean) if with_mean else var

        return kernel

    return factory


def _norm_kernel(xp):
    def kernel(x, p, dims, keepdim, dtype):
        if dims is not None and x.ndim > 2 and not x.flags.c_contiguous:
            x = xp.ascontiguousarray(x)  # as sum's
        x = _cast(x, dtype)
        acc = _ACC[x.dtype]
        if acc is not None:
            x = x.astype(acc[0])
        if p == "nuc":
            result = _nuclear_norm(xp, x, dims, keepdim)
        else:
            a = xp.abs(x)
            if p == 2:
                result = xp.sqrt((a * a).sum(dims, None, None, keepdim))
            elif p == 1:
                result = a.sum(dims, None, None, keepdim)
            elif p == _INF:
                result = a.max(dims, None, keepdim)
            elif p == -_INF:
                result = a.min(dims, None, keepdim)
            elif p == 0:
                result = (a != 0).sum(dims, a.dtype, None, keepdim)
            else:
                result = (a**p).sum(dims, None, None, keepdim) ** (1.0 / p)
        return xp.asarray(result, None if acc is None else acc[1])

    return kernel


def _nuclear_norm(xp, x, dims, keepdim):
    """Sum of the singular values of the matrices spanning the two `dims`."""
    result = xp.linalg.svd(xp.moveaxis(x, dims, (-2, -1)), compute_uv=False).sum(-1)
    return xp.expand_dims(result, tuple(sorted(dims))) if keepdim else result


def _logsumexp_kernel(xp):
    def kernel(x, dims, keepdim):
        if dims is not None and x.ndim > 2 and not x.flags.c_contiguous:
            x = xp.ascontiguousarray(x)  # as sum's
        acc = _ACC[x.dtype]
        back = None if acc is None else acc[1]
        if acc is not None:
            x = x.astype(acc[0])
        if x.size == 0:
            return xp.full_like(xp.asarray(x.sum(dims, None, None, keepdim)), -_INF, back)
        shift = (x.real if x.dtype.kind == "c" else x).max(dims, None, True)
        shift = xp.where(xp.isfinite(shift), shift, 0)
        total = xp.exp(x - shift).sum(dims, None, None, keepdim)
        return xp.asarray(xp.log(total) + (shift if keepdim else shift.squeeze(dims)), back)

    return kernel


def _cumulative_kernel(method: str):
    def factory(xp):
        def kernel(x, dim, dtype):
            if x.ndim > 2 and not x.flags.c_contiguous:
                x = xp.ascontiguousarray(x)  # as sum's
            x = _cast(x, dtype)
            acc = _ACC[x.dtype]
            result_dtype = x.dtype if acc is None or dtype is not None else acc[1]
            if x.ndim == 0:
                return x.astype(result_dtype)
            return getattr(x, method)(dim, acc and acc[0]).astype(result_dtype, copy=False)

        return kernel

    return factory


def _cumulative_extreme_kernel(ufunc: str):
    def factory(xp):
        accumulate = getattr(xp, ufunc).accumulate

        def kernel(x, dim):
            if x.ndim == 0:
                return _no_index(xp, x)
            values = accumulate(x, axis=dim)
            # An element takes the index when it ties or beats the running extreme, or is NaN.
            hit = x == values
            if x.dtype.kind in "fV":
                hit |= xp.isnan(x)
            where = xp.where(hit, _positions(xp, x.shape[dim], dim, x.ndim), 0)
            return values, xp.maximum.accumulate(where, axis=dim)

        return kernel

    return factory


def _logical_kernel(method: str):
    def factory(xp):
        def kernel(x, dims, keepdim):
            if dims is not None and x.ndim > 2 and not x.flags.c_contiguous:
                x = xp.ascontiguousarray(x)  # as sum's
            result = getattr(x, method)(axis=dims, keepdims=keepdim)
            return xp.asarray(result, _UINT8 if x.dtype == _UINT8 else None)

        return kernel

    return factory


def _count_nonzero_kernel(xp):
    return lambda x, dims: xp.asarray((x != 0).sum(dims, _INT64))


def _median_kernel(skip_nan: bool):
    def factory(xp):
        def kernel(x):
            flat = x.reshape(-1)
            floating = x.dtype.kind in "fV"
            if skip_nan and floating:
                flat = flat[~xp.isnan(flat)]
            if flat.size == 0:
                return xp.full((), xp.nan, x.dtype)
            k = (flat.size - 1) // 2
            value = xp.partition(flat, k)[k]
            if floating and not skip_nan:
                value = xp.where(xp.isnan(flat).any(), xp.nan, value)
            return xp.asarray(value, x.dtype)

        return kernel

    return factory


def _median_dim_kernel(skip_nan: bool):
    def factory(xp):
        def kernel(x, dim, keepdim):
            if x.ndim == 0:
                return _no_index(xp, x)
            order = _argsort(xp, x, dim)
            floating = x.dtype.kind in "fV"
            if skip_nan and floating:
                valid = (~xp.isnan(x)).sum(dim, keepdims=True)
                indices = xp.take_along_axis(order, xp.maximum((valid - 1) // 2, 0), dim)
            else:
                k = (x.shape[dim] - 1) // 2
                indices = order[_span(dim, k, k + 1)]
                if floating:  # a NaN anywhere makes the median NaN, at the first NaN's index
                    nan = xp.isnan(x)
                    first = nan.argmax(dim, keepdims=True)
                    indices = xp.where(nan.any(dim, keepdims=True), first, indices)
            values = xp.take_along_axis(x, indices, dim)
            if not keepdim:
                values, indices = values.squeeze(dim), indices.squeeze(dim)
            return values, indices.astype(_INT64, copy=False)

        return kernel

    return factory


def _mode_kernel(xp):
    def kernel(x, dim, keepdim):
        if x.ndim == 0:
            return _no_index(xp, x)
        n = x.shape[dim]
        order = _argsort(xp, x, dim)
        ordered = xp.take_along_axis(x, order, dim)
        head, tail = ordered[_span(dim, 0, n - 1)], ordered[_span(dim, 1, n)]
        same = tail == head
        if x.dtype.kind in "fV":
            same |= xp.isnan(tail) & xp.isnan(head)
        starts = xp.concatenate([xp.ones_like(ordered[_span(dim, 0, 1)], bool), ~same], dim)
        positions = _positions(xp, n, dim, x.ndim)
        run_length = positions - xp.maximum.accumulate(xp.where(starts, positions, 0), axis=dim)
        # The first position reaching the longest run ends the smallest most frequent value's
        # run; with a stable sort it is that value's last occurrence, as PyTorch's index.
        best = run_length.argmax(dim, keepdims=True)
        values = xp.take_along_axis(ordered, best, dim)
        indices = xp.take_along_axis(order, best, dim)
        if not keepdim:
            values, indices = values.squeeze(dim), indices.squeeze(dim)
        return values, indices.astype(_INT64, copy=False)

    return kernel


sum_op = defop("sum", _sum_kernel("add"))
nansum_op = defop("nansum", _nansum_kernel)
prod_op = defop("prod", _sum_kernel("multiply", _half_product))
mean_op = defop("mean", _mean_kernel(False))
nanmean_op = defop("nanmean", _mean_kernel(True))
amax_op = defop("amax", _extreme_kernel("maximum", "max"))
amin_op = defop("amin", _extreme_kernel("minimum", "min"))
max_dim_op = defop("max_dim", _extreme_dim_kernel("argmax"))
min_dim_op = defop("min_dim", _extreme_dim_kernel("argmin"))
argmax_op = defop("argmax", _arg_kernel("argmax"), differentiable=False)
argmin_op = defop("argmin", _arg_kernel("argmin"), differentiable=False)
aminmax_op = defop("aminmax", _aminmax_kernel)
var_op = defop("var", _moments_kernel(root=False, with_mean=False))
std_op = defop("std", _moments_kernel(root=True, with_mean=False))
var_mean_op = defop("var_mean", _moments_kernel(root=False, with_mean=True))
std_mean_op = defop("std_mean", _moments_kernel(root=True, with_mean=True))
all_op = defop("all", _logical_kernel("all"), differentiable=False)
any_op = defop("any", _logical_kernel("any"), differentiable=False)
norm_op = defop("norm", _norm_kernel)
logsumexp_op = defop("logsumexp", _logsumexp_kernel)
cumsum_op = defop("cumsum", _cumulative_kernel("cumsum"))
cumprod_op = defop("cumprod", _cumulative_kernel("cumprod"))
cummax_op = defop("cummax", _cumulative_extreme_kernel("maximum"))
cummin_op = defop("cummin", _cumulative_extreme_kernel("minimum"))
count_nonzero_op = defop("count_nonzero", _count_nonzero_kernel, differentiable=False)
median_op = defop("median", _median_kernel(False))
nanmedian_op = defop("nanmedian", _median_kernel(True))
median_dim_op = defop("median_dim", _median_dim_kernel(False))
nanmedian_dim_op = defop("nanmedian_dim", _median_dim_kernel(True))
mode_op = defop("mode", _mode_kernel)


_SUM_KERNELS = sum_op.kernels


# -- argument checks --------------------------------------------------------------------------
_run = call_one


def _array(x, name: str):
    """The backend array of Tensor `x`; TypeError naming the op for anything else."""
    try:
        return x._data
    except AttributeError:
        raise not_a_tensor(name, x) from None


def _int(value, name: str) -> int:
    if type(value) is int:
        return value
    if isinstance(value, builtins.bool) or not hasattr(value, "__index__"):
        raise TypeError(
            f"{name}(): argument 'dim' must be int or tuple of ints, not {type(value).__name__}"
        )
    return operator.index(value)


def _dim(dim, ndim: int, name: str) -> int:
    """One dim in range(ndim) (0 for a 0-dim input); IndexError as PyTorch's."""
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    return _wrap_dim(_int(dim, name), ndim)


def _dims(dim, ndim: int, name: str, empty_is_all: bool = True):
    """Reduction dims from an int or a sequence of ints: a tuple of distinct dims in range
    (empty for a 0-dim input), or None for every dim (an empty sequence, unless
    `empty_is_all` is false: ``all``/``any`` then reduce nothing, as PyTorch)."""
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        if not dim:
            return None if empty_is_all else ()
        dims = tuple(_wrap_dim(_int(d, name), ndim) for d in dim)
        if len(set(dims)) != len(dims):
            repeated = next(d for i, d in enumerate(dims) if d in dims[:i])
            raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    else:
        dims = (_wrap_dim(_int(dim, name), ndim),)
    return dims if ndim else ()


def _np_dtype(dtype, name: str, input: Tensor | None = None):
    """The NumPy dtype of a reduction's `dtype` argument (None stays None). With the `input`
    of a differentiable reduction, an integer or bool `dtype` is refused while its gradient is
    wanted (PyTorch's autograd has no such results)."""
    if dtype is None:
        return None
    try:
        np_dtype = dtype.np
    except AttributeError:
        check_dtype(name, dtype)
        raise
    if (
        isinstance(input, Tensor)
        and input._ag is not None
        and STATE.grad_enabled
        and not (dtype.is_floating_point or dtype.is_complex)
    ):
        raise RuntimeError(f"Autograd not support dtype: {_dtype.TITLE[dtype]}")
    return np_dtype


def _title(data) -> str:
    return _dtype.TITLE[_dtype.from_np(data.dtype)]


def _check_nonempty(data, dims, name: str) -> None:
    """IndexError as PyTorch's for an op without identity reduced over a zero-size dim."""
    if data.size == 0:
        for d in dims:
            if data.shape[d] == 0:
                raise IndexError(f"{name}: Expected reduction dim {d} to have non-zero size.")


def _not_implemented(kernel: str, data) -> NotImplementedError:
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_title(data)}'")


def _write_pair(out, result, rtype):
    """Copy a (values, indices) result into the ``out=`` pair of tensors."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"argument 'out' must be a tuple of 2 Tensors, not {type(out).__name__}")
    return rtype((write_out(out[0], result[0]), write_out(out[1], result[1])))


def _finish(result, out):
    return result if out is None else write_out(out, result)


# -- sums and means ---------------------------------------------------------------------------
def sum(
    input: Tensor,
    dim=...,
    keepdim: bool | None = None,
    *,
    dtype=None,  # noqa: A001
    out: Tensor | None = None,
    axis=None,
    keepdims=None,
) -> Tensor:
    """Sum of the elements over `dim` (an int or tuple of ints; every dim when None).

    Bool and integer inputs sum to int64; `dtype` casts the input first. Shape: `input`'s
    without the reduced dims (kept with size 1 when `keepdim`). `axis` and `keepdims` are
    NumPy's names of `dim` and `keepdim` (taken here, not by a wrapper: sum is hot). As in
    PyTorch, `keepdim` and `out` need `dim` (None included) given.
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names("sum", dim, keepdim, axis, keepdims)
    if dim is ... and keepdim is None and dtype is None and out is None and STATE.autocast is None:
        # the hot path: `call_one` inlined
        try:
            dev = input._device
        except AttributeError:
            raise not_a_tensor("sum", input) from None
        try:
            result = wrap(
                kernel_context().run(_SUM_KERNELS[dev], input._data, None, False, None), dev
            )
        except OtherLayout as exc:
            return in_layout(sum_op, exc, input, None, False, None)
        if input._ag is not None and (STATE.grad_enabled or STATE.transforms):
            return LAYERS.autograd(sum_op, (input, None, False, None), result)
        return result
    if dim is ...:
        if keepdim is not None or out is not None:
            raise _needs_dim("sum", input, keepdim=keepdim, dtype=dtype, out=out)
        dim = None
    if keepdim is None:
        keepdim = False
    elif keepdim is not True and keepdim is not False:
        raise _not_bool("sum", keepdim)
    dims = _dims(dim, _array(input, "sum").ndim, "sum")
    return _finish(_run(sum_op, input, dims, keepdim, _np_dtype(dtype, "sum", input)), out)


def nansum(
    input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, out: Tensor | None = None
) -> Tensor:
    """Sum over `dim` treating NaN as zero; otherwise as `sum`."""
    if keepdim is not True and keepdim is not False:
        raise _not_bool("nansum", keepdim)
    data = _array(input, "nansum")
    if data.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    _no_complex_nansum(dtype, data)
    dims = _dims(dim, data.ndim, "nansum")
    return _finish(_run(nansum_op, input, dims, keepdim, _np_dtype(dtype, "nansum", input)), out)


def prod(
    input: Tensor,
    dim=None,
    keepdim: bool | None = None,
    *,
    dtype=None,
    out: Tensor | None = None,
) -> Tensor:
    """Product of the elements, of all of them or over one `dim`; bool and integer inputs
    give int64. Shape: `input`'s without `dim` (kept with size 1 when `keepdim`)."""
    if dim is None:
        if keepdim is not None or out is not None:
            raise _needs_dim("prod", input, keepdim=keepdim, dtype=dtype, out=out)
        return _finish(_run(prod_op, input, None, False, _np_dtype(dtype, "prod", input)), out)
    if keepdim is None:
        keepdim = False
    elif keepdim is not True and keepdim is not False:
        raise _not_bool("prod", keepdim)
    ndim = _array(input, "prod").ndim
    d = _dim(dim, ndim, "prod")
    dims = (d,) if ndim else ()
    return _finish(_run(prod_op, input, dims, keepdim, _np_dtype(dtype, "prod", input)), out)


def _check_mean_dtype(name: str, data, dtype) -> None:
    if dtype is None:
        if data.dtype.kind not in "fcV":
            raise RuntimeError(
                f"{name}(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {_title(data)}"
            )
        return
    check_dtype(name, dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Optional dtype must be either a floating "
            f"point or complex dtype. Got: {_dtype.TITLE[dtype]}"
        )


def _not_bool(name: str, keepdim) -> TypeError:
    """PyTorch's TypeError for a `keepdim` that is not a bool."""
    return TypeError(f"{name}(): argument 'keepdim' must be bool, not {type(keepdim).__name__}")


def _needs_dim(name: str, input, **given) -> TypeError:
    """PyTorch's argument-parser TypeError for `keepdim`/`out`/`unbiased` given without
    `dim`: the overload without `dim` has none of them."""
    parts = ["Tensor"] + [
        f"{key}={type(value).__name__}"
        for key, value in given.items()
        if value is not None and not (key == "keepdim" and value is False)
    ]
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({', '.join(parts)}), "
        f"but expected one of: ({name}(input, *, dtype=None) takes no keepdim or out; pass "
        "dim, None included, to keep dims or to write into out)"
    )


def _numpy_names(name: str, dim, keepdim, axis, keepdims):
    """`dim` and `keepdim` given under NumPy's names `axis` and `keepdims`."""
    if axis is not None:
        if dim is not None and dim is not ...:
            raise TypeError(f"{name}() got multiple values for argument 'dim'")
        dim = axis
    if keepdims is not None:
        if keepdim:
            raise TypeError(f"{name}() got multiple values for argument 'keepdim'")
        keepdim = keepdims
    return dim, keepdim


def mean(
    input: Tensor,
    dim=...,
    keepdim: bool | None = None,
    *,
    dtype=None,
    out: Tensor | None = None,
) -> Tensor:
    """Mean over `dim` (an int or tuple of ints; every dim when None or not given) of a
    floating or complex input (or of the input cast to `dtype`); NaN over an empty dim.
    `keepdim` needs `dim` given, as in PyTorch."""
    if dim is ...:
        if keepdim is not None:
            raise _needs_dim("mean", input, keepdim=keepdim, dtype=dtype, out=out)
        dim, keepdim = None, False
    elif keepdim is None:
        keepdim = False
    elif keepdim is not True and keepdim is not False:
        raise _not_bool("mean", keepdim)
    data = _array(input, "mean")
    _check_mean_dtype("mean", data, dtype)
    if dim is None and dtype is None and out is None:
        return _run(mean_op, input, None, keepdim, None)
    dims = _dims(dim, data.ndim, "mean")
    return _finish(_run(mean_op, input, dims, keepdim, _np_dtype(dtype, "mean")), out)


def _no_complex_nansum(dtype, data) -> None:
    if getattr(dtype, "is_complex", False) and data.size:
        raise NotImplementedError(f"\"nansum_cpu\" not implemented for '{_dtype.TITLE[dtype]}'")


def nanmean(
    input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, out: Tensor | None = None
) -> Tensor:
    """Mean over `dim` of the elements that are not NaN (NaN where all are)."""
    if keepdim is not True and keepdim is not False:
        raise _not_bool("nanmean", keepdim)
    data = _array(input, "nanmean")
    if data.dtype.kind not in "fV":
        if data.dtype.kind == "c":
            raise RuntimeError("nansum on CPU does not support complex inputs")
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{_title(data)}"
        )
    if dtype is not None:
        _check_mean_dtype("nanmean", data, dtype)
    _no_complex_nansum(dtype, data)
    dims = _dims(dim, data.ndim, "nanmean")
    return _finish(_run(nanmean_op, input, dims, keepdim, _np_dtype(dtype, "nanmean")), out)


# -- extrema ----------------------------------------------------------------------------------
def _check_all(name: str, kernel_name: str, data) -> None:
    """Refuse max()/min() of every element of a complex or empty input, as PyTorch."""
    if data.dtype.kind == "c":
        raise _not_implemented(kernel_name, data)
    if data.size == 0:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
            "the reduction dim with the 'dim' argument."
        )


def _extreme_dim(op, name: str, rtype, input: Tensor, dim, keepdim, out):
    if keepdim is not True and keepdim is not False:
        raise _not_bool(name, keepdim)
    data = _array(input, name)
    d = _dim(dim, data.ndim, name)
    if data.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    _check_nonempty(data, (d,), name + "()")
    result = rtype(call(op, (input,), d, keepdim))
    return result if out is None else _write_pair(out, result, rtype)


def max(input: Tensor, dim=None, keepdim: bool = False, *, out=None):  # noqa: A001
    """The largest element (a 0-dim tensor; NaN if any); with an int `dim`, the
    ``(values, indices)`` of the largest along it (first occurrence on ties); with a tensor
    as second argument, the elementwise `maximum`."""
    if dim is None:
        data = _array(input, "max")
        if data.size == 0 or data.dtype.kind == "c":
            _check_all("max", "max_all", data)
        return _finish(_run(amax_op, input, None, False), out)
    if isinstance(dim, Tensor):
        return PUBLIC["maximum"](input, dim, out=out)
    return _extreme_dim(max_dim_op, "max", rt.max, input, dim, keepdim, out)


def min(input: Tensor, dim=None, keepdim: bool = False, *, out=None):  # noqa: A001
    """The smallest element (a 0-dim tensor; NaN if any); with an int `dim`, the
    ``(values, indices)`` of the smallest along it (first occurrence on ties); with a tensor
    as second argument, the elementwise `minimum`."""
    if dim is None:
        data = _array(input, "min")
        if data.size == 0 or data.dtype.kind == "c":
            _check_all("min", "min_all", data)
        return _finish(_run(amin_op, input, None, False), out)
    if isinstance(dim, Tensor):
        return PUBLIC["minimum"](input, dim, out=out)
    return _extreme_dim(min_dim_op, "min", rt.min, input, dim, keepdim, out)


def _amax_amin(op, name: str, kernel_name: str, input: Tensor, dim, keepdim, out) -> Tensor:
    if keepdim is not True and keepdim is not False:
        raise _not_bool(name, keepdim)
    data = _array(input, name)
    dims = _dims(dim, data.ndim, name)
    if dims is None:
        _check_all(name, kernel_name, data)
    elif data.dtype.kind == "c":
        raise _not_implemented(kernel_name, data)
    else:
        _check_nonempty(data, dims, name + "()")
    return _finish(_run(op, input, dims, keepdim), out)


def amax(input: Tensor, dim=(), keepdim: bool = False, *, out: Tensor | None = None) -> Tensor:
    """Largest values over `dim` (an int or tuple of ints; every dim when empty); NaN wins."""
    return _amax_amin(amax_op, "amax", "max_values_cpu", input, dim, keepdim, out)


def amin(input: Tensor, dim=(), keepdim: bool = False, *, out: Tensor | None = None) -> Tensor:
    """Smallest values over `dim` (an int or tuple of ints; every dim when empty); NaN wins."""
    return _amax_amin(amin_op, "amin", "min_values_cpu", input, dim, keepdim, out)


def aminmax(input: Tensor, *, dim=None, keepdim: bool = False, out=None):
    """``(min, max)`` of every element, or along the int `dim`."""
    if keepdim is not True and keepdim is not False:
        raise _not_bool("aminmax", keepdim)
    data = _array(input, "aminmax")
    if dim is None:
        if data.size == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation "
                "has no identity."
            )
    else:
        dim = _dim(dim, data.ndim, "aminmax")
        _check_nonempty(data, (dim,), "aminmax")
    if data.dtype.kind == "c":
        raise _not_implemented("aminmax_cpu", data)
    result = rt.aminmax(call(aminmax_op, (input,), dim, keepdim))
    return result if out is None else _write_pair(out, result, rt.aminmax)


def _arg_extreme(op, name: str, input: Tensor, dim, keepdim) -> Tensor:
    if keepdim is not True and keepdim is not False:
        raise _not_bool(name, keepdim)
    data = _array(input, name)
    if data.dtype.kind in "bc":
        kind = "complex" if data.dtype.kind == "c" else "bool"
        raise RuntimeError(f"{name}(): does not support {kind} input")
    if dim is None:
        if data.size == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            )
        return _run(op, input, None, keepdim)
    d = _dim(dim, data.ndim, name)
    _check_nonempty(data, (d,), name + "()")
    return _run(op, input, d if data.ndim else None, keepdim)


def argmax(input: Tensor, dim=None, keepdim: bool = False, *, out: Tensor | None = None) -> Tensor:
    """Index (int64) of the largest element, of the flattened input when `dim` is None;
    the first on ties, a NaN's if any."""
    result = _arg_extreme(argmax_op, "argmax", input, dim, keepdim)
    return result if out is None else write_out_same_dtype(out, result)


def argmin(input: Tensor, dim=None, keepdim: bool = False, *, out: Tensor | None = None) -> Tensor:
    """Index (int64) of the smallest element, of the flattened input when `dim` is None;
    the first on ties, a NaN's if any."""
    result = _arg_extreme(argmin_op, "argmin", input, dim, keepdim)
    return result if out is None else write_out_same_dtype(out, result)


# -- statistics -------------------------------------------------------------------------------
def _moment_args(name: str, input: Tensor, dim, unbiased, correction, keepdim, out=None):
    """(dims, correction, keepdim) from PyTorch's var/std signatures, legacy `unbiased`
    included (whose overload without `dim` takes no `keepdim` or `out`)."""
    if type(dim) is builtins.bool:  # var(input, unbiased)
        dim, unbiased = ..., dim
    if dim is ...:
        if unbiased is not None and (keepdim is not None or out is not None):
            raise _needs_dim(name, input, keepdim=keepdim, unbiased=unbiased, out=out)
        dim = None
    data = _array(input, name)
    if data.dtype.kind not in "fcV":
        what = "std and var" if name in ("std", "var") else name
        raise RuntimeError(f"{what} only support floating point and complex dtypes")
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}(): pass either unbiased or correction, not both")
    if unbiased is not None and unbiased is not True and unbiased is not False:
        raise TypeError(
            f"{name}(): argument 'unbiased' must be bool, not {type(unbiased).__name__}"
        )
    if correction is None:
        correction = 1 if unbiased is None else int(unbiased)
    if keepdim is None:
        keepdim = False
    elif keepdim is not True and keepdim is not False:
        raise _not_bool(name, keepdim)
    return _dims(dim, data.ndim, name), correction, keepdim


def var(
    input: Tensor,
    dim=...,
    unbiased=None,
    keepdim: bool | None = None,
    *,
    correction=None,
    out: Tensor | None = None,
) -> Tensor:
    """Variance over `dim`: the sum of squared deviations divided by ``N - correction``
    (default 1; ``unbiased=False`` means 0). Complex inputs give real results."""
    dims, correction, keepdim = _moment_args("var", input, dim, unbiased, correction, keepdim, out)
    return _finish(_run(var_op, input, dims, correction, keepdim), out)


def std(
    input: Tensor,
    dim=...,
    unbiased=None,
    keepdim: bool | None = None,
    *,
    correction=None,
    out: Tensor | None = None,
) -> Tensor:
    """Standard deviation over `dim`: the square root of `var` with the same arguments."""
    dims, correction, keepdim = _moment_args("std", input, dim, unbiased, correction, keepdim, out)
    return _finish(_run(std_op, input, dims, correction, keepdim), out)


def var_mean(
    input: Tensor, dim=..., unbiased=None, keepdim: bool | None = None, *, correction=None
) -> tuple:
    """``(var, mean)`` over `dim`, as `var` and `mean` with the same arguments."""
    dims, correction, keepdim = _moment_args("var_mean", input, dim, unbiased, correction, keepdim)
    return call(var_mean_op, (input,), dims, correction, keepdim)


def std_mean(
    input: Tensor, dim=..., unbiased=None, keepdim: bool | None = None, *, correction=None
) -> tuple:
    """``(std, mean)`` over `dim`, as `std` and `mean` with the same arguments."""
    dims, correction, keepdim = _moment_args("std_mean", input, dim, unbiased, correction, keepdim)
    return call(std_mean_op, (input,), dims, correction, keepdim)


# -- logical ----------------------------------------------------------------------------------
def _logical(op, name: str, input: Tensor, dim, keepdim, out) -> Tensor:
    if keepdim is not True and keepdim is not False:
        raise _not_bool(name, keepdim)
    if dim is not None:
        dim = _dims(dim, _array(input, name).ndim, name, empty_is_all=False)
    return _finish(_run(op, input, dim, keepdim), out)


def all(
    input: Tensor,
    dim=None,
    keepdim: bool = False,
    *,  # noqa: A001
    out: Tensor | None = None,
) -> Tensor:
    """Whether every element over `dim` is nonzero (bool; uint8 for a uint8 input)."""
    return _logical(all_op, "all", input, dim, keepdim, out)


def any(
    input: Tensor,
    dim=None,
    keepdim: bool = False,
    *,  # noqa: A001
    out: Tensor | None = None,
) -> Tensor:
    """Whether some element over `dim` is nonzero (bool; uint8 for a uint8 input)."""
    return _logical(any_op, "any", input, dim, keepdim, out)


def count_nonzero(input: Tensor, dim=None) -> Tensor:
    """Number (int64) of nonzero elements over `dim` (an int or tuple; every dim if None)."""
    dims = _dims(dim, _array(input, "count_nonzero").ndim, "count_nonzero")
    return _run(count_nonzero_op, input, dims)


# -- norms and logsumexp ----------------------------------------------------------------------
def _norm_dtype(data, dtype, name: str = "linalg.vector_norm"):
    """Check the input's and `dtype`'s kinds as linalg.vector_norm does."""
    if data.dtype.kind not in "fcV":
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {_title(data)}"
        )
    if dtype is None:
        return None
    check_norm_dtype(name, _dtype.from_np(data.dtype), dtype)
    return dtype.np


def check_norm_dtype(name: str, input_dtype, dtype) -> None:
    """PyTorch's checks of a norm's `dtype`: floating or complex, of the input's kind, and
    one the input's dtype casts to without narrowing."""
    check_dtype(name.replace(".", "_"), dtype)
    title = _dtype.TITLE[dtype]
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got {title}")
    if dtype.is_complex != input_dtype.is_complex:
        kind = "complex for complex" if input_dtype.is_complex else "real for real"
        raise RuntimeError(f"{name}: dtype should be {kind} inputs, but got {title}")
    if _dtype.promote_types(input_dtype, dtype) is not dtype:
        raise RuntimeError(
            f"{name}: the dtype of the input ({_dtype.TITLE[input_dtype]}) should be "
            f"convertible without narrowing to the specified dtype ({title})"
        )


def _matrix_dims(p: str, dim, ndim: int) -> tuple:
    if p not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    dims = tuple(range(ndim)) if dim is None else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(
            f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}"
        )
    wrapped = tuple(_wrap_dim(_int(d, "norm"), ndim) for d in dims)
    if wrapped[0] == wrapped[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got {tuple(dims)}")
    return wrapped


def norm(
    input: Tensor, p="fro", dim=None, keepdim: bool = False, out: Tensor | None = None, dtype=None
) -> Tensor:
    """The p-norm over `dim` (the legacy ``torch.norm``): p a number (``inf``, ``-inf``, 0
    counts nonzeros), ``"fro"`` (the 2-norm) or ``"nuc"`` (sum of the singular values over two
    dims). Real result (complex inputs give their real dtype)."""
    if keepdim is not True and keepdim is not False:
        raise _not_bool("norm", keepdim)
    data = _array(input, "norm")
    name = "linalg.matrix_norm" if isinstance(p, str) and p == "nuc" else "linalg.vector_norm"
    np_dtype = _norm_dtype(data, dtype, name)
    if isinstance(p, str):
        if p == "fro" and (dim is None or not isinstance(dim, (tuple, list)) or len(dim) <= 2):
            p = 2.0
            dims = _dims(dim, data.ndim, "norm")
        else:
            dims = _matrix_dims(p, dim, data.ndim)
            if p == "fro":
                p = 2.0
    else:
        p = 2.0 if p is None else builtins.float(p)
        dims = _dims(dim, data.ndim, "norm")
        if data.size == 0 and (p < 0 or p == _INF):
            _check_norm_identity(data, dims, p)
    return _finish(_run(norm_op, input, p, dims, keepdim, np_dtype), out)


def _check_norm_identity(data, dims, p: float) -> None:
    """inf and negative norms have no identity: PyTorch refuses to reduce over an empty dim."""
    message = f"linalg.vector_norm cannot compute the {p:g} norm on "
    if dims is None:
        raise RuntimeError(
            message + "an empty tensor because the operation does not have an identity"
        )
    for d in dims:
        if data.shape[d] == 0:
            raise RuntimeError(
                message + f"the dimension {d}because this dimension is empty and the "
                "operation does not have an identity"
            )


def logsumexp(input: Tensor, dim, keepdim: bool = False, *, out: Tensor | None = None) -> Tensor:
    """``log(sum(exp(input)))`` over `dim`, computed without overflow; -inf over an empty dim.
    Integer inputs give the default float dtype."""
    if keepdim is not True and keepdim is not False:
        raise _not_bool("logsumexp", keepdim)
    data = _array(input, "logsumexp")
    if isinstance(dim, (tuple, list)) and not dim and data.ndim:
        raise RuntimeError(
            f"output with shape [] doesn't match the broadcast shape {[1] * data.ndim}"
        )
    dims = _dims(dim, data.ndim, "logsumexp")
    if data.dtype.kind in "biu":  # integer tensors never require grad: no history to keep
        input = wrap(data.astype(_dtype.DEFAULTS.float.np), input._device)
    return _finish(_run(logsumexp_op, input, dims, keepdim), out)


# -- cumulative -------------------------------------------------------------------------------
def _no_bool_cumulative(name: str, dtype, data) -> None:
    if dtype is _dtype.bool and data.size and data.ndim:  # a 0-dim input is only cast
        raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")


def cumsum(input: Tensor, dim, *, dtype=None, out: Tensor | None = None) -> Tensor:
    """Cumulative sums along `dim`; bool and integer inputs give int64. Shape: `input`'s."""
    data = _array(input, "cumsum")
    d = _dim(dim, data.ndim, "cumsum")
    _no_bool_cumulative("cumsum", dtype, data)
    return _finish(_run(cumsum_op, input, d, _np_dtype(dtype, "cumsum", input)), out)


def cumprod(input: Tensor, dim, *, dtype=None, out: Tensor | None = None) -> Tensor:
    """Cumulative products along `dim`; bool and integer inputs give int64. Shape: `input`'s."""
    data = _array(input, "cumprod")
    d = _dim(dim, data.ndim, "cumprod")
    _no_bool_cumulative("cumprod", dtype, data)
    return _finish(_run(cumprod_op, input, d, _np_dtype(dtype, "cumprod", input)), out)


def _cumulative_extreme(op, name: str, rtype, input: Tensor, dim, out):
    data = _array(input, name)
    if data.dtype.kind == "c" and data.size:  # PyTorch's kernel never runs on no elements
        raise _not_implemented(f"{name}_cpu", data)
    result = rtype(call(op, (input,), _dim(dim, data.ndim, name)))
    return result if out is None else _write_pair(out, result, rtype)


def cummax(input: Tensor, dim, *, out=None):
    """``(values, indices)``: the running maximum along `dim` and where it was reached (the
    latest position on ties; NaN, once met, stays). Shapes: `input`'s."""
    return _cumulative_extreme(cummax_op, "cummax", rt.cummax, input, dim, out)


def cummin(input: Tensor, dim, *, out=None):
    """``(values, indices)``: the running minimum along `dim` and where it was reached (the
    latest position on ties; NaN, once met, stays). Shapes: `input`'s."""
    return _cumulative_extreme(cummin_op, "cummin", rt.cummin, input, dim, out)


# -- order statistics -------------------------------------------------------------------------
def _median(op, dim_op, name: str, rtype, input: Tensor, dim, keepdim, out):
    if keepdim is not True and keepdim is not False:
        raise _not_bool(name, keepdim)
    data = _array(input, name)
    if dim is None:
        if out is not None:
            raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
        kind = data.dtype.kind
        if data.size == 0 and kind not in "fV":
            # PyTorch's kernel never runs: its NaN, cast to the dtype (an integer's lowest)
            nan = int(np.iinfo(data.dtype).min) if kind in "iu" else np.nan if kind == "c" else True
            return PUBLIC["full"]((), nan, dtype=input.dtype)
        if data.dtype.kind in "bc":
            raise _not_implemented("median_cpu", data)
        return _finish(_run(op, input), out)
    d = _dim(dim, data.ndim, name)
    _check_nonempty(data, (d,), "median()")
    if data.dtype.kind in "bc":
        raise _not_implemented("median_out", data)
    result = rtype(call(dim_op, (input,), d, keepdim))
    return result if out is None else _write_pair(out, result, rtype)


def median(input: Tensor, dim=None, keepdim: bool = False, *, out=None):
    """The lower of the two middle values of all elements (a 0-dim tensor; NaN if any); with
    `dim`, the ``(values, indices)`` of the lower medians along it."""
    return _median(median_op, median_dim_op, "median", rt.median, input, dim, keepdim, out)


def nanmedian(input: Tensor, dim=None, keepdim: bool = False, *, out=None):
    """`median` ignoring NaN (NaN only where every value is NaN)."""
    return _median(
        nanmedian_op, nanmedian_dim_op, "nanmedian", rt.nanmedian, input, dim, keepdim, out
    )


def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out=None):
    """``(values, indices)``: the most frequent value along `dim` (the smallest on ties) and
    the index of its last occurrence."""
    if keepdim is not True and keepdim is not False:
        raise _not_bool("mode", keepdim)
    data = _array(input, "mode")
    d = _dim(dim, data.ndim, "mode")
    _check_nonempty(data, (d,), "mode()")
    if data.dtype.kind == "c" and data.ndim:  # a 0-dim input runs no kernel
        raise _not_implemented("mode_cpu", data)
    result = rt.mode(call(mode_op, (input,), d, keepdim))
    return result if out is None else _write_pair(out, result, rt.mode)


for _fn in (
    sum,
    nansum,
    prod,
    mean,
    nanmean,
    max,
    min,
    amax,
    amin,
    aminmax,
    argmax,
    argmin,
    var,
    std,
    all,
    any,
    count_nonzero,
    norm,
    logsumexp,
    cumsum,
    cumprod,
    cummax,
    cummin,
    median,
    nanmedian,
    mode,
):
    export(_fn, method=True)
export(var_mean)
export(std_mean)
