"""`Node`: one operation of a `Graph`, and the helpers that walk its arguments."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional, Union

from ._names import qualified_name
from .immutable_collections import immutable_dict, immutable_list

if TYPE_CHECKING:
    from .graph import Graph

__all__ = ["Argument", "Node", "Target", "has_side_effect", "map_aggregate", "map_arg"]

Target = Union[Callable[..., Any], str]  # noqa: UP007
Argument = Optional[  # noqa: UP045
    Union[tuple[Any, ...], list[Any], dict[str, Any], slice, range, "Node", str, int, float, bool]  # noqa: UP007
]

OPCODES = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output")

_side_effectful_functions: set[Callable[..., Any]] = {operator.setitem}
# Random functions are impure: eliminating or reordering them changes the numbers drawn.
_RANDOM_NAMES = (
    "rand",
    "randn",
    "randint",
    "randperm",
    "rand_like",
    "randn_like",
    "randint_like",
    "bernoulli",
    "multinomial",
    "normal",
    "poisson",
    "dropout",
    "alpha_dropout",
    "feature_alpha_dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "rrelu",
)


def has_side_effect(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark `fn` as having side effects: nodes calling it are never dead code. Returns `fn`,
    so it works as a decorator."""
    _side_effectful_functions.add(fn)
    return fn


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """Apply `fn` to every leaf of `a`, rebuilding tuples (named tuples too), lists, dicts and
    slices around the results."""
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(elem, fn) for elem in a)
        return mapped if not hasattr(a, "_fields") else type(a)(*mapped)
    if isinstance(a, list):
        return immutable_list(map_aggregate(elem, fn) for elem in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(
            map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn)
        )
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """Apply `fn` to every `Node` inside `a` (nested in tuples, lists, dicts or slices),
    leaving other values as they are."""
    if not callable(fn):
        raise TypeError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _collect_nodes(args: Any, kwargs: Any) -> dict[Node, None]:
    found: dict[Node, None] = {}
    map_arg(args, found.setdefault)
    map_arg(kwargs, found.setdefault)
    return found


def _format_arg(arg: Any) -> str:
    if isinstance(arg, Node):
        return f"%{arg}"
    if isinstance(arg, tuple) and not hasattr(arg, "_fields"):
        items = ", ".join(_format_arg(a) for a in arg)
        return f"({items},)" if len(arg) == 1 else f"({items})"
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, slice):
        return f"slice({_format_arg(arg.start)}, {_format_arg(arg.stop)}, {_format_arg(arg.step)})"
    return qualified_name(arg) if callable(arg) and not isinstance(arg, type) else str(arg)


