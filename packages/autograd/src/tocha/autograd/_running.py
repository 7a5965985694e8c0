"""The backward running on this thread, and the callbacks queued to run when it finishes.

The engine keeps no per-backward bookkeeping for these (a plain backward pays nothing): the
running backward is found on demand as the innermost engine frame on this thread's call
stack, which also tells nested backwards apart. The engine checks `QUEUED` once per
backward and, when it holds anything, runs what its own frame queued (`finish`).
"""

from __future__ import annotations

import sys

from tocha import Tensor

from ._graph import accumulator_of

# Engine frame -> the callbacks queued during that backward, in order.
QUEUED: dict = {}

_ENGINE_CODE: list = []  # the engine entry's code object, set by `set_engine`


def set_engine(entry) -> None:
    """Name the engine's entry function, whose frames are the running backwards."""
    _ENGINE_CODE[:] = [entry.__code__]


def running_frame():
    """The engine frame of the innermost backward running on this thread, or None."""
    code = _ENGINE_CODE[0]
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is code:
            return frame
        frame = frame.f_back
    return None


def queue_callback(fn) -> None:
    """Run `fn()` once the backward now running on this thread has finished (after every
    node and hook of its graph). Only valid during a backward."""
    frame = running_frame()
    if frame is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    QUEUED.setdefault(frame, []).append(fn)


def finish(frame) -> None:
    """Run the callbacks `frame`'s backward queued, in order, and those they queue; the
    rest are dropped when one raises."""
    while frame in QUEUED:
        callbacks = QUEUED.pop(frame)
        try:
            for fn in callbacks:
                fn()
        except BaseException:
            discard(frame)
            raise


def discard(frame) -> None:
    """Drop the callbacks of a backward that failed."""
    QUEUED.pop(frame, None)


class ExecutionEngine:
    """``Variable._execution_engine``: the engine as programs reach it to queue a callback
    at the end of the running backward."""

    @staticmethod
    def queue_callback(callback) -> None:
        """Run `callback()` once the running backward has finished."""
        queue_callback(callback)

    @staticmethod
    def is_checkpoint_valid() -> bool:
        """Whether checkpointed code may run a backward now (always, in tocha)."""
        return True


def executed_nodes(frame) -> set:
    """The nodes that the backward of engine frame `frame` runs: those reachable from its
    roots and, when it was given inputs, on a path to one of theirs."""
    names = frame.f_locals
    roots = [node_of(t) for t in names["roots"]]
    inputs = names["inputs"]
    reached = _reachable(roots)
    if inputs is None:
        return reached
    targets = {node_of(t) for t in inputs}
    leading = set()  # the reached nodes from which a target can be reached
    for node in _postorder(roots):
        if node in targets or any(_resolved(e) in leading for e in node.edges):
            leading.add(node)
    return leading


def node_of(t):
    """The node that receives `t`'s gradient: its grad_fn, or a leaf's AccumulateGrad (a
    gradient edge's own node)."""
    if not isinstance(t, Tensor):
        return t.node
    meta = t._ag
    return meta.grad_fn if meta.grad_fn is not None else accumulator_of(t)


def _resolved(edge):
    """An edge as a node (a leaf tensor still standing for its AccumulateGrad: that), or
    None."""
    if edge is None or not isinstance(edge, Tensor):
        return edge
    return accumulator_of(edge) if edge._ag is not None else None


def _reachable(roots) -> set:
    seen = set(roots)
    stack = list(roots)
    while stack:
        for edge in stack.pop().edges:
            node = _resolved(edge)
            if node is not None and node not in seen:
                seen.add(node)
                stack.append(node)
    return seen


def _postorder(roots) -> list:
    """The nodes reachable from `roots`, each after every node its edges lead to."""
    order = []
    seen = set(roots)
    for root in roots:
        stack = [(root, iter(root.edges))]
        while stack:
            node, edges = stack[-1]
            for edge in edges:
                child = _resolved(edge)
                if child is not None and child not in seen:
                    seen.add(child)
                    stack.append((child, iter(child.edges)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order
