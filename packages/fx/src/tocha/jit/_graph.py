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
