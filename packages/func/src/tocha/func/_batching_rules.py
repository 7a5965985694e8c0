"""Batching rules: how each primitive runs on a whole batch at once (see `_batching`).

Most rules come from a few families: elementwise ops (batch dims in front, each operand's
example dims right-aligned), ops over given dims (the dims shifted past the batch dims), ops
on trailing dims that broadcast over leading ones, view and shape ops (the batch shape
prepended), and ops whose kernel takes one leading batch dim (the batch folded into it).
A few ops have rules of their own.
"""

from __future__ import annotations

import math
import string

import numpy as np

import tocha
from tocha import Tensor

from ._batched import VMAP, BatchedTensor, aligned, batch_shape

RULES: dict = {}


def rule(*names):
    def register(fn):
        for name in names:
            if name in RULES:
                raise ValueError(f"batching rule of {name!r} is declared twice")
            RULES[name] = fn
        return fn

    return register


def _tensors(args):
    return [a for a in args if isinstance(a, Tensor)]


def _padded(t, levels, ndim):
    """`t`'s values with its batch dims (size 1 where not batched) in front of its example
    dims, these left-padded with size-1 dims to `ndim` (an unbatched tensor stays as is:
    broadcasting right-aligns it)."""
    if type(t) is not BatchedTensor:
        return t._data
    physical = aligned(t, levels)
    k = len(levels)
    missing = ndim - t._data.ndim
    if missing <= 0:
        return physical
    return physical.reshape(physical.shape[:k] + (1,) * missing + physical.shape[k:])


def _full(t, levels, xp, shape=None):
    """`t`'s values with every batch dim of `levels` in front, at the full batch size."""
    shape = shape or batch_shape([t], levels)
    physical = aligned(t, levels)
    return xp.broadcast_to(physical, tuple(shape) + physical.shape[len(levels) :])


def _raw(args):
    """Unbatched arguments as the kernel takes them: tensors as their arrays."""
    return [a._data if isinstance(a, Tensor) else a for a in args]


def _kernel(op, args):
    return op.kernels[_tensors(args)[0]._device]


# -- elementwise ------------------------------------------------------------------------------
POINTWISE = (
    "abs acos acosh asin asinh atan atanh ceil cos cosh erf erfc erfinv exp exp2 expm1 floor "
    "frac isfinite isinf isnan isneginf isposinf log log10 log1p log2 neg reciprocal relu "
    "rsqrt sgn sigmoid sign signbit sin sinh sqrt square tan tanh trunc bitwise_not "
    "logical_not add sub mul div div_trunc floor_divide remainder fmod pow atan2 hypot "
    "copysign nextafter maximum minimum fmax fmin logaddexp logaddexp2 bitwise_and "
    "bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift logical_and logical_or "
    "logical_xor gcd lcm eq ne lt le gt ge heaviside xlogy digamma i0 lgamma sinc "
    "special_entr special_erfcx special_i0e special_i1 special_i1e special_log_ndtr "
    "special_ndtri special_xlog1py special_zeta div_floor detach_copy igamma igammac"
).split()
# Elementwise in their leading tensor arguments, with non-tensor parameters after them.
WITH_PARAMETERS = (
    "clamp round nan_to_num polygamma angle conj real imag frexp to_dtype clone elu gelu "
    "hardshrink hardsigmoid hardswish hardtanh leaky_relu log_sigmoid mish silu "
    "softplus softshrink threshold where masked_fill view_as_complex complex isin"
).split()


def _operand_dtype(args, out, xp):
    """The dtype tocha computes an elementwise op of several operands in: their promoted
    type, or the result's floating type for ops that make integers float (None: the
    operands' own, when they all share one dtype)."""
    import tocha

    operands = [a for a in args if isinstance(a, (Tensor, bool, int, float, complex))]
    if len(operands) < 2:
        return None
    dtypes = {a._data.dtype for a in operands if isinstance(a, Tensor)}
    if len(dtypes) == 1:
        kind = next(iter(dtypes)).kind
        weak = _WEAK_SCALARS.get(kind, (bool,))  # scalars that leave this kind as it is
        if all(isinstance(a, Tensor) or type(a) in weak for a in operands):
            return None
    common = tocha.result_type(*operands[:2])
    for extra in operands[2:]:
        common = tocha.promote_types(common, tocha.result_type(extra, operands[0]))
    first = out[0] if type(out) is tuple else out
    if first.dtype.is_floating_point and not common.is_floating_point and not common.is_complex:
        common = first.dtype
    return xp.dtype(first._data.dtype if common == first.dtype else common.np)


# Python scalar types that do not change a tensor's dtype of each NumPy kind.
_WEAK_SCALARS = {
    "b": (bool,),
    "u": (bool, int),
    "i": (bool, int),
    "f": (bool, int, float),
    "V": (bool, int, float),  # bfloat16
    "c": (bool, int, float, complex),
}


