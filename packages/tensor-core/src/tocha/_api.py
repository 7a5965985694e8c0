"""The public surface the op modules declare: functions of `tocha` and methods of Tensor.

Each op module calls `export` for its public functions; `tocha/__init__.py` re-exports
`PUBLIC`. Keeping this in one registry lets each family live in one file.
"""

from __future__ import annotations

from ._tensor import Tensor

PUBLIC: dict[str, object] = {}


def export(fn, name: str | None = None, *, method: bool | str = False, function: bool = True):
    """Publish `fn` as ``tocha.<name>`` and, with `method`, as ``Tensor.<name>`` (or as the
    method name `method` gives). Returns `fn`, so it works as a decorator."""
    name = name or fn.__name__
    if function:
        PUBLIC[name] = fn
    if method:
        setattr(Tensor, name if method is True else method, fn)
    return fn


def public(*, method: bool | str = False, name: str | None = None):
    """Decorator form of `export`."""

    def decorate(fn):
        return export(fn, name, method=method)

    return decorate
