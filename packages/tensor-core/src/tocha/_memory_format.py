"""Memory formats (``torch.memory_format``): the order of dims in memory that
``channels_last`` and ``channels_last_3d`` name, PyTorch's tests of a layout against them,
and the layout a copy takes under ``preserve_format``.

Layouts are element strides here; the functions read backend arrays (their shape and byte
strides) and build new ones with a kernel's ``make(shape)``, so random values drawn in order
land in memory order, as PyTorch draws them.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "FORMATS",
    "memory_format",
    "format_arg",
    "format_strides",
    "is_contiguous_as",
    "is_dense",
    "preserved_strides",
    "suggested_format",
    "suggest_memory_format",
    "keep_format",
    "laid_out",
    "positional_only_error",
    "in_format",
    "in_strides",
    "elementwise_layout",
    "keeping_layout",
    "CONTIGUOUS",
    "CHANNELS_LAST",
    "CHANNELS_LAST_3D",
    "PRESERVE",
]


class memory_format:  # noqa: N801
    """How a tensor's memory is ordered, as ``torch.memory_format``: `contiguous_format`,
    `channels_last`, `channels_last_3d`, `preserve_format`."""

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


memory_format.__module__ = "tocha"
FORMATS = {
    name: memory_format(name)
    for name in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format")
}
CONTIGUOUS = FORMATS["contiguous_format"]
CHANNELS_LAST = FORMATS["channels_last"]
CHANNELS_LAST_3D = FORMATS["channels_last_3d"]
PRESERVE = FORMATS["preserve_format"]

# dims from the outermost in memory to the innermost
_ORDERS = {CHANNELS_LAST: (0, 2, 3, 1), CHANNELS_LAST_3D: (0, 2, 3, 4, 1)}


def format_arg(fn: str, value, default=PRESERVE) -> memory_format:
    """`value`, a function's ``memory_format`` argument, checked (None means `default`)."""
    if type(value) is memory_format:
        return value
    if value is None and default is not None:
        return default
    raise TypeError(
        f"{fn}(): argument 'memory_format' must be torch.memory_format, not {type(value).__name__}"
    )


def _order(fmt: memory_format, ndim: int):
    """The dims `fmt` lays a rank-`ndim` tensor out in, outermost first; None for row-major.
    RuntimeError for a rank the format has no order for."""
    order = _ORDERS.get(fmt)
    if order is not None and len(order) != ndim:
        raise RuntimeError(f"required rank {len(order)} tensor to use {fmt._name} format")
    return order


def _dense_strides(shape, order, empty_dims_count: bool = False) -> tuple:
    """Element strides of a dense layout of `shape` holding its dims in `order` (outermost
    first). A size-0 dim counts as size 1 unless `empty_dims_count` (PyTorch's
    channels-last strides of an empty tensor are 0 outside it)."""
    strides = [0] * len(shape)
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d] if empty_dims_count else max(shape[d], 1)
    return tuple(strides)


def format_strides(shape, fmt: memory_format):
    """The element strides `fmt` gives a tensor of `shape`; None for row-major
    (``contiguous_format``). ``preserve_format`` has none: RuntimeError, as PyTorch's."""
    if fmt is PRESERVE:
        raise RuntimeError("unsupported memory format Preserve")
    order = _order(fmt, len(shape))
    return None if order is None else _dense_strides(shape, order, empty_dims_count=True)


