"""Python source from a `Graph`: the body of ``forward`` and the globals it needs."""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import tocha

from ._names import Namespace, qualified_name
from .node import Node

if TYPE_CHECKING:
    from .graph import Graph

__all__ = ["PythonCode", "format_target", "generate"]

_BINARY = {
    operator.add: "+",
    operator.sub: "-",
    operator.mul: "*",
    operator.truediv: "/",
    operator.floordiv: "//",
    operator.mod: "%",
    operator.pow: "**",
    operator.matmul: "@",
    operator.lshift: "<<",
    operator.rshift: ">>",
    operator.and_: "&",
    operator.or_: "|",
    operator.xor: "^",
    operator.eq: "==",
    operator.ne: "!=",
    operator.lt: "<",
    operator.le: "<=",
    operator.gt: ">",
    operator.ge: ">=",
}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}
_PLAIN = (int, float, bool, str, bytes, complex, type(None), type(Ellipsis))


@dataclass
class PythonCode:
    """The generated source of a function (``src``) and the objects its free names refer
    to (``globals``)."""

    src: str
    globals: dict[str, Any] = field(default_factory=dict)


def format_target(base: str, target: str) -> str:
    """``self.layer1[0]``-style access written as ``getattr(self.layer1, "0")`` for path
    components that are not identifiers, as torch.fx writes them."""
    for part in target.split("."):
        base = f"{base}.{part}" if part.isidentifier() else f'getattr({base}, "{part}")'
    return base


