"""Indexing: ``Tensor.__getitem__`` / ``__setitem__`` and the index, mask and selection ops.

A key is split as PyTorch splits it: its basic part (ints, slices, None, Ellipsis) is one
view (op ``getitem``, sharing memory); index tensors, lists and bools then index that view
(op ``index``, a copy). Ints are applied before index tensors, so ``x[0, :, [1, 2]]`` keeps
the advanced dimension in place, as in PyTorch (NumPy would move it first).

The advanced part travels as a `pattern`: one slot per indexed position of the view, each
None (a full slice), an int (the position of its index array among the op's inputs), or a
Python bool (PyTorch's index ``[0]`` for True, ``[]`` for False on an unsqueezed dim).
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from .. import _dtype
from .._api import export
from .._backend import backend_of
from .._device import CPU
from .._dispatch import (
    broadcast_error,
    call,
    call_view,
    defop,
    device_mismatch,
    expect_tensor,
    expect_tensors,
    not_a_tensor,
    type_name,
)
from .._grad_mode import STATE, no_grad
from .._stack import user_stacklevel
from .._tensor import Tensor, wrap
from ._argcheck import check_tensors, flag
from ._out import check_writable, inplace, write_out
from .creation import full

_ALL = slice(None)
_ELLIPSIS = (Ellipsis,)
_SCALARS = (int, float, bool, complex)


# -- kernels -------------------------------------------------------------------------------
def _array_key(xp, arrays, pattern) -> tuple:
    """The backend key of an advanced index: index arrays and full slices by `pattern`."""
    key = []
    for p in pattern:
        if p is None:
            key.append(_ALL)
        elif p is True or p is False:
            key.append(xp.zeros(1 if p else 0, dtype=xp.int64))
        else:
            a = arrays[p]
            key.append(a.astype(bool) if a.dtype.kind == "u" else a)
    return tuple(key)


def _raises_out_of_bounds(xp) -> bool:
    """Whether the namespace raises on out-of-bounds index arrays (CuPy wraps silently)."""
    return getattr(xp, "__name__", "") == "numpy"


def _getitem_kernel(xp):
    def kernel(x, key):
        return x[key]

    return kernel


def _index_kernel(xp):
    checked = _raises_out_of_bounds(xp)

    def kernel(x, *rest):
        arrays, pattern = rest[:-1], rest[-1]
        if not checked:
            _check_indices(xp, x.shape, arrays, pattern)
        try:
            if (
                len(arrays) == 1
                and type(pattern[-1]) is int
                and arrays[0].dtype.kind == "i"
                and pattern.count(None) == len(pattern) - 1
            ):  # one index array, after full slices: `take` is much faster
                return x.take(arrays[0], axis=len(pattern) - 1)
            return x[_array_key(xp, arrays, pattern)]
        except IndexError:
            _check_indices(xp, x.shape, arrays, pattern)
            raise

    return kernel


def _check_value_shape(xp, shape, value, arrays, pattern) -> None:
    """PyTorch checks that the value broadcasts to the indexing result before it checks the
    indices' bounds: the result's shape, from in-bounds (zero) indices."""
    if not hasattr(value, "shape"):
        return
    zeros = [a if a.dtype.kind in "bu" else xp.zeros_like(a) for a in arrays]
    try:
        indexed = xp.empty(shape, dtype=bool)[_array_key(xp, zeros, pattern)].shape
    except IndexError:  # a dim of size 0 indexed
        return
    try:
        fits = np.broadcast_shapes(value.shape, indexed) == indexed
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
            f"broadcast to indexing result of shape {list(indexed)}"
        )


def _index_put_kernel(xp):
    checked = _raises_out_of_bounds(xp)

    def kernel(x, value, *rest, out=None):
        arrays, pattern, accumulate = rest[:-2], rest[-2], rest[-1]
        if not checked:
            _check_value_shape(xp, x.shape, value, arrays, pattern)
            _check_indices(xp, x.shape, arrays, pattern)
        key = _array_key(xp, arrays, pattern)
        if out is None:
            out = x.copy()
        if getattr(value, "dtype", out.dtype).kind == "c" and out.dtype.kind != "c":
            value = value.real
        try:
            if accumulate:
                xp.add.at(out, key, value)
            else:
                out[key] = value
        except IndexError:
            _check_value_shape(xp, x.shape, value, arrays, pattern)
            _check_indices(xp, x.shape, arrays, pattern)
            raise
        except ValueError:
            _check_value_shape(xp, x.shape, value, arrays, pattern)
            shape = out[key].shape
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
                f"broadcast to indexing result of shape {list(shape)}"
            ) from None
        return out

    return kernel


def _setitem_kernel(xp):
    def kernel(x, value, key, out=None):
        if out is None:
            out = x.copy()
        if getattr(value, "dtype", out.dtype).kind == "c" and out.dtype.kind != "c":
            value = value.real
        try:
            out[key] = value
        except ValueError:
            check_writable(out)
            raise _expand_error(value, out[key].shape) from None
        return out

    return kernel


def _masked_fill_kernel(xp):
    def kernel(x, mask, value, out=None):
        if out is None:
            return xp.where(mask, xp.asarray(value, dtype=x.dtype), x)
        xp.copyto(out, value, casting="unsafe", where=mask)
        return out

    return kernel


def _masked_select_kernel(xp):
    def kernel(x, mask):
        shape = xp.broadcast_shapes(x.shape, mask.shape)
        return xp.broadcast_to(x, shape)[xp.broadcast_to(mask, shape)]

    return kernel


def _where_kernel(xp):
    def kernel(condition, a, b):
        if condition.dtype.kind != "b":
            condition = condition.astype(bool)
        return xp.where(condition, a, b)

    return kernel


def _nonzero_kernel(xp):
    def kernel(x, as_tuple):
        if not as_tuple:
            return xp.argwhere(x)
        if x.ndim == 0:
            return (xp.zeros(1 if x else 0, dtype=xp.int64),)
        return tuple(xp.nonzero(x))

    return kernel


getitem_op = defop("getitem", _getitem_kernel)
index_op = defop("index", _index_kernel)
index_put_op = defop("index_put", _index_put_kernel)
setitem_op = defop("setitem", _setitem_kernel)
masked_fill_op = defop("masked_fill", _masked_fill_kernel)
masked_select_op = defop("masked_select", _masked_select_kernel)
where_op = defop("where", _where_kernel, layout="elementwise")
nonzero_op = defop("nonzero", _nonzero_kernel, differentiable=False)


# -- errors --------------------------------------------------------------------------------
def _check_indices(xp, shape, arrays, pattern) -> None:
    """Raise PyTorch's IndexError for index arrays that do not broadcast together or hold an
    out-of-bounds index (``dimension`` counts index tensors, masks one per dim, as PyTorch)."""
    shapes = []
    for p in pattern:
        if p is True or p is False:
            shapes.append([int(p)])
        elif p is not None:
            a = arrays[p]
            if a.dtype.kind in "bu":
                shapes.extend([[int(xp.count_nonzero(a))]] * a.ndim)
            else:
                shapes.append(list(a.shape))
    try:
        np.broadcast_shapes(*map(tuple, shapes))
    except ValueError:
        listed = ", ".join(str(s) for s in shapes)
        raise IndexError(
            f"shape mismatch: indexing tensors could not be broadcast together with shapes {listed}"
        ) from None
    dim = ordinal = 0
    for p in pattern:
        if p is None or p is True or p is False:
            ordinal += p is not None
            dim += 1
            continue
        a = arrays[p]
        if a.dtype.kind in "bu":
            dim += a.ndim
            ordinal += a.ndim
            continue
        n = shape[dim]
        bad = (a < -n) | (a >= n)
        if bad.any():
            raise IndexError(
                f"index {int(a[bad].ravel()[0])} is out of bounds for dimension {ordinal} "
                f"with size {n}"
            )
        dim += 1
        ordinal += 1


def _expand_error(value, target) -> RuntimeError:
    """PyTorch's message for a value that does not expand to a basic-indexing target."""
    vshape = list(value.shape)
    while vshape and vshape[0] == 1:
        vshape.pop(0)
    target = list(target)
    if len(vshape) > len(target):
        title = _dtype.TITLE[_dtype.from_np(value.dtype)]
        return RuntimeError(
            f"expand(tocha.{title}Tensor{{{vshape}}}, size={target}): the number of sizes "
            f"provided ({len(target)}) must be greater or equal to the number of dimensions "
            f"in the tensor ({len(vshape)})"
        )
    offset = len(target) - len(vshape)
    for i, s in enumerate(vshape):
        if s != 1 and s != target[offset + i]:
            return RuntimeError(
                f"The expanded size of the tensor ({target[offset + i]}) must match the existing "
                f"size ({s}) at non-singleton dimension {offset + i}.  Target sizes: {target}.  "
                f"Tensor sizes: {vshape}"
            )
    return RuntimeError(f"cannot write a value of shape {vshape} into shape {target}")


