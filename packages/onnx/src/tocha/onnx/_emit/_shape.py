"""Emitters that move, join, split, index and create tensors, and symbolic sizes."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import tocha
from onnx import numpy_helper

from .._builder import Builder, is_static, meta_dtype, meta_shape, meta_val, rank, static_dim

INT64_MAX = np.iinfo(np.int64).max


def _sizes(sizes: Sequence[Any]) -> Sequence[Any]:
    """``f(x, 2, 3)`` and ``f(x, (2, 3))`` alike: the sizes as one sequence."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, tocha.Size)):
        return tuple(sizes[0])
    return sizes


def _dim(dim: int, ndim: int) -> int:
    return dim + ndim if dim < 0 else dim


def _axes(b: Builder, op_type: str, x: str, axes: Sequence[int]) -> str:
    """Squeeze or Unsqueeze `x` at `axes` (an input since opset 13)."""
    return b.op(op_type, [x, b.ints(list(axes))])


def _reshape(b: Builder, node, input, *shape):
    return b.op("Reshape", [b.value(input), b.ints(_sizes(shape))])


def _shape_of(b: Builder, x: str, start: int, end: int | None = None) -> str:
    """``x.shape[start:end]`` as a 1-D int64 tensor."""
    return b.op("Shape", [x], start=start, end=end)


def _flatten(b: Builder, node, input, start_dim=0, end_dim=-1):
    ndim = rank(input)
    if ndim == 0:
        return _reshape(b, node, input, [1])
    start, end = _dim(start_dim, ndim), _dim(end_dim, ndim)
    x = b.value(input)
    if start == end:
        return x
    parts = [] if start == 0 else [_shape_of(b, x, 0, start)]
    parts.append(b.ints([-1]))
    if end + 1 < ndim:
        parts.append(_shape_of(b, x, end + 1))
    return b.op("Reshape", [x, b.op("Concat", parts, axis=0)])


def _unflatten(b: Builder, node, input, dim, sizes):
    ndim = rank(input)
    d = _dim(dim, ndim)
    x = b.value(input)
    parts = [] if d == 0 else [_shape_of(b, x, 0, d)]
    parts.append(b.ints(list(sizes)))
    if d + 1 < ndim:
        parts.append(_shape_of(b, x, d + 1))
    return b.op("Reshape", [x, b.op("Concat", parts, axis=0)])


def _permute(b: Builder, node, input, *dims):
    ndim = rank(input)
    return b.op("Transpose", [b.value(input)], perm=[_dim(d, ndim) for d in _sizes(dims)])


def _transpose(b: Builder, node, input, dim0, dim1):
    ndim = rank(input)
    perm = list(range(ndim))
    d0, d1 = _dim(dim0, ndim), _dim(dim1, ndim)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return b.op("Transpose", [b.value(input)], perm=perm)


def _t(b: Builder, node, input):
    return b.value(input) if rank(input) < 2 else _transpose(b, node, input, 0, 1)


def _unsqueeze(b: Builder, node, input, dim):
    return _axes(b, "Unsqueeze", b.value(input), [_dim(dim, rank(input) + 1)])


def _squeeze(b: Builder, node, input, dim=None):
    shape = meta_shape(input)
    if dim is None:
        dims = [d for d, s in enumerate(shape) if is_static(s) and s == 1]
    else:
        wanted = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = [_dim(d, len(shape)) for d in wanted]
        dims = [d for d in dims if is_static(shape[d]) and shape[d] == 1]
    return _axes(b, "Squeeze", b.value(input), dims) if dims else b.value(input)


def _cat(b: Builder, node, tensors, dim=0, *, out=None):
    dtype = meta_dtype(node)
    ndim = rank(node)
    parts = [b.operand(t, dtype) for t in tensors if meta_shape(t) != (0,)]
    return b.op("Concat", parts, axis=_dim(dim, ndim))


def _stack(b: Builder, node, tensors, dim=0, *, out=None):
    d = _dim(dim, rank(node))
    dtype = meta_dtype(node)
    parts = [_axes(b, "Unsqueeze", b.operand(t, dtype), [d]) for t in tensors]
    return b.op("Concat", parts, axis=d)


def _split_sizes(b: Builder, node, input, sizes: list[int], dim: int) -> tuple:
    d = _dim(dim, rank(input))
    names = b.op("Split", [b.value(input), b.ints(sizes)], outputs=len(sizes), axis=d)
    return (names,) if isinstance(names, str) else tuple(names)


