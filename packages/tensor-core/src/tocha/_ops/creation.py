"""Creating tensors (from data, filled, ranges) and converting them between dtypes and
devices."""

from __future__ import annotations

import builtins
import functools
import math
import numbers
import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from .. import _device as _devices
from .. import _dtype
from .._api import PUBLIC, export
from .._backend import backend_of, resolve_device
from .._cpu import kernel_context
from .._device import CPU
from .._dispatch import LAYERS, as_array, call, defop, not_a_tensor, type_name
from .._grad_mode import STATE
from .._memory_format import (
    CONTIGUOUS,
    PRESERVE,
    format_arg,
    format_strides,
    laid_out,
    positional_only_error,
    preserved_strides,
    suggested_format,
)
from .._stack import user_stacklevel
from .._storage import TypedStorage, UntypedStorage
from .._tensor import Tensor, wrap
from ._argcheck import (
    allocation_error,
    check_dtype,
    check_scalar_converts,
    check_tensors,
    fill_fits,
)
from ._fma import FUSED_DTYPES, fused_multiply_add
from ._out import write_out


def parse_size(size, fn_name: str = "zeros", keyword=None) -> tuple:
    """A shape from ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(tocha.Size(...))`` or the
    keyword form ``f(size=(2, 3))`` (`keyword`)."""
    if keyword is not None:
        if size:
            raise TypeError(
                f"{fn_name}() received an invalid combination of arguments: the size was given "
                "both positionally and as size="
            )
        size = (keyword,)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    shape = []
    for pos, s in enumerate(size, 1):
        if isinstance(s, Tensor):
            s = s.__index__()
        if isinstance(s, builtins.bool) or not isinstance(s, numbers.Integral):
            kind = type(s).__name__
            if len(size) == 1:
                raise TypeError(
                    f"{fn_name}(): argument 'size' (position 1) must be tuple of ints, not {kind}"
                )
            raise TypeError(
                f"{fn_name}(): argument 'size' failed to unpack the object at pos "
                f'{pos} with error "type must be tuple of ints,but got {kind}"'
            )
        shape.append(int(s))
    if any(s < 0 for s in shape):
        if fn_name == "zeros":
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        bad = next(s for s in shape if s < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {shape}")
    return tuple(shape)


def _device_of(device) -> object:
    return _devices.DEFAULT if device is None else resolve_device(device)


def _finish(t: Tensor, requires_grad: builtins.bool, out: Tensor | None = None) -> Tensor:
    if requires_grad:
        if t._data.dtype.kind not in "fcV":
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        t.requires_grad_(True)
    return t if out is None else write_out(out, t)


# -- filled tensors -------------------------------------------------------------------------
FILLED = {
    "zeros": lambda xp: lambda shape, dtype: xp.zeros(shape, dtype),
    "ones": lambda xp: lambda shape, dtype: xp.ones(shape, dtype),
    "empty": lambda xp: lambda shape, dtype: xp.empty(shape, dtype),
}
FILLED_OPS = {name: defop(name, factory, differentiable=False) for name, factory in FILLED.items()}


def _filled(op, sizes, size, out, dtype, device, requires_grad, memory_format=None) -> Tensor:
    shape = parse_size(sizes, op.name, size)
    dev = _device_of(device)
    d = dtype or _dtype.DEFAULTS.float
    try:
        d = d.np
    except AttributeError:
        check_dtype(op.name, dtype)
        raise
    kernel = op.kernels[dev]
    try:
        if memory_format is None:
            data = kernel(shape, d)
        else:
            strides = format_strides(shape, format_arg(op.name, memory_format))
            data = laid_out(lambda s: kernel(s, d), shape, strides)
    except (MemoryError, ValueError) as exc:
        raise allocation_error(exc, shape, d.itemsize) from None
    return _finish(wrap(data, dev), requires_grad, out)


def _filled_function(op):
    def fn(
        *sizes,
        size=None,
        out: Tensor | None = None,
        dtype: _dtype.dtype | None = None,
        layout=None,
        device=None,
        requires_grad: builtins.bool = False,
        pin_memory: builtins.bool = False,
    ) -> Tensor:
        return _filled(op, sizes, size, out, dtype, device, requires_grad)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"A tensor of shape `size` filled by ``{op.name}`` (default dtype float32)."
    return fn


def empty(
    *sizes,
    size=None,
    out: Tensor | None = None,
    dtype: _dtype.dtype | None = None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
    pin_memory: builtins.bool = False,
    memory_format=None,
) -> Tensor:
    """An uninitialised tensor of shape `size` (default dtype float32), laid out in memory as
    `memory_format` says (row-major by default)."""
    op = FILLED_OPS["empty"]
    return _filled(op, sizes, size, out, dtype, device, requires_grad, memory_format)


def layout_for(data, memory_format, fn: str):
    """The element strides (None: row-major) of a new tensor like backend array `data` under
    `memory_format` (a function `fn`'s argument; None is ``preserve_format``)."""
    if memory_format is None or memory_format is PRESERVE:
        return preserved_strides(data)
    return format_strides(data.shape, format_arg(fn, memory_format))


def laid_out_like(data, make, memory_format=None, fn: str = "empty_like"):
    """``make``'s values for a tensor like backend array `data`, laid out in memory as
    `memory_format` says: under ``preserve_format`` (the default) a dense layout's strides
    kept, any other's dims in their memory order, as PyTorch's. Values `make` draws in order
    (random ones) land in memory order, as PyTorch's."""
    return laid_out(make, data.shape, layout_for(data, memory_format, fn))


def _like_function(op):
    def fn(
        input: Tensor,
        *,
        dtype: _dtype.dtype | None = None,
        layout=None,
        device=None,
        requires_grad: builtins.bool = False,
        memory_format=None,
    ) -> Tensor:
        try:
            dev = input._device if device is None else resolve_device(device)
            d = (dtype or input.dtype).np
        except AttributeError:
            check_tensors(op.name + "_like", ("input", input))
            check_dtype(op.name + "_like", dtype)
            raise
        kernel = op.kernels[dev]
        data = laid_out_like(
            input._data, lambda shape: kernel(shape, d), memory_format, op.name + "_like"
        )
        return _finish(wrap(data, dev), requires_grad)

    fn.__name__ = fn.__qualname__ = op.name + "_like"
    fn.__doc__ = f"``{op.name}`` with the shape (and by default dtype and device) of `input`."
    return fn


for _op in FILLED_OPS.values():
    export(empty if _op.name == "empty" else _filled_function(_op))
    export(_like_function(_op))

full_op = defop(
    "full",
    lambda xp: lambda shape, value, dtype: xp.full(shape, value, dtype),
    differentiable=False,
)


def _scalar_dtype(value) -> _dtype.dtype:
    if isinstance(value, Tensor):
        return value.dtype
    rank = _dtype.operand_dtype(value)[2]
    return _dtype.default_for_rank(rank)


def full(
    size,
    fill_value,
    *,
    out: Tensor | None = None,
    dtype: _dtype.dtype | None = None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
    pin_memory: builtins.bool = False,
) -> Tensor:
    """A tensor of shape `size` filled with `fill_value`; the dtype follows the value's type
    (bool, int64, or the default float) unless given."""
    shape = parse_size((size,), "full")
    dev = _device_of(device)
    d = dtype or _scalar_dtype(fill_value)
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    if not isinstance(d, _dtype.dtype):
        check_dtype("full", d)
    value = fill_fits(value, d, math.prod(shape))
    try:
        data = kernel_context().run(full_op.kernels[dev], shape, value, d.np)
    except (MemoryError, ValueError) as exc:
        raise allocation_error(exc, shape, d.itemsize) from None
    return _finish(wrap(data, dev), requires_grad, out)


def _refuse(kernel: str, d: _dtype.dtype, allow_complex: builtins.bool = True) -> None:
    """PyTorch's error for a range factory asked for a dtype it has no kernel for."""
    check_dtype(kernel, d)
    if d is _dtype.bool or (d.is_complex and not allow_complex):
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{_dtype.TITLE[d]}'")


def full_like(
    input: Tensor,
    fill_value,
    *,
    dtype: _dtype.dtype | None = None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
    memory_format=None,
) -> Tensor:
    """A tensor like `input` filled with `fill_value`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("full_like", input, "input", 1)
    dev = input._device if device is None else resolve_device(device)
    d = dtype or input.dtype
    if not isinstance(d, _dtype.dtype):
        check_dtype("full_like", d)
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    value = fill_fits(value, d, input._data.size)
    try:
        if value is None:  # NumPy would fill NaN
            raise TypeError
        kernel = full_op.kernels[dev]
        data = laid_out_like(
            input._data,
            lambda shape: kernel_context().run(kernel, shape, value, d.np),
            memory_format,
            "full_like",
        )
    except (TypeError, ValueError):
        if isinstance(value, numbers.Number):
            raise
        raise TypeError(
            f"full_like(): argument 'fill_value' (position 2) must be Number, not "
            f"{type(value).__name__}"
        ) from None
    return _finish(wrap(data, dev), requires_grad)


export(full)
export(full_like)


# -- ranges ---------------------------------------------------------------------------------
arange_op = defop(
    "arange",
    lambda xp: lambda start, end, step, dtype: xp.arange(start, end, step, dtype=dtype),
    differentiable=False,
)


def _number(x):
    return x.item() if isinstance(x, Tensor) else x


def check_range(start, end, step) -> None:
    """PyTorch's checks of arange's and range's bounds: finite, a nonzero step (NaN is
    zero) whose sign leads from `start` to `end`."""
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start:g} -> {end:g}")
    if step == 0 or step != step:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0 and end != start:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def arange(
    start=0,
    end=None,
    step=1,
    *,
    out: Tensor | None = None,
    dtype: _dtype.dtype | None = None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """Values from `start` to `end` (excluded) by `step`: ``ceil((end - start) / step)`` of
    them. int64 when all bounds are ints, else the default float dtype."""
    if end is None:
        start, end = 0, start
    start, end, step = _number(start), _number(end), _number(step)
    check_range(start, end, step)
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = _dtype.DEFAULTS.float if is_float else _dtype.int64
    check_dtype("arange", dtype)
    _refuse("arange", dtype, allow_complex=False)
    dev = _device_of(device)
    integral = not (dtype.is_floating_point or dtype.is_complex)
    if dtype is _dtype.int64:  # PyTorch truncates int64's bounds before counting
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise ValueError("step must be nonzero")
    n = max(0, math.ceil((end - start) / step))
    if integral:  # and the other integer dtypes' start and step after
        start, step = int(start), int(step)
        data = arange_op.kernels[dev](0, n, 1, np.int64) * step + start
        data = data.astype(dtype.np, copy=False)
    else:
        values = arange_op.kernels[CPU](0, n, 1, np.float64) * step + start
        data = _cast_host(values, dtype)
        data = backend_of(dev).from_host(data, dev) if dev is not CPU else data
    return _finish(wrap(data, dev), requires_grad, out)


def _bounds(start, end, d: _dtype.dtype | None) -> tuple:
    """linspace's and logspace's bounds as PyTorch reads them: in an integral `d`, as its
    integers (truncated toward zero; RuntimeError where one overflows `d`)."""
    if not isinstance(d, _dtype.dtype) or d.rank != _dtype.INTEGRAL:
        return start, end  # not an integral dtype (or not a dtype: checked later)
    for value in (start, end):
        if not isinstance(value, numbers.Real):
            return start, end  # a complex bound: the dtype check refuses it later
        check_scalar_converts(value, d)
    return int(start), int(end)


def _linspace_values(start, end, steps, base=None):
    if isinstance(steps, builtins.bool) or not isinstance(steps, numbers.Integral) or steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return np.linspace(start, end, steps, dtype=np.result_type(float, start, end))


def linspace(
    start,
    end,
    steps: int,
    *,
    out: Tensor | None = None,
    dtype: _dtype.dtype | None = None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """`steps` values evenly spaced from `start` to `end`, both included."""
    start, end = _bounds(_number(start), _number(end), dtype)
    values = _linspace_values(start, end, steps)
    d = dtype or (_dtype.DEFAULTS.complex if values.dtype.kind == "c" else _dtype.DEFAULTS.float)
    if steps > 1:
        _refuse("linspace", d)
        if d.np in FUSED_DTYPES and values.dtype.kind == "f":
            values = _spaced(start, end, steps, d.np)
    return _from_host(values, d, device, requires_grad, out)


def _spaced(start, end, steps: int, np_dtype) -> np.ndarray:
    """linspace's values in a float dtype as PyTorch's CPU kernel computes them: the step
    ``(end - start) / (steps - 1)`` in that dtype; the first half of the values ``start +
    step * i``, the rest ``end - step * (steps - 1 - i)``, each rounded once."""
    start, end = np_dtype.type(start), np_dtype.type(end)
    step = (end - start) / np_dtype.type(steps - 1)
    half = steps // 2
    head = fused_multiply_add(np, np.arange(half, dtype=np_dtype), float(step), float(start))
    back = np.arange(steps - 1 - half, -1, -1, dtype=np_dtype)
    tail = fused_multiply_add(np, back, -float(step), float(end))
    return np.concatenate([head, tail])


def logspace(
    start,
    end,
    steps: int,
    base: float = 10.0,
    *,
    out: Tensor | None = None,
    dtype: _dtype.dtype | None = None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """``base ** linspace(start, end, steps)``."""
    start, end = _bounds(_number(start), _number(end), dtype)
    values = np.power(base, _linspace_values(start, end, steps))
    d = dtype or _dtype.DEFAULTS.float
    if steps > 1:
        _refuse("logspace", d)
    return _from_host(values, d, device, requires_grad, out)


def _from_host(values: np.ndarray, d: _dtype.dtype, device, requires_grad, out=None) -> Tensor:
    dev = _device_of(device)
    data = _cast_host(values, d)
    if dev is not CPU:
        data = backend_of(dev).from_host(data, dev)
    return _finish(wrap(data, dev), requires_grad, out)


def _cast_host(values: np.ndarray, d: _dtype.dtype) -> np.ndarray:
    """`values` (host data) cast to `d` as PyTorch casts: silently, values out of range
    becoming inf or wrapping around."""
    return kernel_context().run(_cast, values, d)


def _cast(values: np.ndarray, d: _dtype.dtype) -> np.ndarray:
    if d is _dtype.bool:
        return values != 0
    if values.dtype.kind == "c" and not d.is_complex:
        values = values.real
    if d.rank < _dtype.FLOATING and values.dtype.kind in "fc":
        values = np.trunc(values)
        values = values.astype(np.int64)  # out-of-range values wrap around, as in PyTorch
    return values.astype(d.np, copy=False)


eye_op = defop(
    "eye", lambda xp: lambda n, m, dtype: xp.eye(n, m, dtype=dtype), differentiable=False
)


def eye(
    n: int,
    m: int | None = None,
    *,
    out: Tensor | None = None,
    dtype: _dtype.dtype | None = None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """The ``n x m`` identity matrix (``m`` defaults to ``n``)."""
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    m = n if m is None else m
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    dev = _device_of(device)
    check_dtype("eye", dtype)
    d = dtype or _dtype.DEFAULTS.float
    try:
        data = eye_op.kernels[dev](n, m, d.np)
    except (MemoryError, ValueError) as exc:
        raise allocation_error(exc, (n, m), d.itemsize) from None
    return _finish(wrap(data, dev), requires_grad, out)


for _fn in (arange, linspace, logspace, eye):
    export(_fn)


# -- from data ------------------------------------------------------------------------------
def _ragged_error(data, dim=0):
    """PyTorch's message for nested sequences of unequal lengths."""
    if not isinstance(data, (list, tuple)) or not data:
        return None
    first = data[0]
    expected = len(first) if isinstance(first, (list, tuple)) else None
    for item in data:
        if expected is not None and isinstance(item, (str, bytes)):
            return TypeError(f"new(): invalid data type '{type(item).__name__}'")
        length = len(item) if isinstance(item, (list, tuple)) else None
        if length != expected:
            if expected is None or length is None:
                return ValueError(
                    f"expected sequence of length {expected} at dim {dim + 1} (got {length})"
                    if expected is not None
                    else f"too many dimensions '{type(item).__name__}'"
                )
            return ValueError(
                f"expected sequence of length {expected} at dim {dim + 1} (got {length})"
            )
    for item in data:
        err = _ragged_error(item, dim + 1)
        if err is not None:
            return err
    return None