def _same_layout(op, args, levels):
    """The kernel's result when `args` need no alignment or cast: the first a tensor batched
    over exactly `levels`, then at most one more operand, a Python scalar that keeps its
    dtype or a tensor batched likewise with the same dtype and example rank (the common
    calls, as ``r * 2`` or ``a + b``); else None."""
    first = args[0]
    if type(first) is not BatchedTensor or first._levels != levels or len(args) > 2:
        return None
    x = first._physical
    if len(args) == 1:
        if x.dtype.kind in "biu":  # ops that make integers float take the general path
            return None
        return op.kernels[first._device](x)
    other = args[1]
    if type(other) is BatchedTensor:
        if (
            other._levels != levels
            or other._physical.dtype != x.dtype
            or other._data.ndim != first._data.ndim
        ):
            return None
        return op.kernels[first._device](x, other._physical)
    if type(other) not in _WEAK_SCALARS.get(x.dtype.kind, ()):
        return None
    return op.kernels[first._device](x, other)


@rule(*POINTWISE)
def _pointwise(op, args, out, levels, xp):
    result = _same_layout(op, args, levels)
    if result is not None:
        return result
    ndim = max(a._data.ndim for a in _tensors(args))
    target = _operand_dtype(args, out, xp)
    arrays = []
    for a in args:
        if isinstance(a, Tensor):
            array = _padded(a, levels, ndim)
            if target is not None and array.dtype != target:
                array = array.astype(target)
            arrays.append(array)
        elif target is not None and target.kind in "fc" and isinstance(a, (int, float)):
            arrays.append(target.type(a))
        else:
            arrays.append(a)
    if len(arrays) == 1:
        x = arrays[0]
        first = out[0] if type(out) is tuple else out
        if x.dtype.kind in "biu" and first._data.dtype.kind in "fc":
            arrays[0] = x.astype(first._data.dtype)
    return _kernel(op, args)(*arrays)


@rule(*WITH_PARAMETERS)
def _with_parameters(op, args, out, levels, xp):
    ndim = max(a._data.ndim for a in _tensors(args))
    arrays = [_padded(a, levels, ndim) if isinstance(a, Tensor) else a for a in args]
    return _kernel(op, args)(*arrays)


@rule("gelu_backward")
def _gelu_backward(op, args, out, levels, xp):
    """The kernel takes the gradient and the input at one shape (its buffer is shaped like
    the input): both at their full batch shape."""
    grad, x, approximate = args
    shape = batch_shape([grad, x], levels)
    return _kernel(op, args)(
        _full(grad, levels, xp, shape), _full(x, levels, xp, shape), approximate
    )


# -- ops over given dims ---------------------------------------------------------------------
def _shift(dims, ndim, k):
    """`dims` of an `ndim`-dim example (an int, a sequence, or None for all) as the same
    dims of the batch, whose `k` batch dims come first."""
    if dims is None:
        return tuple(range(k, k + ndim))
    if isinstance(dims, int):
        return dims % ndim + k
    return tuple(d % ndim + k for d in dims)


def over_dims(position, all_when_none=True, out_ndim_extra=0):
    """A rule for an op of one tensor (argument 0) whose argument `position` holds dims."""

    def batched_rule(op, args, out, levels, xp):
        x = args[0]
        dims = args[position]
        ndim = x._data.ndim + out_ndim_extra
        if dims is None and not all_when_none:
            return NotImplemented
        if ndim == 0:
            return NotImplemented
        call = list(args)
        call[0] = aligned(x, levels)
        call[position] = _shift(dims, ndim, len(levels))
        return _kernel(op, args)(*call)

    return batched_rule


for _names, _position in (
    ("sum mean nansum nanmean prod amax amin all any logsumexp count_nonzero", 1),
    ("std var std_mean var_mean flip", 1),
    ("norm", 2),
    ("fft_c2c fft_r2c fft_c2r", 1),
):
    for _name in _names.split():
        RULES[_name] = over_dims(_position)


@rule("argmax", "argmin", "aminmax")
def _flattened_when_none(op, args, out, levels, xp):
    """Ops of one dim or (None) of the whole example, flattened."""
    x, dim, keepdim = args
    k = len(levels)
    physical = aligned(x, levels)
    if dim is not None:
        return _kernel(op, args)(physical, _shift(dim, x._data.ndim, k), keepdim)
    flat = physical.reshape(physical.shape[:k] + (-1,))
    result = _kernel(op, args)(flat, k, False)

    def shaped(r):
        return r.reshape(physical.shape[:k] + out_example.shape)

    out_example = (out[0] if type(out) is tuple else out)._data
    return tuple(shaped(r) for r in result) if type(out) is tuple else shaped(result)


for _names, _position in (
    ("max_dim min_dim median_dim nanmedian_dim mode", 1),
    ("cumsum cumprod cummax cummin logcumsumexp softmax log_softmax sort", 1),
    ("unbind squeeze", 1),
    ("kthvalue topk", 2),
    ("narrow", 1),
):
    for _name in _names.split():
        RULES[_name] = over_dims(_position, all_when_none=False)
