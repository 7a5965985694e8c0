"""The tape: autograd metadata of tensors and the nodes (``grad_fn``) of the graph.

A tensor that takes part in autograd carries an `AutogradMeta` in its ``_ag`` slot. A tensor
made by a recorded op points to its `Node`; a leaf that requires grad is fed by an
`AccumulateGrad` node, made on first need, which the leaf refers to only weakly
(`accumulator_of`), so that no reference cycle outlives a graph. A node holds only what its
derivative formula needs (see `_formulas.SAVES`), and drops it after backward unless the
graph is retained.
"""

from __future__ import annotations

import weakref

from tocha import Size, Tensor
from tocha.library import FROM_NP, GRAD_MODE, wrap


class _RecordExtras:
    """Whether any thread has anomaly mode or saved-tensor hooks on (``active`` counts them):
    a plain attribute, so that the recorder reads the thread-local switches only when it is
    nonzero."""

    __slots__ = ("active",)

    def __init__(self):
        self.active = 0


RECORD_EXTRAS = _RecordExtras()


class TensorMeta:
    """Stands in a node for an argument tensor its formula does not need: shape, dtype,
    device; enough to shape a gradient, never its values."""

    __slots__ = ("raw_shape", "np_dtype", "device")  # set by `meta_of` (or the recorder)

    @property
    def shape(self) -> Size:
        return Size(self.raw_shape)

    @property
    def dtype(self):
        return FROM_NP[self.np_dtype]

    def dim(self) -> int:
        return len(self.raw_shape)

    @property
    def ndim(self) -> int:
        return len(self.raw_shape)

    def size(self, dim=None):
        return self.shape if dim is None else self.raw_shape[dim]

    def numel(self) -> int:
        return self.shape.numel()


def meta_of(t: Tensor) -> TensorMeta:
    """The `TensorMeta` of tensor `t`."""
    meta = TensorMeta()
    data = t._data
    meta.raw_shape = data.shape
    meta.np_dtype = data.dtype
    meta.device = t._device
    return meta


class _RareMetaFields:
    """Class-level defaults of the `AutogradMeta` fields few tensors set (a leaf's gradient
    and accumulator, hooks, a tangent; the output number of all but a first output): a tensor
    gets its own value, in its ``__dict__``, when one is first assigned, so a recorded op's
    output stores only two fields."""

    __slots__ = ()
    output_nr = 0
    grad = None
    retains_grad = False
    hooks = None
    post_accumulate_hooks = None
    accumulator = None
    fw = None  # (dual level, tangent) in forward-mode AD (see _forward)
    rebased = False  # a base's history set by an in-place op (its views may be stale)
    base_meta = None  # a view's: its base's history when the view's own was last set


class AutogradMeta(_RareMetaFields):
    """What autograd knows of one tensor."""

    __slots__ = ("requires_grad", "grad_fn", "__dict__")

    def __init__(self, requires_grad: bool, grad_fn=None, output_nr: int = 0):
        self.requires_grad = requires_grad
        self.grad_fn = grad_fn
        if output_nr:
            self.output_nr = output_nr