class _Emitter:
    def __init__(self, graph: Graph) -> None:
        self.namespace = Namespace()
        for node in graph.nodes:
            self.namespace.associate(node.name, node)
        self.globals: dict[str, Any] = {"tocha": tocha, "operator": operator, "inf": math.inf}
        self.globals["nan"] = math.nan
        self.globals["device"] = tocha.device
        self.globals["NoneType"] = type(None)

    def global_name(self, obj: Any) -> str:
        if isinstance(obj, type) and getattr(builtins, obj.__name__, None) is obj:
            return obj.__name__
        name = qualified_name(obj) if callable(obj) else ""
        if name.startswith("builtins.") and getattr(builtins, name[9:], None) is obj:
            return name[9:]
        if name.startswith(("tocha.", "operator.")) and _resolves(name, obj):
            return name
        hint = name if name else type(obj).__name__
        global_name = self.namespace.create_name(f"_{hint}" if not name else hint, obj)
        self.globals[global_name] = obj
        return global_name

    def arg(self, a: Any) -> str:
        if isinstance(a, Node):
            return a.name
        if isinstance(a, tuple) and not hasattr(a, "_fields"):
            inner = ", ".join(self.arg(x) for x in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, tuple):
            return f"{self.global_name(type(a))}(" + ", ".join(self.arg(x) for x in a) + ")"
        if isinstance(a, list):
            return "[" + ", ".join(self.arg(x) for x in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k!r}: {self.arg(v)}" for k, v in a.items()) + "}"
        if isinstance(a, slice):
            return f"slice({self.arg(a.start)}, {self.arg(a.stop)}, {self.arg(a.step)})"
        if isinstance(a, float) and not math.isfinite(a):
            return "nan" if math.isnan(a) else ("inf" if a > 0 else "-inf")
        if isinstance(a, _PLAIN):
            return repr(a)
        if isinstance(a, tocha.dtype):
            # by its name in tocha: its repr names torch under the alias (python -m tocha.run)
            return f"tocha.{str(a).rpartition('.')[2]}"
        if isinstance(a, tocha.device):
            return repr(a)
        if isinstance(a, (tocha.memory_format, tocha.layout)):
            name = next((k for k, v in vars(tocha).items() if v is a), None)
            if name is not None:
                return f"tocha.{name}"
        return self.global_name(a)

    def call_args(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        parts = [self.arg(a) for a in args] + [f"{k} = {self.arg(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)


def _resolves(name: str, obj: Any) -> bool:
    root, *path = name.split(".")
    value: Any = tocha if root == "tocha" else operator
    for part in path:
        value = getattr(value, part, None)
    return value is obj


def _signature_entry(node: Node, emit: _Emitter) -> str:
    target = str(node.target)
    if target.startswith("*"):
        return target
    annotation = ""
    if node.type is not None:
        annotation = f" : {emit.global_name(node.type)}"
    if node.args:
        return f"{target}{annotation} = {emit.arg(node.args[0])}"
    return f"{target}{annotation}"


def _statement(node: Node, emit: _Emitter) -> str:
    args, kwargs = node.args, node.kwargs
    if node.op == "get_attr":
        return f"{node.name} = {format_target('self', str(node.target))}"
    if node.op == "call_module":
        module = format_target("self", str(node.target))
        return f"{node.name} = {module}({emit.call_args(args, kwargs)})"
    if node.op == "call_method":
        receiver = emit.arg(args[0])
        return f"{node.name} = {receiver}.{node.target}({emit.call_args(args[1:], kwargs)})"
    target = node.target
    if not kwargs and len(args) == 2 and target in _BINARY:
        return f"{node.name} = {emit.arg(args[0])} {_BINARY[target]} {emit.arg(args[1])}"
    if not kwargs and len(args) == 1 and target in _UNARY:
        return f"{node.name} = {_UNARY[target]}{emit.arg(args[0])}"
    if not kwargs and len(args) == 2 and target is operator.getitem:
        return f"{node.name} = {emit.arg(args[0])}[{emit.arg(args[1])}]"
    if (
        target is builtins.getattr
        and not kwargs
        and len(args) == 2
        and isinstance(args[1], str)
        and args[1].isidentifier()
    ):
        return f"{node.name} = {emit.arg(args[0])}.{args[1]}"
    return f"{node.name} = {emit.global_name(target)}({emit.call_args(args, kwargs)})"


DTYPE_ABBREVIATIONS = {
    "float32": "f32",
    "float64": "f64",
    "float16": "f16",
    "bfloat16": "bf16",
    "int64": "i64",
    "int32": "i32",
    "int16": "i16",
    "int8": "i8",
    "uint8": "u8",
    "bool": "b8",
    "complex64": "c64",
    "complex128": "c128",
}


def value_annotation(node: Node, include_stride: bool = False, include_device: bool = False) -> str:
    """The quoted type torch.fx's readable code gives a value from its example
    (``"f32[2, 3]"``, a size ``"Sym(4)"``), or "" without one."""
    meta = node.meta.get("tensor_meta")
    val = node.meta.get("val")
    if hasattr(meta, "shape") and hasattr(meta, "dtype"):
        name = str(meta.dtype).removeprefix("tocha.").removeprefix("torch.")
        text = f"{DTYPE_ABBREVIATIONS.get(name, name)}[{', '.join(repr(d) for d in meta.shape)}]"
        if include_stride and getattr(meta, "stride", None) is not None:
            text += f"[{', '.join(repr(d) for d in meta.stride)}]"
        if include_device and hasattr(val, "device"):
            text += val.device.type
        return f'"{text}"'
    if isinstance(val, int) and not isinstance(val, bool):
        return f'"Sym({val!r})"'
    return ""


def generate(
    graph: Graph,
    root_module: str = "self",
    *,
    verbose: bool = False,
    annotate: Callable[[Node], str] | None = None,
) -> PythonCode:
    """Source for ``def forward(<root_module>, <placeholders>)`` computing the graph; a
    value's name is cleared (``x = None``) after its last use, so memory is freed early.
    `annotate` gives a node's type annotation (`value_annotation`, for readable code)."""
    emit = _Emitter(graph)
    nodes = list(graph.nodes)
    last_use: dict[Node, Node] = {}
    for user in reversed(nodes):
        for inp in user.all_input_nodes:
            last_use.setdefault(inp, user)
    freed_by: dict[Node, list[Node]] = {}
    for value, user in last_use.items():
        freed_by.setdefault(user, []).append(value)

    signature = [root_module]
    body: list[str] = []
    returns = ""
    for node in nodes:
        if node.op == "placeholder":
            entry = _signature_entry(node, emit)
            typed = annotate(node) if annotate is not None else ""
            signature.append(f"{entry}: {typed}" if typed and entry == node.target else entry)
            raw_name = str(node.target).lstrip("*")
            if raw_name != node.name:
                body.append(f"{node.name} = {raw_name}")
            continue
        if node.op == "output":
            if node.type is not None:
                returns = f" -> {emit.global_name(node.type)}"
            body.append(f"return {emit.arg(node.args[0])}")
            continue
        line = _statement(node, emit)
        typed = annotate(node) if annotate is not None else ""
        if typed and line.startswith(f"{node.name} = "):
            line = f"{node.name}: {typed}{line[len(node.name) :]}"
        if verbose and node.meta.get("val") is not None:
            line += f"  # {type(node.meta['val']).__name__}"
        freed = [n.name for n in freed_by.get(node, [])]
        if not node.users:
            freed.append(node.name)
        if freed:
            line += ";  " + " = ".join(freed) + " = None"
        body.append(line)
    if not body or not body[-1].startswith("return"):
        body.append("pass")
    header = f"def forward({', '.join(signature)}){returns}:"
    # torch.fx's layout: three blank lines before the def, an indented empty line after.
    src = "\n\n\n" + header + "\n" + "".join(f"    {line}\n" for line in body) + "    "
    return PythonCode(src, emit.globals)
