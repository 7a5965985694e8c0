"""What function transforms built outside tocha-autograd (tocha-func's vmap) need from it.

The dispatcher shows an op to the autograd layer when an argument carries autograd metadata;
while a transform is active (``tocha.library.GRAD_MODE.transforms`` nonzero) the layer first
asks ``tocha.library.LAYERS.batching`` for the op's batched result, then records the op for
backward and forward mode as usual.
"""

from __future__ import annotations

from tocha import Tensor

from ._graph import AutogradMeta

__all__ = ["watch"]


def watch(t: Tensor) -> Tensor:
    """Give `t` autograd metadata (not requiring grad) if it has none, so that every op on
    it reaches the autograd layer; returns `t`."""
    if t._ag is None:
        t._ag = AutogradMeta(False)
    return t