class Node(_RareMetaFields):
    """One recorded op: its derivative formula, what the formula needs, and one edge per
    argument (the node that receives that argument's gradient, or None).

    The node of a recorded one-output op is also its output's `AutogradMeta` (the output's
    ``_ag``): ``requires_grad`` is True, ``grad_fn`` the node itself, and the rare per-tensor
    fields (a retained gradient, a tangent) go to its ``__dict__``. A tensor's own hooks are
    only a leaf's (a non-leaf's are its node's pre-hooks), so ``hooks`` stays the node's.

    An edge may still be the leaf tensor itself, whose AccumulateGrad is made on first need
    (`resolve_edges`). ``input_meta`` holds, per argument, a `TensorMeta`, the saved tensor
    itself (until backward frees it: `freeze_metas`), or a non-tensor argument.
    ``out_meta`` is None for a recorded op's one output (its gradient tells its device).

    ``name()`` is PyTorch's style: ``MulBackward0``.
    """

    __slots__ = (
        "op_name",
        "formula",
        "saved",
        "edges",
        "edge_nrs",
        "input_meta",
        "versions",
        "out_data",
        "__dict__",
        "__weakref__",
    )
    # Fields few nodes set, read from the class until a node assigns its own (`record`
    # stores only the fields above).
    requires_grad = True  # as an output's metadata
    out_meta = None
    n_outputs = 1
    pre_hooks = None
    hooks = None
    released = False
    materialize = True
    takes_needs = False  # the formula takes ``needs=`` (see `_formulas.d`)
    packed = False  # saved-tensor hooks packed what it saved
    transformed = False  # recorded under a transform (vmap, a forward-AD level)
    trace = None

    @property
    def grad_fn(self):
        """As an output's metadata: the node that made it, itself."""
        return self

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    @property
    def next_functions(self) -> tuple:
        edges = resolve_edges(self)
        return tuple(
            (edge, nr)
            for edge, nr, meta in zip(edges, self.edge_nrs, self.input_meta)
            if isinstance(meta, (Tensor, TensorMeta))
        )

    def register_hook(self, fn):
        """`fn(grad_inputs, grad_outputs)` runs after this node computed its gradients."""
        if self.hooks is None:
            self.hooks = []
        self.hooks.append(fn)
        return _Handle(self.hooks, fn)

    def register_prehook(self, fn):
        """`fn(grad_outputs)` runs before this node; it may return replacement gradients."""
        if self.pre_hooks is None:
            self.pre_hooks = []
        entry = (None, fn)  # the engine's pre-hook entries: (output index or None, hook)
        self.pre_hooks.append(entry)
        return _Handle(self.pre_hooks, entry)

    @property
    def metadata(self) -> dict:
        """A dict of this node's own, for programs to keep what they like in."""
        found = self.__dict__.get("_metadata")
        if found is None:
            found = self.__dict__["_metadata"] = {}
        return found


class AccumulateGrad:
    """The node that adds a gradient into a leaf tensor's ``.grad``."""

    __slots__ = ("variable", "__dict__", "__weakref__")
    edges = ()
    edge_nrs = ()
    n_outputs = 1
    pre_hooks = None
    hooks = None
    transformed = False

    def __init__(self, variable: Tensor):
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self) -> tuple:
        return ()

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"

    register_hook = Node.register_hook
    register_prehook = Node.register_prehook
    metadata = Node.metadata


class _Handle:
    """Removes a hook from the list it was added to (also on leaving a ``with`` block)."""

    __slots__ = ("_hooks", "_fn")

    def __init__(self, hooks: list, fn):
        self._hooks, self._fn = hooks, fn

    def remove(self) -> None:
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)

    def __enter__(self) -> _Handle:
        return self

    def __exit__(self, *exc) -> None:
        """Leaving a ``with`` block removes the hook, as PyTorch's handles do."""
        self.remove()


NODE_TYPES: dict = {}  # op name -> its Node subclass


def node_type(op_name: str) -> type:
    """The Node subclass of `op_name`'s nodes, named as PyTorch names the backward node of the
    op (``mul`` -> ``MulBackward0``; a custom Function ``Exp`` -> ``ExpBackward``), so that
    ``type(t.grad_fn).__name__`` reads as in PyTorch. Its properties show what the node
    saved (``_saved_self``...: `_saved_fields`)."""
    cls = NODE_TYPES.get(op_name)
    if cls is None:
        from ._saved_fields import saved_properties

        if op_name[:1].islower():
            name = "".join(part.capitalize() for part in op_name.split("_")) + "Backward0"
        else:
            name = op_name + "Backward"
        namespace = {"__slots__": (), "__module__": "tocha.autograd.graph"}
        namespace.update(saved_properties(op_name))
        cls = NODE_TYPES[op_name] = type(name, (Node,), namespace)
    return cls


