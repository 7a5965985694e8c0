"""`vmap`: run a function written for one example over a batch, with batching rules.

Each call enters a vmap level: the mapped inputs become `BatchedTensor`s of that level (the
mapped dim moved behind the batch dims of outer levels), every op on them is batched by the
batching layer, and the outputs leave the level with its batch dim moved to `out_dims`.
Forward-mode tangents pass through both ways, so vmap composes with `jvp` (``jacfwd``).
"""

from __future__ import annotations

import functools

from tocha import Tensor
from tocha.autograd import Function, forward_ad
from tocha.library import GRAD_MODE, backend_of, wrap

from . import _batching
from ._batched import VMAP, BatchedTensor, batched
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["vmap", "debug_unwrap"]

_batching.install()

RANDOMNESS = ("error", "different", "same")


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """``func`` mapped over a dim of its inputs: ``vmap(f)(x)[i] == f(x[i])``.

    `in_dims`: per input (an int, None for an input not mapped, or a tuple matching the
    positional inputs, nested like them); `out_dims`: where the mapped dim goes in each
    output (an int or a tuple matching the outputs); `randomness`: ``'error'`` (random ops
    raise), ``'different'`` (each example draws its own) or ``'same'`` (one draw for all);
    `chunk_size`: map at most this many examples at once (None: all).
    """
    if randomness not in RANDOMNESS:
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = getattr(func, "__name__", None) or repr(func)

    @functools.wraps(func)
    def mapped(*args, **kwargs):
        leaves, spec, dims, size = _mapped_inputs(name, in_dims, args)
        if chunk_size is None or chunk_size >= size:
            return _run(func, name, spec, leaves, dims, size, out_dims, randomness, kwargs)
        return _chunked(
            func, name, spec, leaves, dims, size, out_dims, randomness, kwargs, chunk_size
        )

    return mapped


def debug_unwrap(tensor, *, recurse: bool = True):
    """The tensor under vmap's wrapping, for debugging (printing a value while vmapped): a
    batched tensor's whole batch, every level's batch dim in front, outermost first (with
    ``recurse=False``, only the innermost level's, the others still batched). Anything else
    is returned as is. Using the result inside the transformed function is undefined."""
    if type(tensor) is not BatchedTensor:
        return tensor
    if recurse:
        return wrap(tensor._physical, tensor._device)
    level = tensor._levels[-1]
    return _unbatch(tensor, 0, level, tensor._physical.shape[len(tensor._levels) - 1])


def _where(name, in_dims) -> str:
    """The call that an error about the inputs names."""
    return f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"


def _mapped_inputs(name, in_dims, args):
    """The flat inputs, the dim each is mapped over (None: not mapped) and the batch size."""
    if not args:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
            "are trying to vmap over a function with no inputs. The latter is unsupported."
        )
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        where = _where(name, in_dims)
        raise ValueError(
            f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching "
            f"the structure of inputs, got: {type(in_dims)}."
        )
    if isinstance(in_dims, tuple) and len(in_dims) != len(args):
        where = _where(name, in_dims)
        raise ValueError(
            f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has "
            f"{len(in_dims)} entries but there are {len(args)} inputs."
        )
    leaves, spec = tree_flatten(args)
    if isinstance(in_dims, int):
        dims = [in_dims] * len(leaves)
    else:
        dims = broadcast_prefix(in_dims, args, "in_dims")
    sizes = []
    for leaf, dim in zip(leaves, dims):
        if dim is None:
            continue
        if not isinstance(dim, int) or isinstance(dim, bool):
            where = _where(name, in_dims)
            raise ValueError(f"{where}: in_dim entries must be int or None, got {type(dim)}.")
        if not isinstance(leaf, Tensor):
            where = _where(name, in_dims)
            raise ValueError(
                f"{where}: Got in_dim={dim} for an input but the input is of type "
                f"{type(leaf)}. We cannot vmap over non-Tensor arguments, please use None as "
                "the respective in_dim"
            )
        n = leaf.dim()
        if not -n <= dim < n:
            where = _where(name, in_dims)
            raise ValueError(
                f"{where}: Got in_dim={dim} for some input, but that input is a Tensor of "
                f"dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}."
            )
        sizes.append(leaf.shape[dim])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    return leaves, spec, dims, sizes[0]