def _chunk(b: Builder, node, input, chunks, dim=0):
    size = static_dim(input, dim)
    step = -(-size // chunks)
    sizes = [min(step, size - k) for k in range(0, size, step)] if size else [0]
    return _split_sizes(b, node, input, sizes, dim)


def _split(b: Builder, node, tensor, split_size_or_sections, dim=0):
    size = static_dim(tensor, dim)
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        sizes = [min(step, size - k) for k in range(0, size, step)]
    else:
        sizes = list(split_size_or_sections)
    return _split_sizes(b, node, tensor, sizes, dim)


def _unbind(b: Builder, node, input, dim=0):
    parts = _split_sizes(b, node, input, [1] * static_dim(input, dim), dim)
    d = _dim(dim, rank(input))
    return tuple(_axes(b, "Squeeze", p, [d]) for p in parts)


def _identity(b: Builder, node, input, *args, **kwargs):
    return b.value(input)


def _cast_like_result(b: Builder, node, input, *args, **kwargs):
    """``to``, ``float``, ``type_as`` and alike: a Cast to the result's dtype, if it differs."""
    return b.operand(input, meta_dtype(node))


def _expand(b: Builder, node, input, *sizes):
    sizes = list(_sizes(sizes))
    x = b.value(input)
    lead = len(sizes) - rank(input)
    dims = [
        _shape_of(b, x, k - lead, k - lead + 1) if isinstance(s, int) and s == -1 else s
        for k, s in enumerate(sizes)
    ]
    return b.op("Expand", [x, b.ints(dims)])


def _expand_as(b: Builder, node, input, other):
    return b.op("Expand", [b.value(input), b.op("Shape", [b.value(other)])])


def _repeat(b: Builder, node, input, *sizes):
    sizes = list(_sizes(sizes))
    x = b.value(input)
    lead = len(sizes) - rank(input)
    if lead:
        x = b.op("Reshape", [x, b.op("Concat", [b.ints([1] * lead), b.op("Shape", [x])], axis=0)])
    return b.op("Tile", [x, b.ints(sizes)])


def _size(b: Builder, node, input, dim=None):
    x = b.value(input)
    if dim is not None:
        d = _dim(dim, rank(input))
        return _shape_of(b, x, d, d + 1)
    return tuple(_shape_of(b, x, d, d + 1) for d in range(rank(input)))


def _fill(b: Builder, node, shape: str, value: Any):
    dtype = meta_dtype(node)
    fill = np.array([value], dtype=np.dtype(dtype.np))
    return b.op("ConstantOfShape", [shape], value=numpy_helper.from_array(fill))


def _filled(value: Any):
    def emit(b: Builder, node, *sizes, size=None, **kwargs):
        dims = _sizes(sizes) if size is None else size
        return _fill(b, node, b.ints(list(dims)), value)

    return emit


def _full(b: Builder, node, size, fill_value, **kwargs):
    return _fill(b, node, b.ints(list(size)), fill_value)


def _filled_like(value: Any):
    def emit(b: Builder, node, input, **kwargs):
        return _fill(b, node, b.op("Shape", [b.value(input)]), value)

    return emit


def _full_like(b: Builder, node, input, fill_value, **kwargs):
    return _fill(b, node, b.op("Shape", [b.value(input)]), fill_value)


def _arange(b: Builder, node, start=0, end=None, step=1, **kwargs):
    """``Range`` over 0-d bounds of the result's dtype (symbolic sizes squeezed)."""
    if end is None:
        start, end = 0, start
    dtype = meta_dtype(node)
    bounds = []
    for v in (start, end, step):
        if not b.is_value(v):
            bounds.append(b.scalar(v, dtype))
        elif meta_dtype(v) is None:  # a symbolic size: a [1] int64 tensor
            bounds.append(b.op("Squeeze", [b.operand(v, dtype), b.ints([0])]))
        else:
            bounds.append(b.operand(v, dtype))
    return b.op("Range", bounds)


def _constant(b: Builder, node, data, *args, **kwargs):
    """``from_numpy``, ``tensor``, ``as_tensor``: the example value, as a constant."""
    return b.const(meta_val(node).detach().cpu().numpy())


def _reduce(op_type: str):
    def emit(b: Builder, node, input, dim=None, keepdim=False, *, dtype=None, out=None, **kw):
        x = b.operand(input, meta_dtype(node))
        if dim is None or dim == () or dim == []:
            dims = list(range(rank(input)))
        else:
            dims = [
                _dim(d, rank(input)) for d in (dim if isinstance(dim, (tuple, list)) else [dim])
            ]
        return b.reduce(op_type, x, dims, keepdim)

    return emit


def _getitem(b: Builder, node, obj, key):
    """Indexing: an element of a tuple-valued node, or basic indexing of a tensor."""
    value = b.value(obj) if b.is_value(obj) else obj
    if isinstance(value, (tuple, list)):
        return value[key]
    return _index(b, obj, key)


def _index(b: Builder, input, key):
    """Basic indexing (ints, slices, None, Ellipsis) with at most one index tensor."""
    keys = list(key) if isinstance(key, tuple) else [key]
    ndim = rank(input)
    used = sum(1 for k in keys if k is not None and k is not Ellipsis)
    x = b.value(input)
    starts, ends, axes, steps, squeeze, unsqueeze, gathers = [], [], [], [], [], [], []
    dim = out = 0
    for k in keys:
        k = b.symbolic(k)
        if k is Ellipsis:
            dim += ndim - used
            out += ndim - used
        elif k is None:
            unsqueeze.append(out)
            out += 1
        elif isinstance(k, slice):
            if not (k.start is None and k.stop is None and k.step in (None, 1)):
                starts.append(0 if k.start is None else k.start)
                ends.append(INT64_MAX if k.stop is None else k.stop)
                axes.append(dim)
                steps.append(1 if k.step is None else k.step)
            dim += 1
            out += 1
        elif isinstance(k, (int, np.integer)) or (b.is_value(k) and meta_dtype(k) is None):
            starts.append(k)
            ends.append(INT64_MAX if isinstance(k, int) and k == -1 else _plus_one(b, k))
            axes.append(dim)
            steps.append(1)
            squeeze.append(dim)
            dim += 1
        elif b.is_value(k):
            gathers.append((dim - len(squeeze), k))
            dim += 1
            out += 1
        else:
            raise NotImplementedError(f"indexing with {k!r}")
    if axes:
        x = b.op("Slice", [x, b.ints(starts), b.ints(ends), b.ints(axes), b.ints(steps)])
    if squeeze:
        x = _axes(b, "Squeeze", x, squeeze)
    if len(gathers) > 1:
        raise NotImplementedError("indexing with several index tensors")
    for axis, index in gathers:
        if meta_dtype(index) == tocha.bool:
            raise NotImplementedError("indexing with a boolean mask")
        x = b.op("Gather", [x, b.operand(index, tocha.int64)], axis=axis)
    if unsqueeze:
        x = _axes(b, "Unsqueeze", x, unsqueeze)
    return x


def _plus_one(b: Builder, k: Any) -> Any:
    if isinstance(k, (int, np.integer)):
        return int(k) + 1
    return b.op("Add", [b.value(k), b.ints([1])])


def _table() -> dict:
    table: dict = {}

    def put(name: str, emit) -> None:
        for owner in (tocha, tocha.Tensor):
            fn = getattr(owner, name, None)
            if fn is not None:
                table[fn] = emit

    for name in ("view", "reshape"):
        put(name, _reshape)
    for name in ("contiguous", "clone", "detach", "alias"):
        put(name, _identity)
    for name in ("to", "type", "type_as", "float", "double", "half", "long", "int", "bool"):
        put(name, _cast_like_result)
    put("flatten", _flatten)
    put("unflatten", _unflatten)
    put("permute", _permute)
    put("transpose", _transpose)
    put("swapaxes", _transpose)
    put("t", _t)
    put("unsqueeze", _unsqueeze)
    put("squeeze", _squeeze)
    put("cat", _cat)
    put("concat", _cat)
    put("concatenate", _cat)
    put("stack", _stack)
    put("chunk", _chunk)
    put("split", _split)
    put("unbind", _unbind)
    put("expand", _expand)
    put("expand_as", _expand_as)
    put("repeat", _repeat)
    put("size", _size)
    for name, value in (("zeros", 0), ("ones", 1), ("empty", 0)):
        put(name, _filled(value))
        put(f"{name}_like", _filled_like(value))
    put("full", _full)
    put("arange", _arange)
    for name in ("from_numpy", "tensor", "as_tensor"):
        put(name, _constant)
    put("full_like", _full_like)
    put("mean", _reduce("ReduceMean"))
    put("sum", _reduce("ReduceSum"))
    put("amax", _reduce("ReduceMax"))
    put("amin", _reduce("ReduceMin"))
    table[operator.getitem] = _getitem
    table[tocha.Tensor.__getitem__] = _getitem
    return table


FUNCTIONS = _table()
