"""`Graph`: an ordered, doubly linked list of `Node`s, the IR of tocha's graph mode.

Conventions for ``Node.meta`` shared by ``tocha.fx``, ``tocha.export``, ``tocha.jit`` and
``tocha.onnx``:

- ``meta['val']``: an example of the node's value: a ``tocha.Tensor`` (or a ``tocha.export``
  fake tensor) for tensor-valued nodes, a tuple/list of them for multi-output nodes, a Python
  scalar for symbolic sizes resolved to numbers. Written by ``tocha.export`` while tracing.
- ``meta['tensor_meta']``: a ``tocha.fx.passes.shape_prop.TensorMetadata`` (shape, dtype,
  requires_grad, stride, memory_format, is_quantized, qparams), or a tuple/list/dict of them
  for nodes returning several tensors. Written by ``ShapeProp``.
- ``meta['stack_trace']`` (optional): the user's source line(s) the node came from, as
  text; also readable as ``node.stack_trace``.
- ``meta['nn_module_stack']`` (optional): ``{path: (qualified_path, module_type)}`` from the
  outermost to the innermost module being called when the node was created.
"""

from __future__ import annotations

import builtins
import copy
import inspect
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from . import _codegen
from ._codegen import PythonCode
from ._names import Namespace, qualified_name, snake_case
from .node import Argument, Node, Target, map_arg

if TYPE_CHECKING:
    from tocha.nn import Module

__all__ = ["Graph", "PythonCode"]

_LEGAL_OPS = ("call_function", "call_method", "get_attr", "call_module", "placeholder", "output")


class _NodeList:
    """A live view of a graph's nodes, in order; erasing the node just yielded while
    iterating is allowed."""

    def __init__(self, graph: Graph, reverse: bool = False) -> None:
        self._graph = graph
        self._reverse = reverse

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self._graph._root
        step = "_prev" if self._reverse else "_next"
        cur = getattr(root, step)
        while cur is not root:
            nxt = getattr(cur, step)
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self) -> Iterator[Node]:
        return iter(_NodeList(self._graph, not self._reverse))

    def __repr__(self) -> str:
        return repr(list(self))


class _InsertPoint:
    """Sets where new nodes go; restores the previous place when used as a context manager
    and left."""

    def __init__(self, graph: Graph, place: Callable[[Node], None]) -> None:
        self._graph = graph
        self._previous = graph._insert
        graph._insert = place

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        self._graph._insert = self._previous