def check_numpy(array) -> None:
    """PyTorch's refusals of a NumPy array (or scalar) a tensor is made from: a dtype tocha
    has no counterpart of, a byte order not the machine's, negative strides."""
    _dtype.from_np(array.dtype)
    if not array.dtype.isnative:
        raise ValueError(
            "given numpy array has byte order different from the native byte order. "
            "Conversion between byte orders is currently not supported."
        )
    if isinstance(array, np.ndarray) and any(s < 0 for s in array.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with "
            "negative strides are not currently supported. (You can probably work around this "
            "by making a copy of your array  with array.copy().) "
        )


_OVERFLOW = "Overflow when unpacking long long"
INTEGRAL = _dtype.INTEGRAL


def storage_tensor(storage, dtype=None) -> Tensor:
    """A 1-D tensor viewing `storage`'s memory as `dtype`: a typed storage's own dtype by
    default, an untyped one's bytes as int64 (as PyTorch's ``asarray`` reads them)."""
    if dtype is None:
        dtype = storage.dtype if isinstance(storage, TypedStorage) else _dtype.int64
    if isinstance(storage, TypedStorage):
        storage = storage.untyped()
    return PUBLIC["empty"](0, dtype=dtype, device=storage.device).set_(storage)


def _host_array(data, dtype=None) -> np.ndarray:
    """NumPy array of Python data with PyTorch's dtype inference (Python floats become the
    default float dtype, ints int64); with `dtype` given, Python numbers stay exact for the
    one cast the caller makes. In nested sequences, a tensor is one number (it must hold
    exactly one) and a NumPy array a sequence."""
    if isinstance(data, Tensor):
        return np.array(data._host(), copy=True)
    if isinstance(data, (np.ndarray, np.generic)):
        check_numpy(data)
        return np.array(data, copy=True)
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, (UntypedStorage, TypedStorage)):  # its bytes, read as `dtype`
        return np.array(storage_tensor(data, dtype)._host(), copy=True)
    promoted = None
    if not isinstance(data, (list, tuple, int, float, complex)):
        if isinstance(data, Mapping) or not isinstance(data, Sequence):
            raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")
        data = list(data)  # a range, a deque, any other sequence
    if isinstance(data, (list, tuple)):
        if dtype is None:
            promoted = _promoted_leaf_dtype(data)
        data = _numbers_of_tensors(data, _depth(data))
    try:
        array = np.array(data)
    except (ValueError, OverflowError) as exc:
        err = _ragged_error(data)
        if err is not None:
            raise err from None
        if isinstance(exc, OverflowError):
            raise ValueError(_OVERFLOW) from None
        raise RuntimeError(f"Could not infer dtype of {type(data).__name__}") from None
    kind = array.dtype.kind
    if kind in "USO":
        err = _ragged_error(data)
        if err is not None:
            raise err
        array = _object_leaves(data, array, dtype)
        kind = array.dtype.kind
    if kind == "u" and array.dtype.itemsize == 8 and (dtype is None or dtype.rank == INTEGRAL):
        if dtype is not _dtype.uint64:
            raise ValueError(_OVERFLOW)
    if kind not in "biufc":
        check_numpy(array)
    if promoted is not None:
        return array.astype(promoted.np, copy=False)
    if dtype is None and _from_python(data):
        if kind == "f":
            return array.astype(_dtype.DEFAULTS.float.np, copy=False)
        if kind == "c":
            return array.astype(_dtype.DEFAULTS.complex.np, copy=False)
        if kind == "i":
            return array.astype(np.int64, copy=False)
    return array


