"""From a Python function (or a saved method's text) to a `CompiledFunction`.

Compiling parses the source, checks it against the subset (`_check`), reads the
annotations (`_types`) and resolves every free name once, through the allowlist
(`_resolve`): a module, a public function, a builtin, a constant or another scripted
function. The compiled function keeps its AST, which `_interp` runs.
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import textwrap
import types
import typing
from collections.abc import Callable
from typing import Any

import tocha
from tocha.fx._patching import torch_alias

from . import _types
from ._check import check_function, check_with_statements
from ._resolve import BUILTINS, ResolutionError, from_path, module_allowed, path_of
from .frontend import FrontendError, SourceContext

_PLAIN = (bool, int, float, str, type(None))
_TYPING = ("Any", "Dict", "Final", "List", "Optional", "Tuple", "Union")


def typing_name(value: Any) -> str | None:
    """The name of the ``typing`` form ``value`` is (``List``), if it is one we allow."""
    return next((n for n in _TYPING if getattr(typing, n) is value), None)


class CompiledFunction:
    """A checked, resolved function of the scriptable subset, ready for the interpreter.

    ``params`` lists ``(name, type, inferred)`` for each argument after ``self`` (for a
    method); ``refs`` says how each free name was resolved, as saved in a file.
    """

    def __init__(
        self,
        tree: ast.FunctionDef,
        source: SourceContext,
        *,
        method: bool,
        qualname: str,
        defaults: dict[str, Any],
        globals_: dict[str, Any],
        refs: dict[str, dict],
    ) -> None:
        self.tree = tree
        self.source = source
        self.method = method
        self.name = tree.name
        self.qualname = qualname
        self.defaults = defaults
        self.globals = globals_
        self.refs = refs
        self.unused = False
        args = tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs
        if method:
            args = args[1:]
        self.params: list[tuple[str, _types.Type, bool]] = []
        for arg in args:
            try:
                t = _types.parse(arg.annotation)
            except _types.TypeAnnotationError as error:
                raise FrontendError(source, arg, str(error)) from None
            self.params.append((arg.arg, t or _types.TENSOR, t is None))
            if arg.arg in defaults and not _types.matches(t or _types.TENSOR, defaults[arg.arg]):
                raise RuntimeError(_default_error(arg.arg, t, source, tree))
        try:
            self.returns = _types.parse(tree.returns)
        except _types.TypeAnnotationError as error:
            raise FrontendError(source, tree.returns, str(error)) from None
        self.code = normalised_code(tree, method)

    def declaration(self) -> str:
        """``f(Tensor x, int n=2) -> Tensor``, as TorchScript prints a schema."""
        args = ", ".join(
            f"{_types.schema(t)} {name}"
            + (f"={_types.schema_default(self.defaults[name])}" if name in self.defaults else "")
            for name, t, _ in self.params
        )
        if self.method:
            args = f"__torch__.{self.qualname.rsplit('.', 1)[0]} self" + (
                ", " + args if args else ""
            )
        returns = _types.schema(self.returns) if self.returns else "Tensor"
        return f"{self.name}({args}) -> {returns}"


def _default_error(
    name: str, t: _types.Type | None, source: SourceContext, tree: ast.FunctionDef
) -> str:
    shown = f"{_types.show(t)}" if t is not None else "Tensor (inferred)"
    message = f'\nExpected a default value of type {shown} on parameter "{name}".'
    if t is None:
        message += (
            f'Because "{name}" was not annotated with an explicit type it is assumed to be '
            "type 'Tensor'."
        )
    return message + ":\n" + source.highlight(tree)


def normalised_code(tree: ast.FunctionDef, method: bool) -> str:
    """The function's text without decorators, every argument annotated (``Tensor`` if none)."""
    tree = copy.deepcopy(tree)
    tree.decorator_list = []
    args = tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs
    for i, arg in enumerate(args):
        if arg.annotation is None and not (method and i == 0):
            arg.annotation = ast.Name("Tensor", ast.Load())
    return ast.unparse(tree) + "\n"


def parse_source(
    text: str, filename: str, first_line: int
) -> tuple[ast.FunctionDef, SourceContext]:
    """The single function definition in ``text`` and its source context."""
    text = textwrap.dedent(text)
    context = SourceContext(filename, first_line, text.splitlines())
    module = ast.parse(text)
    defs = [n for n in module.body if isinstance(n, ast.FunctionDef)]
    if len(module.body) != 1 or len(defs) != 1:
        raise FrontendError(context, None, "expected the source of exactly one function")
    return defs[0], context


