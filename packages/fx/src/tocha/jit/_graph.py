"""`ScriptGraph`: the printable listing that ``.graph`` returns."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from . import _types

if TYPE_CHECKING:
    from ._compile import CompiledFunction


class ScriptGraph:
    """A readable listing of a compiled method: its typed inputs, then one line per statement.

    It is not TorchScript's SSA graph (no ``prim::``/``aten::`` nodes): it lists the body as
    the interpreter runs it, statements nested under their ``if``/``for``/``while``.
    """

    def __init__(self, compiled: CompiledFunction) -> None:
        self._compiled = compiled

    def inputs(self) -> list[str]:
        """The names of the graph's inputs, ``self`` first for a method."""
        names = [name for name, _, _ in self._compiled.params]
        return ["self", *names] if self._compiled.method else names

    def nodes(self) -> list[str]:
        """One line per top-level statement of the body."""
        return [ast.unparse(s).splitlines()[0] for s in self._compiled.tree.body]

    def __str__(self) -> str:
        compiled = self._compiled
        inputs = [f"%{name} : {_types.show(t)}" for name, t, _ in compiled.params]
        if compiled.method:
            inputs.insert(0, f"%self : __torch__.{compiled.qualname.rsplit('.', 1)[0]}")
        lines = [f"graph({', '.join(inputs)}):"]
        for statement in compiled.tree.body:
            lines.extend("  " + line for line in ast.unparse(statement).splitlines())
        return "\n".join(lines) + "\n"

    __repr__ = __str__


def _snake(name: str) -> str:
    out = ""
    for i, char in enumerate(name):
        if char.isupper() and i and not name[i - 1].isupper():
            out += "_"
        out += char.lower()
    return out


class NativeGraph:
    """A readable listing of a built-in ``tocha.nn`` module's forward: one line per call of a
    submodule (for ``Sequential``, in order), each named by the layer's kind (``conv2d``)."""

    def __init__(self, module: object, qualified_name: str) -> None:
        self._module = module
        self._name = qualified_name

    def __str__(self) -> str:
        import tocha.nn as nn

        module = self._module
        lines = [f"graph(%self : __torch__.{self._name}, %input : Tensor):"]
        value = "%input"
        if isinstance(module, nn.Sequential):
            steps = [(f"self.{n}", c) for n, c in module._modules.items() if c is not None]
        else:
            steps = [("self", module)]
        count = 0
        for path, child in steps:
            if isinstance(child, nn.Identity):
                continue
            lines.append(f"  %{count} = {path}.{_snake(type(child).__name__)}({value})")
            value = f"%{count}"
            count += 1
        lines.append(f"  return ({value})")
        return "\n".join(lines) + "\n"

    __repr__ = __str__
