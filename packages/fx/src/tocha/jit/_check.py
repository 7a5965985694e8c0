"""The scriptable subset: a walk over a function's AST that refuses everything outside it."""

from __future__ import annotations

import ast
import builtins

from .frontend import NotSupportedError, SourceContext, UnsupportedNodeError

_STATEMENTS = (
    ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.If, ast.For, ast.While,
    ast.Break, ast.Continue, ast.Return, ast.Pass, ast.Assert, ast.Raise, ast.With,
)  # fmt: skip
_EXPRESSIONS = (
    ast.Constant, ast.Name, ast.Attribute, ast.Subscript, ast.Slice, ast.BinOp, ast.UnaryOp,
    ast.BoolOp, ast.Compare, ast.Call, ast.IfExp, ast.List, ast.Tuple, ast.Dict,
    ast.ListComp, ast.DictComp, ast.JoinedStr, ast.FormattedValue, ast.keyword,
    ast.comprehension, ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
    ast.withitem,
)  # fmt: skip
_NAMES = {
    ast.Try: "try blocks",
    ast.FunctionDef: "function definitions",
    ast.AsyncFunctionDef: "async function definitions",
    ast.ClassDef: "class definitions",
    ast.Lambda: "Lambda",
    ast.Delete: "del statements",
    ast.Global: "global variables",
    ast.Nonlocal: "nonlocal variables",
    ast.Import: "import statements",
    ast.ImportFrom: "import statements",
    ast.Yield: "Yield",
    ast.YieldFrom: "Yield",
    ast.Await: "Await",
    ast.GeneratorExp: "generator expressions",
    ast.SetComp: "set comprehensions",
    ast.Set: "set literals",
    ast.NamedExpr: "assignment expressions",
    ast.Starred: "starred expressions",
    ast.Match: "match statements",
    ast.AsyncFor: "async for loops",
    ast.AsyncWith: "async with statements",
}
if hasattr(ast, "TryStar"):
    _NAMES[ast.TryStar] = "try blocks"
_GRAD_CONTEXTS = ("no_grad", "enable_grad")


def check_function(fn: ast.FunctionDef, source: SourceContext) -> None:
    """Raise a FrontendError for the first construct of ``fn`` outside the subset."""
    args = fn.args
    if args.vararg or args.kwarg or args.kw_defaults and any(args.kw_defaults):
        node = args.vararg or args.kwarg or fn
        raise NotSupportedError(
            source,
            node,
            "Compiled functions can't take variable number of arguments or use "
            "keyword-only arguments with defaults",
        )
    for default in args.defaults:
        _check_node(default, source)
    for statement in fn.body:
        _check_node(statement, source)


def _check_node(node: ast.AST, source: SourceContext) -> None:
    what = _NAMES.get(type(node))
    if what is not None:
        raise UnsupportedNodeError(source, node, what)
    if isinstance(node, (ast.For, ast.While)) and node.orelse:
        raise UnsupportedNodeError(source, node, "else branches of loops")
    if isinstance(node, ast.Attribute) and node.attr.startswith("__"):
        raise RuntimeError(
            f"\nobject has no attribute or method '{node.attr}'.:\n" + source.highlight(node)
        )
    if isinstance(node, (ast.ListComp, ast.DictComp)):
        if len(node.generators) != 1:
            raise NotSupportedError(source, node, "Only a single generator is currently supported")
        if node.generators[0].ifs:
            raise NotSupportedError(source, node, "Comprehension ifs are not supported yet")
    if isinstance(node, ast.Call) and any(k.arg is None for k in node.keywords):
        raise UnsupportedNodeError(source, node, "keyword argument unpacking (**)")
    if not isinstance(node, (*_STATEMENTS, *_EXPRESSIONS)):
        raise UnsupportedNodeError(source, node, type(node).__name__)
    for child in ast.iter_child_nodes(node):
        _check_node(child, source)


def check_with_statements(
    fn: ast.FunctionDef, source: SourceContext, *, builtin_calls: bool
) -> None:
    """Refuse a ``with`` statement other than ``with tocha.no_grad()``/``enable_grad()``.

    It runs twice: before names are resolved (``builtin_calls=False``), leaving a context
    made by calling a Python builtin (``with open(...)``), so that resolution reports the
    builtin as PyTorch does; and after (``builtin_calls=True``), refusing everything else.
    """
    for node in ast.walk(fn):
        if isinstance(node, ast.With):
            _check_with(node, source, builtin_calls)


def _check_with(node: ast.With, source: SourceContext, builtin_calls: bool) -> None:
    for item in node.items:
        call = item.context_expr
        func = call.func if isinstance(call, ast.Call) else None
        name = getattr(func, "attr", getattr(func, "id", None))
        if not builtin_calls and isinstance(func, ast.Name) and hasattr(builtins, func.id):
            continue
        if name not in _GRAD_CONTEXTS or item.optional_vars is not None:
            raise UnsupportedNodeError(
                source, node, "with statements (other than 'with torch.no_grad()')"
            )