RULES["split_with_sizes"] = over_dims(2, all_when_none=False)
RULES["unsqueeze"] = over_dims(1, all_when_none=False, out_ndim_extra=1)


@rule("softmax_backward_data", "log_softmax_backward_data")
def _softmax_backward(op, args, out, levels, xp):
    g, y, dim = args
    shape = batch_shape([g, y], levels)
    return _kernel(op, args)(
        _full(g, levels, xp, shape),
        _full(y, levels, xp, shape),
        _shift(dim, g._data.ndim, len(levels)),
    )


@rule("diagonal")
def _diagonal(op, args, out, levels, xp):
    x, offset, dim1, dim2 = args
    n = x._data.ndim
    return _kernel(op, args)(
        aligned(x, levels), offset, _shift(dim1, n, len(levels)), _shift(dim2, n, len(levels))
    )


@rule("gather")
def _gather(op, args, out, levels, xp):
    x, index, dim = args
    shape = batch_shape([x, index], levels)
    return _kernel(op, args)(
        _full(x, levels, xp, shape),
        _full(index, levels, xp, shape),
        _shift(dim, x._data.ndim, len(levels)),
    )


@rule("scatter", "scatter_add", "scatter_reduce")
def _scatter(op, args, out, levels, xp):
    x, index, src, dim = args[:4]
    shape = batch_shape(_tensors(args), levels)
    full = [_full(t, levels, xp, shape) if isinstance(t, Tensor) else t for t in (x, index, src)]
    return _kernel(op, args)(
        xp.array(full[0]), full[1], full[2], _shift(dim, x._data.ndim, len(levels)), *args[4:]
    )


@rule("roll")
def _roll(op, args, out, levels, xp):
    x, shifts, dims = args
    if dims is None or x._data.ndim == 0:
        return NotImplemented
    return _kernel(op, args)(aligned(x, levels), shifts, _shift(dims, x._data.ndim, len(levels)))


@rule("cat")
def _cat(op, args, out, levels, xp):
    tensors, dim = args[:-1], args[-1]
    ndim = out._data.ndim
    if any(t._data.ndim != ndim for t in tensors):
        return NotImplemented  # legacy empty 1-d operands
    shape = batch_shape(tensors, levels)
    return _kernel(op, args)(
        *(_full(t, levels, xp, shape) for t in tensors), _shift(dim, ndim, len(levels))
    )


@rule("stack")
def _stack(op, args, out, levels, xp):
    tensors, dim = args[:-1], args[-1]
    shape = batch_shape(tensors, levels)
    full = [_full(t, levels, xp, shape) for t in tensors]
    return _kernel(op, args)(*full, _shift(dim, out._data.ndim, len(levels)))


# -- ops on trailing dims, broadcasting over leading ones -------------------------------------
TRAILING = (
    "tril triu constant_pad_nd view_as_real fft_real linalg_det linalg_inv_ex "
    "linalg_cholesky_ex linalg_slogdet linalg_eigh linalg_eigvalsh linalg_svdvals "
    "linalg_matrix_exp view_dtype linalg_ldl_factor_ex linalg_ldl_solve geqrf"
).split()


@rule(*TRAILING)
def _trailing(op, args, out, levels, xp):
    tensors = _tensors(args)
    if any(type(t) is BatchedTensor for t in tensors[1:]):
        return NotImplemented  # batched parameters (weights, right-hand sides)
    return _kernel(op, args)(aligned(args[0], levels), *_raw(args[1:]))


# -- view and shape ops ----------------------------------------------------------------------
@rule("view")
def _view(op, args, out, levels, xp):
    x = args[0]
    physical = aligned(x, levels)
    return _kernel(op, args)(physical, physical.shape[: len(levels)] + out._data.shape)


@rule("expand")
def _expand(op, args, out, levels, xp):
    x = args[0]
    physical = _padded(x, levels, out._data.ndim)
    return _kernel(op, args)(physical, physical.shape[: len(levels)] + out._data.shape)


@rule("permute")
def _permute(op, args, out, levels, xp):
    x, dims = args
    k, n = len(levels), x._data.ndim
    return _kernel(op, args)(aligned(x, levels), tuple(range(k)) + tuple(k + d % n for d in dims))


@rule("repeat")
def _repeat(op, args, out, levels, xp):
    x, sizes = args
    k = len(levels)
    physical = _padded(x, levels, len(sizes))
    return _kernel(op, args)(physical, (1,) * k + tuple(sizes))


@rule("as_strided")
def _as_strided(op, args, out, levels, xp):
    """Each example's own view: the storage offset counts from where the example starts
    (as PyTorch's rule), its sizes and strides are the example's, behind the batch dims."""
    x, size, stride, offset = args
    physical = aligned(x, levels)
    root = physical
    while isinstance(root.base, np.ndarray):
        root = root.base
    if type(physical) is not np.ndarray or not root.flags.c_contiguous:
        return NotImplemented
    item = physical.itemsize
    start = (
        physical.__array_interface__["data"][0]
        - root.__array_interface__["data"][0]
        + (offset - x.storage_offset()) * item
    )
    shape = physical.shape[: len(levels)] + tuple(size)
    strides = physical.strides[: len(levels)] + tuple(s * item for s in stride)
    end = start + item + sum((n - 1) * s for n, s in zip(shape, strides) if n)
    if 0 in shape:
        end = start
    if start < 0 or end > root.nbytes:
        raise RuntimeError(
            f"vmap: as_strided with sizes {list(size)}, strides {list(stride)} and storage "
            f"offset {offset} reaches outside the memory of an example"
        )
    return np.ndarray(shape, physical.dtype, root, start, strides)