def _object_leaves(data, array: np.ndarray, dtype: _dtype.dtype | None) -> np.ndarray:
    """The array of nested data that NumPy could only hold as strings or objects: floats
    when Python ints beyond int64 sit beside floats or are asked for as a floating, complex
    or bool `dtype`; PyTorch's errors otherwise."""
    leaves = array.reshape(-1).tolist()
    kinds = set(map(type, leaves))
    if kinds <= _PYTHON_LEAVES:
        if kinds & {float, complex} or (dtype is not None and dtype.rank != INTEGRAL):
            wide = (
                complex if complex in kinds or (dtype is not None and dtype.is_complex) else float
            )
            return np.array(leaves, dtype=wide).reshape(array.shape)
        raise ValueError(_OVERFLOW)
    for leaf in leaves:
        if isinstance(leaf, (str, bytes)):
            first = data
            while isinstance(first, (list, tuple)) and first:
                first = first[0]
            if isinstance(first, (str, bytes)):
                raise ValueError(f"too many dimensions '{type(leaf).__name__}'")
            raise TypeError(f"new(): invalid data type '{type(leaf).__name__}'")
        if type(leaf) not in _PYTHON_LEAVES and not isinstance(leaf, np.generic):
            raise RuntimeError(f"Could not infer dtype of {type(leaf).__name__}")
    raise RuntimeError(f"Could not infer dtype of {_first_leaf_type(data)}")