def local_names(tree: ast.FunctionDef) -> set[str]:
    """Arguments and every name the function assigns (Python's rule for locals)."""
    args = tree.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def free_names(tree: ast.FunctionDef) -> dict[str, ast.Name]:
    """The names the function reads but does not assign (annotations aside), with a use."""
    local = local_names(tree)
    args = tree.args
    skip = {id(a.annotation) for a in args.posonlyargs + args.args + args.kwonlyargs}
    skip.add(id(tree.returns))
    skip.update(id(n.annotation) for n in ast.walk(tree) if isinstance(n, ast.AnnAssign))
    found: dict[str, ast.Name] = {}
    pending: list[ast.AST] = [*tree.body, *args.defaults]
    while pending:
        node = pending.pop()
        if id(node) in skip:
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
            found[node.id] = node
        pending.extend(ast.iter_child_nodes(node))
    return found


UNUSED_MESSAGE = "This Python function is annotated to be ignored and cannot be run"


def unused_body(tree: ast.FunctionDef) -> list[ast.stmt]:
    """The body of a function marked `tocha.jit.unused`: a raise, where its body was."""
    raise_ = ast.Raise(
        exc=ast.Call(ast.Name("RuntimeError", ast.Load()), [ast.Constant(UNUSED_MESSAGE)], []),
        cause=None,
    )
    return [ast.fix_missing_locations(ast.copy_location(raise_, tree.body[0]))]


def compile_python(
    fn: Callable,
    *,
    method: bool,
    qualname: str,
    script_function: Callable[[Any], Any],
    unused: bool = False,
) -> CompiledFunction:
    """Compile a Python function or method; ``script_function`` scripts the functions it calls.

    With ``unused``, the body is replaced by a raise before it is checked: only the
    signature has to be scriptable."""
    fn = inspect.unwrap(fn)
    try:
        lines, first_line = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError) as error:
        raise RuntimeError(
            f"Can't get source for {fn}. TorchScript requires source access in order to "
            "carry out compilation, make sure original .py files are available."
        ) from error
    tree, context = parse_source("".join(lines), filename, first_line)
    if unused:
        tree.body = unused_body(tree)
    check_function(tree, context)
    check_with_statements(tree, context, builtin_calls=False)
    defaults = _defaults(fn, context, tree)
    scope = dict(inspect.getclosurevars(fn).nonlocals)
    values: dict[str, Any] = {}
    refs: dict[str, dict] = {}
    for name, node in free_names(tree).items():
        if name in scope:
            value = scope[name]
        elif name in fn.__globals__:
            value = fn.__globals__[name]
        elif hasattr(builtins, name):
            value = getattr(builtins, name)
        else:
            raise FrontendError(context, node, f"undefined value {name}")
        values[name], refs[name] = _resolve_value(name, value, node, tree, context, script_function)
    check_with_statements(tree, context, builtin_calls=True)
    compiled = CompiledFunction(
        tree,
        context,
        method=method,
        qualname=qualname,
        defaults=defaults,
        globals_=values,
        refs=refs,
    )
    compiled.unused = unused
    return compiled


def _defaults(fn: Callable, context: SourceContext, tree: ast.FunctionDef) -> dict[str, Any]:
    out = {}
    for name, param in inspect.signature(fn).parameters.items():
        if param.default is not inspect.Parameter.empty:
            if not _is_constant(param.default):
                raise FrontendError(
                    context, tree, f"default value of argument '{name}' is not a constant"
                )
            out[name] = param.default
    return out


def _is_constant(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_is_constant(v) for v in value)
    return isinstance(value, _PLAIN)