def _is_advanced(entry) -> bool:
    return not (entry is None or entry is Ellipsis or isinstance(entry, (int, slice)))


@rule("getitem")
def _getitem(op, args, out, levels, xp):
    x, key = args
    key = key if isinstance(key, tuple) else (key,)
    advanced = [i for i, entry in enumerate(key) if _is_advanced(entry)]
    if advanced and advanced[-1] - advanced[0] + 1 != len(advanced):
        return NotImplemented  # NumPy moves separated index arrays to the front
    return _kernel(op, args)(aligned(x, levels), (slice(None),) * len(levels) + key)


@rule("index")
def _index(op, args, out, levels, xp):
    """Advanced indexing: full slices over the batch dims in front of the key; batched index
    arrays are joined by an index array per batch dim (when the key starts with them)."""
    x, arrays, pattern = args[0], args[1:-1], args[-1]
    k = len(levels)
    used = [i for i, p in enumerate(pattern) if p is not None]
    if used and used[-1] - used[0] + 1 != len(used):
        return NotImplemented  # NumPy moves separated index arrays to the front
    if all(type(a) is not BatchedTensor for a in arrays):
        return _kernel(op, args)(aligned(x, levels), *_raw(arrays), (None,) * k + tuple(pattern))
    ndims = {a._data.ndim for a in arrays}
    if used[0] != 0 or len(ndims) != 1 or any(type(p) is bool for p in pattern):
        return NotImplemented
    shape = batch_shape(list(args[:-1]), levels)
    m = ndims.pop()
    batch_index = [
        xp.arange(n).reshape((1,) * i + (n,) + (1,) * (k - 1 - i + m)) for i, n in enumerate(shape)
    ]
    full = [_full(a, levels, xp, shape) for a in arrays]
    key = tuple(range(k)) + tuple(p if p is None else p + k for p in pattern)
    return _kernel(op, args)(_full(x, levels, xp, shape), *batch_index, *full, key)


# -- products ---------------------------------------------------------------------------------
@rule("matmul")
def _matmul(op, args, out, levels, xp):
    a, b = args
    k = len(levels)
    shape = batch_shape([a, b], levels)
    if type(b) is not BatchedTensor and b._data.ndim == 2:  # one GEMM over every row
        pa = aligned(a, levels)
        return (pa.reshape(-1, pa.shape[-1]) @ b._data).reshape(pa.shape[:-1] + b._data.shape[-1:])
    if type(a) is not BatchedTensor and a._data.ndim == 2 and b._data.ndim == 1:
        return aligned(b, levels) @ a._data.T
    pa = aligned(a, levels) if type(a) is BatchedTensor else None
    pb = aligned(b, levels) if type(b) is BatchedTensor else None
    a_vector, b_vector = a._data.ndim == 1, b._data.ndim == 1
    if pa is not None and a_vector:
        pa = pa[..., None, :]
    if pb is not None and b_vector:
        pb = pb[..., :, None]
    a_example = 2 if a_vector else a._data.ndim
    b_example = 2 if b_vector else b._data.ndim
    ndim = max(a_example, b_example)
    if pa is None:
        pa = a._data[None, :] if a_vector else a._data
        pa = pa.reshape((1,) * (k + ndim - pa.ndim) + pa.shape)
    else:
        pa = pa.reshape(pa.shape[:k] + (1,) * (ndim - a_example) + pa.shape[k:])
    if pb is None:
        pb = b._data[:, None] if b_vector else b._data
        pb = pb.reshape((1,) * (k + ndim - pb.ndim) + pb.shape)
    else:
        pb = pb.reshape(pb.shape[:k] + (1,) * (ndim - b_example) + pb.shape[k:])
    result = xp.matmul(pa, pb)
    if b_vector:
        result = result[..., 0]
    if a_vector:
        result = result[..., 0, :] if not b_vector else result[..., 0]
    return xp.broadcast_to(result, tuple(shape) + result.shape[k:])


@rule("linear")
def _linear(op, args, out, levels, xp):
    """``x @ w.T + b`` with any of them batched: x's example dims flattened to rows."""
    x, w = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    k = len(levels)
    shape = batch_shape(_tensors(args), levels)
    px = aligned(x, levels)
    px = px.reshape(px.shape[:k] + (-1, x._data.shape[-1]))
    pw = aligned(w, levels)
    result = xp.matmul(px, xp.swapaxes(pw, -1, -2))
    if bias is not None:
        pb = aligned(bias, levels)
        result = result + pb.reshape(pb.shape[:k] + (1,) + pb.shape[k:])
    result = xp.broadcast_to(result, tuple(shape) + result.shape[k:])
    return result.reshape(tuple(shape) + out._data.shape)