def _run(func, name, spec, leaves, dims, size, out_dims, randomness, kwargs):
    level = VMAP.next_id
    VMAP.next_id += 1
    VMAP.active.append(level)
    VMAP.randomness[level] = randomness
    draws = VMAP.unbatched_draws
    GRAD_MODE.transforms += 1
    try:
        inputs = [
            leaf if dim is None else _enter(leaf, dim, level, size)
            for leaf, dim in zip(leaves, dims)
        ]
        outputs = func(*tree_unflatten(inputs, spec), **kwargs)
    finally:
        GRAD_MODE.transforms -= 1
        VMAP.active.pop()
        del VMAP.randomness[level]
        unbatched, VMAP.unbatched_draws = VMAP.unbatched_draws - draws, draws
    if unbatched:
        raise RuntimeError(
            f"vmap({name}, randomness='different'): tocha draws a different sample per "
            "example only in dropout; the function makes other random draws (a factory such "
            "as tocha.rand, or a *_like of a batched tensor), which would be the same for "
            "every example. Draw them outside vmap, or use randomness='same'."
        )
    return _leave_all(name, outputs, out_dims, level, size)


def _chunked(func, name, spec, leaves, dims, size, out_dims, randomness, kwargs, chunk_size):
    """Run the batch in chunks of `chunk_size` examples and join the outputs."""
    pieces = []
    for start in range(0, size, chunk_size):
        length = min(chunk_size, size - start)
        chunk = [
            leaf if dim is None else leaf.narrow(dim, start, length)
            for leaf, dim in zip(leaves, dims)
        ]
        pieces.append(_run(func, name, spec, chunk, dims, length, out_dims, randomness, kwargs))
    flat_pieces = [tree_flatten(p) for p in pieces]
    spec = flat_pieces[0][1]
    out_leaves = flat_pieces[0][0]
    joined_dims = broadcast_prefix(out_dims, tree_unflatten(out_leaves, spec), "out_dims")
    import tocha

    joined = []
    for j, dim in enumerate(joined_dims):
        parts = [leaves_[j] for leaves_, _ in flat_pieces]
        joined.append(parts[0] if dim is None else tocha.cat(parts, dim))
    return tree_unflatten(joined, spec)


def _enter(t: Tensor, dim: int, level, size: int) -> BatchedTensor:
    """`t` batched over `level` along its dim `dim` (keeping its outer levels); recorded
    for backward when `t` requires grad, its tangent batched too."""
    dim = dim % t.dim()
    if GRAD_MODE.grad_enabled and t.requires_grad:
        return _Enter.apply(t, dim, level, size)
    tangent = forward_ad.unpack_dual(t).tangent
    out = _batch(t, dim, level)
    if tangent is not None:
        out = forward_ad.make_dual(out, _enter(tangent, dim, level, size))
    return out


def _batch(t: Tensor, dim: int, level) -> BatchedTensor:
    """`t`'s dim `dim` as the batch dim of `level`, placed among t's own batch dims by level
    (an older level's exit may batch a gradient of newer levels in a backward)."""
    if type(t) is BatchedTensor:
        own = t._levels
        position = sum(1 for other in own if other < level)
        physical = _moved(t._physical, len(own) + dim, position, t._device)
        levels = own[:position] + (level,) + own[position:]
        return batched(physical, levels, t._device)
    return batched(_moved(t._data, dim, 0, t._device), (level,), t._device)


def _moved(array, source: int, destination: int, dev):
    """`array` with its dim `source` moved to `destination` (itself when they agree)."""
    if source == destination:
        return array
    return backend_of(dev).xp.moveaxis(array, source, destination)