def new_node(
    op_name,
    formula,
    edges,
    edge_nrs,
    input_meta,
    saved,
    versions,
    out_meta,
    out_data=None,
    cls=None,
) -> Node:
    """A node with no hooks, not yet run; `out_meta` has one entry per output. Its class is
    `cls`, or the op's `node_type`."""
    node = (cls or node_type(op_name))()
    node.op_name = op_name
    node.formula = formula
    node.edges = edges
    node.edge_nrs = edge_nrs
    node.input_meta = input_meta
    node.saved = saved
    node.versions = versions
    node.out_meta = out_meta
    node.out_data = out_data
    node.n_outputs = len(out_meta)
    if GRAD_MODE.transforms:
        node.transformed = True
    return node


def resolve_edges(node) -> list:
    """The node's edges, each leaf tensor among them replaced by its AccumulateGrad."""
    edges = node.edges
    for i, edge in enumerate(edges):
        if isinstance(edge, Tensor):
            edges[i] = accumulator_of(edge) if edge._ag is not None else None
    return edges


def freeze_metas(node) -> None:
    """Backward freed the node's saved tensors: keep only their shape metadata (a leaf that
    requires grad stays: the node's edge to it holds it anyway)."""
    metas = node.input_meta
    for i, m in enumerate(metas):
        if isinstance(m, Tensor):
            ag = m._ag
            if ag is None or not ag.requires_grad or ag.grad_fn is not None:
                if metas is node.input_meta:  # the arguments' own sequence: copy it first
                    metas = node.input_meta = list(metas)
                metas[i] = meta_of(m)


def edges_of(args) -> tuple[list, list]:
    """The edge (and output number) that each argument's gradient takes."""
    edges = [edge_of(a) if isinstance(a, Tensor) else None for a in args]
    nrs = [a._ag.output_nr if isinstance(a, Tensor) and a._ag is not None else 0 for a in args]
    return edges, nrs


def accumulator_of(t: Tensor) -> AccumulateGrad:
    """The AccumulateGrad node of a leaf: one per leaf while a graph holds it, made on first
    need. The node holds the leaf, and the leaf holds it only weakly (as in PyTorch): a strong
    reference back would be a cycle keeping every leaf that took part in an op, and its
    ``.grad``, alive until Python's cyclic garbage collector runs."""
    meta = t._ag
    ref = meta.accumulator
    acc = None if ref is None else ref()
    if acc is None:
        acc = AccumulateGrad(t)
        meta.accumulator = weakref.ref(acc)
    return acc


def edge_of(t: Tensor):
    """Where the gradient of `t` goes: its grad_fn, its accumulator, or None."""
    meta = t._ag
    if meta is None or not meta.requires_grad:
        return None
    if t._base is not None:
        from ._views import current_view_history

        meta = current_view_history(t, meta)
    if meta.grad_fn is not None:
        return meta.grad_fn
    return accumulator_of(t)


def carrier(t: Tensor) -> Tensor:
    """A detached alias of `t` keeping what is more than its array: its batch (a subclass's
    own detach) and its tangent."""
    alias = t.detach()
    if t._ag is not None and t._ag.fw is not None:
        alias._ag = AutogradMeta(False)
        alias._ag.fw = t._ag.fw
    return alias


def output_tensor(node: Node, data, dev, output_nr: int = 0, in_graph: bool = True) -> Tensor:
    """A tensor around a node's saved output (its array, or a `carrier`) for its formula;
    with `in_graph` part of the graph (its grad_fn is the node), for create_graph."""
    if isinstance(data, Tensor):
        t = data.detach()
        fw = data._ag.fw if data._ag is not None else None
        if in_graph or fw is not None or t._ag is not None:
            t._ag = AutogradMeta(in_graph, node if in_graph else None, output_nr)
            t._ag.fw = fw
        return t
    t = wrap(data, dev)
    if in_graph:
        t._ag = AutogradMeta(True, node, output_nr)
    return t
