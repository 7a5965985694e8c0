"""The interpreter of the scriptable subset: it walks a `CompiledFunction`'s AST.

Scripted code never reaches ``exec`` or ``eval``. Names resolve to the function's locals,
then to the names resolved at compile time (`_compile`), then to the allowed builtins;
attribute reads go through `_resolve.get_attribute`. Exceptions raised by the code come
out as ``tocha.jit.Error``, and errors of the operations it calls as a RuntimeError, both
with TorchScript's message (where in the scripted source it failed).
"""

from __future__ import annotations

import ast
import operator
from typing import Any

import tocha

from ._resolve import BUILTINS, EXCEPTIONS, ResolutionError, get_attribute

_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.MatMult: operator.matmul, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}  # fmt: skip
_INPLACE = {
    ast.Add: operator.iadd, ast.Sub: operator.isub, ast.Mult: operator.imul,
    ast.Div: operator.itruediv, ast.FloorDiv: operator.ifloordiv, ast.Mod: operator.imod,
    ast.Pow: operator.ipow, ast.MatMult: operator.imatmul, ast.BitAnd: operator.iand,
    ast.BitOr: operator.ior, ast.BitXor: operator.ixor, ast.LShift: operator.ilshift,
    ast.RShift: operator.irshift,
}  # fmt: skip
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
          ast.Not: operator.not_}  # fmt: skip
_COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_,
    ast.IsNot: operator.is_not, ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}  # fmt: skip
_GRAD_MODES = (type(tocha.no_grad()), type(tocha.enable_grad()))


class Error(Exception):
    """An exception raised inside scripted code (PyTorch's ``torch.jit.Error``)."""


class _Break:
    pass


class _Continue:
    pass


class _Return:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


_BREAK = _Break()
_CONTINUE = _Continue()
_SCRIPTING = [0]


def scripting() -> bool:
    """Whether scripted code is running now."""
    return _SCRIPTING[0] > 0


def run(fn: Any, local: dict[str, Any]) -> Any:
    """Run compiled function ``fn`` with its arguments bound in ``local``."""
    frame = _Frame(fn, local)
    _SCRIPTING[0] += 1
    try:
        signal = frame.block(fn.tree.body)
    except (Error, ResolutionError, KeyboardInterrupt):
        raise
    except _ScriptRaise as raised:
        error = raised.error
        message = _traceback(fn, raised.node, f"builtins.{type(error).__name__}: {error}")
        raise Error(message) from error
    finally:
        _SCRIPTING[0] -= 1
    return signal.value if isinstance(signal, _Return) else None


class OperationFailure(RuntimeError):
    """An operation called by scripted code failed; the message says where, as TorchScript's."""


class _ScriptRaise(Exception):
    def __init__(self, node: ast.AST, error: BaseException) -> None:
        super().__init__(str(error))
        self.node = node
        self.error = error


def _traceback(fn: Any, node: ast.AST, error: str) -> str:
    return (
        "The following operation failed in the TorchScript interpreter.\n"
        "Traceback of TorchScript (most recent call last):\n"
        f"{fn.source.highlight(node, fn.name)}{error}\n"
    )