def _leave(t, out_dim, level, size, name):
    """An output leaving `level`: its batch dim of that level moved to `out_dim`; recorded
    for backward when it requires grad, its tangent unbatched too."""
    if out_dim is None:
        if type(t) is BatchedTensor and level in t._levels:
            raise ValueError(
                f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
            )
        return t
    if not isinstance(t, Tensor):
        raise ValueError(
            f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(t)}. Did "
            "you mean to set out_dims= to None for output?"
        )
    n = t.dim() + 1
    if not -n <= out_dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
            f"{out_dim})"
        )
    out_dim %= n
    if GRAD_MODE.grad_enabled and t.requires_grad:
        return _Exit.apply(t, out_dim, level, size)
    tangent = forward_ad.unpack_dual(t).tangent
    out = _unbatch(t, out_dim, level, size)
    if tangent is not None:
        out = forward_ad.make_dual(out, _leave(tangent, out_dim, level, size, name))
    return out


def _unbatch(t: Tensor, out_dim: int, level, size: int) -> Tensor:
    """`t` without `level`: its batch dim moved to `out_dim` (a tensor not batched over
    `level` is the same for every example: expanded to `size` there)."""
    if type(t) is BatchedTensor and level in t._levels:
        levels = t._levels
        k = levels.index(level)
        rest = levels[:k] + levels[k + 1 :]
        physical = _moved(t._physical, k, len(rest) + out_dim, t._device)
    else:
        rest = t._levels if type(t) is BatchedTensor else ()
        xp = backend_of(t._device).xp
        source = t._physical if rest else t._data
        physical = xp.expand_dims(source, len(rest) + out_dim)
        shape = list(physical.shape)
        shape[len(rest) + out_dim] = size
        physical = xp.broadcast_to(physical, tuple(shape))
    if rest:
        return batched(physical, rest, t._device)
    return wrap(physical, t._device)


class _Enter(Function):
    """Entering a vmap level, as a differentiable op (backward: the batch gathered back).
    Its backward and jvp are differentiable again (a gradient with a history leaves the
    level as an output does), for second derivatives through vmap."""

    @staticmethod
    def forward(ctx, t, dim, level, size):
        ctx.where = (dim, level, size)
        return _batch(t, dim, level)

    @staticmethod
    def backward(ctx, grad):
        dim, level, size = ctx.where
        return _leave(grad, dim, level, size, "vmap"), None, None, None

    @staticmethod
    def jvp(ctx, tangent, *_):
        dim, level, size = ctx.where
        return _enter(tangent, dim, level, size)


class _Exit(Function):
    """Leaving a vmap level, as a differentiable op (backward: the gradient batched, itself
    differentiable again, as `_Enter`'s)."""

    @staticmethod
    def forward(ctx, t, out_dim, level, size):
        ctx.where = (out_dim, level, size)
        return _unbatch(t, out_dim, level, size)

    @staticmethod
    def backward(ctx, grad):
        out_dim, level, size = ctx.where
        return _enter(grad, out_dim, level, size), None, None, None

    @staticmethod
    def jvp(ctx, tangent, *_):
        out_dim, level, size = ctx.where
        return _leave(tangent, out_dim, level, size, "vmap")


def _leave_all(name, outputs, out_dims, level, size):
    leaves, spec = tree_flatten(outputs)
    if isinstance(out_dims, tuple) and not isinstance(outputs, tuple):
        if len(out_dims) != 1:
            raise ValueError(
                f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                "with the structure of `outputs`."
            )
        out_dims = out_dims[0]
    try:
        if out_dims is None or isinstance(out_dims, int):
            dims = [out_dims] * len(leaves)
        else:
            dims = broadcast_prefix(out_dims, outputs, "out_dims")
    except ValueError:
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
            "with the structure of `outputs`."
        ) from None
    return tree_unflatten([_leave(t, d, level, size, name) for t, d in zip(leaves, dims)], spec)