_INDEX_TYPE_ERROR = "tensors used as indices must be long, int, byte or bool tensors"
# The dtypes of index tensors: int64, int32, uint8 (a mask, deprecated) and bool.
_INDEX_CHARS = frozenset(np.dtype(t).char for t in (np.int64, np.int32, np.uint8, np.bool_))
# PyTorch's C++ scalar type names, used in its conversion errors.
_MASK_NAME = {
    "bool": "bool",
    "uint8": "unsigned char",
    "int8": "signed char",
    "int16": "short int",
    "int32": "int",
    "int64": "long int",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "float32": "float",
    "float64": "double",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


# -- scalars -------------------------------------------------------------------------------
def scalar_value(value, d: _dtype.dtype):
    """A Python or NumPy number as a number that writes into dtype `d`, with PyTorch's checks:
    a value outside the dtype's range, or a complex value with an imaginary part written to a
    real dtype, is an overflow (RuntimeError)."""
    if isinstance(value, np.generic):
        value = value.item()
    tv = type(value)
    if tv is int and not -(2**63) <= value < 2**63:
        raise ValueError("Overflow when unpacking long long")
    rank = d.rank
    if rank == _dtype.BOOL:
        return bool(value)
    if tv is complex and rank != _dtype.COMPLEX:
        if value.imag != 0:
            raise _overflow(d)
        value = value.real
        tv = float
    if rank == _dtype.INTEGRAL:
        if tv is bool:
            return value
        info = np.iinfo(d.np)
        unsigned = info.min == 0
        if not (-info.max if unsigned else info.min) <= value <= info.max:
            raise _overflow(d)
        return value + info.max + 1 if unsigned and value < 0 else value
    if d.itemsize == 2:  # float16, bfloat16: out of range becomes inf, as in PyTorch
        with np.errstate(over="ignore"):
            return d.np.type(value)
    if d is _dtype.float32 or d is _dtype.complex64:
        for part in (value.real, value.imag) if tv is complex else (value,):
            if abs(part) > _FLOAT32_MAX and abs(part) != _INF:
                raise _overflow(d)
    return value


_FLOAT32_MAX = float(np.finfo(np.float32).max)
_INF = float("inf")


def _overflow(d: _dtype.dtype) -> RuntimeError:
    return RuntimeError(f"value cannot be converted to type {_dtype.C_NAME[d]} without overflow")


def _tensor_type_name(t: Tensor) -> str:
    module = _dtype.SHOWN_MODULE
    prefix = f"{module}." if t._device is CPU else f"{module}.{t._device.type}."
    return f"{prefix}{_dtype.TITLE[t.dtype]}Tensor"


# -- parsing keys --------------------------------------------------------------------------
def _fast_key(key):
    """The NumPy key of a key made only of ints, slices with a positive step, None and one
    Ellipsis (the common cases), or None when the key needs the general parser."""
    tk = type(key)
    if tk is int:
        return (key, Ellipsis)
    if tk is slice:
        step = key.step
        return key if step is None or (type(step) is int and step > 0) else None
    if tk is tuple:
        ellipsis = False
        for k in key:
            t = type(k)
            if t is int or k is None:
                continue
            if t is slice:
                step = k.step
                if step is None or (type(step) is int and step > 0):
                    continue
            elif k is Ellipsis and not ellipsis:
                ellipsis = True
                continue
            return None
        return key if ellipsis else key + _ELLIPSIS
    return None


def _as_tuple(key) -> tuple:
    """PyTorch's reading of a key: a short list holding sequences, slices, tensors, None or
    Ellipsis means a tuple of indices (NumPy's old rule); any other list is one index."""
    if type(key) is tuple:
        return key
    if (isinstance(key, list) or (isinstance(key, np.ndarray) and key.ndim)) and len(key) < 32:
        for k in key:
            if (
                isinstance(k, (Tensor, list, tuple, slice, np.ndarray))
                or k is None
                or (k is Ellipsis)
            ):
                if isinstance(key, list):
                    _warn_sequence_key()
                return tuple(key)
    return (key,)


def _warn_sequence_key() -> None:
    warnings.warn(
        "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
        "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
        "be interpreted as tensor index, x[torch.tensor(seq)], which will result either in an "
        "error or a different result",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


def _index_entry(k, dev):
    """One entry of a key as an int, slice, None, Ellipsis, Python bool or index Tensor."""
    tk = type(k)
    if tk is int or tk is bool or k is None or k is Ellipsis:
        return k
    if tk is slice:
        step = k.step
        if step is not None:
            step = operator.index(step)
            if step == 0:
                raise ValueError("slice step cannot be zero")
            if step < 0:
                raise ValueError("step must be greater than zero")
        return k
    if isinstance(k, Tensor):
        kind = k._data.dtype.kind
        if k._data.dtype.char not in _INDEX_CHARS:
            raise IndexError(_INDEX_TYPE_ERROR)
        if kind == "u":
            warnings.warn(
                "indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                "torch.bool instead.",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        if k._data.ndim == 0:
            return bool(k.item()) if kind in "bu" else int(k.item())
        if k._device is not dev:
            if k._device is not CPU:
                raise RuntimeError(
                    "indices should be either on cpu or on the same device as the indexed "
                    f"tensor ({dev})"
                )
            return wrap(backend_of(dev).from_host(k._data, dev), dev)
        return k
    if isinstance(k, np.bool_):
        return bool(k)
    if isinstance(k, (list, np.ndarray)):
        try:
            array = np.asarray(k)
        except ValueError:
            array = None
        if array is None or array.dtype.kind not in "biu":
            from .creation import _host_array

            array = _host_array(k)
        if array.dtype.kind not in "biu":
            if array.size:
                raise IndexError(_INDEX_TYPE_ERROR)
            array = array.astype(np.int64)
        if array.dtype.kind == "u" and array.dtype.itemsize > 1:
            array = array.astype(np.int64)
        return _index_entry(wrap(array, CPU), dev)
    try:
        return operator.index(k)
    except TypeError:
        raise IndexError(
            "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
            f"are valid indices (got {tk.__name__})"
        ) from None


def _consumed(k) -> int:
    """How many dims of the indexed tensor an entry uses."""
    tk = type(k)
    if tk is int or tk is slice:
        return 1
    if tk is Tensor:
        return k._data.ndim if k._data.dtype.kind in "bu" else 1
    return 0


def parse_key(x: Tensor, key):
    """Split `key` into the NumPy key of its basic part (a view of `x`) and its advanced
    entries ``[(dim of the view, index Tensor or Python bool), ...]`` (empty when none)."""
    shape = x._data.shape
    ndim = len(shape)
    if ndim == 0 and type(key) is int:
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
            "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
        )
    entries = [_index_entry(k, x._device) for k in _as_tuple(key)]
    specified = sum(_consumed(k) for k in entries)
    if specified > ndim:
        if ndim == 0 and any(type(k) is slice for k in entries):
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    basic, advanced = [], []
    dim = vdim = 0
    ellipsis = False
    for i, k in enumerate(entries):
        tk = type(k)
        if tk is int:
            n = shape[dim]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {i} with size {n}")
            basic.append(k)
            dim += 1
        elif tk is slice:
            basic.append(k)
            dim += 1
            vdim += 1
        elif k is None:
            basic.append(None)
            vdim += 1
        elif k is Ellipsis:
            if ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = True
            basic.append(Ellipsis)
            dim += ndim - specified
            vdim += ndim - specified
        elif tk is bool:
            basic.append(None)
            advanced.append((vdim, k))
            vdim += 1
        else:
            used = _consumed(k)
            basic.extend([_ALL] * used)
            advanced.append((vdim, k))
            dim += used
            vdim += used
    if not ellipsis:
        basic.append(Ellipsis)
    return tuple(basic), advanced


def _is_identity(basic: tuple) -> bool:
    return all(k is Ellipsis or k == _ALL for k in basic)


def advanced_pattern(view: Tensor, advanced):
    """The index Tensors and `pattern` (see the module docstring) of advanced entries, with
    PyTorch's check that each mask matches the dims it indexes."""
    shape = view._data.shape
    pattern, tensors = [], []
    pos = 0
    for vdim, item in advanced:
        pattern.extend([None] * (vdim - pos))
        if type(item) is bool:
            pattern.append(item)
            pos = vdim + 1
            continue
        data = item._data
        if data.dtype.kind in "bu":
            for j, s in enumerate(data.shape):
                if s != shape[vdim + j]:
                    raise IndexError(
                        f"The shape of the mask {list(data.shape)} at index {j} does not match "
                        f"the shape of the indexed tensor {list(shape)} at index {vdim + j}"
                    )
            pos = vdim + data.ndim
        else:
            pos = vdim + 1
        pattern.append(len(tensors))
        tensors.append(item)
    return tensors, tuple(pattern)


# -- __getitem__ / __setitem__ -------------------------------------------------------------
def _getitem(self: Tensor, key) -> Tensor:
    """``self[key]``: a view for ints, slices, None and Ellipsis; a copy when the key holds
    index tensors, lists, masks or bools (PyTorch's rules)."""
    fast = _fast_key(key)
    if fast is not None:
        try:
            return call_view(getitem_op, self, fast)
        except IndexError:
            pass  # the general parser raises PyTorch's message
    elif _simple_index(self, key):
        return call(index_op, (self, key), _FIRST)
    basic, advanced = parse_key(self, key)
    if not advanced:
        return call_view(getitem_op, self, basic)
    view = self if _is_identity(basic) else call_view(getitem_op, self, basic)
    tensors, pattern = advanced_pattern(view, advanced)
    return call(index_op, (view, *tensors), pattern)


_FIRST = (0,)


def _simple_index(self: Tensor, key) -> bool:
    """Whether `key` is an index tensor (int, or a bool mask of self's shape) on self's device
    that indexes self's first dim: the common advanced case, which skips the general parser."""
    if type(key) is not Tensor or key._device is not self._device:
        return False
    kd = key._data
    kind = kd.dtype.kind
    if kind == "i":  # int64, int32 (int8 and int16 are refused by the general parser)
        return kd.itemsize >= 4 and kd.ndim > 0 and self._data.ndim > 0
    return kind == "b" and kd.shape == self._data.shape and kd.ndim > 0


def _assigned(self: Tensor, key, value) -> Tensor:
    """A copy of self with ``self[key] = value``, as autograd sees it: the out-of-place
    `index_put` at the flat positions the key selects."""
    dev = self._device
    with no_grad():
        flat = wrap(_ARANGE.kernels[dev](self._data.size), dev)
        positions = flat.view(tuple(self.shape))[key]
    if not isinstance(value, Tensor):
        value = full((), value, dtype=self.dtype, device=dev)
    values = value.to(self.dtype).expand(tuple(positions.shape)).reshape(-1)
    result = index_put(self.reshape(-1), (positions.reshape(-1),), values)
    return result.view(tuple(self.shape))


_ARANGE = defop(
    "positions", lambda xp: lambda n: xp.arange(n, dtype=xp.int64), differentiable=False
)


def _setitem(self: Tensor, key, value) -> None:
    """``self[key] = value``: writes `value` (a number or a tensor, broadcast to the indexed
    shape and cast to self's dtype) into self's memory, so views see it."""
    fills = not isinstance(value, Tensor) or not value._data.ndim
    inplace(self, (value,), _assigned, _write_at, self, key, value, fills=fills)


def _write_at(self: Tensor, key, value) -> None:
    """``self[key] = value`` written straight into self's memory."""
    data = self._data
    dev = self._device
    fast = _fast_key(key)
    if fast is not None and data.ndim:
        v = _value_data(self, value)
        try:
            setitem_op.kernels[dev](data, v, fast, out=data)
        except IndexError:
            parse_key(self, key)
            raise
        return
    if _simple_index(self, key):
        if type(value) is Tensor and value._data.dtype != data.dtype:
            _check_put_dtype(self, value, key._data.dtype.kind == "b")
        v = _value_data(self, value)
        index_put_op.kernels[dev](data, v, key._data, _FIRST, False, out=data)
        return
    basic, advanced = parse_key(self, key)
    v = _value_data(self, value)
    if not advanced:
        setitem_op.kernels[dev](data, v, basic, out=data)
        return
    target = data if _is_identity(basic) else getitem_op.kernels[dev](data, basic)
    tensors, pattern = advanced_pattern(wrap(target, dev), advanced)
    if type(value) is Tensor and value._data.dtype != data.dtype:
        _check_put_dtype(self, value, len(tensors) == 1 and tensors[0]._data.dtype.kind in "bu")
    arrays = [t._data for t in tensors]
    index_put_op.kernels[dev](target, v, *arrays, pattern, False, out=target)


def _check_put_dtype(self: Tensor, value: Tensor, one_mask: bool) -> None:
    """PyTorch casts a value of another dtype in advanced assignment only where it takes its
    masked_fill path (one mask, one value); elsewhere the dtypes must match."""
    if not (one_mask and value._data.size == 1):
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_dtype.TITLE[self.dtype]} for the destination and "
            f"{_dtype.TITLE[value.dtype]} for the source."
        )


