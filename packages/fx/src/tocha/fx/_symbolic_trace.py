"""Symbolic tracing: run a module's ``forward`` on `Proxy` inputs and record what it does."""

from __future__ import annotations

import builtins
import inspect
import math
import operator
from collections.abc import Callable, Iterator
from types import FunctionType, ModuleType
from typing import Any

import tocha
from tocha.nn import Module, Parameter, Sequential

from . import _patching
from .graph import Graph
from .graph_module import GraphModule
from .node import Argument, Node, Target
from .proxy import ParameterProxy, Proxy, TraceError

__all__ = ["PH", "GraphAppendingTracer", "Tracer", "is_fx_tracing", "symbolic_trace", "wrap"]

_BASE_TYPES = (str, int, float, bool, complex, tocha.dtype, tocha.device, tocha.memory_format,
               tocha.layout, type(None), type(Ellipsis))  # fmt: skip
_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
_NOT_POSITIONAL = {
    inspect.Parameter.KEYWORD_ONLY,
    inspect.Parameter.VAR_POSITIONAL,
    inspect.Parameter.VAR_KEYWORD,
}

# (module globals, function name) pairs registered by `wrap`.
_wrapped: list[tuple[dict[str, Any], str]] = []
_tracing_depth = 0


class _PlaceholderSentinel:
    """`PH`: a concrete_args value that keeps the argument symbolic."""

    def __repr__(self) -> str:
        return "PH"


PH = _PlaceholderSentinel()


def is_fx_tracing() -> bool:
    """Whether a symbolic trace is running."""
    return _tracing_depth > 0


def _assert_is_none(value: Any, msg: str) -> None:
    """The check a graph makes on an argument specialised to None."""
    if value is not None:
        raise AssertionError(msg)


def _assert(condition: Any, msg: str) -> None:
    """The check a graph makes on an argument specialised to a value."""
    if not condition:
        raise AssertionError(msg)


def wrap(fn_or_name: str | Callable[..., Any]) -> str | Callable[..., Any]:
    """Keep a module-level function (or a builtin such as ``len``) out of tracing: calls to it
    with Proxy arguments become one ``call_function`` node. Call it at the top level of the
    module that uses the function; returns its argument."""
    caller = inspect.currentframe().f_back  # type: ignore[union-attr]
    if caller is None or caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    if callable(fn_or_name):
        name = getattr(fn_or_name, "__name__", "")
        if name == "<lambda>" or not name:
            raise AssertionError("wrap must be called on a named function, not a lambda")
        if caller.f_globals.get(name, fn_or_name) is not fn_or_name:
            raise AssertionError(f"wrap({name}) must refer to the module-level {name}")
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise AssertionError("wrap must be called with the name of a function or the function")
    _wrapped.append((caller.f_globals, name))
    return fn_or_name