_PYTHON_LEAVES = {builtins.bool, int, float, complex}
_SEQUENCES = (list, tuple)


def _depth(data) -> int:
    """How many dims nested data has, read down its first items as PyTorch reads them: a
    NumPy array adds its dims, a tensor is a number."""
    depth = 0
    while isinstance(data, _SEQUENCES) and data:
        depth += 1
        data = data[0]
    if isinstance(data, np.ndarray):
        depth += data.ndim
    return depth


def _numbers_of_tensors(data, depth: int):
    """Nested data (of `depth` dims) with each tensor in it read as PyTorch reads it: where a
    number belongs, its one number; where a sequence belongs, its values. Warns (once) of NumPy
    arrays inside it."""
    kinds = set(map(type, data))
    if kinds <= _PYTHON_LEAVES:
        return data
    if any(issubclass(k, np.ndarray) for k in kinds):
        _warn_list_of_arrays()
    if not any(issubclass(k, (Tensor, *_SEQUENCES)) for k in kinds):
        return data
    items = []
    for leaf in data:
        if isinstance(leaf, Tensor):
            leaf = leaf._scalar_for("complex") if depth <= 1 else leaf.tolist()
        elif isinstance(leaf, _SEQUENCES):
            leaf = _numbers_of_tensors(leaf, depth - 1)
        items.append(leaf)
    return items


