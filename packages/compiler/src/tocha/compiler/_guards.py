"""A compiled entry's guards and call as one generated function: the fast path of a compiled
call.

``fast(args)`` checks, in one boolean expression, everything the entry was compiled under
(each argument's type, shape, dtype, device and ``requires_grad``, or its value; grad mode,
autocast, function transforms, the default dtype, the switches that turn compiled code off;
the module's parameters, buffers and training flags) and, when all hold, runs the compiled
graph and returns the call's result; otherwise it returns `MISS` and the front end takes the
general path (guard key, cache, recompilation), which is never less strict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tocha
from tocha.library import GRAD_MODE

from . import _state

__all__ = ["MISS", "fast_path", "miss"]

MISS = object()

_SCALARS = (bool, int, float, str)


def miss(args: tuple) -> Any:
    """The fast path of a function with no entry yet: always `MISS`."""
    return MISS


def fast_path(
    args: tuple,
    run: Callable,
    tail: list,
    state_guards: list,
    rebuild: Callable | None,
    depth: Any,
    dims: dict[int, list] | None = None,
) -> Callable | None:
    """``fast(args)`` for an entry captured from a call with positional `args` (None when
    they are not all tensors and plain scalars, or when autocast is on): `run` computes the
    flat outputs from the tensors, then the `tail` ones; `rebuild` makes the result from
    them (None: the result is the one tensor); `state_guards` are ``(dict, key, value)``
    triples that must still hold by identity; `depth` is the thread-local object whose
    ``depth`` counts running captures; `dims` (for an entry with a dynamic size) gives the
    shape of argument ``i`` as a list of static sizes and ``(a, c)`` for dims that are
    ``a * s + c`` of the size ``s`` (at least 2), instead of the captured shape."""
    if GRAD_MODE.autocast is not None:
        return None
    env: dict[str, Any] = {
        "_MISS": MISS,
        "_T": tocha.Tensor,
        "_G": GRAD_MODE,
        "_cfg": _state.config,
        "_OFF": _state._LOCAL,
        "_DEPTH": depth,
        "_dd": tocha.get_default_dtype(),
        "_gdd": tocha.get_default_dtype,
        "_run": run,
        "_rebuild": rebuild,
    }
    names = [f"a{i}" for i in range(len(args))]
    checks = []
    sizes: list[str] = []
    tensors = []
    for i, (name, value) in enumerate(zip(names, args)):
        if type(value) is tocha.Tensor:
            data = value._data
            env[f"_dev{i}"], env[f"_sh{i}"], env[f"_dt{i}"] = value._device, data.shape, data.dtype
            shape = f"{name}._data.shape == _sh{i}"
            if dims is not None and i in dims:
                shape, more = _shape_checks(f"{name}._data.shape", dims[i], not sizes)
                sizes += more
            # requires_grad read from the autograd metadata (the property costs a call)
            grad = (
                f"({name}._ag is not None and {name}._ag.requires_grad)"
                if value.requires_grad
                else f"({name}._ag is None or not {name}._ag.requires_grad)"
            )
            checks.append(
                f"type({name}) is _T and {name}._device is _dev{i} and "
                f"{shape} and {name}._data.dtype is _dt{i} and {grad}"
            )
            tensors.append(name)
        elif value is None or type(value) is bool:
            checks.append(f"{name} is {value!r}")
        elif type(value) in _SCALARS:
            env[f"_v{i}"] = value
            checks.append(f"type({name}) is {type(value).__name__} and {name} == _v{i}")
        else:
            return None
    checks += sizes
    checks += [
        f"_G.grad_enabled is {GRAD_MODE.grad_enabled}",
        "_G.autocast is None",
        "not _G.transforms",
        "_gdd() is _dd",
        "not _cfg.disable",
        "not _OFF.off",
        "not _DEPTH.depth",
    ]
    for k, (owner, key, value) in enumerate(state_guards):
        env[f"_o{k}"], env[f"_w{k}"] = owner, value
        checks.append(f"_o{k}.get({key!r}) is _w{k}")
    for k, t in enumerate(tail):
        env[f"_t{k}"] = t
        tensors.append(f"_t{k}")
    call = f"_run({', '.join(tensors)})"
    result = f"{call}[0]" if rebuild is None else f"_rebuild({call})"
    unpack = f"    {', '.join(names)}, = args\n" if names else ""
    condition = " and\n        ".join(checks)
    source = (
        "def fast(args):\n"
        f"    if len(args) != {len(args)}:\n"
        "        return _MISS\n"
        f"{unpack}"
        f"    if ({condition}):\n"
        f"        return {result}\n"
        "    return _MISS\n"
    )
    exec(compile(source, "<tocha.compile guards>", "exec"), env)
    return env["fast"]


def _shape_checks(shape: str, pattern: list, first: bool) -> tuple[str, list[str]]:
    """The checks of a shape against a pattern of static sizes and ``(a, c)`` dims: its
    length and static sizes, then (to run after every argument's) the dynamic dims; the first
    dynamic dim of all arguments sets ``_s``."""
    static = [f"len({shape}) == {len(pattern)}"]
    dynamic = []
    for d, p in enumerate(pattern):
        if isinstance(p, int):
            static.append(f"{shape}[{d}] == {p}")
            continue
        a, c = p
        if first:
            dynamic.append(f"({shape}[{d}] - {c}) % {a} == 0")
            dynamic.append(f"(_s := ({shape}[{d}] - {c}) // {a}) >= 2")
            first = False
        else:
            dynamic.append(f"{shape}[{d}] == {a} * _s + {c}")
    return " and ".join(static), dynamic