@rule("linear_pointwise")
def _linear_pointwise(op, args, out, levels, xp):
    """``act(x @ w.T + b)``: a batched input is more rows; a batched weight or bias runs
    the loop."""
    x, params, activation = args[0], args[1:-1], args[-1]
    if type(x) is not BatchedTensor or any(type(p) is BatchedTensor for p in params):
        return NotImplemented
    return _kernel(op, args)(aligned(x, levels), *_raw(params), activation)


@rule("einsum")
def _einsum(op, args, out, levels, xp):
    """The equation with one new subscript per batch dim, on the batched operands."""
    tensors, equation, dtype = args[:-2], args[-2], args[-1]
    if "->" not in equation:
        return NotImplemented
    inputs, output = equation.split("->")
    free = [c for c in string.ascii_letters if c not in equation][: len(levels)]
    batch = "".join(free)
    shape = batch_shape(tensors, levels)
    terms = []
    arrays = []
    for term, t in zip(inputs.split(","), tensors):
        if type(t) is BatchedTensor:
            terms.append(batch + term)
            arrays.append(_full(t, levels, xp, shape).astype(dtype, copy=False))
        else:
            terms.append(term)
            arrays.append(t._data.astype(dtype, copy=False))
    return xp.einsum(",".join(terms) + "->" + batch + output, *arrays, optimize=len(arrays) > 2)


# -- ops whose kernel takes one leading batch dim: the vmap batch folded into it --------------
FOLDED = ("convolution_transpose max_pool avg_pool adaptive_max_pool im2col col2im").split()


@rule(*FOLDED)
def _folded(op, args, out, levels, xp):
    x = args[0]
    if any(type(t) is BatchedTensor for t in _tensors(args)[1:]) or x._data.ndim < 2:
        return NotImplemented
    k = len(levels)
    physical = aligned(x, levels)
    batch = physical.shape[:k]
    folded = physical.reshape((-1,) + physical.shape[k + 1 :])
    result = _kernel(op, args)(folded, *_raw(args[1:]))

    def unfold(r):
        return r.reshape(batch + (x._data.shape[0],) + r.shape[1:])

    if isinstance(result, tuple):
        return tuple(unfold(r) for r in result)
    return unfold(result)


@rule("embedding")
def _embedding(op, args, out, levels, xp):
    """Rows of the weight; a batched weight (an ensemble's) gives each example its own."""
    weight, indices = args[0], args[1]
    if type(weight) is not BatchedTensor:
        return _kernel(op, args)(weight._data, aligned(indices, levels), *_raw(args[2:]))
    shape = batch_shape([weight, indices], levels)
    k = len(levels)
    rows = _full(indices, levels, xp, shape)
    if rows.size and (rows.max() >= weight._data.shape[0] or rows.min() < 0):
        raise IndexError("index out of range in self")
    which = [
        xp.arange(n).reshape((1,) * i + (n,) + (1,) * (k - 1 - i + indices._data.ndim))
        for i, n in enumerate(shape)
    ]
    return _full(weight, levels, xp, shape)[tuple(which) + (rows,)]


@rule("convolution")
def _convolution(op, args, out, levels, xp):
    """The batch folded into the kernel's batch dim, or, with batched weights (an
    ensemble's), into its channels as groups."""
    tensors = _tensors(args)
    if not any(type(t) is BatchedTensor for t in tensors[1:]):
        return _folded(op, args, out, levels, xp)
    x, w = args[0], args[1]
    has_bias = len(tensors) == 3
    rest = list(args[len(tensors) :])
    groups = rest[3]
    shape = batch_shape(tensors, levels)
    b = math.prod(shape)
    k = len(levels)
    px = _full(x, levels, xp, shape).reshape((b,) + x._data.shape)
    px = xp.moveaxis(px, 0, 1).reshape((x._data.shape[0], -1) + x._data.shape[2:])
    pw = _full(w, levels, xp, shape).reshape((-1,) + w._data.shape[1:])
    call = [px, pw]
    if has_bias:
        call.append(_full(args[2], levels, xp, shape).reshape(-1))
    rest[3] = groups * b
    result = _kernel(op, args)(*call, *rest)
    n, o = x._data.shape[0], w._data.shape[0]
    result = result.reshape((n,) + tuple(shape) + (o,) + result.shape[2:])
    return xp.moveaxis(result, 0, k)


@rule("native_layer_norm")
def _layer_norm(op, args, out, levels, xp):
    """Normalized over trailing dims; batched weight or bias (an ensemble's) applied after."""
    x = args[0]
    *params, nd, eps, affine = args[1:]
    if not any(type(p) is BatchedTensor for p in params):
        return _kernel(op, args)(aligned(x, levels), *_raw(args[1:]))
    y, mean, rstd = _kernel(op, args)(aligned(x, levels), nd, eps, "")
    ndim = x._data.ndim
    if "w" in affine:
        y = y * _padded(params[0], levels, ndim)
    if "b" in affine:
        y = y + _padded(params[-1], levels, ndim)
    return y, mean, rstd


