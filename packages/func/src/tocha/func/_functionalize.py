"""`functionalize`, as `torch.func.functionalize`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["functionalize"]

_REMOVE = ("mutations", "mutations_and_views")


def functionalize(func: Callable[..., Any], *, remove: str = "mutations") -> Callable[..., Any]:
    """`func` with PyTorch's functionalize contract: the same outputs, and the same
    mutations of its inputs, as the original. tocha runs `func` eagerly as it is (its
    in-place ops inside are not rewritten into out-of-place ones, which only a traced graph
    would show); `remove` is ``"mutations"`` or ``"mutations_and_views"``.

    Example:
        >>> f = functionalize(lambda x: x.add_(1))
        >>> f(tocha.ones(2))
        tensor([2., 2.])
    """
    if remove not in _REMOVE:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for "
            f"remove={remove}. Valid options are:\n"
            "     remove='mutations': all inplace and out= operators will be removed from the "
            "program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing "
            "operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n"
        )

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper
