"""From an `ExportedProgram` to the text of a ``forward`` the interpreter runs.

Lifted parameters, buffers and constants are read from the module (``self.fc.weight``);
user inputs become arguments, taken apart when nested; each ``call_function`` node
becomes one assignment calling its target by its public path (``tocha.nn.functional.linear``,
``tocha.Tensor.view``, ``ops.rnn_layer`` for ``tocha.export.ops`` primitives, an operator for
``operator.getitem``/``mul``...); buffer updates computed out of place are copied back;
outputs are nested as the original function returned them.
"""

from __future__ import annotations

import inspect
import keyword
import math
import operator
from typing import Any

import tocha
import tocha.export as export
from tocha.export import InputKind, OutputKind

from ._resolve import path_of

_BINARY = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
    operator.eq: "==", operator.ne: "!=", operator.lt: "<", operator.le: "<=",
    operator.gt: ">", operator.ge: ">=", operator.and_: "&", operator.or_: "|",
}  # fmt: skip
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}
RESERVED = frozenset({"self", "tocha", "ops", "math", "getattr", "slice", "float"})
GLOBAL_REFS = {
    "tocha": {"kind": "path", "path": "tocha"},
    "ops": {"kind": "path", "path": "tocha.export.ops"},
    "math": {"kind": "path", "path": "math"},
}


class TraceCodeError(RuntimeError):
    """A traced program holds something that cannot be written as scripted code."""


def member_expression(target: str) -> str:
    """``self.a.b`` for a dotted state name, with ``getattr`` for parts like ``0``."""
    expression = "self"
    for part in target.split("."):
        if part.isidentifier() and not keyword.iskeyword(part):
            expression += f".{part}"
        else:
            expression = f"getattr({expression}, {part!r})"
    return expression


class _Writer:
    def __init__(self) -> None:
        self.names: dict[Any, str] = {}

    def name(self, node: Any) -> str:
        if node not in self.names:
            base = node.name if node.name.isidentifier() else "v"
            if base in RESERVED or keyword.iskeyword(base):
                base += "_"
            self.names[node] = base
        return self.names[node]

    def value(self, value: Any) -> str:
        if isinstance(value, tocha.fx.Node):
            return self.name(value)
        if value is None or isinstance(value, (bool, int, str)):
            return repr(value)
        if isinstance(value, float):
            return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
        if isinstance(value, tuple):
            items = ", ".join(self.value(v) for v in value)
            return f"({items},)" if len(value) == 1 else f"({items})"
        if isinstance(value, list):
            return f"[{', '.join(self.value(v) for v in value)}]"
        if isinstance(value, dict):
            return (
                "{" + ", ".join(f"{self.value(k)}: {self.value(v)}" for k, v in value.items()) + "}"
            )
        if isinstance(value, slice):
            parts = (value.start, value.stop, value.step)
            return f"slice({', '.join(self.value(p) for p in parts)})"
        if value is Ellipsis:
            return "..."
        if isinstance(value, tocha.device):
            return f"tocha.device({str(value)!r})"
        path = path_of(value)
        if path is not None:
            return path
        raise TraceCodeError(
            f"cannot write a value of type '{type(value).__name__}' in traced code"
        )

    def call(self, node: Any) -> str:
        target = node.target
        args = [self.value(a) for a in node.args]
        kwargs = [f"{k}={self.value(v)}" for k, v in node.kwargs.items()]
        if target is operator.getitem and len(args) == 2 and not kwargs:
            return f"{args[0]}[{args[1]}]"
        if target in _BINARY and len(args) == 2 and not kwargs:
            return f"({args[0]} {_BINARY[target]} {args[1]})"
        if target in _UNARY and len(args) == 1 and not kwargs:
            return f"({_UNARY[target]}{args[0]})"
        if isinstance(target, export.ops.Primitive):
            callee = f"ops.{target.name}"
        elif hasattr(target, "path") and type(target).__name__ == "ScriptCall":
            callee = member_expression(target.path)
        else:
            callee = path_of(target) or path_of(inspect.unwrap(target))
            if callee is None:
                raise TraceCodeError(f"cannot write a call of {target!r} in traced code")
        return f"{callee}({', '.join(args + kwargs)})"


def _unpack(layout: Any, expression: str, leaves: dict[int, str]) -> None:
    if "leaf" in layout:
        leaves[layout["leaf"]] = expression
    elif "tuple" in layout or "list" in layout:
        for i, item in enumerate(layout.get("tuple", layout.get("list"))):
            _unpack(item, f"{expression}[{i}]", leaves)
    elif "dict" in layout:
        for key, item in layout["dict"]:
            _unpack(item, f"{expression}[{key!r}]", leaves)


def _nest(layout: Any, leaves: list[str]) -> str:
    if "leaf" in layout:
        return leaves[layout["leaf"]]
    if "tuple" in layout:
        items = [_nest(item, leaves) for item in layout["tuple"]]
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if "list" in layout:
        return f"[{', '.join(_nest(item, leaves) for item in layout['list'])}]"
    return "{" + ", ".join(f"{k!r}: {_nest(item, leaves)}" for k, item in layout["dict"]) + "}"


def _dead_nodes(graph: Any) -> set[Any]:
    """The calls whose results nothing uses and that change nothing (the comparisons that
    decided a traced branch, sizes read and not used): traced code leaves them out."""
    dead: set[Any] = set()
    for node in reversed(graph.nodes):
        if (
            node.op == "call_function"
            and all(user in dead for user in node.users)
            and not node.is_impure()
            and not _writes(node)
        ):
            dead.add(node)
    return dead


def _writes(node: Any) -> bool:
    """Whether a call may write into its arguments: ``out=``, ``inplace=True`` (or a
    positional ``True``, as ``relu(x, True)``)."""
    if "out" in node.kwargs or node.kwargs.get("inplace"):
        return True
    return any(arg is True for arg in node.args)


def forward_source(ep: Any, name: str = "forward", method: bool = True) -> tuple[str, list[str]]:
    """The text of ``forward`` for exported program ``ep``, and its argument names."""
    writer = _Writer()
    signature = ep.graph_signature
    in_layout, out_layout = ep.call_spec
    arguments = [arg for arg, _ in in_layout]
    leaves: dict[int, str] = {}
    for arg, layout in in_layout:
        _unpack(layout, arg, leaves)
    lines: list[str] = []
    user_index = 0
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    for spec, node in zip(signature.input_specs, placeholders):
        if spec.kind == InputKind.USER_INPUT:
            source = leaves[user_index]
            user_index += 1
        else:
            source = member_expression(spec.target)
        if source != writer.name(node):
            lines.append(f"{writer.name(node)} = {source}")
    outputs: list[str] = []
    dead = _dead_nodes(ep.graph)
    for node in ep.graph.nodes:
        if node.op == "call_function" and node not in dead:
            lines.append(f"{writer.name(node)} = {writer.call(node)}")
        elif node.op == "output":
            flat = node.args[0] if isinstance(node.args[0], (tuple, list)) else (node.args[0],)
            for spec, value in zip(signature.output_specs, flat):
                if spec.kind in (OutputKind.BUFFER_MUTATION, OutputKind.PARAMETER_MUTATION):
                    target = member_expression(spec.target)
                    lines.append(f"tocha.Tensor.copy_({target}, {writer.value(value)})")
                else:
                    outputs.append(writer.value(value))
    lines.append(f"return {_nest(out_layout, outputs)}")
    head = ["self", *arguments] if method else arguments
    body = "\n".join("    " + line for line in lines)
    return f"def {name}({', '.join(head)}):\n{body}\n", arguments
