"""Tensor methods take no ``out=``: PyTorch's ``x.add(y, out=z)`` raises ``TypeError: add()
got an unexpected keyword argument 'out'``, while ``torch.add(x, y, out=z)`` writes into `z`.

Op modules publish one function as both ``tocha.add`` and ``Tensor.add``.
`drop_out_from_methods` (run once, when every method is in place) gives each method whose
function has an ``out`` parameter a copy of that function with ``out`` renamed to a private
name: the copy runs the same bytecode (a call costs what it did) and Python itself refuses
``out=``, with that message.
"""

from __future__ import annotations

import functools
import types

from .._tensor import Tensor

__all__ = ["drop_out_from_methods"]

# The name `out` takes in a method's copy: private, so left out of the stubs.
HIDDEN = "_function_only_out"


def _without_out(fn: types.FunctionType) -> types.FunctionType | None:
    """A copy of `fn` whose ``out`` parameter is renamed `HIDDEN` (a keyword can no longer
    name it), or None when `fn` has no ``out``."""
    code = fn.__code__
    if "out" not in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
        return None
    renamed = code.replace(
        co_varnames=tuple(HIDDEN if n == "out" else n for n in code.co_varnames),
        co_cellvars=tuple(HIDDEN if n == "out" else n for n in code.co_cellvars),
    )
    copy = types.FunctionType(
        renamed,
        fn.__globals__,
        fn.__name__,
        fn.__defaults__,
        fn.__closure__,
    )
    kwdefaults = fn.__kwdefaults__ or {}
    copy.__kwdefaults__ = {HIDDEN if k == "out" else k: v for k, v in kwdefaults.items()}
    copy.__dict__.update(fn.__dict__)
    copy.__qualname__, copy.__module__, copy.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    copy.__annotations__ = {HIDDEN if k == "out" else k: v for k, v in fn.__annotations__.items()}
    return copy


def _rewrapped(wrapper: types.FunctionType, inner, copy) -> types.FunctionType:
    """A copy of `wrapper` (a closure over `inner`, such as the ``axis=`` alias wrappers)
    closing over `copy` instead."""
    cells = tuple(
        types.CellType(copy) if cell.cell_contents is inner else cell
        for cell in wrapper.__closure__ or ()
    )
    new = types.FunctionType(
        wrapper.__code__, wrapper.__globals__, wrapper.__name__, wrapper.__defaults__, cells
    )
    return functools.update_wrapper(new, copy)


def drop_out_from_methods() -> None:
    """Replace every Tensor method that has an ``out`` parameter by a copy that refuses it
    (the functions keep it)."""
    for name, fn in list(vars(Tensor).items()):
        if not isinstance(fn, types.FunctionType):
            continue
        inner = getattr(fn, "__wrapped__", None)
        if isinstance(inner, types.FunctionType):
            copy = _without_out(inner)
            if copy is not None:
                setattr(Tensor, name, _rewrapped(fn, inner, copy))
        else:
            copy = _without_out(fn)
            if copy is not None:
                setattr(Tensor, name, copy)
