"""In-place ops on views: rewiring the history of the view's base.

When a view of `base` is overwritten in place by the values of `result`, the base's new
history is "copy the slices": its gradient flows to the old base everywhere outside the
view's region, and to `result` inside it. The view then becomes a strided view of the new
base. The region is given by the flat positions (in the base) of the view's elements.
"""

from __future__ import annotations

import numpy as np

import tocha
from tocha import Tensor

from ._graph import AutogradMeta, Node, edges_of, meta_of, new_node


def positions(view: Tensor, base: Tensor) -> np.ndarray:
    """For every element of `view`, its flat index in (contiguous) `base`."""
    if not base.is_contiguous():
        raise NotImplementedError(
            "in-place operations on views of a non-contiguous base are not supported by "
            "autograd yet; call .contiguous() on the base first"
        )
    offset = view.storage_offset() - base.storage_offset()
    flat = np.arange(base.numel(), dtype=np.int64)
    strides = tuple(s * flat.itemsize for s in view.stride())
    return np.lib.stride_tricks.as_strided(flat[offset:], view.shape, strides).copy()


class CopySlices(Node):
    """The node of a base whose view was written in place, named as PyTorch's."""

    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::CopySlices"


def _node(name: str, formula, inputs: tuple, saved: tuple, output: Tensor, cls=None):
    edges, nrs = edges_of(inputs)
    metas = [meta_of(t) for t in inputs]
    return new_node(name, formula, edges, nrs, metas, saved, [], (meta_of(output),), cls=cls)


def _copy_slices(g, out, index, keep):
    flat = g.reshape(-1)
    return (flat * keep).reshape(g.shape), flat[index]


def _strided_view(g, out, index, base_meta):
    flat = tocha.zeros(base_meta.shape.numel(), dtype=g.dtype, device=g.device)
    flat = flat.index_put((index.reshape(-1),), g.reshape(-1), accumulate=True)
    return (flat.reshape(base_meta.shape),)


def rebase_view(target: Tensor, base: Tensor, result: Tensor) -> None:
    """`target`, a view of `base`, now holds `result`'s values: rewire both histories."""
    region = positions(target, base)
    index = tocha.from_numpy(region).to(base.device)
    keep_mask = np.ones(base.numel(), dtype=base._data.dtype)
    keep_mask[region.reshape(-1)] = 0
    keep = tocha.from_numpy(keep_mask).to(base.device)
    base_old = base.detach() if base._ag is None else base
    inputs = (base_old, result)
    copy = _node("copy_slices", _copy_slices, inputs, (index, keep), base, CopySlices)
    if base._ag is None or not base._ag.requires_grad:
        copy.edges[0] = None
    base._ag = AutogradMeta(True, copy, 0)
    base._ag.rebased = True  # its other views' histories are stale now
    _as_strided_history(target, base, index)


def _as_strided_history(view: Tensor, base: Tensor, index) -> None:
    """Give `view` the history "the region `index` of `base`", from base's current one."""
    node = _node("as_strided", _strided_view, (base,), (index, meta_of(base)), view)
    view._ag = AutogradMeta(True, node, 0)
    view._ag.base_meta = base._ag


def _made_from(node, history, limit: int = 32) -> bool:
    """Whether view node `node` was made from `history` (the base's current node): through
    its first input, a chain of views leads there. (A stale view's chain leads to the
    base's older history, which never leads to a newer node.)"""
    for _ in range(limit):
        if node is None or node is history:
            return node is history
        edges = node.edges
        if not edges:
            return False
        node = edges[0]
        if isinstance(node, Tensor):
            return False
    return False


def current_view_history(view: Tensor, meta):
    """The autograd metadata of `view` (its current `meta`) as an op taking it should see
    it: when its base got a new history from an in-place op since the view's own was set,
    the view's is regenerated as a strided view of the base's new history (as PyTorch
    regenerates a view's grad_fn), else it is `meta` itself."""
    base = view._base
    current = base._ag
    if current is None or not current.rebased or meta.base_meta is current:
        return meta
    if _made_from(meta.grad_fn, current.grad_fn):
        meta.base_meta = current
        return meta
    _as_strided_history(view, base, tocha.from_numpy(positions(view, base)).to(base.device))
    fresh = view._ag
    fresh.fw = meta.fw
    if meta.retains_grad:
        from ._record import carry_retained

        carry_retained([(view, meta)])
    return fresh