class Tracer:
    """Builds a `Graph` from a module or function by running it on Proxies
    (``trace(root)``). Override `is_leaf_module` to choose which submodules stay
    ``call_module`` nodes, `create_arg` for how values become node arguments.

    `autowrap_modules`' functions and `autowrap_functions` that the traced code's globals
    refer to are recorded as calls instead of traced through; with `param_shapes_constant`,
    a parameter's shape, size and dims are read as numbers."""

    def __init__(
        self,
        autowrap_modules: tuple[ModuleType, ...] = (math,),
        autowrap_functions: tuple[Callable[..., Any], ...] = (),
        param_shapes_constant: bool = False,
    ) -> None:
        self._autowrap_functions = [
            value
            for module in autowrap_modules
            for name, value in vars(module).items()
            if not name.startswith("_") and callable(value) and not isinstance(value, type)
        ] + list(autowrap_functions)
        self._autowrap_modules = tuple(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.graph = Graph()
        self.module_stack: dict[str, tuple[str, type]] = {}
        self.scope_path = ""
        self.tensor_attrs: dict[int, tuple[Any, str]] = {}
        self.submodule_paths: dict[Module, str] | None = None
        self.root: Module = Module()
        self.record_stack_traces = False

    # -- nodes and arguments ------------------------------------------------------------------
    def create_node(
        self,
        kind: str,
        target: Target,
        args: tuple[Argument, ...],
        kwargs: dict[str, Argument],
        name: str | None = None,
        type_expr: Any | None = None,
    ) -> Node:
        """Add a node to the graph under construction; `args`/`kwargs` hold no Proxies."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        if self.module_stack:
            node.meta["nn_module_stack"] = dict(self.module_stack)
        return node

    def proxy(self, node: Node) -> Proxy:
        """The Proxy standing for `node`."""
        return Proxy(node, self)

    def create_proxy(
        self,
        kind: str,
        target: Target,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        name: str | None = None,
        type_expr: Any | None = None,
        proxy_factory_fn: Callable[[Node], Proxy] | None = None,
    ) -> Proxy:
        """Turn `args` and `kwargs` into node arguments (`create_arg`), add the node and
        return its Proxy (made by `proxy_factory_fn` when given)."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise AssertionError("create_arg must keep args a tuple and kwargs a dict")
        node = self.create_node(kind, target, args_, dict(kwargs_), name, type_expr)
        if self.record_stack_traces and "stack_trace" not in node.meta:
            node.meta["stack_trace"] = _user_stack()
        return proxy_factory_fn(node) if proxy_factory_fn is not None else self.proxy(node)

    def create_arg(self, a: Any) -> Argument:
        """`a` as a node argument: Proxies become their nodes, the root's parameters and
        tensors ``get_attr`` nodes (other tensors are stored on the root as
        ``_tensor_constant<i>``), containers are converted element by element."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node):
            return a
        if isinstance(a, Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, tocha.Tensor):
            known = self.tensor_attrs.get(id(a))
            if known is None or known[0] is not a:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                qualname = f"_tensor_constant{i}"
                object.__setattr__(self.root, qualname, a)
                known = self.tensor_attrs[id(a)] = (a, qualname)
            return self.create_node("get_attr", known[1], (), {})
        if isinstance(a, Module):
            return self.create_node("get_attr", self.path_of_module(a), (), {})
        if isinstance(a, tuple):
            items = tuple(self.create_arg(elem) for elem in a)
            return type(a)(*items) if hasattr(a, "_fields") else items
        if isinstance(a, list):
            return [self.create_arg(elem) for elem in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                if isinstance(k, Proxy):
                    raise TraceError(
                        "Keys for dictionaries used as an argument cannot contain a Node"
                    )
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))  # type: ignore[arg-type]
        if isinstance(a, _BASE_TYPES):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    # -- modules and attributes -----------------------------------------------------------------
    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """Whether calls to `m` are recorded as ``call_module`` instead of traced through:
        by default, tocha.nn's own modules other than Sequential."""
        return type(m).__module__.startswith("tocha.nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod: Module) -> str:
        """The dotted path of `mod` in the root module; NameError when it is not one of its
        submodules."""
        if self.submodule_paths is not None:
            path = self.submodule_paths.get(mod)
            if path is not None:
                return path
        for name, candidate in self.root.named_modules():
            if candidate is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(
        self,
        m: Module,
        forward: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """A call of submodule `m`: a ``call_module`` node for a leaf module, otherwise its
        ``forward`` traced through."""
        module_qualified_name = self.path_of_module(m)
        saved_path = self.scope_path
        self.scope_path = module_qualified_name
        self.module_stack[module_qualified_name] = (module_qualified_name, type(m))
        try:
            if not self.is_leaf_module(m, module_qualified_name):
                return forward(*args, **kwargs)
            return self.create_proxy("call_module", module_qualified_name, args, kwargs)
        finally:
            self.module_stack.pop(module_qualified_name, None)
            self.scope_path = saved_path

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Any]) -> Any:
        """What reading `attr` (value `attr_val`) off a module gives while tracing: a
        ``get_attr`` Proxy for a parameter of the root, the value itself otherwise."""
        if not isinstance(attr_val, Parameter):
            return attr_val
        for n, p in self.root.named_parameters():
            if attr_val is p:
                if n not in parameter_proxy_cache:
                    factory = None
                    if self.param_shapes_constant:

                        def factory(node: Node, n: str = n, p: Any = p) -> Proxy:
                            return ParameterProxy(self, node, n, p)

                    parameter_proxy_cache[n] = self.create_proxy(
                        "get_attr", n, (), {}, proxy_factory_fn=factory
                    )
                return parameter_proxy_cache[n]
        return attr_val

    # -- control flow ---------------------------------------------------------------------------
    def to_bool(self, obj: Proxy) -> bool:
        """Called on ``bool(proxy)``: refuses, since the value is unknown while tracing."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: Proxy) -> Iterator[Any]:
        """Called on ``iter(proxy)`` (other than ``a, b = proxy``): refuses."""
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in "
            "a loop or as a *args or **kwargs function argument. See the torch.fx docs on "
            "pytorch.org for a more detailed explanation of what types of control flow can be "
            "traced, and check out the Proxy docstring for help troubleshooting Proxy "
            "iteration errors"
        )

    def keys(self, obj: Proxy) -> Any:
        """Called on ``**proxy``: records ``proxy.keys()``."""
        return self.create_proxy("call_method", "keys", (obj,), {})

    # -- tracing ----------------------------------------------------------------------------------
    def trace(
        self, root: Module | Callable[..., Any], concrete_args: dict[str, Any] | None = None
    ) -> Graph:
        """Trace `root` (a Module's ``forward``, or a function) and return the Graph.
        `concrete_args` fixes some arguments to values (branches on them are taken as
        traced; the graph checks that later calls pass the same value)."""
        global _tracing_depth
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
            self.submodule_paths = {mod: name for name, mod in root.named_modules()}
        else:
            self.root = Module()
            fn = root
        self.graph = Graph(tracer_cls=type(self))
        self.tensor_attrs = {}
        for mod_name, mod in self.root.named_modules():
            for attr_name, value in list(vars(mod).items()) + list(mod._buffers.items()):
                if isinstance(value, tocha.Tensor) and not isinstance(value, Parameter):
                    qualname = f"{mod_name}.{attr_name}" if mod_name else attr_name
                    self.tensor_attrs.setdefault(id(value), (value, qualname))
        fn_globals = getattr(fn, "__globals__", {})
        call_fn, args = self._create_args_for_root(fn, isinstance(root, Module), concrete_args)
        parameter_proxy_cache: dict[str, Any] = {}
        orig_getattr = Module.__getattr__
        orig_call = Module.__call__
        tracer = self

        def module_getattr_wrapper(mod: Module, attr: str) -> Any:
            return tracer.getattr(attr, orig_getattr(mod, attr), parameter_proxy_cache)

        def module_call_wrapper(mod: Module, *args: Any, **kwargs: Any) -> Any:
            def forward(*args: Any, **kwargs: Any) -> Any:
                return orig_call(mod, *args, **kwargs)

            return tracer.call_module(mod, forward, args, kwargs)

        globals_dicts = [fn_globals, *(vars(m) for m in self._autowrap_modules)] + [
            getattr(type(m).forward, "__globals__", {})
            for m in self.root.modules()
            if not self.is_leaf_module(m, "")
        ]
        _tracing_depth += 1
        try:
            with _patching.Patcher() as patcher:
                patcher.patch(Module, "__getattr__", module_getattr_wrapper)
                patcher.patch(Module, "__call__", module_call_wrapper)
                intercept_proxy_calls(patcher, globals_dicts, self._autowrap_functions)
                result = call_fn(*args)
                self.create_node(
                    "output",
                    "output",
                    (self.create_arg(result),),
                    {},
                    type_expr=_annotation(getattr(fn, "__annotations__", {}).get("return")),
                )
        finally:
            _tracing_depth -= 1
            self.submodule_paths = None
        return self.graph

    def _create_args_for_root(
        self, fn: Callable[..., Any], is_module: bool, concrete_args: dict[str, Any] | None
    ) -> tuple[Callable[..., Any], list[Any]]:
        """One placeholder per parameter of `fn` (but ``self``), and `fn` made callable with
        them all positionally: keyword-only, ``*args`` and ``**kwargs`` parameters become
        plain ones, each receiving its Proxy, as torch.fx does."""
        concrete_args = dict(concrete_args or {})
        params = list(inspect.signature(fn).parameters.values())[1 if is_module else 0 :]
        unknown = set(concrete_args) - {p.name for p in params}
        if unknown:
            raise RuntimeError(
                f"concrete_args names {sorted(unknown)} that are not arguments of {fn.__name__}"
            )
        kinds = {p.kind for p in params}
        flatten = bool(kinds & _NOT_POSITIONAL)
        if flatten:
            if not isinstance(fn, FunctionType):
                raise NotImplementedError(
                    "keyword-only, *args and **kwargs parameters are supported on Python "
                    "functions only"
                )
            order = {name: i for i, name in enumerate(fn.__code__.co_varnames)}
            params.sort(key=lambda p: order[p.name])
        args: list[Any] = [self.root] if is_module else []
        for p in params:
            if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                star = "*" if p.kind is inspect.Parameter.VAR_POSITIONAL else "**"
                args.append(self.create_proxy("placeholder", f"{star}{p.name}", (), {}))
                continue
            default = () if p.default is inspect.Parameter.empty else (p.default,)
            if p.name in concrete_args and concrete_args[p.name] is not PH:
                args.append(self._concrete_placeholder(p.name, concrete_args[p.name], default))
                continue
            type_expr = _annotation(p.annotation)
            args.append(self.create_proxy("placeholder", p.name, default, {}, type_expr=type_expr))
        if flatten:
            code = fn.__code__  # type: ignore[union-attr]
            code = code.replace(
                co_argcount=code.co_argcount
                + code.co_kwonlyargcount
                + bin(code.co_flags & _VARSTUFF).count("1"),
                co_kwonlyargcount=0,
                co_flags=code.co_flags & ~_VARSTUFF,
            )
            fn = FunctionType(code, fn.__globals__, fn.__name__, None, fn.__closure__)  # type: ignore[union-attr]
        return fn, args

    def _concrete_placeholder(self, name: str, value: Any, default: tuple[Any, ...]) -> Any:
        """A placeholder renamed so that the name stays free, then the graph's check that
        later calls pass `value`; returns `value`, which the trace uses."""
        self.graph._namespace.create_name(name)
        renamed = self.graph._namespace.create_name(name)
        self.graph._namespace.release(renamed)
        ph = self.create_proxy("placeholder", renamed, default, {})
        message = f"{name} has been specialized to have value {value} but got another value"
        if value is None:
            self.create_proxy("call_function", _assert_is_none, (ph, message), {})
        elif isinstance(value, (bool, int, float, str)):
            eq = self.create_proxy("call_function", operator.eq, (ph, value), {})
            self.create_proxy("call_function", _assert, (eq, message), {})
        return value


class GraphAppendingTracer(Tracer):
    """A tracer whose Proxies append nodes to an existing `graph`: build graphs by writing
    code on ``Proxy(graph.placeholder("x"), GraphAppendingTracer(graph))``. Outside
    ``symbolic_trace`` only operators and method calls on Proxies are recorded (tocha's
    functions are intercepted during a trace only)."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.scope_path = ""


def intercept_proxy_calls(
    patcher: _patching.Patcher,
    globals_dicts: list[dict[str, Any]] = (),  # type: ignore[assignment]
    extra_functions: list[Callable[..., Any]] = (),  # type: ignore[assignment]
) -> None:
    """Until `patcher` exits, calls of tocha's public functions, of `wrap`ped functions and
    of Tensor methods with Proxy arguments record nodes on the Proxies' tracer."""
    _patching.intercept_functions(
        patcher,
        _is_proxy,
        _record_call,
        _unique_dicts(list(globals_dicts)),
        extra_functions,
        _record_method,
        _module_classes(),
    )
    for g, name in _wrapped:
        _patching.wrap_global(patcher, g, name, _is_proxy, _record_call)


def _annotation(annotation: Any) -> Any:
    """A parameter's or result's annotation as a node type: None when absent or a string
    (postponed annotations are not evaluated)."""
    if annotation is inspect.Parameter.empty or isinstance(annotation, str):
        return None
    return annotation


def _is_proxy(value: Any) -> bool:
    return isinstance(value, Proxy)


def _find_proxy(value: Any) -> Proxy | None:
    if isinstance(value, Proxy):
        return value
    if isinstance(value, (tuple, list)):
        for v in value:
            found = _find_proxy(v)
            if found is not None:
                return found
    if isinstance(value, dict):
        return _find_proxy(list(value.values()))
    return None


def _record_call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Proxy:
    proxy = _find_proxy(args)
    if proxy is None:
        proxy = _find_proxy(kwargs)
    assert proxy is not None
    return proxy.tracer.create_proxy("call_function", fn, args, kwargs)


def _record_method(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Proxy:
    proxy = _find_proxy(args)
    if proxy is None:
        proxy = _find_proxy(kwargs)
    assert proxy is not None
    return proxy.tracer.create_proxy("call_method", name, args, kwargs)


def _module_classes() -> list[type]:
    """Every subclass of ``tocha.nn.Module`` defined so far."""
    found: dict[type, None] = {}
    pending = [Module]
    while pending:
        cls = pending.pop()
        for sub in type.__subclasses__(cls):
            if sub not in found:
                found[sub] = None
                pending.append(sub)
    return list(found)


def _unique_dicts(dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[int, dict[str, Any]] = {}
    for d in dicts:
        if d is not vars(builtins):
            seen.setdefault(id(d), d)
    return list(seen.values())


def _user_stack() -> str:
    import traceback

    frames = [
        f
        for f in traceback.extract_stack()
        if "/tocha/fx/" not in f.filename and "/tocha/_" not in f.filename
    ]
    return "".join(traceback.format_list(frames[-1:]))


def symbolic_trace(
    root: Module | Callable[..., Any], concrete_args: dict[str, Any] | None = None
) -> GraphModule:
    """Trace `root` with a default `Tracer` and return a GraphModule that runs the recorded
    graph (named after `root`'s class or function)."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