def _element_strides(array) -> tuple:
    item = array.itemsize
    return tuple(s // item for s in array.strides)


def is_contiguous_as(array, fmt: memory_format) -> bool:
    """Whether `array` is laid out densely as `fmt` says (PyTorch's
    ``is_contiguous(memory_format=fmt)``): size-1 dims' strides do not count, and a tensor of
    another rank than the format's is not laid out so."""
    order = _ORDERS.get(fmt)
    if order is None:
        return array.flags.c_contiguous
    if len(order) != array.ndim:
        return False
    shape, strides = array.shape, array.strides
    expected = array.itemsize
    for d in reversed(order):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def is_dense(array) -> bool:
    """Whether `array`'s elements fill its memory with no gaps and no overlaps, in some order
    of its dims (size-1 dims' strides do not count)."""
    if array.flags.c_contiguous:
        return True
    sized = sorted((abs(st), n) for n, st in zip(array.shape, array.strides) if n != 1)
    expected = array.itemsize
    for stride, n in sized:
        if stride != expected:
            return False
        expected *= n
    return True


def _memory_order(shape, *operands) -> list:
    """`shape`'s dims from the outermost to the innermost in memory, as PyTorch orders them
    for a layout with gaps or overlaps or for an elementwise result: by the strides of the
    first operand (a tuple of element strides) that tells two dims apart, the larger size
    outer on equal strides, a dim of stride 0 (broadcast) telling nothing; dims no operand
    tells apart stay in row-major order."""
    ndim = len(shape)
    inner_first = list(range(ndim - 1, -1, -1))

    def outer(d0, d1) -> int:
        """1 when d0 belongs outside d1, -1 when inside, 0 when no operand can say."""
        for strides in operands:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, ndim):
        moving = i
        for j in range(i - 1, -1, -1):
            verdict = outer(inner_first[j], inner_first[moving])
            if verdict > 0:
                inner_first[j], inner_first[moving] = inner_first[moving], inner_first[j]
                moving = j
            elif verdict < 0:
                break
    return inner_first[::-1]


def _broadcast_strides(array, shape) -> tuple:
    """`array`'s element strides as an operand broadcast to `shape` (0 along the dims it is
    broadcast in)."""
    lead = len(shape) - array.ndim
    item = array.itemsize
    own = array.shape
    return (0,) * lead + tuple(
        st // item if own[i] == shape[lead + i] else 0 for i, st in enumerate(array.strides)
    )


def elementwise_layout(result, operands, xp):
    """`result`, an elementwise op's row-major or NumPy-ordered result, laid out as PyTorch
    lays out that op's result: dims in the memory order of its first operand that tells
    them apart (`x_channels_last + y` is channels-last, `y + x_channels_last` is not)."""
    shape = result.shape
    arrays = [a for a in operands if getattr(a, "ndim", 0)]
    if not arrays or all(a.flags.c_contiguous for a in arrays):
        return result
    if all(a.shape == shape for a in arrays):
        first = arrays[0]
        if all(a.strides == first.strides for a in arrays) and is_dense(first):
            strides = _element_strides(first)  # PyTorch keeps their common dense layout
            return in_strides(result, strides, xp)
    order = _memory_order(shape, *[_broadcast_strides(a, shape) for a in arrays])
    return in_strides(result, _dense_strides(shape, order), xp)


def preserved_strides(array):
    """The element strides a copy of `array` takes under ``preserve_format``: `array`'s own
    when its layout is dense, else a dense layout with its dims in their memory order. None
    for row-major."""
    if array.ndim < 2 or (array.flags.c_contiguous and 1 not in array.shape and array.size):
        return None
    strides = _element_strides(array)
    if array.size == 0:  # NumPy gives a new empty array strides of 0, which say nothing
        return strides if any(strides) else None
    if is_dense(array):
        return strides
    return _dense_strides(array.shape, _memory_order(array.shape, strides))


def _looks_ordered(shape, strides, order) -> bool:
    """Whether `strides` grow along `order` read from the innermost dim (PyTorch's guess that
    a tensor "looks" channels-last, which decides the layout of convolutions', poolings' and
    normalizations' results)."""
    channels = order[-1]
    if strides[channels] == 0:
        return False
    least = 0
    for d in reversed(order):
        if shape[d] == 0 or strides[d] < least:
            return False
        if d == 0 and least == strides[channels]:
            return False  # N x 1 x 1 x 1...: contiguous as much as channels-last
        least = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def suggested_format(array) -> memory_format:
    """``channels_last`` (``channels_last_3d``) for a 4-D (5-D) `array` whose strides look
    so, else ``contiguous_format``: the layout PyTorch gives the result of a convolution,
    pooling, normalization or resampling of `array`."""
    ndim = array.ndim
    if ndim not in (4, 5) or (array.flags.c_contiguous and 1 not in array.shape):
        return CONTIGUOUS
    fmt = CHANNELS_LAST if ndim == 4 else CHANNELS_LAST_3D
    if _looks_ordered(array.shape, _element_strides(array), _ORDERS[fmt]):
        return fmt
    return CONTIGUOUS


