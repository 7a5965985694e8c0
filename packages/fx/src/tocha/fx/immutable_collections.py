"""Containers that a Node's ``args`` and ``kwargs`` are frozen into, as torch.fx's."""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["immutable_dict", "immutable_list"]


def _refuse(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(
        f"'{type(self).__name__}' object does not support mutation. If you are attempting to "
        "modify the kwargs or args of a torch.fx.Node object,\ninstead create a new copy of it "
        "and assign the copy to the node:\n\n    new_args = ...  # copy and mutate args\n"
        "    node.args = new_args\n"
    )


class immutable_list(list):
    """A list that refuses in-place changes; a Node's nested list arguments are these."""

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))

    def __reduce__(self) -> Any:
        return (immutable_list, (list(self),))


class immutable_dict(dict):
    """A dict that refuses in-place changes; a Node's ``kwargs`` is one."""

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))

    def __reduce__(self) -> Any:
        return (immutable_dict, (dict(self),))
