"""NumPy's keyword names, as PyTorch accepts them: ``axis`` for ``dim`` and ``keepdims``
for ``keepdim`` in every function and Tensor method with those parameters
(``x.sum(axis=0, keepdims=True)``), but those PyTorch writes in Python, which take no alias
(`NO_ALIASES`). `tocha._ops` runs `add_aliases` once every op module has exported;
`tocha.linalg`, `tocha.fft` and `tocha.special`, whose functions PyTorch also writes natively,
run `alias_module` on themselves.
"""

from __future__ import annotations

import functools
import types

from .._api import PUBLIC
from .._tensor import Tensor

__all__ = ["add_aliases", "alias_module"]

# PyTorch's functions written in Python (torch.functional, torch.Tensor's Python methods):
# they take no `axis` / `keepdims`.
NO_ALIASES = frozenset({"norm", "split", "unique", "unique_consecutive", "stft", "istft"})


def _with_aliases(fn):
    @functools.wraps(fn)
    def accepting_aliases(*args, **kwargs):
        if kwargs:
            if "axis" in kwargs:
                if "dim" in kwargs:
                    raise TypeError(f"{fn.__name__}() got multiple values for argument 'dim'")
                kwargs["dim"] = kwargs.pop("axis")
            if "keepdims" in kwargs:
                if "keepdim" in kwargs:
                    raise TypeError(f"{fn.__name__}() got multiple values for argument 'keepdim'")
                kwargs["keepdim"] = kwargs.pop("keepdims")
        return fn(*args, **kwargs)

    return accepting_aliases


def _takes_dim(fn) -> bool:
    """Whether `fn` (a Python function) has a `dim` or `keepdim` parameter and no `axis` of
    its own (read from its code object: `inspect.signature` would cost `import tocha` tens
    of milliseconds)."""
    if not isinstance(fn, types.FunctionType):
        return False
    while isinstance(getattr(fn, "__wrapped__", None), types.FunctionType):
        fn = fn.__wrapped__  # a hooked function's (`autocast_op`) parameters are its own
    code = fn.__code__
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    return ("dim" in names or "keepdim" in names) and "axis" not in names


def add_aliases() -> None:
    """Wrap every exported function and Tensor method that has `dim` or `keepdim` (once:
    a function both a method and a function gets one wrapper)."""
    wrapped: dict[int, object] = {}

    def wrapper_of(fn):
        if id(fn) not in wrapped:
            wrapped[id(fn)] = _with_aliases(fn)
        return wrapped[id(fn)]

    for name, fn in list(PUBLIC.items()):
        if name not in NO_ALIASES and _takes_dim(fn):
            PUBLIC[name] = wrapper_of(fn)
    for name, fn in list(vars(Tensor).items()):
        if not name.startswith("_") and name not in NO_ALIASES and _takes_dim(fn):
            setattr(Tensor, name, wrapper_of(fn))


def alias_module(namespace: dict) -> None:
    """Wrap the functions of a module's ``__all__`` (`namespace` is its globals) that have
    `dim` or `keepdim`."""
    for name in namespace["__all__"]:
        fn = namespace.get(name)
        if name not in NO_ALIASES and _takes_dim(fn):
            namespace[name] = _with_aliases(fn)