@rule("native_group_norm")
def _group_norm(op, args, out, levels, xp):
    """The batch folded into the samples; a batched weight or bias runs the loop."""
    x = args[0]
    *params, groups, eps, affine = args[1:]
    if type(x) is not BatchedTensor or any(type(p) is BatchedTensor for p in params):
        return NotImplemented
    physical = aligned(x, levels)
    k = len(levels)
    flat = physical.reshape((-1,) + physical.shape[k + 1 :])
    y, mean, rstd = _kernel(op, args)(flat, *_raw(params), groups, eps, affine)
    stats = physical.shape[: k + 1] + (groups,)
    return y.reshape(physical.shape), mean.reshape(stats), rstd.reshape(stats)


@rule("native_batch_norm")
def _batch_norm(op, args, out, levels, xp):
    """Each example's statistics: the batch folded into the channels."""
    x = args[0]
    *params, eps, affine = args[1:]
    tensors = _tensors(args)
    shape = batch_shape(tensors, levels)
    b = math.prod(shape)
    n, c = x._data.shape[:2]
    px = _full(x, levels, xp, shape).reshape((b,) + x._data.shape)
    px = xp.moveaxis(px, 0, 1).reshape((n, b * c) + x._data.shape[2:])
    flat_params = [_full(p, levels, xp, shape).reshape(-1) for p in params]
    y, mean, invstd = _kernel(op, args)(px, *flat_params, eps, affine)
    y = xp.moveaxis(y.reshape((n, b, c) + x._data.shape[2:]), 1, 0)
    batch = tuple(shape)
    return (
        y.reshape(batch + x._data.shape),
        mean.reshape(batch + (c,)),
        invstd.reshape(batch + (c,)),
    )


# -- randomness ------------------------------------------------------------------------------
@rule("native_dropout")
def _dropout(op, args, out, levels, xp):
    """randomness="different": a mask per example; "same": the first example's mask for all."""
    x, stream, p = args
    physical = aligned(x, levels)
    if VMAP.randomness[levels[-1]] == "different":
        VMAP.unbatched_draws -= 1
        if VMAP.draw_state is not None and x.device.type == "cpu":
            tocha.set_rng_state(VMAP.draw_state)  # rewinds `stream`: the first example's draw
        # the kernel draws in its input's memory order; PyTorch's draw is batch first
        return _kernel(op, args)(xp.ascontiguousarray(physical), stream, p)
    keep = out[1]._data
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    shape = physical.shape[: len(levels)] + keep.shape
    return physical * keep * physical.dtype.type(scale), xp.broadcast_to(keep, shape)


# -- losses over classes: the batch folded into the rows, reduced per example ---------------
def _folded_rows(x, t, levels, xp):
    """Scores and targets with the batch folded into their rows (dim 0): an example of
    shape (C,) is one row, (N, C, ...) N rows."""
    shape = batch_shape([x, t], levels)
    px, pt = _full(x, levels, xp, shape), _full(t, levels, xp, shape)
    k = len(levels)
    if x._data.ndim == 1:
        return px.reshape((-1,) + px.shape[k:]), pt.reshape(-1), shape
    return px.reshape((-1,) + px.shape[k + 1 :]), pt.reshape((-1,) + pt.shape[k + 1 :]), shape


def _target_weight(t, w, ignore_index, shape, xp, dtype):
    """Each example's total target weight (what "mean" divides by), shape `shape`."""
    pt = t.reshape(tuple(shape) + (-1,))
    valid = pt != ignore_index
    if w is None:
        return valid.sum(-1).astype(dtype)
    return (w._data[pt * valid] * valid).sum(-1)


def _per_example(losses, reduction, t, w, ignore_index, shape, xp):
    losses = losses.reshape(tuple(shape) + (-1,))
    if reduction == "none":
        return losses
    total = losses.sum(-1)
    if reduction == "sum":
        return total
    weight = _target_weight(t, w, ignore_index, shape, xp, losses.dtype)
    with_weight = xp.where(weight == 0, 1, weight)
    return xp.where(weight == 0, xp.nan, total / with_weight)


