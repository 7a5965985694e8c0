"""Graph utilities: hooks on the tensors that nodes save for backward."""

from __future__ import annotations

import threading

from ._graph import RECORD_EXTRAS, Node

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "Node"]


class _HookState(threading.local):
    stack: tuple = ()
    disabled_message: str | None = None


HOOKS = _HookState()


class Packed:
    """A saved tensor as its pack hook returned it, with the hook that unpacks it."""

    __slots__ = ("value", "unpack")

    def __init__(self, value, unpack):
        self.value = value
        self.unpack = unpack


def pack(tensor):
    """The form in which a node keeps `tensor`: packed by the innermost hooks, if any."""
    if HOOKS.disabled_message is not None:
        raise RuntimeError(HOOKS.disabled_message)
    pack_hook, unpack_hook = HOOKS.stack[-1]
    return Packed(pack_hook(tensor), unpack_hook)


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it pass through
    ``pack_hook(tensor) -> object`` when saved and ``unpack_hook(object) -> tensor`` when
    backward needs them."""

    def __init__(self, pack_hook, unpack_hook):
        self.hooks = (pack_hook, unpack_hook)

    def __enter__(self):
        HOOKS.stack = HOOKS.stack + (self.hooks,)
        RECORD_EXTRAS.active += 1
        return self

    def __exit__(self, *exc):
        HOOKS.stack = HOOKS.stack[:-1]
        RECORD_EXTRAS.active -= 1
        return False


class save_on_cpu(saved_tensors_hooks):
    """Context manager: tensors saved for backward inside it are kept in CPU memory (a copy,
    when `pin_memory`) and moved back to their device when backward needs them."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack(tensor):
            kept = tensor.detach().clone().cpu() if pin_memory else tensor.cpu()
            return tensor.device, kept

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager in which registering saved-tensor hooks raises `error_message`."""

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self):
        self._prev = HOOKS.disabled_message
        HOOKS.disabled_message = self.error_message
        return self

    def __exit__(self, *exc):
        HOOKS.disabled_message = self._prev
        return False