def _resolve_value(
    name: str,
    value: Any,
    node: ast.Name,
    tree: ast.FunctionDef,
    context: SourceContext,
    script_function: Callable[[Any], Any],
) -> tuple[Any, dict]:
    from ._decorators import ignored
    from ._module import ScriptFunction

    if isinstance(value, types.ModuleType) and value is torch_alias():
        value = tocha  # ``torch`` under ``python -m tocha.run``
    if name in BUILTINS and value in (BUILTINS[name], getattr(builtins, name, None)):
        return BUILTINS[name], {"kind": "builtin", "name": name}
    if _is_constant(value):
        return value, {"kind": "const", "value": value}
    if getattr(value, "__module__", None) == "typing" and typing_name(value) is not None:
        return value, {"kind": "typing", "name": typing_name(value)}
    if isinstance(value, types.ModuleType) and not module_allowed(value):
        raise _unsupported(tree, node, value, context)
    path = path_of(value)
    if path is not None:
        return value, {"kind": "path", "path": path}
    if isinstance(value, ScriptFunction):
        return value, {"kind": "function", "name": value.qualified_name}
    if isinstance(value, type) and _user_class(value):
        from ._class import script_class, script_class_of

        script_class(value, script_function)
        found = script_class_of(value)
        return found, {"kind": "class", "name": found.qualified_name}
    if isinstance(value, types.FunctionType) and ignored(value):
        return value, {"kind": "ignored", "name": value.__qualname__}
    if isinstance(value, types.FunctionType):
        try:
            scripted = script_function(value)
        except (FrontendError, RuntimeError) as error:
            if error.args and isinstance(error.args[0], str):
                note = (
                    f"'{value.__name__}' is being compiled since it was called from '{tree.name}'"
                )
                error.args = (f"{error.args[0]}\n{note}\n{context.highlight(node)}",)
            raise
        return scripted, {"kind": "function", "name": scripted.qualified_name}
    if isinstance(value, types.BuiltinFunctionType):
        raise RuntimeError(
            f"\nPython builtin {value!r} is currently not supported in Torchscript:\n"
            + context.highlight(node)
        )
    raise RuntimeError(
        f"\nPython value of type '{type(value).__name__}' cannot be used as a value. "
        "Perhaps it is a closed over global variable? If so, please consider passing it in as "
        "an argument or use a local variable instead.:\n" + context.highlight(node)
    )


def _user_class(cls: type) -> bool:
    """Whether `cls` is a program's own class (not a builtin, typing or tocha one): scripted
    code naming it gets it compiled, as a TorchScript class."""
    module = cls.__module__ or ""
    return module not in ("builtins", "typing") and not module.startswith("tocha")


def _unsupported(
    tree: ast.FunctionDef, node: ast.Name, module: types.ModuleType, context: SourceContext
) -> RuntimeError:
    """The error for a use of a module outside the allowlist, naming what was reached."""
    for parent in ast.walk(tree):
        if isinstance(parent, ast.Attribute) and parent.value is node:
            target = getattr(module, parent.attr, None)
            if isinstance(target, types.BuiltinFunctionType):
                return RuntimeError(
                    f"\nPython builtin {target!r} is currently not supported in Torchscript:\n"
                    + context.highlight(parent)
                )
    return RuntimeError(
        f"\nPython module '{module.__name__}' is currently not supported in Torchscript:\n"
        + context.highlight(node)
    )


def compile_saved(
    code: str, qualname: str, method: bool, refs: dict[str, dict], defaults: dict[str, Any],
    functions: dict[str, Any],
) -> CompiledFunction:  # fmt: skip
    """Compile a method's text read from a saved file, resolving names only by ``refs``."""
    tree, context = parse_source(code, f"<saved {qualname}>", 1)
    check_function(tree, context)
    values: dict[str, Any] = {}
    for name in free_names(tree):
        ref = refs.get(name)
        if ref is None:
            if name in BUILTINS:
                values[name] = BUILTINS[name]
                continue
            raise ResolutionError(f"saved code of '{qualname}' uses an unknown name '{name}'")
        values[name] = _from_ref(ref, functions)
    check_with_statements(tree, context, builtin_calls=True)
    return CompiledFunction(
        tree, context, method=method, qualname=qualname, defaults=defaults, globals_=values,
        refs=refs,
    )  # fmt: skip


def _from_ref(ref: dict, functions: dict[str, Any]) -> Any:
    kind = ref.get("kind")
    if kind == "builtin" and ref.get("name") in BUILTINS:
        return BUILTINS[ref["name"]]
    if kind == "const" and _is_constant(_untuple(ref.get("value"))):
        return _untuple(ref["value"])
    if kind == "typing" and ref.get("name") in _TYPING:
        return getattr(typing, ref["name"])
    if kind == "tensor" and isinstance(ref.get("value"), tocha.Tensor):
        return ref["value"]
    if kind == "path" and isinstance(ref.get("path"), str):
        return from_path(ref["path"])
    if kind == "function" and ref.get("name") in functions:
        return functions[ref["name"]]
    raise ResolutionError(f"saved code refers to something scripted code may not use: {ref!r}")


def _untuple(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_untuple(v) for v in value)
    return value