def _value_data(self: Tensor, value):
    """A value to write into `self`: a backend array on self's device or a NumPy scalar."""
    if type(value) is Tensor:
        if value._device is self._device:
            return value._data
        if value._device is CPU and value._data.ndim == 0:
            return np.asarray(value._data).astype(self._data.dtype)[()]
        raise device_mismatch(self._device, value._device)
    if isinstance(value, (*_SCALARS, np.generic)):
        return scalar_value(value, self.dtype)
    raise TypeError(f"can't assign a {type_name(value)} to a {_tensor_type_name(self)}")


Tensor.__getitem__ = _getitem
Tensor.__setitem__ = _setitem


def _tensor_indices(x: Tensor, indices):
    """Index Tensors and pattern of `index_put`'s `indices` (a tuple or list of Tensors)."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(
            f"index_put(): argument 'indices' must be tuple of Tensors, not "
            f"{type(indices).__name__}"
        )
    if not indices:  # PyTorch fails inside its kernel (an internal assert)
        raise RuntimeError("index_put(): indices must hold at least one index tensor")
    advanced = []
    vdim = 0
    expect_tensors(indices, 1)
    for t in indices:
        if t._data.dtype.kind not in "biu":
            raise IndexError(_INDEX_TYPE_ERROR)
        if t._device is not x._device:
            raise device_mismatch(x._device, t._device)
        advanced.append((vdim, t))
        vdim += t._data.ndim if t._data.dtype.kind in "bu" else 1
    if vdim > x._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x._data.ndim}")
    return advanced_pattern(x, advanced)


def _check_values(input: Tensor, values) -> None:
    expect_tensor("index_put", input, "input", 1)
    expect_tensor("index_put", values, "values", 3)
    try:
        dtype = values._data.dtype
    except AttributeError:
        raise not_a_tensor("index_put", values, "values", 3) from None
    if dtype != input._data.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_dtype.TITLE[input.dtype]} for the destination and "
            f"{_dtype.TITLE[values.dtype]} for the source."
        )


def index_put(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of `input` with ``input[indices] = values`` (or ``+=``, duplicates summed, with
    `accumulate`); `indices` is a tuple of index or mask tensors, `values` broadcasts to the
    indexed shape and has input's dtype."""
    _check_values(input, values)
    tensors, pattern = _tensor_indices(input, indices)
    accumulate = flag("index_put", accumulate, "accumulate")
    return call(index_put_op, (input, values, *tensors), pattern, accumulate)


