"""Joining tensors: cat, stack and their row and column forms, tile and repeat.

``cat``, ``stack`` and ``repeat`` are primitives (one op over a sequence of tensors); inputs
of mixed dtypes are first cast to their promoted dtype, as PyTorch promotes them. The others
are composites.
"""

from __future__ import annotations

from .. import _dtype
from .._api import export
from .._dispatch import call, defop, expect_tensors, not_a_tensor
from .._memory_format import CONTIGUOUS, in_format, suggested_format
from .._tensor import Tensor, _wrap_dim
from ._argcheck import allocation_error
from ._out import write_out
from .shape import int_tuple, reshape


def _joiner(name):
    """Kernel factory of ``k(*arrays, dim)`` calling ``xp.<name>``; the result is row-major,
    as PyTorch's (NumPy keeps a lone input's column-major layout)."""

    def factory(xp):
        join = getattr(xp, name)
        return lambda *args: xp.ascontiguousarray(join(args[:-1], axis=args[-1]))

    return factory


def _cat_kernel(xp):
    """``k(*arrays, dim)``: concatenate, skipping PyTorch's legacy empty inputs of shape
    ``(0,)`` (they stay arguments of the op so that autograd gives them a gradient). The
    result is row-major, or channels-last when every input looks so, as PyTorch's."""

    def kernel(*args):
        arrays, dim = args[:-1], args[-1]
        kept = [a for a in arrays if a.shape != (0,)] or arrays[:1]
        out = xp.concatenate(kept, axis=dim)
        fmt = suggested_format(kept[0])
        if fmt is not CONTIGUOUS and all(suggested_format(a) is fmt for a in kept[1:]):
            return in_format(out, fmt, xp)
        return xp.ascontiguousarray(out)

    return kernel


def _repeat_kernel(xp):
    def kernel(x, sizes):
        if not sizes:
            return x.copy()
        return xp.ascontiguousarray(xp.tile(x, sizes))

    return kernel


cat_op = defop("cat", _cat_kernel)
stack_op = defop("stack", _joiner("stack"))
repeat_op = defop("repeat", _repeat_kernel)


def _tensor_list(tensors, fn_name: str) -> tuple:
    """The tensors of a tuple or list argument; TypeError as PyTorch's for anything else."""
    if not isinstance(tensors, (tuple, list)):
        raise TypeError(
            f"{fn_name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
            f"{type(tensors).__name__}"
        )
    expect_tensors(tensors, 0)
    return tuple(tensors)


def _promoted(tensors: tuple) -> tuple:
    """The tensors cast to their promoted dtype (unchanged when they share one)."""
    first = tensors[0]._data.dtype
    for t in tensors:
        if t._data.dtype is not first:
            break
    else:
        return tensors
    d = _dtype.promote_operands(tensors)
    return tuple(t if t.dtype is d else t.to(d) for t in tensors)


def cat(tensors, dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """The tensors joined along existing dimension `dim`; all other sizes must match.

    1-D empty tensors (shape ``(0,)``) are skipped, as in PyTorch. The result has the
    promoted dtype of all inputs.
    """
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("tocha.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not t._data.ndim:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    tensors = _promoted(tensors)
    kept = [(i, t) for i, t in enumerate(tensors) if t._data.shape != (0,)]
    if not kept:
        kept = [(0, tensors[0])]
    shape = kept[0][1]._data.shape
    dim = _wrap_dim(dim, len(shape))
    for i, t in kept[1:]:
        other = t._data.shape
        if len(other) != len(shape):
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {len(shape)} and {len(other)}"
            )
        for d, (a, b) in enumerate(zip(shape, other, strict=True)):
            if a != b and d != dim:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size {a} "
                    f"but got size {b} for tensor number {i} in the list."
                )
    result = call(cat_op, tuple(tensors), dim)
    return result if out is None else write_out(out, result)


def concatenate(tensors, axis: int = 0, *, dim: int | None = None, out: Tensor | None = None):
    """Alias of `cat` with NumPy's argument name (`dim` is accepted too)."""
    return cat(tensors, axis if dim is None else dim, out=out)


def stack(tensors, dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """The tensors, all of one shape, joined along a new dimension `dim`.

    Shape: n tensors of shape ``S`` give ``S[:dim] + (n,) + S[dim:]``.
    """
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(t._data.shape)} at entry {i}"
            )
    dim = _wrap_dim(dim, len(shape) + 1)
    result = call(stack_op, _promoted(tensors), dim)
    return result if out is None else write_out(out, result)


def _at_least(t: Tensor, ndim: int) -> Tensor:
    shape = t._data.shape
    if len(shape) >= ndim:
        return t
    return reshape(t, (1,) * (ndim - len(shape)) + shape)


def hstack(tensors, *, out: Tensor | None = None) -> Tensor:
    """The tensors joined column-wise: along dimension 1, or 0 for 1-D tensors (0-dim
    tensors count as 1-D)."""
    tensors = _tensor_list(tensors, "hstack")
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    tensors = [_at_least(t, 1) for t in tensors]
    return cat(tensors, 0 if tensors[0]._data.ndim == 1 else 1, out=out)


def vstack(tensors, *, out: Tensor | None = None) -> Tensor:
    """The tensors joined row-wise, along dimension 0 (1-D tensors of n elements count as
    ``(1, n)``)."""
    tensors = _tensor_list(tensors, "vstack")
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat([_at_least(t, 2) for t in tensors], 0, out=out)


def repeat(self: Tensor, *sizes) -> Tensor:
    """`self` tiled ``sizes[i]`` times along dimension i (a copy).

    Shape: ``len(sizes) >= self.dim()``; `self` is first viewed with leading dimensions of
    size 1 up to ``len(sizes)`` dimensions; the result has size ``sizes[i] * shape[i]``.
    """
    sizes = int_tuple(sizes, "repeat", "repeats")
    shape = self._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    padded = (1,) * (len(sizes) - len(shape)) + shape
    target = [n * s for n, s in zip(sizes, padded, strict=True)]
    for s in target:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {target}")
    try:
        return call(repeat_op, (self,), tuple(max(s, 0) for s in sizes))
    except (MemoryError, ValueError) as exc:
        raise allocation_error(exc, target, self._data.itemsize) from None


def tile(input: Tensor, dims) -> Tensor:
    """`input` repeated ``dims[i]`` times along dimension i; `dims` shorter than the tensor
    is padded with ones in front."""
    dims = int_tuple((dims,), "tile", "dims")
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("tile", input, "input", 1) from None
    if len(dims) < ndim:
        dims = (1,) * (ndim - len(dims)) + dims
    return repeat(input, dims)


for _fn in (cat, concatenate, stack, hstack, vstack):
    export(_fn)
export(cat, "concat")
export(vstack, "row_stack")
export(tile, method=True)
export(repeat, method=True, function=False)
