"""Batched tensors: what a function under `vmap` sees in place of its mapped inputs.

A `BatchedTensor` holds the whole batch in ``_physical``, a backend array whose leading
dimensions are the batch dimensions of its vmap levels (``_levels``, outermost first, one
dimension each). Per example it looks like ``_data``: a read-only view of the first example,
so that the Python code of every op (argument checks, dims, shapes, dtypes) sees the logical
tensor; the batching layer (`_batching`) replaces each op's result by the batched one.
"""

from __future__ import annotations

import threading

import numpy as np

from tocha import Tensor
from tocha.autograd import forward_ad
from tocha.autograd.transforms import watch
from tocha.library import GRAD_MODE, backend_of, disabled_torch_function_impl, wrap


class _Levels(threading.local):
    """The vmap levels active in this thread, outermost first, and each one's randomness."""

    def __init__(self):
        self.active: list = []
        self.randomness: dict = {}
        self.next_id = 0
        self.unbatched_draws = 0  # random draws under randomness="different" no rule batched
        self.draw_state = None  # the CPU generator's state before the last of those draws


VMAP = _Levels()


class BatchedTensor(Tensor):
    """A tensor batched over the vmap levels ``_levels`` (see the module docstring)."""

    __slots__ = ("_physical", "_levels")
    __torch_function__ = disabled_torch_function_impl  # its calls are plain tensor calls

    def __repr__(self) -> str:
        value = wrap(self._physical, self._device)
        return f"BatchedTensor(levels={list(self._levels)}, value=\n{value})"

    def __add__(self, other):
        return _summed(Tensor.__add__, self, other)

    def __radd__(self, other):
        return _summed(Tensor.__radd__, self, other)

    def __bool__(self) -> bool:
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
            "control flow. We don't support that yet, please shape your function without it "
            "(for example with tocha.where)."
        )

    def item(self):
        raise _reads_a_value()

    def tolist(self):
        raise _has_no_storage()

    def numpy(self, *, force: bool = False):
        raise _has_no_storage()

    def __index__(self) -> int:
        raise _reads_a_value()

    def __int__(self) -> int:
        raise _reads_a_value()

    def __float__(self) -> float:
        raise _reads_a_value()

    def detach(self) -> Tensor:
        return batched(self._physical, self._levels, self._device)

    def data_ptr(self) -> int:
        raise RuntimeError(
            "Cannot access data pointer of Tensor (e.g. FakeTensor, FunctionalTensor). If "
            "you're using torch.compile/export/fx, it is likely that we are erroneously "
            "tracing into a custom kernel. To fix this, please wrap the custom kernel into an "
            "opaque custom op."
        )


def _summed(add, a, b):
    """``a + b`` for a batched tensor, also in a backward through vmap after some of its
    levels exited (the gradients of one tensor from several branches). Over a level both
    are batched over, or one still active, they add example by example (the batching layer
    on, even outside vmap). A level that has exited and that only one is batched over means
    the other is the gradient of a tensor all its examples shared (a parameter, say): that
    one is first summed over the level's examples, as a leaf's gradient is (else the other
    would count once per example)."""
    if type(a) is not BatchedTensor or type(b) is not BatchedTensor or a._levels != b._levels:
        a, b = _shared_levels(a, b), _shared_levels(b, a)
    if GRAD_MODE.transforms:
        return add(a, b)
    GRAD_MODE.transforms += 1
    try:
        return add(a, b)
    finally:
        GRAD_MODE.transforms -= 1


def _shared_levels(t, other):
    """`t` summed over the exited levels that `other` is not batched over."""
    if type(t) is not BatchedTensor:
        return t
    theirs = other._levels if type(other) is BatchedTensor else ()
    active = VMAP.active
    drop = [level for level in t._levels if level not in active and level not in theirs]
    return examples_summed(t, drop) if drop else t


def examples_summed(t: BatchedTensor, levels) -> Tensor:
    """`t` summed over the examples of `levels` (some of its own, all exited); the sum is
    differentiable, forward and backward, when `t` carries a tangent or a history."""
    if t.requires_grad or forward_ad.unpack_dual(t).tangent is not None:
        from ._vmap import _leave

        GRAD_MODE.transforms += 1  # the sums of a tensor still batched over other levels
        try:
            for level in reversed(levels):
                size = t._physical.shape[t._levels.index(level)]
                t = _leave(t, 0, level, size, "grad").sum(0)
        finally:
            GRAD_MODE.transforms -= 1
        return t
    physical = t._physical.sum(axis=tuple(t._levels.index(level) for level in levels))
    remaining = tuple(level for level in t._levels if level not in levels)
    if remaining:
        return batched(physical, remaining, t._device)
    return wrap(backend_of(t._device).asarray(physical), t._device)


def _reads_a_value() -> RuntimeError:
    """The error of reading a Python number from a tensor vmapped over (item, int, float)."""
    return RuntimeError(
        "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
        "calling .item() on a Tensor, please try to rewrite what you're doing with other "
        "operations."
    )


def _has_no_storage() -> RuntimeError:
    return RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")


def batched(physical, levels: tuple, dev) -> BatchedTensor:
    """A BatchedTensor around `physical` (leading dims: one per level of `levels`)."""
    out = object.__new__(BatchedTensor)
    k = len(levels)
    if 0 in physical.shape[:k]:  # an empty batch: ops see a stand-in example
        example = backend_of(dev).xp.zeros(physical.shape[k:], physical.dtype)
    else:
        example = physical[0] if k == 1 else physical[(0,) * k]
    if type(example) is np.ndarray:  # a view of its own (a 0-dim example is a NumPy scalar)
        example.flags.writeable = False
    out._data = example
    out._device = dev
    out._ag = None
    out._base = None
    out._vc = None
    out._physical = physical
    out._levels = levels
    watch(out)
    return out


def levels_of(t) -> tuple:
    return t._levels if type(t) is BatchedTensor else ()


def aligned(t, levels: tuple):
    """`t`'s values with one leading dim per level of `levels` (a superset of its own, in the
    same order): size 1 where `t` is not batched over a level."""
    if type(t) is not BatchedTensor:
        data = t._data
        return data.reshape((1,) * len(levels) + data.shape)
    own = t._levels
    if own == levels:
        return t._physical
    physical = t._physical
    shape = []
    k = 0
    for level in levels:
        if k < len(own) and own[k] == level:
            shape.append(physical.shape[k])
            k += 1
        else:
            shape.append(1)
    return physical.reshape(tuple(shape) + physical.shape[len(own) :])


def batch_shape(tensors, levels: tuple) -> tuple:
    """The size of each level over `tensors` (1 where none is batched over it)."""
    sizes = [1] * len(levels)
    for t in tensors:
        if type(t) is not BatchedTensor:
            continue
        for k, level in enumerate(t._levels):
            sizes[levels.index(level)] = t._physical.shape[k]
    return tuple(sizes)


def union_levels(tensors) -> tuple:
    """The levels any of `tensors` is batched over (other values are skipped), outermost
    first (a level's id is larger than those of the levels around it, so the order holds
    after the levels exit, in a backward through vmap)."""
    levels = ()
    for t in tensors:
        if type(t) is BatchedTensor and t._levels != levels:
            levels = t._levels if not levels else tuple(sorted({*levels, *t._levels}))
    return levels
