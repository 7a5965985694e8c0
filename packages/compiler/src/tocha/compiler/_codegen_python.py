"""A list of graph nodes turned into one generated Python function of kernel calls.

The function takes and returns backend arrays: each primitive node becomes a direct call of
its kernel (``op.kernels[device]``), with no Tensor, dispatcher or autograd in between; a
fused group (`_fusion.py`) becomes one call of its generated kernel; a value the program read
into Python is checked (`ValueGuardFailed` when it differs); a write-back copies into the
input's array. Temporaries are deleted after their last use, so peak memory is eager's.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

import tocha
from tocha.export import ops
from tocha.fx import Node
from tocha.fx.experimental.proxy_tensor import python_value
from tocha.library import REGISTRY, generator_stream

from ._dynamic import NotGeneral, Sym, SymFloat

__all__ = ["GeneratedFunction", "ValueGuardFailed", "generate"]


class ValueGuardFailed(Exception):
    """A value the program read from a tensor into Python differs from the captured one."""


class GeneratedFunction:
    """A generated function (`fn`), its source (`source`) and the input positions it writes
    back into (`writes`)."""

    def __init__(self, fn: Callable, source: str, writes: list[int]) -> None:
        self.fn = fn
        self.source = source
        self.writes = writes


def generate(
    name: str,
    nodes: list[Node],
    params: list[Node],
    results: list[Any],
    device: Any,
    constants: dict[str, Any],
    fused: dict[Node, Any] | None = None,
    stash: list[Node] | None = None,
    bare: bool = False,
    kernels: dict[str, Callable] | None = None,
    symbols: dict[Node, list] | None = None,
) -> GeneratedFunction:
    """``def name(*params) -> tuple(results)`` computing `nodes` in order. `results` holds
    nodes or Python values; `constants` maps get_attr targets to their tensors; `fused` maps
    the last node of each fused group to the group (`_fusion.FusedGroup`), whose other nodes
    are skipped. With `stash`, the function takes one more argument, a list, and appends
    those values to it; with `bare`, its one result is returned alone (not in a tuple).
    `kernels` maps primitive names to kernels that replace theirs (`_codegen_rows`).
    `symbols` maps nodes to their dims that follow a dynamic size (`_dynamic.fit`): arguments
    written as `Sym` are computed from the size, read from the first such parameter."""
    names: dict[Node, str] = {}
    env: dict[str, Any] = {"_asarray": _asarray, "_read": _read, "_kernels": kernels or {}}
    lines: list[str] = []
    for i, node in enumerate(params):
        names[node] = f"a{i}"
    inputs_of = {node: i for i, node in enumerate(params)}
    writes: list[int] = []
    skipped = set()
    if fused:
        for group in fused.values():
            skipped.update(group.nodes[:-1])
    emitted: list[tuple[list[str], list[Node]]] = []
    for node in nodes:
        if node in skipped:
            continue
        var = f"t{len(names)}"
        if fused and node in fused:
            group = fused[node]
            kname = f"_k{len(env)}"
            env[kname] = group.kernel
            args = ", ".join(_ref(a, names, env) for a in group.inputs)
            outs = [f"t{len(names) + k}" for k in range(len(group.outputs))]
            for k, out in enumerate(group.outputs):
                names[out] = outs[k]
            emitted.append(([f"{', '.join(outs)}, = {kname}({args})"], [*group.inputs]))
            continue
        code, used = _emit(node, var, names, env, constants, device, inputs_of, writes)
        if node.op != "call_function" or node.target not in (python_value, tocha.Tensor.copy_):
            names[node] = var
        emitted.append((code, used))
    ret = ", ".join(_ref(r, names, env) for r in results)
    last_use: dict[str, int] = {}
    for k, (_, used) in enumerate(emitted):
        for u in used:
            if u in names:
                last_use[names[u]] = k
    stash = stash or []
    returned = {names[r] for r in [*results, *stash] if isinstance(r, Node) and r in names}
    kept = set(names[p] for p in params) | returned
    dead_after: dict[int, list[str]] = {}
    for var, k in last_use.items():
        if var not in kept:
            dead_after.setdefault(k, []).append(var)
    for k, (code, _) in enumerate(emitted):
        lines.extend(code)
        if k in dead_after:
            lines.append(f"del {', '.join(sorted(dead_after[k]))}")
    args = ", ".join([*(names[p] for p in params), *(["_box"] if stash else [])])
    if stash:
        lines.append(f"_box.extend(({', '.join(names[n] for n in stash)},))")
    if env.get("_sym"):
        lines.insert(0, _size_line(params, names, symbols or {}))
    body = "\n".join(f"    {line}" for line in lines) or "    pass"
    ret = ret if bare else f"({ret}{',' if results else ''})"
    source = f"def {name}({args}):\n{body}\n    return {ret}\n"
    exec(compile(source, f"<tocha.compile {name}>", "exec"), env)
    return GeneratedFunction(env[name], source, writes)


def _emit(
    node: Node,
    var: str,
    names: dict,
    env: dict,
    constants: dict,
    device: Any,
    inputs_of: dict,
    writes: list,
) -> tuple[list[str], list[Node]]:
    used = list(node.all_input_nodes)
    if node.op == "get_attr":
        cname = f"_c{len(env)}"
        env[cname] = constants[node.target]._data
        return [f"{var} = {cname}"], used
    target = node.target
    if target is operator.getitem:
        return [f"{var} = {_ref(node.args[0], names, env)}[{node.args[1]!r}]"], used
    if target is python_value:
        tensor, kind, *rest = node.args
        extra = _ref(tuple(rest[:-1]), names, env)
        expected = _ref(rest[-1], names, env)
        return [f"_read({_ref(tensor, names, env)}, {kind!r}, {extra}, {expected})"], used
    if target is tocha.Tensor.copy_:
        dst, src = node.args
        writes.append(inputs_of[dst])
        xp = "_xp"
        env[xp] = np if device.type == "cpu" else tocha.library.backend_of(device).xp
        return [f"{xp}.copyto({names[dst]}, {names[src]})"], used
    if target is generator_stream:
        env["_stream"] = generator_stream
        return [
            f"{var} = _stream({_ref(node.args[0], names, env)}, {_ref(node.args[1], names, env)})"
        ], used
    if not isinstance(target, ops.Primitive):
        raise TypeError(f"tocha.compile: cannot generate code for {target!r}")
    kname = f"_k_{target.name}"
    if kname not in env:
        replaced = env["_kernels"].get(target.name)
        env[kname] = replaced or REGISTRY[target.name].kernels[device]
    args = [_ref(a, names, env) for a in node.args]
    args += [f"{k}={_ref(v, names, env)}" for k, v in node.kwargs.items()]
    call = f"{kname}({', '.join(args)})"
    val = node.meta.get("val")
    if isinstance(val, tocha.Tensor) and val.dim() == 0:
        call = f"_asarray({call})"
    return [f"{var} = {call}"], used


def _size_line(params: list[Node], names: dict, symbols: dict) -> str:
    """``_s = ...``: the dynamic size, from the first parameter with a dim that follows it."""
    for node in params:
        for dim, a, c in symbols.get(node, ()):
            if a > 0:
                size = f"{names[node]}.shape[{dim}]"
                size = f"({size} - {c})" if c else size
                return f"_s = {size} // {a}" if a != 1 else f"_s = {size}"
    raise NotGeneral("a generated function has no input whose size gives the dynamic size")


def _ref(value: Any, names: dict, env: dict) -> str:
    """Python source for an argument."""
    if isinstance(value, Node):
        return names[value]
    if isinstance(value, (Sym, SymFloat)):
        env["_sym"] = True
        return value.source()
    if isinstance(value, tocha.dtype):
        cname = f"_d_{str(value).split('.')[-1]}"
        env[cname] = value.np
        return cname
    if isinstance(value, tuple):
        inner = ", ".join(_ref(v, names, env) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, list):
        return f"[{', '.join(_ref(v, names, env) for v in value)}]"
    if value is None or isinstance(value, (bool, int, str)) or value is Ellipsis:
        return repr(value)
    if isinstance(value, float) and np.isfinite(value):
        return repr(value)
    cname = f"_c{len(env)}"
    env[cname] = value
    return cname


def _asarray(value: Any) -> Any:
    """A kernel's 0-d result as an array (NumPy reductions give scalars)."""
    if type(value) is np.ndarray:
        return value
    return (
        value
        if hasattr(value, "shape") and not isinstance(value, np.generic)
        else np.asarray(value)
    )


_CONVERSIONS: dict[str, Callable] = {
    "__bool__": bool,
    "__int__": int,
    "__index__": int,
}


def _read(array: Any, kind: str, args: tuple, expected: Any) -> None:
    value = _CONVERSIONS[kind](array.item())
    if value != expected:
        raise ValueGuardFailed(f"{kind} of a tensor gave {value!r}, captured {expected!r}")
