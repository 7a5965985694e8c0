"""`SymInt`: the size of a dynamic dimension while tracing.

It is an int (the example's size, so code computing with it runs as in eager) that also
carries its size in the second, differently sized run (`shadow`) and the graph node that
computes it. Arithmetic on it records ``operator`` nodes, so that shapes computed from it
(``x.view(x.size(0), -1)``) follow the input's size when the graph runs.
"""

from __future__ import annotations

import operator
from typing import Any

__all__ = ["SizeName", "SymInt"]


class SymInt(int):
    """An int that records how it was computed; see the module docstring."""

    shadow: int
    node: Any
    tracer: Any
    expr: str
    symbols: frozenset

    def __new__(
        cls, value: int, shadow: int, node: Any, tracer: Any, expr: str, symbols: frozenset
    ) -> SymInt:
        self = super().__new__(cls, value)
        self.shadow = shadow
        self.node = node
        self.tracer = tracer
        self.expr = expr
        self.symbols = symbols
        return self

    def __repr__(self) -> str:
        return self.expr

    __str__ = __repr__

    def __hash__(self) -> int:
        return int.__hash__(self)

    def __index__(self) -> int:
        """As an index (``range(n)``, ``lst[:n]``) the size is used as the example's value, so
        the code specialises it (`Tracer.guard`)."""
        if self.shadow != int(self):
            self.tracer.guard(self, "==", int(self), True)
        return int(self)

    def _binary(self, fn: Any, other: Any, reflected: bool, symbol: str) -> Any:
        if not isinstance(other, int) or isinstance(other, bool):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        value = fn(int(a), int(b))
        shadow = fn(_shadow(a), _shadow(b))
        expr = f"{_expr(a)}{symbol}{_expr(b)}"
        node = self.tracer.sym_node(fn, (a, b), value)
        node.meta["val"] = SizeName(value, expr)
        symbols = self.symbols | (other.symbols if isinstance(other, SymInt) else frozenset())
        return SymInt(value, shadow, node, self.tracer, expr, symbols)

    def __add__(self, other: Any) -> Any:
        return self._binary(operator.add, other, False, " + ")

    def __radd__(self, other: Any) -> Any:
        return self._binary(operator.add, other, True, " + ")

    def __sub__(self, other: Any) -> Any:
        return self._binary(operator.sub, other, False, " - ")

    def __rsub__(self, other: Any) -> Any:
        return self._binary(operator.sub, other, True, " - ")

    def __mul__(self, other: Any) -> Any:
        return self._binary(operator.mul, other, False, "*")

    def __rmul__(self, other: Any) -> Any:
        return self._binary(operator.mul, other, True, "*")

    def __floordiv__(self, other: Any) -> Any:
        return self._binary(operator.floordiv, other, False, "//")

    def __rfloordiv__(self, other: Any) -> Any:
        return self._binary(operator.floordiv, other, True, "//")

    def __mod__(self, other: Any) -> Any:
        return self._binary(operator.mod, other, False, " % ")

    def __rmod__(self, other: Any) -> Any:
        return self._binary(operator.mod, other, True, " % ")

    def __neg__(self) -> Any:
        return self._binary(operator.mul, -1, False, "*")

    def _compare(self, fn: Any, other: Any, symbol: str) -> Any:
        """A comparison, as Python control flow sees it: the example's answer. When the
        answer differs at the other size, the code specialises this size (`Tracer.guard`)."""
        if not isinstance(other, (int, float)):
            return NotImplemented
        result = fn(int(self), int(other) if isinstance(other, SymInt) else other)
        shadow = other.shadow if isinstance(other, SymInt) else other
        if result != fn(self.shadow, shadow):
            self.tracer.guard(self, symbol, other, result)
        return result

    def __eq__(self, other: Any) -> Any:
        return self._compare(operator.eq, other, "==")

    def __ne__(self, other: Any) -> Any:
        return self._compare(operator.ne, other, "!=")

    def __lt__(self, other: Any) -> Any:
        return self._compare(operator.lt, other, "<")

    def __le__(self, other: Any) -> Any:
        return self._compare(operator.le, other, "<=")

    def __gt__(self, other: Any) -> Any:
        return self._compare(operator.gt, other, ">")

    def __ge__(self, other: Any) -> Any:
        return self._compare(operator.ge, other, ">=")

    def __bool__(self) -> bool:
        return bool(self._compare(operator.ne, 0, "!="))

    def __reduce__(self) -> Any:
        return (int, (int(self),))


def _shadow(value: Any) -> int:
    return value.shadow if isinstance(value, SymInt) else int(value)


def _expr(value: Any) -> str:
    if isinstance(value, SymInt):
        return value.expr if value.expr.isidentifier() else f"({value.expr})"
    return str(value)


class SizeName(int):
    """A size printed by its expression (``s0``, ``2*s0``): in ``tensor_meta`` shapes and as
    the ``val`` of size nodes."""

    name: str

    def __new__(cls, value: int, name: str) -> SizeName:
        self = super().__new__(cls, value)
        self.name = name
        return self

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__