def _row_gradients(g, reduction, flat_t, w, ignore_index, shape, xp):
    """The gradient reaching each row of each example (as the backward kernels' "none")."""
    if reduction == "none":
        return g.reshape(-1)
    scale = g.reshape(tuple(shape))
    if reduction == "mean":
        weight = _target_weight(flat_t, w, ignore_index, shape, xp, scale.dtype)
        scale = xp.where(weight == 0, 0, scale / xp.where(weight == 0, 1, weight))
    return xp.repeat(scale.reshape(-1), flat_t.size // math.prod(shape))


def _folded_targets(t, levels, shape, x_shape, xp):
    """Targets with the batch folded into rows, and the folded scores' shape."""
    pt = _full(t, levels, xp, shape)
    if len(x_shape) == 1:
        folded = pt.reshape(-1)
        return folded, (folded.shape[0], x_shape[0])
    folded = pt.reshape((-1,) + pt.shape[len(levels) + 1 :])
    return folded, (folded.shape[0],) + tuple(x_shape[1:])


def _class_weight(w):
    return None if w is None else w._data


@rule("nll_loss")
def _nll(op, args, out, levels, xp):
    x, t, w, reduction, ignore_index = args
    if type(w) is BatchedTensor:
        return NotImplemented
    px, pt, shape = _folded_rows(x, t, levels, xp)
    losses = _kernel(op, args)(px, pt, _class_weight(w), "none", ignore_index)
    return _per_example(losses, reduction, pt, w, ignore_index, shape, xp)


@rule("cross_entropy_loss")
def _cross_entropy(op, args, out, levels, xp):
    x, t, w, reduction, ignore_index, smoothing = args
    if type(w) is BatchedTensor or smoothing > 0 and reduction == "mean":
        return NotImplemented
    px, pt, shape = _folded_rows(x, t, levels, xp)
    losses, probs = _kernel(op, args)(px, pt, _class_weight(w), "none", ignore_index, smoothing)
    loss = _per_example(losses, reduction, pt, w, ignore_index, shape, xp)
    return loss, probs.reshape(tuple(shape) + out[1]._data.shape)


@rule("nll_loss_backward")
def _nll_backward(op, args, out, levels, xp):
    g, t, w, x_shape, reduction, ignore_index = args
    if type(w) is BatchedTensor:
        return NotImplemented
    shape = batch_shape([g, t], levels)
    folded_t, folded_shape = _folded_targets(t, levels, shape, x_shape, xp)
    rows = _row_gradients(
        _full(g, levels, xp, shape), reduction, folded_t, w, ignore_index, shape, xp
    )
    grad = _kernel(op, args)(rows, folded_t, _class_weight(w), folded_shape, "none", ignore_index)
    return grad.reshape(tuple(shape) + tuple(x_shape))


@rule("cross_entropy_loss_backward")
def _cross_entropy_backward(op, args, out, levels, xp):
    g, x, t, probs, w, reduction, ignore_index, smoothing = args
    if type(w) is BatchedTensor or smoothing > 0 and reduction == "mean":
        return NotImplemented
    x_shape = x._data.shape
    shape = batch_shape([g, x, t, probs], levels)
    folded_t, folded_shape = _folded_targets(t, levels, shape, x_shape, xp)
    rows = _row_gradients(
        _full(g, levels, xp, shape), reduction, folded_t, w, ignore_index, shape, xp
    )
    pp = _full(probs, levels, xp, shape)
    pp = pp.reshape((-1,) + pp.shape[len(levels) + 1 :])
    px = _full(x, levels, xp, shape).reshape(folded_shape)
    grad = _kernel(op, args)(
        rows, px, folded_t, pp, _class_weight(w), "none", ignore_index, smoothing
    )
    return grad.reshape(tuple(shape) + tuple(x_shape))


@rule("convolution_backward_weight")
def _conv_backward_weight(op, args, out, levels, xp):
    """Per-example weight gradients: the batch folded into the channels, as groups."""
    x, g, stride, pads, dilation, groups, ksize = args
    shape = batch_shape([x, g], levels)
    b = math.prod(shape)
    px = _full(x, levels, xp, shape).reshape((b,) + x._data.shape)
    pg = _full(g, levels, xp, shape).reshape((b,) + g._data.shape)
    px = xp.moveaxis(px, 0, 1).reshape((x._data.shape[0], -1) + x._data.shape[2:])
    pg = xp.moveaxis(pg, 0, 1).reshape((g._data.shape[0], -1) + g._data.shape[2:])
    grad = _kernel(op, args)(px, pg, stride, pads, dilation, groups * b, ksize)
    return grad.reshape(tuple(shape) + out._data.shape)


# -- more ops with rules of their own --------------------------------------------------------
@rule("median", "nanmedian")
def _median_of_all(op, args, out, levels, xp):
    """The median of each whole example: the example flattened, its median along it."""
    from tocha.library import REGISTRY

    k = len(levels)
    physical = aligned(args[0], levels)
    flat = physical.reshape(physical.shape[:k] + (-1,))
    along = REGISTRY[op.name + "_dim"].kernels[args[0]._device]
    return along(flat, k, False)[0]


@rule("index_add", "index_copy", "index_fill")
def _index_along(op, args, out, levels, xp):
    x, index = args[0], args[1]
    if type(index) is BatchedTensor:
        return NotImplemented
    tensors = _tensors(args)
    shape = batch_shape(tensors, levels)
    call = [_full(a, levels, xp, shape) if type(a) is BatchedTensor or a is x else a for a in args]
    call = [c._data if isinstance(c, Tensor) else c for c in call]
    call[0] = xp.array(call[0])
    dim_position = 2 if op.name == "index_fill" else 3
    call[dim_position] = _shift(args[dim_position], x._data.ndim, len(levels))
    return _kernel(op, args)(*call)


@rule("searchsorted")
def _searchsorted(op, args, out, levels, xp):
    sequence, values = args[0], args[1]
    if type(sequence) is BatchedTensor or sequence._data.ndim != 1:
        return NotImplemented
    return _kernel(op, args)(sequence._data, aligned(values, levels), *args[2:])


@rule("outer")
def _outer(op, args, out, levels, xp):
    a, b, dtype = args
    pa, pb = aligned(a, levels).astype(dtype), aligned(b, levels).astype(dtype)
    return pa[..., :, None] * pb[..., None, :]


@rule("vdot")
def _vdot(op, args, out, levels, xp):
    a, b = args
    return (xp.conj(aligned(a, levels)) * aligned(b, levels)).sum(-1)


@rule("tensordot")
def _tensordot(op, args, out, levels, xp):
    a, b, dims_a, dims_b = args
    k = len(levels)
    if type(a) is BatchedTensor and type(b) is BatchedTensor:
        return NotImplemented
    if type(a) is BatchedTensor:
        return xp.tensordot(aligned(a, levels), b._data, (_shift(dims_a, a._data.ndim, k), dims_b))
    result = xp.tensordot(a._data, aligned(b, levels), (dims_a, _shift(dims_b, b._data.ndim, k)))
    free_a = a._data.ndim - len(dims_a)
    return xp.moveaxis(result, tuple(range(free_a, free_a + k)), tuple(range(k)))


@rule("binary_cross_entropy")
def _binary_cross_entropy(op, args, out, levels, xp):
    x, t, w, reduction = args
    ndim = x._data.ndim
    arrays = [_padded(a, levels, ndim) if isinstance(a, Tensor) else a for a in (x, t, w)]
    losses = _kernel(op, args)(*arrays, "none")
    shape = batch_shape(_tensors(args), levels)
    losses = xp.broadcast_to(losses, tuple(shape) + x._data.shape)
    dims = tuple(range(len(levels), len(levels) + ndim))
    if reduction == "none":
        return losses
    return losses.sum(dims) if reduction == "sum" else losses.mean(dims)


@rule("scaled_dot_product_attention")
def _attention(op, args, out, levels, xp):
    """Attention broadcasts over leading dims: every tensor padded behind the batch dims."""
    tensors = _tensors(args)
    ndim = max(t._data.ndim for t in tensors)
    shape = batch_shape(tensors, levels)
    call = []
    for a in args:
        if a is args[0] or a is args[1] or a is args[2]:
            physical = aligned(a, levels)
            k = len(levels)
            example = (1,) * (ndim - a._data.ndim) + physical.shape[k:]
            call.append(
                xp.broadcast_to(
                    physical.reshape(physical.shape[:k] + example), tuple(shape) + example
                )
            )
        elif isinstance(a, Tensor):
            call.append(_padded(a, levels, ndim))
        else:
            call.append(a)
    return _kernel(op, args)(*call)


@rule("setitem")
def _setitem(op, args, out, levels, xp):
    """``x[key] = value`` on the whole batch (a copy of x; the op is out of place)."""
    x, value, key = args
    key = key if isinstance(key, tuple) else (key,)
    advanced = [i for i, entry in enumerate(key) if _is_advanced(entry)]
    if advanced:
        return NotImplemented
    shape = batch_shape(_tensors(args), levels)
    k = len(levels)
    target = xp.array(_full(x, levels, xp, shape))
    full_key = (slice(None),) * k + key
    region = target[full_key]
    if isinstance(value, Tensor):
        value = _padded(value, levels, region.ndim - k)
    target[full_key] = value
    return target


@rule("index_put")
def _index_put(op, args, out, levels, xp):
    """``x[arrays] = value`` (or ``+=`` with accumulate) with unbatched index arrays."""
    x, value = args[0], args[1]
    arrays, pattern, accumulate = args[2:-2], args[-2], args[-1]
    if any(type(a) is BatchedTensor for a in arrays):
        return NotImplemented
    used = [i for i, p in enumerate(pattern) if p is not None]
    if used and used[-1] - used[0] + 1 != len(used):
        return NotImplemented
    k = len(levels)
    shape = batch_shape([x, value], levels)
    target = xp.array(_full(x, levels, xp, shape))
    key = (slice(None),) * k + tuple(_index_entry(p, arrays, xp) for p in pattern)
    region = target[key]
    pv = _padded(value, levels, region.ndim - k) if isinstance(value, Tensor) else value
    if accumulate:
        xp.add.at(target, key, xp.broadcast_to(pv, region.shape))
    else:
        target[key] = pv
    return target


def _index_entry(p, arrays, xp):
    """One entry of an index_put key: a full slice (None), a bool scalar's index, an array."""
    if p is None:
        return slice(None)
    if type(p) is bool:
        return xp.zeros(1 if p else 0, dtype=xp.int64)
    array = arrays[p]._data
    return array.astype(bool) if array.dtype.kind == "u" else array