def laid_out(make, shape, strides):
    """``make``'s values for a tensor of `shape` with element `strides` (None: row-major):
    `make` is called with the shape in memory order, so values it draws in order land in
    memory order."""
    if strides is None:
        return make(shape)
    order = sorted(range(len(shape)), key=lambda d: -strides[d])
    if order == list(range(len(shape))) and strides == _dense_strides(shape, order):
        return make(shape)
    flat = make((math.prod(shape),))
    if type(flat) is np.ndarray:
        item = flat.itemsize
        return np.ndarray(shape, flat.dtype, flat, 0, [s * item for s in strides])
    # other backends: the same order of dims, size-1 dims' strides as they come
    return flat.reshape([shape[d] for d in order]).transpose(np.argsort(order).tolist())


def positional_only_error(fn: str, args) -> TypeError:
    """PyTorch's TypeError for positional arguments to a method whose only arguments (such
    as ``memory_format``) are keywords."""
    n = len(args)
    return TypeError(
        f"{fn}() takes 0 positional arguments but {n} {'was' if n == 1 else 'were'} given"
    )


def in_strides(array, strides, xp):
    """`array` with element `strides` (a copy unless it has them)."""
    if _element_strides(array) == strides:
        return array
    out = laid_out(lambda shape: xp.empty(shape, array.dtype), array.shape, strides)
    out[...] = array
    return out


def in_format(array, fmt: memory_format, xp):
    """`array` with the exact strides `fmt` gives its shape (a copy unless it has them);
    `array` itself for ``contiguous_format`` when it is row-major."""
    strides = format_strides(array.shape, fmt)
    if strides is None:
        return array if array.flags.c_contiguous else xp.ascontiguousarray(array)
    return in_strides(array, strides, xp)


def keeping_layout(kernel, operands, xp):
    """`kernel` laying its results out as PyTorch lays out those of its op. With `operands`
    the positions of array arguments (a convolution's, pooling's, normalization's): in the
    memory format (channels-last or 3d) the first of those that looks so suggests, results
    of another rank left as computed. With ``"elementwise"``: as an elementwise op's, in the
    memory order of the first array argument that tells dims apart
    (`elementwise_layout`)."""
    if operands == "elementwise":

        def elementwise(*args):
            result = kernel(*args)
            if result.ndim > 1 and not all(
                a.flags.c_contiguous for a in args if getattr(a, "ndim", 0)
            ):
                return elementwise_layout(result, args, xp)
            return result

        return elementwise

    def run(*args):
        result = kernel(*args)
        for i in operands:
            fmt = suggested_format(args[i])
            if fmt is not CONTIGUOUS:
                ndim = args[i].ndim
                if type(result) is tuple:
                    return tuple(in_format(r, fmt, xp) if r.ndim == ndim else r for r in result)
                return in_format(result, fmt, xp) if result.ndim == ndim else result
        return result

    return run


def suggest_memory_format(tensor) -> memory_format:
    """`suggested_format` of a tensor's memory: the format PyTorch gives the result of a
    convolution, pooling or normalization of `tensor`."""
    return suggested_format(tensor._data)


def keep_format(result, input):
    """Tensor `result` (of an op composed of others) in the memory format `input` suggests,
    as PyTorch lays out that op's result: a differentiable copy when `input` looks
    channels-last and `result` has not that format's strides, else `result` itself."""
    fmt = suggested_format(input._data)
    data = result._data
    if fmt is CONTIGUOUS or data.ndim != input._data.ndim:
        return result
    if _element_strides(data) == format_strides(data.shape, fmt):
        return result
    return result.clone(memory_format=fmt)