def index_put_(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """In-place form of `index_put`."""
    _check_values(input, values)
    accumulate = flag("index_put_", accumulate, "accumulate")

    def direct():
        tensors, pattern = _tensor_indices(input, indices)
        data = input._data
        arrays = [t._data for t in tensors]
        index_put_op.kernels[input._device](
            data, values._data, *arrays, pattern, accumulate, out=data
        )

    return inplace(input, (values,), lambda: index_put(input, indices, values, accumulate), direct)


export(index_put, method=True)
export(index_put_, method=True, function=False)


# -- selection functions -------------------------------------------------------------------
def index_select(input: Tensor, dim: int, index: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The entries of `input` at positions `index` (a vector of int64 or int32) along `dim`.

    Shape: `input`'s, with dim `dim` of size ``len(index)``.
    """
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("index_select", input, "input", 1) from None
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    try:
        dtype = index._data.dtype
    except AttributeError:
        raise not_a_tensor("index_select", index, "index", 3) from None
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if dtype.name not in ("int64", "int32"):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    idx = index._data
    size = input._data.shape[dim % n] if ndim else 1
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= size):
        raise IndexError("index out of range in self")
    if idx.ndim == 0:
        index = call_view(getitem_op, index, (None,))
    if ndim == 0:
        if idx.size != 1:
            raise IndexError(
                f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)"
            )
        row = call(index_op, (call_view(getitem_op, input, (None,)), index), (0,))
        result = call_view(getitem_op, row, (0, Ellipsis))
    else:
        result = call(index_op, (input, index), (None,) * (dim % n) + (0,))
    return result if out is None else write_out(out, result)


def _check_mask(mask: Tensor, fn: str, caller: str | None = None) -> None:
    try:
        kind = mask._data.dtype.kind
    except AttributeError:
        check_tensors(caller or fn, ("mask", mask))
        raise
    if kind != "b":
        raise RuntimeError(
            f"{fn} only supports boolean masks, but got mask with dtype "
            f"{_MASK_NAME[mask.dtype.name]}"
        )


def _fill_value(input: Tensor, value):
    """masked_fill's value as a NumPy scalar of input's dtype (a number or a 0-dim tensor)."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value._data.ndim} dimension(s)."
            )
        return _value_data(input, value.item())
    return _value_data(input, value)


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """A copy of `input` with `value` (a number or 0-dim tensor) where the bool `mask` (broadcast
    with `input`) is True. Shape: the broadcast shape of input and mask."""
    _check_mask(mask, "masked_fill_", "masked_fill")
    try:
        v = _fill_value(input, value)
    except AttributeError:
        check_tensors("masked_fill", ("input", input))
        raise
    if (
        isinstance(value, Tensor)
        and value._ag is not None
        and (STATE.grad_enabled or STATE.transforms)
    ):
        return where(mask, value.to(input.dtype), input)  # the value gets its gradient
    try:
        return call(masked_fill_op, (input, mask), v)
    except ValueError:
        raise broadcast_error(tuple(mask.shape), tuple(input.shape)) from None


def masked_fill_(self: Tensor, mask: Tensor, value) -> Tensor:
    """In-place form of `masked_fill`; `mask` must broadcast to self's shape."""
    _check_mask(mask, "masked_fill_")
    if mask._device is not self._device:
        raise device_mismatch(self._device, mask._device)
    v = _fill_value(self, value)
    shape = tuple(self.shape)
    try:
        broadcast = np.broadcast_shapes(shape, mask._data.shape)
    except ValueError:
        raise broadcast_error(tuple(mask.shape), shape) from None
    if broadcast != shape:
        raise RuntimeError(
            f"output with shape {list(shape)} doesn't match the broadcast shape {list(broadcast)}"
        )

    def direct():
        data = self._data
        masked_fill_op.kernels[self._device](data, mask._data, v, out=data)

    fills = not isinstance(value, Tensor) or not value._data.ndim
    return inplace(self, (value,), lambda: masked_fill(self, mask, value), direct, fills=fills)


def masked_select(input: Tensor, mask: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The 1-D tensor of the entries of `input` where the bool `mask` is True (both broadcast
    to one shape)."""
    try:
        dtype = mask._data.dtype
    except AttributeError:
        raise not_a_tensor("masked_select", mask, "mask", 2) from None
    if dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    try:
        result = call(masked_select_op, (input, mask))
    except ValueError:
        raise broadcast_error(tuple(mask.shape), tuple(input.shape)) from None
    return result if out is None else write_out(out, result)


def where(condition: Tensor, input=None, other=None, *, out: Tensor | None = None):
    """Elements of `input` where `condition` is True, else of `other` (tensors or numbers,
    promoted with PyTorch's rules, broadcast with condition). ``where(condition)`` is
    ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    try:
        kind = condition._data.dtype.kind
    except AttributeError:
        check_tensors("where", ("condition", condition))
        raise
    if kind not in "bu":
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{_dtype.TITLE[condition.dtype]}"
        )
    result_dtype = _dtype.promote_operands((input, other))
    dev = condition._device
    a = _where_operand(input, result_dtype, dev)
    b = _where_operand(other, result_dtype, dev)
    try:
        result = call(where_op, (condition, a, b))
    except ValueError:
        shapes = [tuple(t.shape) for t in (condition, a, b)]
        raise _first_broadcast_error(shapes) from None
    return result if out is None else write_out(out, result)


def _where_operand(x, d: _dtype.dtype, dev) -> Tensor:
    if isinstance(x, Tensor):
        if x._data.dtype == d.np:
            return x
        return x.to(d)
    if not isinstance(x, (*_SCALARS, np.generic)):
        raise TypeError(
            f"where(): argument 'input' must be Tensor or Number, not {type(x).__name__}"
        )
    value = x.item() if isinstance(x, np.generic) else x
    return wrap(backend_of(dev).asarray(value, dtype=d.np), dev)


def _first_broadcast_error(shapes) -> RuntimeError:
    for i, a in enumerate(shapes):
        for b in shapes[i + 1 :]:
            try:
                np.broadcast_shapes(a, b)
            except ValueError:
                return broadcast_error(a, b)
    return RuntimeError(f"shapes {[list(s) for s in shapes]} cannot be broadcast")


def nonzero(input: Tensor, *, out: Tensor | None = None, as_tuple: bool = False):
    """Indices of the nonzero entries of `input`: an int64 tensor of shape ``(n, input.ndim)``,
    or with `as_tuple` a tuple of ``input.ndim`` 1-D tensors (one for a 0-dim input)."""
    if as_tuple:
        return call(nonzero_op, (input,), True)
    result = call(nonzero_op, (input,), False)
    return result if out is None else write_out(out, result)


def argwhere(input: Tensor) -> Tensor:
    """Indices of the nonzero entries of `input`, shape ``(n, input.ndim)`` (as `nonzero`)."""
    return call(nonzero_op, (input,), False)


def _where_method(self: Tensor, condition: Tensor, other) -> Tensor:
    """``self.where(condition, other)`` is ``where(condition, self, other)``."""
    return where(condition, self, other)


for _fn in (index_select, masked_fill, masked_select, nonzero, argwhere):
    export(_fn, method=True)
export(masked_fill_, method=True, function=False)
export(where)
export(_where_method, "where", method=True, function=False)