class Node:
    """One operation in a `Graph`.

    ``op`` is one of ``placeholder`` (a function input; ``target`` is its name),
    ``get_attr`` (fetch a parameter, buffer or constant; ``target`` is its dotted path),
    ``call_function`` (``target`` is the callable), ``call_method`` (``target`` is the
    method name, called on ``args[0]``), ``call_module`` (``target`` is the submodule's
    dotted path) and ``output`` (``args[0]`` is what the graph returns).

    ``users`` maps each node that reads this one to None; setting ``args``/``kwargs``
    keeps it right. ``meta`` holds passes' annotations (conventions in `tocha.fx.graph`).
    """

    def __init__(
        self,
        graph: Graph,
        name: str,
        op: str,
        target: Target,
        args: tuple[Argument, ...],
        kwargs: dict[str, Argument],
        return_type: Any | None = None,
    ) -> None:
        if op not in OPCODES:
            raise ValueError(f"Node op must be one of {OPCODES}, got {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(
                f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                f"{type(target).__name__} but a Callable is expected"
            )
        if op in ("placeholder", "call_method", "call_module", "get_attr") and not isinstance(
            target, str
        ):
            raise ValueError(
                f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                f"{type(target).__name__} but a str is expected"
            )
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict[Node, None] = {}
        self.users: dict[Node, None] = {}
        self.type = return_type
        self.meta: dict[str, Any] = {}
        self._prev: Node = self
        self._next: Node = self
        self._erased = False
        self._args: tuple[Argument, ...] = ()
        self._kwargs: dict[str, Argument] = immutable_dict()
        self._update_args_kwargs(args, kwargs)

    # -- arguments ----------------------------------------------------------------------------
    @property
    def args(self) -> tuple[Argument, ...]:
        """The positional arguments; assigning them updates the users of the nodes involved."""
        return self._args

    @args.setter
    def args(self, a: tuple[Argument, ...]) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict[str, Argument]:
        """The keyword arguments; assigning them updates the users of the nodes involved."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: dict[str, Argument]) -> None:
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list[Node]:
        """The distinct nodes among ``args`` and ``kwargs``, in order of appearance."""
        return list(self._input_nodes)

    def _update_args_kwargs(self, new_args: Any, new_kwargs: Any) -> None:
        self._args = tuple(map_aggregate(tuple(new_args), lambda x: x))
        self._kwargs = map_aggregate(dict(new_kwargs), lambda x: x)  # type: ignore[assignment]
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = _collect_nodes(self._args, self._kwargs)
        for new in self._input_nodes:
            new.users.setdefault(self)

    def update_arg(self, idx: int, arg: Argument) -> None:
        """Set ``args[idx]`` to `arg`."""
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx: int, arg: Argument) -> None:
        """Insert `arg` at position `idx` of ``args``."""
        args = list(self._args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        """Set ``kwargs[key]`` to `arg`."""
        self.kwargs = {**self._kwargs, key: arg}

    # -- position in the graph ----------------------------------------------------------------
    @property
    def next(self) -> Node:
        """The node after this one (the graph's root sentinel after the last)."""
        return self._next

    @property
    def prev(self) -> Node:
        """The node before this one (the graph's root sentinel before the first)."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move (or insert) `x` just before this node."""
        if self is x:
            raise AssertionError("Cannot prepend a node to itself")
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Move (or insert) `x` just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # -- rewriting ----------------------------------------------------------------------------
    def replace_all_uses_with(
        self,
        replace_with: Node,
        delete_user_cb: Callable[[Node], bool] = lambda user: True,
        *,
        propagate_meta: bool = False,
    ) -> list[Node]:
        """Make every user of this node read `replace_with` instead (those for which
        `delete_user_cb` returns True; as in torch.fx, that includes `replace_with` itself
        when it reads this node); returns the users changed. With `propagate_meta`, this
        node's ``meta`` is copied onto `replace_with`, which must have none."""
        if not isinstance(replace_with, Node):
            raise TypeError(
                f"replace_all_uses_with expects a Node to replace with, got "
                f"{type(replace_with).__name__}"
            )
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError(
                    "Called node.replace_all_uses_with(replace_with, propagate_meta=True), "
                    "but replace_with already has .meta keys"
                )
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Replace every occurrence of `old_input` in this node's arguments by `new_input`."""

        def swap(n: Node) -> Node:
            return new_input if n is old_input else n

        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # -- properties -----------------------------------------------------------------------------
    def is_impure(self) -> bool:
        """Whether the node has effects beyond its result (inputs, the output, in-place
        methods, functions marked by `has_side_effect`, random ops), so that dead-code
        elimination keeps it."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            target = self.target
            if target in _side_effectful_functions:
                return True
            name = getattr(target, "__name__", "")
            return name in _RANDOM_NAMES or (
                name.endswith("_") and not name.endswith("__") and name != "_"
            )
        if self.op == "call_method":
            name = str(self.target)
            return name.endswith("_") and not name.endswith("__")
        if self.op == "call_module":
            root = getattr(self.graph, "owning_module", None)
            if root is None:
                return False
            try:
                module = root.get_submodule(str(self.target))
            except AttributeError:
                return False
            return bool(getattr(module, "_is_impure", False))
        return False

    def format_node(
        self,
        placeholder_names: list[str] | None = None,
        maybe_return_typename: list[str] | None = None,
    ) -> str | None:
        """A one-line description, as in ``print(graph)``:
        ``%add : [num_users=1] = call_function[target=operator.add](args = (%x, %y), kwargs = {})``.
        A placeholder's name goes into `placeholder_names` instead (returning None) when that
        list is given; the output node's type into `maybe_return_typename`."""
        if self.op == "placeholder":
            if placeholder_names is not None:
                placeholder_names.append(str(self.target))
                return None
            type_text = f"{_type_repr(self.type)} " if self.type is not None else ""
            default = f"(default={self.args[0]!r})" if self.args else ""
            return (
                f"%{self.name} : {type_text}[num_users={len(self.users)}] = "
                f"placeholder[target={self.target}]{default}"
            )
        if self.op == "output":
            if self.type is not None and maybe_return_typename is not None:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        target = qualified_name(self.target) if callable(self.target) else self.target
        type_text = f"{_type_repr(self.type)} " if self.type is not None else ""
        if self.op == "get_attr":
            users = len(self.users)
            return f"%{self.name} : {type_text}[num_users={users}] = get_attr[target={target}]"
        return (
            f"%{self.name} : {type_text}[num_users={len(self.users)}] = {self.op}[target={target}]"
            f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})"
        )

    def __repr__(self) -> str:
        return self.name

    @property
    def stack_trace(self) -> str | None:
        """Where in the traced program this node came from (``meta['stack_trace']``)."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace: str | None) -> None:
        self.meta["stack_trace"] = trace


def _type_repr(t: Any) -> str:
    if isinstance(t, type):
        return t.__name__ if t.__module__ == "builtins" else qualified_name(t)
    return repr(t)
