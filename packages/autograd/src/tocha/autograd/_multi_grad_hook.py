"""`register_multi_grad_hook`: one hook over the gradients of several tensors."""

from __future__ import annotations

from ._running import executed_nodes, node_of, queue_callback, running_frame

_MODES = ("all", "any")


class MultiGradHandle:
    """Removes the hooks `register_multi_grad_hook` put on each tensor (also as a context
    manager, on exit)."""

    def __init__(self, handles: tuple):
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode: str = "all") -> MultiGradHandle:
    """Register `fn` over the gradients of `tensors`, per backward.

    ``mode="all"``: ``fn(grads)`` runs once the gradients of all of `tensors` that this
    backward computes are known, with one entry per tensor (None for those it does not
    compute; at the latest when the backward ends). ``mode="any"``: ``fn(grad)`` runs with
    the first gradient computed of any of them, once per backward. Returns a handle whose
    ``remove()`` unregisters it.
    """
    if mode not in _MODES:
        raise ValueError(f"Expects mode to be one of {_MODES} but got {mode}")
    tensors = tuple(tensors)
    if mode == "any":
        return _register_any(tensors, fn)
    for t in tensors:
        if not t.requires_grad:
            raise AssertionError("Expected gradient function to be set")
    return _register_all(tensors, fn)


def _register_all(tensors: tuple, fn) -> MultiGradHandle:
    pending: dict = {}  # engine frame -> [gradients so far, indices still awaited]

    def _finish(frame) -> None:
        """The backward is over: a tensor awaited got no gradient (None) after all."""
        state = pending.pop(frame, None)
        if state is not None:
            fn(tuple(state[0]))

    def hook_for(i: int):
        def hook(grad):
            frame = running_frame()
            state = pending.get(frame)
            if state is None:
                executed = executed_nodes(frame)
                awaited = {j for j, t in enumerate(tensors) if node_of(t) in executed}
                state = pending[frame] = [[None] * len(tensors), awaited]
                queue_callback(lambda: _finish(frame))
            grads, awaited = state
            grads[i] = grad
            awaited.discard(i)
            if not awaited:
                del pending[frame]
                fn(tuple(grads))

        return hook

    return MultiGradHandle(tuple(t.register_hook(hook_for(i)) for i, t in enumerate(tensors)))


def _register_any(tensors: tuple, fn) -> MultiGradHandle:
    fired: set = set()  # the engine frames in which `fn` ran

    def hook(grad):
        frame = running_frame()
        if frame in fired:
            return
        fired.add(frame)
        queue_callback(lambda: fired.discard(frame))
        fn(grad)

    return MultiGradHandle(tuple(t.register_hook(hook) for t in tensors if t.requires_grad))
