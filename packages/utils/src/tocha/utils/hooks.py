"""tocha.utils.hooks, as ``torch.utils.hooks``: the handle that removes a registered hook."""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

__all__ = ["RemovableHandle", "unserializable_hook"]


def _reference(hooks: dict) -> Callable[[], dict | None]:
    """A weak reference to `hooks` (the handle must not keep a dict of hooks alive), or a
    strong one for a plain ``dict``, which Python cannot reference weakly."""
    try:
        return weakref.ref(hooks)
    except TypeError:
        return lambda: hooks


class RemovableHandle:
    """A handle that removes a hook from the dict it was registered in, as
    ``torch.utils.hooks.RemovableHandle``.

    The hook is stored as ``hooks_dict[handle.id]`` (and in each of `extra_dict`, a dict or
    a list of dicts, under the same id); ``remove()`` deletes those entries, once, and only
    while the dicts are alive. Used as a context manager, the handle removes the hook on
    exit. Ids are unique among the handles of a process, unpickled ones included.

    Examples:
        >>> hooks = OrderedDict()
        >>> handle = RemovableHandle(hooks)
        >>> hooks[handle.id] = print
        >>> handle.remove()
        >>> len(hooks)
        0
    """

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = _reference(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extras = extra_dict if isinstance(extra_dict, list) else [extra_dict]
        self.extra_dict_ref = tuple(_reference(d) for d in extras if d is not None)

    def remove(self) -> None:
        """Delete the hook from its dicts (nothing if it is gone or they are)."""
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            hooks = ref()
            if hooks is not None and self.id in hooks:
                del hooks[self.id]

    def __getstate__(self) -> tuple:
        extras = tuple(ref() for ref in self.extra_dict_ref)
        return self.hooks_dict_ref(), self.id, extras

    def __setstate__(self, state: tuple) -> None:
        hooks, self.id, extras = state
        self.hooks_dict_ref = _reference(OrderedDict() if hooks is None else hooks)
        self.extra_dict_ref = tuple(_reference(d) for d in extras if d is not None)
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def unserializable_hook(f: Callable) -> Callable:
    """Mark a tensor hook as one that saving a tensor may leave out without a warning."""
    f.__torch_unserializable__ = True  # type: ignore[attr-defined]
    return f