class _Frame:
    __slots__ = ("fn", "local")

    def __init__(self, fn: Any, local: dict[str, Any]) -> None:
        self.fn = fn
        self.local = local

    def block(self, statements: list[ast.stmt]) -> Any:
        for statement in statements:
            try:
                signal = self.statement(statement)
            except (Error, ResolutionError, OperationFailure, _ScriptRaise):
                raise
            except Exception as error:
                message = _traceback(self.fn, statement, f"{type(error).__name__}: {error}")
                raise OperationFailure(message) from error
            if signal is not None:
                return signal
        return None

    def statement(self, node: Any) -> Any:
        kind = type(node)
        if kind is ast.Expr:
            self.eval(node.value)
        elif kind is ast.Assign:
            value = self.eval(node.value)
            for target in node.targets:
                self.assign(target, value)
        elif kind is ast.AnnAssign:
            if node.value is not None:
                self.assign(node.target, self.eval(node.value))
        elif kind is ast.AugAssign:
            self.augassign(node)
        elif kind is ast.Return:
            return _Return(None if node.value is None else self.eval(node.value))
        elif kind is ast.If:
            return self.block(node.body if self.eval(node.test) else node.orelse)
        elif kind is ast.For:
            return self.loop_for(node)
        elif kind is ast.While:
            while self.eval(node.test):
                signal = self.block(node.body)
                if signal is _BREAK:
                    break
                if isinstance(signal, _Return):
                    return signal
        elif kind is ast.Break:
            return _BREAK
        elif kind is ast.Continue:
            return _CONTINUE
        elif kind is ast.Assert:
            if not self.eval(node.test):
                message = self.eval(node.msg) if node.msg is not None else ""
                raise _ScriptRaise(node, AssertionError(message))
        elif kind is ast.Raise:
            self.raise_(node)
        elif kind is ast.With:
            return self.with_(node)
        return None

    def loop_for(self, node: ast.For) -> Any:
        for item in self.eval(node.iter):
            self.assign(node.target, item)
            signal = self.block(node.body)
            if signal is _BREAK:
                break
            if isinstance(signal, _Return):
                return signal
        return None

    def with_(self, node: ast.With) -> Any:
        contexts = [self.eval(item.context_expr) for item in node.items]
        if not all(isinstance(c, _GRAD_MODES) for c in contexts):
            raise ResolutionError("only 'with torch.no_grad()' and 'enable_grad()' are supported")
        for context in contexts:
            context.__enter__()
        try:
            return self.block(node.body)
        finally:
            for context in reversed(contexts):
                context.__exit__(None, None, None)

    def raise_(self, node: ast.Raise) -> None:
        error = self.eval(node.exc) if node.exc is not None else RuntimeError("Exception")
        if isinstance(error, type) and issubclass(error, EXCEPTIONS):
            error = error()
        if not isinstance(error, EXCEPTIONS):
            raise ResolutionError(f"cannot raise a value of type '{type(error).__name__}'")
        raise _ScriptRaise(node, error)

    def augassign(self, node: ast.AugAssign) -> None:
        target = node.target
        op = _INPLACE[type(node.op)]
        value = self.eval(node.value)
        if isinstance(target, ast.Name):
            self.local[target.id] = op(self.name(target), value)
        elif isinstance(target, ast.Subscript):
            obj = self.eval(target.value)
            key = self.eval(target.slice)
            obj[key] = op(obj[key], value)
        else:
            obj = self.eval(target.value)
            self.set_attribute(obj, target.attr, op(get_attribute(obj, target.attr), value))

    def assign(self, target: Any, value: Any) -> None:
        kind = type(target)
        if kind is ast.Name:
            self.local[target.id] = value
        elif kind is ast.Tuple or kind is ast.List:
            values = list(value)
            if len(values) != len(target.elts):
                raise _ScriptRaise(
                    target,
                    ValueError(f"expected {len(target.elts)} values to unpack, got {len(values)}"),
                )
            for element, item in zip(target.elts, values):
                self.assign(element, item)
        elif kind is ast.Subscript:
            self.eval(target.value)[self.eval(target.slice)] = value
        elif kind is ast.Attribute:
            self.set_attribute(self.eval(target.value), target.attr, value)
        else:
            raise ResolutionError(f"cannot assign to {kind.__name__}")

    def set_attribute(self, obj: Any, name: str, value: Any) -> None:
        from ._class import ScriptObject
        from ._module import ScriptModule

        if not isinstance(obj, (ScriptModule, ScriptObject)):
            raise ResolutionError(f"cannot set attribute '{name}' of a '{type(obj).__name__}'")
        obj.script_set_attribute(name, value)

    def name(self, node: ast.Name) -> Any:
        key = node.id
        local = self.local
        if key in local:
            return local[key]
        if key in self.fn.globals:
            return self.fn.globals[key]
        if key in BUILTINS:
            return BUILTINS[key]
        raise _ScriptRaise(node, NameError(f"undefined value {key}"))

    def eval(self, node: Any) -> Any:
        kind = type(node)
        if kind is ast.Name:
            return self.name(node)
        if kind is ast.Constant:
            return node.value
        if kind is ast.Attribute:
            return get_attribute(self.eval(node.value), node.attr)
        if kind is ast.Call:
            return self.call(node)
        if kind is ast.BinOp:
            return _BINARY[type(node.op)](self.eval(node.left), self.eval(node.right))
        if kind is ast.Compare:
            left = self.eval(node.left)
            for op, right_node in zip(node.ops, node.comparators):
                right = self.eval(right_node)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if kind is ast.UnaryOp:
            return _UNARY[type(node.op)](self.eval(node.operand))
        if kind is ast.BoolOp:
            is_and = isinstance(node.op, ast.And)
            value = None
            for operand in node.values:
                value = self.eval(operand)
                if bool(value) != is_and:
                    return value
            return value
        if kind is ast.Subscript:
            return self.eval(node.value)[self.eval(node.slice)]
        if kind is ast.Slice:
            return slice(
                None if node.lower is None else self.eval(node.lower),
                None if node.upper is None else self.eval(node.upper),
                None if node.step is None else self.eval(node.step),
            )
        if kind is ast.Tuple:
            return tuple(self.eval(e) for e in node.elts)
        if kind is ast.List:
            return [self.eval(e) for e in node.elts]
        if kind is ast.Dict:
            return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values)}
        if kind is ast.IfExp:
            return self.eval(node.body) if self.eval(node.test) else self.eval(node.orelse)
        if kind is ast.ListComp or kind is ast.DictComp:
            return self.comprehension(node)
        if kind is ast.JoinedStr:
            return "".join(str(self.eval(v)) for v in node.values)
        if kind is ast.FormattedValue:
            return self.formatted(node)
        raise ResolutionError(f"{kind.__name__} expressions are not supported")

    def formatted(self, node: ast.FormattedValue) -> str:
        value = self.eval(node.value)
        if node.conversion == ord("r"):
            value = repr(value)
        elif node.conversion == ord("s"):
            value = str(value)
        spec = self.eval(node.format_spec) if node.format_spec is not None else ""
        if not isinstance(value, (int, float, str, bool, tocha.Tensor, type(None))):
            value = str(value)
        return format(value, spec)

    def comprehension(self, node: ast.ListComp | ast.DictComp) -> Any:
        saved = dict(self.local)
        generator = node.generators[0]
        out: Any = [] if isinstance(node, ast.ListComp) else {}
        try:
            for item in self.eval(generator.iter):
                self.assign(generator.target, item)
                if isinstance(out, list):
                    out.append(self.eval(node.elt))
                else:
                    out[self.eval(node.key)] = self.eval(node.value)
        finally:
            self.local.clear()
            self.local.update(saved)
        return out

    def call(self, node: ast.Call) -> Any:
        func = self.eval(node.func)
        args = [self.eval(a) for a in node.args]
        kwargs = {k.arg: self.eval(k.value) for k in node.keywords}
        return func(*args, **kwargs)