@functools.cache
def _warn_list_of_arrays() -> None:
    """PyTorch's warning, once a program, for a list of NumPy arrays made a tensor."""
    warnings.warn(
        "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider "
        "converting the list to a single numpy.ndarray with numpy.array() before converting "
        "to a tensor.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


def _promoted_leaf_dtype(data) -> _dtype.dtype | None:
    """PyTorch's dtype for nested data whose leaves are not all Python numbers: the
    promotion of each leaf's own dtype (a Python float's is the default float dtype, an int's
    int64; a NumPy scalar's, array's or tensor's its own), not NumPy's. None when every leaf
    is a Python number."""
    kinds: set = set()
    dtypes: set = set()
    rows = [data]
    while rows:
        row = rows.pop()
        walk = False
        for kind in set(map(type, row)):
            if kind in _PYTHON_LEAVES:
                kinds.add(kind)
            elif issubclass(kind, np.generic):
                dtypes.add(_dtype.from_np(np.dtype(kind)))
            else:  # nested sequences, tensors, arrays: one by one
                walk = True
        if walk:
            for leaf in row:
                if isinstance(leaf, (list, tuple)):
                    rows.append(leaf)
                elif isinstance(leaf, Tensor):
                    dtypes.add(leaf.dtype)
                elif isinstance(leaf, np.ndarray):
                    dtypes.add(_dtype.from_np(leaf.dtype))
    if not dtypes:
        return None
    defaults = _dtype.DEFAULTS
    python = {builtins.bool: _dtype.bool, int: _dtype.int64, float: defaults.float}
    python[complex] = defaults.complex
    result = None
    for d in [*dtypes, *(python[k] for k in kinds)]:
        result = d if result is None else _dtype.promote_types(result, d)
    return result


def _from_python(data) -> builtins.bool:
    """Whether the leaves of nested data are Python numbers (not NumPy scalars or tensors)."""
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return type(data) in (builtins.bool, int, float, complex, list, tuple)


def _first_leaf_type(data) -> str:
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return type(data).__name__


def tensor(
    data,
    *,
    dtype: _dtype.dtype | None = None,
    device=None,
    requires_grad: builtins.bool = False,
    pin_memory: builtins.bool = False,
) -> Tensor:
    """A new tensor holding a copy of `data` (nested lists of numbers, a NumPy array, a
    tensor). Python ints give int64, floats the default float dtype, bools bool."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
            "requires_grad_(True), rather than torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    return copy_of(data, dtype=dtype, device=device, requires_grad=requires_grad)


def copy_of(
    data, *, dtype: _dtype.dtype | None = None, device=None, requires_grad: builtins.bool = False
) -> Tensor:
    """`tensor` without its warning for a tensor given as data (``Tensor.new_tensor`` gives
    its own)."""
    array = _host_array(data, dtype)
    if dtype is not None:
        if array.dtype.kind == "c" and dtype.rank < _dtype.COMPLEX and dtype is not _dtype.bool:
            _refuse_complex_numbers(data, dtype)
        if dtype.rank == INTEGRAL and array.dtype.kind in "fiu" and array.size:
            if _from_python(data):  # arrays and tensors are cast, wrapping as C does
                _check_range(array, dtype)
        array = _cast_host(array, dtype)
    dev = _device_of(device)
    if dev is not CPU:
        array = backend_of(dev).from_host(array, dev)
    return _finish(wrap(array, dev), requires_grad)


def _refuse_complex_numbers(data, d: _dtype.dtype) -> None:
    """PyTorch's TypeError for Python complex numbers given a real dtype (arrays and tensors
    are cast instead)."""
    if _from_python(data):
        if d.is_floating_point:
            raise TypeError("must be real number, not complex")
        raise TypeError("'complex' object cannot be interpreted as an integer")


def _check_range(array: np.ndarray, d: _dtype.dtype) -> None:
    """PyTorch refuses Python numbers that an integer dtype cannot hold: NaN, and values
    beyond its range (fractions included); an unsigned dtype takes negative ints down to minus
    its maximum, which wrap around (-1 is 255 in uint8)."""
    info = np.iinfo(d.np)
    low = info.min
    if array.dtype.kind == "f":
        if np.isnan(array).any():
            raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")
    elif low == 0:
        low = -info.max
    if array.min() < low or array.max() > info.max:
        raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")


def as_tensor(data, dtype: _dtype.dtype | None = None, device=None) -> Tensor:
    """`data` as a tensor, sharing memory with it when it already is a tensor or a NumPy
    array of the requested dtype and device."""
    check_dtype("as_tensor", dtype)
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    dev = _device_of(device)
    if isinstance(data, np.ndarray) and dev is CPU and (dtype is None or dtype.np == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with a NumPy array."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type_name(ndarray)})")
    check_numpy(ndarray)
    if not ndarray.flags.writeable:
        _warn_read_only()
    return wrap(ndarray, CPU)


@functools.cache
def _warn_read_only() -> None:
    """PyTorch's warning for a read-only NumPy array, once a program, as PyTorch gives it."""
    warnings.warn(
        "The given NumPy array is not writable, and the tensor shares its memory: writing to "
        "the tensor in place will raise an error. You may want to copy the array to protect "
        "its data or make it writable before converting it to a tensor. This type of warning "
        "will be suppressed for the rest of this program.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor sharing memory with `ext_tensor`: an object implementing the DLPack protocol
    (``__dlpack__`` and ``__dlpack_device__``; a CPU or CUDA array) or a DLPack capsule, as
    ``to_dlpack`` makes (read as CPU memory)."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    if type(ext_tensor).__name__ == "PyCapsule":
        try:
            array = np.from_dlpack(_CapsuleHolder(ext_tensor))
        except ValueError:
            raise RuntimeError(
                "from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
                "consumed only once, so you might have already constructed a tensor from it "
                "once."
            ) from None
        return wrap(_writable(array), CPU)
    try:
        device_type, index = ext_tensor.__dlpack_device__()
    except AttributeError:
        raise TypeError(
            f"from_dlpack: expected an object implementing the DLPack protocol or a DLPack "
            f"capsule, but got {type(ext_tensor).__name__}"
        ) from None
    if device_type == 1:  # kDLCPU
        return wrap(np.from_dlpack(ext_tensor), CPU)
    if device_type == 2:  # kDLCUDA
        dev = resolve_device(f"cuda:{index}")
        return wrap(backend_of(dev).xp.from_dlpack(ext_tensor), dev)
    raise RuntimeError(f"from_dlpack: DLPack device type {device_type} is not supported")


def _writable(array: np.ndarray) -> np.ndarray:
    """`array` as a writable array over the same memory (NumPy marks what an unversioned
    capsule hands it read-only; PyTorch writes into it), keeping `array` alive."""
    if array.flags.writeable:
        return array
    return np.asarray(_WritableMemory(array))


class _WritableMemory:
    """The array interface of a read-only array, marked writable; holds the array."""

    def __init__(self, array: np.ndarray):
        self.source = array
        interface = dict(array.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


class _CapsuleHolder:
    """A DLPack capsule behind the protocol's methods, which NumPy's `from_dlpack` calls."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **_):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


for _fn in (tensor, as_tensor, from_numpy, from_dlpack):
    export(_fn)


# -- dtype and device conversion ------------------------------------------------------------
def _cast_kernel(xp):
    def kernel(x, np_dtype):
        if x.dtype.kind == "c" and np_dtype.kind == "b":
            return x != 0
        if x.dtype.kind == "c" and np_dtype.kind != "c":
            warn_complex_to_real()
            x = x.real
        strides = preserved_strides(x)
        if strides is None:
            return x.astype(np_dtype)
        out = laid_out(lambda shape: xp.empty(shape, np_dtype), x.shape, strides)
        out[...] = x
        return out

    return kernel


@functools.cache
def warn_complex_to_real() -> None:
    """PyTorch's warning, once a program, when a copy drops imaginary parts."""
    warnings.warn(
        "Casting complex values to real discards the imaginary part",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


cast_op = defop("to_dtype", _cast_kernel)
to_device_op = defop("to_device", None)


def _parse_to(args, kwargs):
    """(dtype, device, copy) from `to`'s arguments; positional bools after the dtype, device
    or tensor are non_blocking and copy."""
    dtype = device = None
    non_blocking = copy = False
    if kwargs:
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        non_blocking = kwargs.pop("non_blocking", False)
        copy = kwargs.pop("copy", False)
    flags = 0
    for arg in args:
        if isinstance(arg, _dtype.dtype):
            dtype = arg
        elif isinstance(arg, Tensor):
            dtype, device = arg.dtype, arg._device
        elif arg is True or arg is False:
            if flags:
                copy = arg
            else:
                non_blocking = arg
            flags += 1
        elif arg is not None:
            device = arg
    if (non_blocking is not False and non_blocking is not True) or (
        copy is not False and copy is not True
    ):
        name, value = (
            ("copy", copy)
            if non_blocking is True or non_blocking is False
            else ("non_blocking", non_blocking)
        )
        raise TypeError(f"to(): argument '{name}' must be bool, not {type(value).__name__}")
    return dtype, device, copy


def to(self: Tensor, *args, **kwargs) -> Tensor:
    """`self` with another dtype, device and/or memory format: ``to(dtype)``, ``to(device)``,
    ``to(device, dtype)``, ``to(other)``, each with ``memory_format=``; returns `self` when
    nothing changes, unless ``copy=True``."""
    fmt = PRESERVE
    if kwargs and "memory_format" in kwargs:
        fmt = format_arg("to", kwargs.pop("memory_format"))
    dtype, device, copy = _parse_to(args, kwargs)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    result = self
    if device is not None:
        dev = resolve_device(device)
        if dev is not self._device:
            result = transfer(result, dev)
            copy = False
    if fmt is not PRESERVE and (
        copy or result is not self or suggested_format(self._data) is not fmt
    ):
        format_strides(result.shape, fmt)  # a rank the format has no order for raises
        result = call(clone_op, (result,), fmt)
        copy = False
    if dtype is not None and dtype.np != result._data.dtype:
        result = call(cast_op, (result,), dtype.np)
        copy = False
    if copy:
        result = clone(result)
    return result


def transfer(x: Tensor, dev) -> Tensor:
    """Copy `x` to device `dev` (through host memory between two backends)."""
    source = backend_of(x._device)
    target = backend_of(dev)
    host = source.to_host(x._data)
    out = wrap(as_array(target.from_host(host, dev), dev), dev)
    if x._ag is not None and (STATE.grad_enabled or STATE.transforms):
        return LAYERS.autograd(to_device_op, (x, dev), out)
    return out


def _clone_kernel(xp):
    def kernel(x, memory_format):
        strides = None if memory_format is CONTIGUOUS else layout_for(x, memory_format, "clone")
        if strides is None:
            return x.copy()
        out = laid_out(lambda shape: xp.empty(shape, x.dtype), x.shape, strides)
        out[...] = x
        return out

    return kernel


clone_op = defop("clone", _clone_kernel)


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy of `input` in new memory (differentiable), laid out as `memory_format` says:
    by default (``preserve_format``) as `input` is, a dense layout's strides kept."""
    fmt = format_arg("clone", memory_format)
    if fmt is not PRESERVE and fmt is not CONTIGUOUS:
        format_strides(input.shape, fmt)  # a rank the format has no order for raises
    return call(clone_op, (input,), fmt)


def contiguous_copy(input: Tensor, memory_format=CONTIGUOUS) -> Tensor:
    """A copy of `input` laid out densely as `memory_format` says (row-major by default;
    differentiable): `contiguous` and `reshape`'s copy."""
    return call(clone_op, (input,), memory_format)


def _as(d, name: str):
    def method(self: Tensor, *args, memory_format=None) -> Tensor:
        if args:
            raise positional_only_error(name, args)
        if memory_format is None:
            return to(self, d)
        return to(self, d, memory_format=format_arg(name, memory_format))

    method.__name__ = d.name
    method.__doc__ = f"``self.to({d!r})``."
    return method


for _name, _d in (
    ("float", _dtype.float32),
    ("double", _dtype.float64),
    ("half", _dtype.float16),
    ("bfloat16", _dtype.bfloat16),
    ("long", _dtype.int64),
    ("int", _dtype.int32),
    ("short", _dtype.int16),
    ("char", _dtype.int8),
    ("byte", _dtype.uint8),
    ("bool", _dtype.bool),
    ("cfloat", _dtype.complex64),
    ("cdouble", _dtype.complex128),
):
    export(_as(_d, _name), _name, method=True, function=False)


def type_as(self: Tensor, other: Tensor) -> Tensor:
    """`self` cast to `other`'s dtype."""
    if not isinstance(other, Tensor):
        raise not_a_tensor("type_as", other, "other", 2)
    return to(self, other.dtype)


def cpu(self: Tensor, memory_format=PRESERVE) -> Tensor:
    """`self` on the CPU (itself if already there and laid out as `memory_format` says)."""
    return to(self, CPU, memory_format=memory_format)


def cuda(
    self: Tensor, device=None, non_blocking: builtins.bool = False, memory_format=PRESERVE
) -> Tensor:
    """`self` on a CUDA device (``cuda:0`` by default)."""
    if isinstance(device, int):
        device = f"cuda:{device}"
    return to(self, device or "cuda", memory_format=memory_format)


def pin_memory(self: Tensor, device=None) -> Tensor:
    """A copy of this CPU tensor in page-locked host memory, which a GPU copies from
    directly (needs a usable cuda backend: tocha-cuda and a GPU)."""
    if self._device is not CPU:
        raise RuntimeError(
            f"cannot pin '{self._device.type}' memory: only CPU memory can be pinned"
        )
    from .. import cuda

    if not cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    backend = cuda._require()
    if backend.is_pinned(self._data):
        return self
    return wrap(backend.pin_memory(self._data), CPU)


def is_pinned(self: Tensor, device=None) -> builtins.bool:
    """Whether this tensor is in page-locked host memory (False without a usable GPU)."""
    if self._device is not CPU:
        return False
    from .. import cuda

    backend = cuda._usable()
    return backend is not None and backend.is_pinned(self._data)


export(to, method=True, function=False)
export(pin_memory, method=True, function=False)
export(is_pinned, method=True, function=False)
export(type_as, method=True, function=False)
export(cpu, method=True, function=False)
export(cuda, method=True, function=False)
export(clone, method=True)
