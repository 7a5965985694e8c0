"""Tensor methods take no ``out=``: PyTorch's ``x.add(y, out=z)`` raises ``TypeError: add()
got an unexpected keyword argument 'out'``, while ``torch.add(x, y, out=z)`` writes into `z`.

Op modules publish one function as both ``tocha.add`` and ``Tensor.add``.
`drop_out_from_methods` (run once, when every method is in place) gives each method whose
function has an ``out`` parameter a copy of that function with ``out`` renamed to a private
name: the copy runs the same bytecode (a call costs what it did) and Python itself refuses
``out=``, with that message. A function may also name trailing positional parameters that
only its function form has (``FUNCTION_ONLY``, such as mm's CUDA-only ``out_dtype``): the
method's copy makes them private keywords, so a method call passing them is refused as
PyTorch's ``mm() takes 1 positional argument but 2 were given``.
"""

from __future__ import annotations

import functools
import types

from .._tensor import Tensor

__all__ = ["drop_out_from_methods"]

# The name `out` takes in a method's copy: private, so left out of the stubs.
HIDDEN = "_function_only_out"

# Trailing positional parameters of a function that its method has not, by function name.
FUNCTION_ONLY = {name: ("out_dtype",) for name in ("mm", "bmm", "addmm", "baddbmm")}


def _without_out(fn: types.FunctionType) -> types.FunctionType | None:
    """A copy of `fn` whose ``out`` parameter (and its `FUNCTION_ONLY` ones, made keyword-only)
    is renamed private (a keyword can no longer name it), or None when `fn` has none."""
    code = fn.__code__
    params = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    moved = FUNCTION_ONLY.get(fn.__name__, ())
    hidden = {name: f"_function_only_{name}" for name in ("out", *moved) if name in params}
    if not hidden:
        return None
    positional = code.co_argcount - len(moved)
    if code.co_varnames[positional : code.co_argcount] != moved:
        raise TypeError(f"{fn.__name__}: {moved} must be its last positional parameters")
    renamed = code.replace(
        co_argcount=positional,
        co_kwonlyargcount=code.co_kwonlyargcount + len(moved),
        co_varnames=tuple(hidden.get(n, n) for n in code.co_varnames),
        co_cellvars=tuple(hidden.get(n, n) for n in code.co_cellvars),
    )
    defaults, kwdefaults = fn.__defaults__, {}
    if moved:
        kwdefaults = dict(zip((hidden[n] for n in moved), defaults[-len(moved) :], strict=True))
        defaults = defaults[: -len(moved)] or None
    copy = types.FunctionType(renamed, fn.__globals__, fn.__name__, defaults, fn.__closure__)
    kwdefaults.update({hidden.get(k, k): v for k, v in (fn.__kwdefaults__ or {}).items()})
    copy.__kwdefaults__ = kwdefaults
    copy.__dict__.update(fn.__dict__)
    copy.__qualname__, copy.__module__, copy.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    copy.__annotations__ = {hidden.get(k, k): v for k, v in fn.__annotations__.items()}
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


def _refusing_out(fn: types.FunctionType) -> types.FunctionType | None:
    """`fn` whose innermost function (below its wrappers: ``axis=`` aliases, autocast hooks)
    refuses ``out``, each wrapper rebuilt around the copy; None when it has no ``out``."""
    inner = getattr(fn, "__wrapped__", None)
    if isinstance(inner, types.FunctionType):
        copy = _refusing_out(inner)
        return None if copy is None else _rewrapped(fn, inner, copy)
    return _without_out(fn)


def drop_out_from_methods() -> None:
    """Replace every Tensor method that has an ``out`` parameter by a copy that refuses it
    (the functions keep it)."""
    for name, fn in list(vars(Tensor).items()):
        if isinstance(fn, types.FunctionType):
            copy = _refusing_out(fn)
            if copy is not None:
                setattr(Tensor, name, copy)
