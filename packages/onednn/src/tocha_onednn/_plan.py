"""Running a primitive on NumPy arrays: layouts, reorders and the primitive cache.

A `Plan` is one primitive with, for each of its arguments, the user's layout (the NumPy
array as it lies in memory) and the layout the primitive chose. Where they agree, the array
is handed to oneDNN without a copy; where they differ, a cached reorder primitive copies the
input into (or the output out of) a buffer the plan owns. Plans are cached by everything
that defines them (shapes, dtypes, attributes, thread count), so a training loop creates
each primitive once.
"""

from __future__ import annotations

import threading
from ctypes import byref, c_void_p

import numpy as np

from . import _dnnl as D


class _Arg:
    """One argument of a plan: its index, direction, and the reorder it needs (or None)."""

    __slots__ = ("arg", "out", "reorder", "buffer", "address")

    def __init__(self, lib, pd, arg, user_md, out):
        self.arg = arg
        self.out = out
        self.reorder = None
        self.buffer = None
        chosen = lib.lib.dnnl_primitive_desc_query_md(pd, D.QUERY_EXEC_ARG_MD, arg)
        if user_md is not None and not lib.lib.dnnl_memory_desc_equal(user_md.handle, chosen):
            src, dst = (chosen, user_md.handle) if out else (user_md.handle, chosen)
            rpd = c_void_p()
            lib.check(
                "dnnl_reorder_primitive_desc_create",
                byref(rpd),
                src,
                lib.engine,
                dst,
                lib.engine,
                lib.attr,
            )
            self.reorder = D.Primitive(lib, rpd, (D.ARG_SRC, D.ARG_DST))
            size = lib.lib.dnnl_memory_desc_get_size(chosen)
            self.buffer = np.empty(max(size, 1), np.uint8)
        self.address = self.buffer.ctypes.data if self.buffer is not None else 0


class Plan:
    """A primitive and its arguments' layouts; `run` executes it on NumPy arrays.

    `args` is a sequence of ``(DNNL_ARG_*, user memory descriptor or None, is_output)``.
    """

    __slots__ = ("lib", "prim", "args", "impl", "lock", "workspace_size")

    def __init__(self, lib: D.Library, pd: c_void_p, args):
        self.lib = lib
        # the reorder buffers are the plan's own: one call at a time (ctypes releases the GIL)
        self.lock = threading.Lock()
        self.args = [_Arg(lib, pd, arg, md, out) for arg, md, out in args]
        self.prim = D.Primitive(lib, pd, [a.arg for a in self.args])
        self.impl = self.prim.impl
        self.workspace_size = 0

    def run(self, *arrays: np.ndarray) -> None:
        """Execute on `arrays`, one per argument in the plan's order; outputs are written."""
        with self.lock:
            self._run(arrays)

    def _run(self, arrays) -> None:
        addresses = []
        for spec, array in zip(self.args, arrays):
            if spec.reorder is None:
                addresses.append(array.ctypes.data)
            else:
                if not spec.out:
                    spec.reorder.run(array.ctypes.data, spec.address)
                addresses.append(spec.address)
        self.prim.run(*addresses)
        for spec, array in zip(self.args, arrays):
            if spec.out and spec.reorder is not None:
                spec.reorder.run(spec.address, array.ctypes.data)


class Cache:
    """Plans by key; a key whose primitive oneDNN cannot create maps to None (declined).

    At most `limit` plans are kept (a program whose shapes keep changing, such as sequences
    of every length, would otherwise hold buffers for each): the oldest goes first.
    """

    def __init__(self, limit: int = 512):
        self.plans: dict = {}
        self.limit = limit

    def get(self, key, build):
        plan = self.plans.get(key, self)
        if plan is self:
            try:
                plan = build()
            except D.DnnlError:
                plan = None
            if len(self.plans) >= self.limit:
                self.plans.pop(next(iter(self.plans)), None)
            self.plans[key] = plan
        return plan


def channel_blocked(lib: D.Library, shape) -> D.MemoryDesc:
    """The layout oneDNN's convolutions give an activation of `shape` on this CPU (channels
    in blocks of 8 or 16), which its fast batch norms and poolings run on; C order where
    there is none."""
    if not 3 <= len(shape) <= 5:
        return D.shape_desc(lib, shape)
    c, ones = shape[1], (1,) * (len(shape) - 2)
    act, weights = D.MemoryDesc.any(lib, shape), D.MemoryDesc.any(lib, (c, c, *ones))
    zeros = D.dims([0] * (len(shape) - 2))
    try:
        pd = D.create_pd(
            lib,
            "dnnl_convolution_forward_primitive_desc_create",
            D.FORWARD_TRAINING,
            D.CONVOLUTION_DIRECT,
            act.handle,
            weights.handle,
            None,
            act.handle,
            D.dims([1] * (len(shape) - 2)),
            zeros,
            zeros,
            zeros,
        )
    except D.DnnlError:
        return D.shape_desc(lib, shape)
    try:
        md = lib.lib.dnnl_primitive_desc_query_md(pd, D.QUERY_EXEC_ARG_MD, D.ARG_DST)
        return D.MemoryDesc.clone(lib, md)
    finally:
        lib.lib.dnnl_primitive_desc_destroy(pd)
