"""vmap of a custom `tocha.autograd.Function`, as in PyTorch's "Extending torch.func".

A Function written with ``setup_context`` runs under vmap by its ``vmap`` staticmethod:
the inputs batched by the innermost level that batches any of them leave that level (their
batch dim first), the staticmethod gets them with their in_dims and a `VmapInfo`, and its
outputs enter the level again at the out_dims it returns. Leaving and entering are
differentiable, so the Function composes with grad and jvp. With ``generate_vmap_rule =
True`` its forward runs on the batched tensors, op by op. A Function with a
``forward(ctx, ...)`` runs its forward on them too.
"""

from __future__ import annotations

from typing import NamedTuple

from tocha import Tensor
from tocha.autograd import Function
from tocha.autograd.function import TRANSFORM_RULES

from ._batched import VMAP, BatchedTensor
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten
from ._vmap import _enter, _leave

_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


class VmapInfo(NamedTuple):
    """What a Function's vmap staticmethod learns of the vmap it runs under."""

    batch_size: int
    randomness: str


def apply_under_vmap(cls, args, kwargs):
    """`cls` applied to `args` through its vmap staticmethod when an argument is batched,
    else NotImplemented (the caller runs the Function as usual)."""
    active = VMAP.active
    level = max(
        (lv for a in args if type(a) is BatchedTensor for lv in a._levels if lv in active),
        default=None,
    )
    if level is None or cls.setup_context is Function.setup_context:
        return NotImplemented
    has_rule = cls.vmap is not Function.vmap
    if cls.generate_vmap_rule:
        if has_rule:
            raise RuntimeError(
                f"You tried to vmap over {cls.__name__}, but it has both "
                "generate_vmap_rule=True and an overridden vmap staticmethod. Please set "
                "generate_vmap_rule=False or delete the overridden vmap staticmethod to avoid "
                f"ambiguity. {_DOCS}"
            )
        return NotImplemented
    if not has_rule:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
            f"override and implement the vmap staticmethod or set generate_vmap_rule=True. {_DOCS}"
        )
    size = next(
        a._physical.shape[a._levels.index(level)]
        for a in args
        if type(a) is BatchedTensor and level in a._levels
    )
    in_dims = tuple(0 if type(a) is BatchedTensor and level in a._levels else None for a in args)
    name = cls.__name__
    unbatched = [a if d is None else _leave(a, 0, level, size, name) for a, d in zip(args, in_dims)]
    info = VmapInfo(size, VMAP.randomness[level])
    position = VMAP.active.index(level)
    del VMAP.active[position]  # the staticmethod runs outside the level, as PyTorch's
    try:
        returned = cls.vmap(info, in_dims, *unbatched, **kwargs)
    finally:
        VMAP.active.insert(position, level)
    if not isinstance(returned, tuple) or len(returned) != 2:
        raise RuntimeError(
            "Expected the vmap staticmethod to have two returns, an output and out_dims with "
            f"pytree structure compatible with the output. Got a {type(returned)} instead"
        )
    output, out_dims = returned
    leaves, spec = tree_flatten(output)
    try:
        dims = (
            [out_dims] * len(leaves)
            if out_dims is None or isinstance(out_dims, int)
            else broadcast_prefix(out_dims, output, "out_dims")
        )
    except ValueError:
        raise RuntimeError(
            "The autograd.Function's vmap staticmethod returned an incompatible (output, "
            f"out_dims) tuple. Expected out_dims={out_dims} to be compatible with the structure "
            f"of `output`. {_DOCS}"
        ) from None
    entered = [
        t if d is None or not isinstance(t, Tensor) else _enter(t, d, level, size)
        for t, d in zip(leaves, dims)
    ]
    return tree_unflatten(entered, spec)


TRANSFORM_RULES.vmap = apply_under_vmap