class Graph:
    """The nodes of a program, in execution order. Build one with `placeholder`,
    `call_function`, `call_method`, `call_module`, `get_attr` and `output`, or by tracing
    (`tocha.fx.symbolic_trace`); run it inside a `GraphModule`."""

    def __init__(
        self,
        owning_module: Module | None = None,
        tracer_cls: type | None = None,
        tracer_extras: dict[str, Any] | None = None,
    ) -> None:
        self._root = Node(self, "", "placeholder", "", (), {})
        self._root.op = "root"
        self._insert: Callable[[Node], None] = self._root.prepend
        self._len = 0
        self._namespace = Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras

    # -- structure ----------------------------------------------------------------------------
    @property
    def owning_module(self) -> Module | None:
        """The GraphModule this graph belongs to, if any."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod: Module | None) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _NodeList:
        """The nodes in order (a live view: it reflects later insertions and erasures)."""
        return _NodeList(self)

    def find_nodes(self, *, op: str, target: Target | None = None, sort: bool = True) -> list[Node]:
        """The nodes with this `op` (and `target`, if given), in graph order."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    def output_node(self) -> Node:
        """The graph's ``output`` node (the last node)."""
        last = self._root._prev
        if last.op != "output":
            raise RuntimeError("Graph has no output node")
        return last

    # -- building -----------------------------------------------------------------------------
    def create_node(
        self,
        op: str,
        target: Target,
        args: tuple[Argument, ...] | None = None,
        kwargs: dict[str, Argument] | None = None,
        name: str | None = None,
        type_expr: Any | None = None,
    ) -> Node:
        """Create a node at the current insertion point (the end unless `inserting_before`/
        `inserting_after` says otherwise) and return it. Its name is `name`, or one derived
        from `target`, made unique in the graph."""
        if op not in _LEGAL_OPS:
            raise AssertionError(f"op '{op}' is not in _legal_ops")
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        # A function read while tracing may be the tracer's stand-in: record the function.
        target = getattr(target, "__fx_original__", target)
        if not isinstance(args, tuple):
            raise AssertionError("args must be a tuple")
        if not isinstance(kwargs, dict):
            raise AssertionError("kwargs must be a dict")
        candidate = name if name is not None else self._target_to_str(target)
        node_name = self._namespace.create_name(candidate)
        node = Node(self, node_name, op, target, args, kwargs, type_expr)
        self._namespace.associate(node_name, node)
        self._insert(node)
        self._len += 1
        return node

    @staticmethod
    def _target_to_str(target: Target) -> str:
        if callable(target):
            name = getattr(target, "__name__", None) or type(target).__name__
        else:
            name = str(target)
            if name.startswith("__") and name.endswith("__"):
                name = name[2:-2]
        return snake_case(name)

    def placeholder(
        self,
        name: str,
        type_expr: Any | None = None,
        default_value: Any = inspect.Signature.empty,
    ) -> Node:
        """An input of the graph named `name`; `default_value` makes it optional."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any | None = None) -> Node:
        """Fetch the attribute at dotted path `qualified_name` of the owning module (a
        parameter, buffer, submodule or constant). Warns when the owning module lacks it."""
        root = self._owning_module
        if root is not None and not _has_path(root, qualified_name):
            warnings.warn(
                "Attempted to insert a get_attr Node with no underlying reference in the "
                f"owning GraphModule! Call GraphModule.add_submodule to add the necessary "
                f"submodule, GraphModule.add_parameter to add the necessary Parameter, or "
                f"nn.Module.register_buffer to add the necessary buffer ({qualified_name})",
                stacklevel=2,
            )
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(
        self,
        module_name: str,
        args: tuple[Argument, ...] | None = None,
        kwargs: dict[str, Argument] | None = None,
        type_expr: Any | None = None,
    ) -> Node:
        """Call the submodule at dotted path `module_name` with `args` and `kwargs`."""
        root = self._owning_module
        if root is not None and not _has_path(root, module_name):
            warnings.warn(
                "Attempted to insert a call_module Node with no underlying reference in the "
                "owning GraphModule! Call GraphModule.add_submodule to add the necessary "
                f"submodule ({module_name})",
                stacklevel=2,
            )
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(
        self,
        method_name: str,
        args: tuple[Argument, ...] | None = None,
        kwargs: dict[str, Argument] | None = None,
        type_expr: Any | None = None,
    ) -> Node:
        """Call method `method_name` on ``args[0]`` with the other arguments."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(
        self,
        the_function: Callable[..., Any],
        args: tuple[Argument, ...] | None = None,
        kwargs: dict[str, Argument] | None = None,
        type_expr: Any | None = None,
    ) -> Node:
        """Call the free function `the_function` with `args` and `kwargs`."""
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result: Argument, type_expr: Any | None = None) -> Node:
        """The graph's result: `result` (a node or a structure of nodes and constants)."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(
        self, node: Node, arg_transform: Callable[[Node], Argument] = lambda x: x
    ) -> Node:
        """Copy `node` (from any graph) into this one at the insertion point, mapping the
        nodes in its arguments with `arg_transform`; its ``meta`` is copied too."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)  # type: ignore[arg-type]
        new.meta = copy.copy(node.meta)
        return new

    def graph_copy(
        self, g: Graph, val_map: dict[Node, Node], return_output_node: bool = False
    ) -> Argument:
        """Copy every node of `g` but its output into this graph; `val_map` maps `g`'s nodes
        to the copies (it is filled in). Returns the value `g` outputs, mapped (and the
        output node with `return_output_node`)."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                result = map_arg(node.args[0], lambda n: val_map[n])
                return (result, node) if return_output_node else result
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: dict[int, Any]) -> Graph:
        memo = memo if memo is not None else {}
        memo[id(self)] = result = Graph(tracer_cls=self._tracer_cls)
        val_map: dict[Node, Node] = {}
        output_vals = result.graph_copy(self, val_map, return_output_node=True)
        if output_vals is not None:
            value, old_output = output_vals  # type: ignore[misc, str-unpack]
            new_output = result.output(value, type_expr=old_output.type)
            new_output.meta = copy.copy(old_output.meta)
        return result

    @contextmanager
    def _inserting(self, place: Callable[[Node], None]) -> Iterator[None]:
        with _InsertPoint(self, place):
            yield

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """New nodes go before `n` (the start of the graph when None) until the returned
        context manager exits."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """New nodes go after `n` (the end of the graph when None), each after the previous
        one, until the returned context manager exits."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n._next.prepend)

    # -- removing -----------------------------------------------------------------------------
    def erase_node(self, to_erase: Node) -> None:
        """Remove `to_erase`, which must have no users, from the graph."""
        if len(to_erase.users) > 0:
            raise RuntimeError(
                f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                f"users in the graph: {to_erase.users}!"
            )
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node", stacklevel=2)
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        self._namespace.release(to_erase.name)
        to_erase._update_args_kwargs((), {})

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Erase the nodes whose results nobody uses and that have no side effects
        (`Node.is_impure`, or `is_impure_node` when given). Returns whether anything
        changed."""
        self.lint()
        impure = is_impure_node if is_impure_node is not None else Node.is_impure
        changed = False
        for node in reversed(self.nodes):
            if node.op in ("placeholder", "output"):
                continue
            if not node.users and not impure(node):
                self.erase_node(node)
                changed = True
        return changed

    # -- checking -----------------------------------------------------------------------------
    def lint(self) -> None:
        """Check the graph is well formed: nodes belong to it, arguments are defined before
        use, names are unique, targets have the right types and, with an owning module,
        ``get_attr``/``call_module`` targets exist. Raises RuntimeError otherwise."""
        seen: set[Node] = set()
        names: set[str] = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.op not in (
                "placeholder",
                "get_attr",
                "call_function",
                "call_method",
                "call_module",
                "output",
            ):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            for inp in node.all_input_nodes:
                if inp.graph is not self:
                    raise RuntimeError(
                        f"Argument '{inp}' of Node '{node}' does not belong to this Graph!"
                    )
                if inp not in seen:
                    raise RuntimeError(
                        f"Argument '{inp}' of Node '{node}' was used before it has been defined! "
                        f"Please check that Nodes in the graph are topologically ordered\n{self}"
                    )
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            if node.op == "call_function" and not callable(node.target):
                raise RuntimeError(
                    f"Node {node} target {node.target} has type {type(node.target)} but a "
                    "Callable is expected"
                )
            if node.op in (
                "placeholder",
                "get_attr",
                "call_method",
                "call_module",
            ) and not isinstance(node.target, str):
                raise RuntimeError(
                    f"Node {node} target {node.target} has type {type(node.target)} but a "
                    "str is expected"
                )
            seen.add(node)
            names.add(node.name)
        if self._owning_module is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module") and not _has_path(
                    self._owning_module, str(node.target)
                ):
                    kind = "Module" if node.op == "call_module" else "attribute"
                    raise RuntimeError(
                        f"Node {node} target {node.target} references nonexistent {kind} "
                        f"{node.target}"
                    )

    # -- printing -----------------------------------------------------------------------------
    def python_code(
        self,
        root_module: str = "self",
        *,
        verbose: bool = False,
        include_stride: bool = False,
        include_device: bool = False,
        colored: bool = False,
    ) -> PythonCode:
        """The Python source of this graph as a function taking `root_module` then the
        placeholders, with the globals it refers to. `verbose` adds each value's type as a
        comment where ``meta['val']`` holds one; `include_stride`, `include_device` and
        `colored` are accepted for torch.fx's signature and change nothing."""
        return _codegen.generate(self, root_module, verbose=verbose)

    def __str__(self) -> str:
        return "\n".join(["graph():", *(f"    {node.format_node()}" for node in self.nodes)])

    def print_tabular(self) -> None:
        """Print one row per node: opcode, name, target, args, kwargs."""
        headers = ["opcode", "name", "target", "args", "kwargs"]
        rows = [
            [
                n.op,
                n.name,
                qualified_name(n.target) if callable(n.target) else str(n.target),
                str(n.args),
                str(n.kwargs),
            ]
            for n in self.nodes
        ]
        try:
            from tabulate import tabulate  # type: ignore[import-untyped]
        except ImportError:
            widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
            fmt = "  ".join(f"{{:<{w}}}" for w in widths)
            out = [fmt.format(*headers), "  ".join("-" * w for w in widths)]
            out += [fmt.format(*r) for r in rows]
            builtins.print("\n".join(line.rstrip() for line in out))
        else:
            builtins.print(tabulate(rows, headers=headers))


def _has_path(root: Any, target: str) -> bool:
    obj = root
    for part in target.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True
