"""What function transforms built outside tocha-autograd (tocha-func's vmap) need from it.

The dispatcher shows an op to the autograd layer when an argument carries autograd metadata;
while a transform is active (``tocha.library.GRAD_MODE.transforms`` nonzero) the layer first
asks ``tocha.library.LAYERS.batching`` for the op's batched result, then records the op for
backward and forward mode as usual.
"""

from __future__ import annotations

from tocha import Tensor

from ._graph import AutogradMeta

__all__ = ["watch", "LEAF_GRADIENTS"]


class _LeafGradients:
    """``settle(grad, leaf)``, set by a transform: the gradient a leaf (or an input of
    ``autograd.grad``) receives, once its backward is done, made to fit the leaf (vmap sums
    the batch of levels that have exited and the leaf is not batched over). None: as is."""

    __slots__ = ("settle",)

    def __init__(self):
        self.settle = None


LEAF_GRADIENTS = _LeafGradients()


def watch(t: Tensor) -> Tensor:
    """Give `t` autograd metadata (not requiring grad) if it has none, so that every op on
    it reaches the autograd layer; returns `t`."""
    if t._ag is None:
        t._ag = AutogradMeta(False)
    return t
