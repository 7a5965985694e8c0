"""The backward engine: runs the recorded graph from some outputs back to the leaves.

Iterative (no recursion, so a chain of 100,000 nodes is fine): a first pass counts, for
each node, the edges that reach it; a node runs once all of them have delivered their
gradient. Each node runs once, in a valid topological order.
"""

from __future__ import annotations

import re
import sys
import warnings
import weakref

import tocha
from tocha import Tensor
from tocha.library import (
    FROM_NP,
    GRAD_MODE,
    LAYERS,
    REGISTRY,
    TENSOR_TYPES,
    backend_of,
    bump_version,
    kernel_context,
    wrap,
)

from ._graph import (
    RECORD_EXTRAS,
    AccumulateGrad,
    TensorMeta,
    accumulator_of,
    freeze_metas,
    output_tensor,
)
from ._running import QUEUED, discard, finish, set_engine
from .anomaly_mode import ANOMALY, check_nan, warn_failed
from .graph import GradientEdge, Packed
from .transforms import LEAF_GRADIENTS

# Gradients are summed in place with the add kernel, so that kernel-level recorders (the
# profiler, make_fx) see the sums.
ADD = REGISTRY["add"]

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


def _dependencies(roots) -> tuple[dict, bool]:
    """For every node reachable from `roots`: how many edges lead to it (the leaves' edges
    resolved to their AccumulateGrad on the way); and whether any node of the graph was
    recorded under a transform."""
    deps = {}
    stack = list(roots)
    first = set(roots) if len(roots) > 1 else ()  # visited already (one root: unreachable)
    transformed = False
    while stack:
        node = stack.pop()
        if node.transformed:
            transformed = True
        edges = node.edges
        i = -1
        for edge in edges:
            i += 1
            if edge is None:
                continue
            if type(edge) in TENSOR_TYPES:  # a leaf: its AccumulateGrad, made now
                edge = edges[i] = accumulator_of(edge) if edge._ag is not None else None
                if edge is None:
                    continue
            count = deps.get(edge)
            if count is not None:
                deps[edge] = count + 1
            else:
                deps[edge] = 1
                if edge.edges and edge not in first:
                    stack.append(edge)
    return deps, transformed


def _needed(roots, targets) -> set:
    """The nodes that lie on a path from a root to a target (the rest need not run)."""
    needed = set()
    state = {}
    for root in roots:
        stack = [(root, iter(root.edges))]
        state[id(root)] = 0
        while stack:
            node, edges = stack[-1]
            child = next(edges, False)
            if child is False:
                stack.pop()
                if node in targets or any(e is not None and e in needed for e in node.edges):
                    needed.add(node)
                continue
            if child is not None and id(child) not in state:
                state[id(child)] = 0
                stack.append((child, iter(child.edges)))
    return needed


def _stops_at(node, captures: dict, needed: set) -> bool:
    """Whether ``autograd.grad`` takes its gradient at `node` and goes no further: an input's
    node whose own inputs no other input needs, which does not run (only the input tensor's
    hooks do, as in PyTorch)."""
    if node not in captures or type(node) is AccumulateGrad:
        return False
    for edge in node.edges:
        if edge is not None and edge in needed:
            return False
    return True


class _Buffer:
    """Gradients gathered for one node's outputs, and whether each is ours to mutate."""

    __slots__ = ("grads", "owned")

    def __init__(self, n: int, k: int = 0, grad=None, owned: bool = False):
        """Room for `n` gradients, the `k`-th one `grad` (or none yet)."""
        if n == 1:
            self.grads = [grad]
            self.owned = [owned]
        else:
            self.grads = [None] * n
            self.owned = [False] * n
            self.grads[k] = grad
            self.owned[k] = owned

    def add(self, k: int, grad: Tensor, owned: bool, create_graph: bool) -> None:
        current = self.grads[k]
        if current is None:
            self.grads[k] = grad
            self.owned[k] = owned
        elif self.owned[k] and not create_graph and _sums_in_place(current, grad):
            kernel_context().run(
                ADD.kernels[current._device], current._data, grad._data, out=current._data
            )
        else:
            self.grads[k] = gradient_sum(current, grad)
            self.owned[k] = True


def gradient_sum(a: Tensor, b: Tensor) -> Tensor:
    """``a + b`` for two gradients of one tensor; a sparse one is added to the other (the
    sum is dense when either is)."""
    return b + a if type(b) is Tensor and type(a) is not Tensor else a + b


def run_backward(
    roots, root_grads, retain_graph: bool, create_graph: bool, inputs=None, accumulate: bool = True
):
    """Backpropagate `root_grads` from the tensors `roots`.

    With `accumulate`, gradients are added into the ``.grad`` of leaves (only of `inputs`
    when given). Without it (``autograd.grad``), returns the gradients of `inputs`.
    Callbacks queued during the run (`_running.queue_callback`) run at its end; `_running`
    finds the running backward by this function's frame, and reads `roots` and `inputs`
    from it.
    """
    node = None  # the node running (named by anomaly mode when one fails)
    try:
        if len(roots) == 1:  # the common call
            meta = roots[0]._ag
            node = meta.grad_fn if meta.grad_fn is not None else _accumulator(roots[0])
            if inputs is None and accumulate:
                leaves = _leaves_fed_by(node)
                if leaves is not None:
                    grads = [root_grads[0]]
                    if node.n_outputs != 1:
                        grads = [None] * node.n_outputs
                        grads[meta.output_nr] = root_grads[0]
                    _run_leaf_fed(node, leaves, grads, retain_graph, create_graph)
                    if QUEUED:
                        finish(sys._getframe())
                    return []
            root_nodes = [node]
            buffers = {node: _Buffer(node.n_outputs, meta.output_nr, root_grads[0])}
        else:
            root_nodes, buffers = _root_buffers(roots, root_grads, create_graph)

        captures = None
        targets = None
        if inputs is not None:
            captures = {}
            targets = set()
            for i, t in enumerate(inputs):
                if type(t) is GradientEdge:
                    node = t.node
                    captures.setdefault(node, []).append((i, t.output_nr, None))
                else:
                    meta = t._ag
                    node = meta.grad_fn if meta.grad_fn is not None else _accumulator(t)
                    captures.setdefault(node, []).append((i, meta.output_nr, t))
                targets.add(node)
        deps, transformed = _dependencies(root_nodes)
        needed = _needed(root_nodes, targets) if targets is not None else None
        results = [None] * (len(inputs) if inputs is not None else 0)

        ready = root_nodes if len(root_nodes) == 1 else [n for n in root_nodes if n not in deps]
        # Batched gradients flow only through a graph recorded under a transform, or from one
        # in force now (vmap of a backward): otherwise the batching layer's checks are skipped.
        transformed = transformed or GRAD_MODE.transforms > 0
        batching = transformed and LAYERS.batching is not None
        settle = LEAF_GRADIENTS.settle if transformed else None
        previous_mode = GRAD_MODE.grad_enabled
        GRAD_MODE.grad_enabled = create_graph
        plain = settle is None and captures is None and not batching  # the common backward
        try:
            while ready:
                node = ready.pop()
                buf = buffers.pop(node, None)
                if buf is None:  # every path into this node carried no gradient
                    _release_children(node, deps, ready)
                    continue
                if needed is not None and node not in needed:
                    continue
                if node.pre_hooks is None:
                    grads = buf.grads
                else:
                    stops = (
                        not accumulate
                        and captures is not None
                        and _stops_at(node, captures, needed)
                    )
                    grads = _run_pre_hooks(node, buf.grads, stops)
                if not plain:
                    if settle is not None:
                        grads = _settled(node, grads, captures, settle)
                    if captures is not None and node in captures:
                        if not accumulate and type(node) is AccumulateGrad:
                            grads = [_leaf_hooked(node.variable, grads[0])]
                        for i, k, t in captures[node]:
                            results[i] = grads[k]
                            if accumulate and t is not None and type(node) is not AccumulateGrad:
                                if not t._ag.retains_grad:  # else its hook stored the gradient
                                    _accumulate_into(t, grads[k], False, create_graph)
                        if not accumulate and _stops_at(node, captures, needed):
                            continue
                if type(node) is AccumulateGrad:
                    if accumulate and (captures is None or node in captures):
                        _accumulate_into(node.variable, grads[0], buf.owned[0], create_graph)
                    if node.hooks is not None:
                        for hook in node.hooks:
                            hook((), tuple(grads))
                    continue
                if batching and _batched(grads):
                    input_grads = _apply_batched(node, grads, retain_graph, create_graph)
                else:
                    input_grads = _apply(node, grads, retain_graph, create_graph)
                for edge, nr, grad, owned in input_grads:
                    if edge is None:
                        continue
                    if grad is not None:
                        target = buffers.get(edge)
                        if target is None:
                            if (
                                plain
                                and type(edge) is AccumulateGrad
                                and deps[edge] == 1
                                and edge.pre_hooks is None
                                and edge.hooks is None
                            ):  # a leaf fed by this edge alone: its gradient is complete now
                                _accumulate_into(edge.variable, grad, owned, create_graph)
                                continue
                            buffers[edge] = _Buffer(edge.n_outputs, nr, grad, owned)
                        else:
                            target.add(nr, grad, owned, create_graph)
                    count = deps[edge] - 1
                    deps[edge] = count
                    if not count:
                        ready.append(edge)
        finally:
            GRAD_MODE.grad_enabled = previous_mode
        if QUEUED:
            finish(sys._getframe())
        return results
    except BaseException:
        if QUEUED:
            discard(sys._getframe())
        if ANOMALY.enabled:
            warn_failed(node)
        raise


set_engine(run_backward)


def _leaves_fed_by(node) -> list | None:
    """The leaf tensor each edge of `node` leads to (None for an edge that takes no
    gradient), when those leaves are all of its graph: every edge a distinct leaf or none,
    no hooks on the node or on the leaves' AccumulateGrad nodes, the node not recorded under
    a transform and none in force. Else None."""
    if (
        type(node) is AccumulateGrad
        or node.pre_hooks is not None
        or node.transformed
        or GRAD_MODE.transforms
    ):
        return None
    leaves = []
    for edge in node.edges:
        if edge is None:
            leaves.append(None)
            continue
        if type(edge) in TENSOR_TYPES:  # a leaf whose AccumulateGrad is not made yet
            meta = edge._ag
            if meta is None:
                leaves.append(None)
                continue
            ref = meta.accumulator
            accumulator = None if ref is None else ref()  # one that outlived its graph
            if accumulator is not None and (accumulator.pre_hooks or accumulator.hooks):
                return None
            leaf = edge
        elif type(edge) is AccumulateGrad and not edge.pre_hooks and not edge.hooks:
            leaf = edge.variable
        else:
            return None
        for seen in leaves:
            if seen is leaf:
                return None
        leaves.append(leaf)
    return leaves


def _run_leaf_fed(node, leaves: list, grads: list, retain_graph, create_graph) -> None:
    """Backward through one node straight into its leaves' ``.grad`` (no ordering,
    buffers or AccumulateGrad nodes: each leaf gets one gradient); the in-place additions
    into existing gradients run together, in one kernel context."""
    previous_mode = GRAD_MODE.grad_enabled
    GRAD_MODE.grad_enabled = create_graph
    try:
        sums = []
        edges = _apply(node, grads, retain_graph, create_graph)
        for leaf, (_, _, grad, owned) in zip(leaves, edges):
            if leaf is None or grad is None:
                continue
            current = None if create_graph else _summed_in_place(leaf, grad)
            if current is None:
                _accumulate_into(leaf, grad, owned, create_graph)
            else:
                sums.append((current, grad))
        if sums:
            kernel_context().run(_add_all, sums)
    finally:
        GRAD_MODE.grad_enabled = previous_mode


def _summed_in_place(leaf: Tensor, grad: Tensor):
    """The ``.grad`` of `leaf` when `grad` is to be added into it in place (`_accumulate_into`'s
    common case, with no hooks to run), else None."""
    meta = leaf._ag
    current = meta.grad
    if (
        current is None
        or meta.hooks
        or meta.post_accumulate_hooks
        or not _sums_in_place(current, grad)
    ):
        return None
    return current


def _sums_in_place(current: Tensor, grad: Tensor) -> bool:
    """Whether `grad` may be added into the gradient `current` in its memory: plain dense
    tensors out of any graph, on one device, of one shape and dtype, `current` not an
    expanded view (whose `+=` PyTorch refuses)."""
    return (
        type(current) is Tensor
        and type(grad) is Tensor
        and current._ag is None
        and grad._ag is None
        and grad._device is current._device
        and current._data.shape == grad._data.shape
        and current._data.dtype == grad._data.dtype
        and (current._base is None or 0 not in current._data.strides)
    )


def _add_all(sums: list) -> None:
    """``current += grad`` for each pair, in the arrays (a version bump each)."""
    for current, grad in sums:
        ADD.kernels[current._device](current._data, grad._data, out=current._data)
        bump_version(current)


def _root_buffers(roots, root_grads, create_graph: bool) -> tuple[list, dict]:
    """The distinct nodes of several roots, and the gradients each root gives its node."""
    root_nodes = []
    buffers = {}
    for t, g in zip(roots, root_grads):
        meta = t._ag
        node = meta.grad_fn if meta.grad_fn is not None else _accumulator(t)
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = _Buffer(node.n_outputs)
            root_nodes.append(node)
        buf.add(meta.output_nr, g, False, create_graph)
    return root_nodes, buffers


def _batched(grads) -> bool:
    """Whether a node's gradients are more than plain tensors (vmap's batched ones)."""
    for g in grads:
        if g is not None and type(g) is not Tensor:
            return True
    return False


def _apply_batched(node, grads, retain_graph: bool, create_graph: bool):
    """`_apply` with the batching layer on: a backward through vmap after its levels exited
    (``grad(vmap(f))``) runs formulas on batched gradients outside any transform."""
    GRAD_MODE.transforms += 1
    try:
        return _apply(node, grads, retain_graph, create_graph)
    finally:
        GRAD_MODE.transforms -= 1


def _settled(node, grads, captures, settle) -> list:
    """The gradients reaching a leaf or a captured input, made to fit it (`settle`)."""
    if isinstance(node, AccumulateGrad):
        return [settle(grads[0], node.variable)]
    if captures is None or node not in captures:
        return grads
    grads = list(grads)
    for _, k, t in captures[node]:
        if grads[k] is not None:
            grads[k] = settle(grads[k], t)
    return grads


def _release_children(node, deps: dict, ready: list) -> None:
    """A node skipped for lack of gradients still counts as done for the nodes it leads to."""
    for edge in node.edges:
        if edge is not None:
            deps[edge] -= 1
            if deps[edge] == 0:
                ready.append(edge)


def _accumulator(t: Tensor):
    return accumulator_of(t)


def _run_pre_hooks(node, grads: list, tensors_only: bool = False) -> list:
    """A node's pre-hooks on its gradients, in their order; a retained gradient's hook last,
    as PyTorch runs it (``.grad`` sees what every hook returned). With `tensors_only`, only
    its output tensors' hooks."""
    hooks = sorted(node.pre_hooks, key=lambda entry: hasattr(entry[1], "retains_grad"))
    grads = list(grads)
    for k, fn in hooks:
        if k is None:
            if tensors_only:
                continue
            replaced = fn(tuple(grads))
            if replaced is not None:
                grads = list(checked_node_hook_result(fn, replaced, len(grads)))
        elif grads[k] is not None:
            replaced = fn(grads[k])
            if replaced is not None:
                grads[k] = checked_hook_result(fn, grads[k], replaced)
    return grads


def checked_node_hook_result(hook, replaced, n: int) -> tuple:
    """What node hook `hook` returned in place of `n` gradients: a tuple of `n`."""
    if not isinstance(replaced, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(replaced).__name__}'")
    if len(replaced) != n:
        name = getattr(hook, "__name__", type(hook).__name__)
        raise RuntimeError(
            f"hook '{name}' has returned an incorrect number of values (got {len(replaced)}, "
            f"but expected {n})"
        )
    return replaced


def _leaf_hooked(t: Tensor, grad):
    """The gradient of leaf `t` as its tensor hooks leave it (each may replace it)."""
    hooks = t._ag.hooks
    if hooks and grad is not None:
        for hook in hooks:
            replaced = hook(grad)
            if replaced is not None:
                grad = checked_hook_result(hook, grad, replaced)
    return grad


def checked_hook_result(hook, grad: Tensor, replaced):
    """What tensor hook `hook` returned in place of `grad`, which must be a tensor of its
    shape and dtype."""
    if not isinstance(replaced, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(replaced).__name__}'")
    name = getattr(hook, "__name__", type(hook).__name__)
    if replaced.shape != grad.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    if replaced.dtype != grad.dtype:
        raise RuntimeError(
            f"hook '{name}' has changed the type of value (was {grad.type()} got {replaced.type()})"
        )
    return replaced


def _apply(node, grads: list, retain_graph: bool, create_graph: bool):
    """Run one node's formula: (edge, gradient, owned) for each of its arguments."""
    formula = node.formula
    if formula is None:
        raise NotImplementedError(
            f"the derivative for '{node.op_name}' is not implemented: tocha-autograd has no "
            "formula for it"
        )
    if node.released:
        raise RuntimeError(FREED_MESSAGE)
    versions = node.versions
    for tensor, vc, version in versions:
        if vc[0] != version:
            _raise_modified(node, tensor, vc[0], version, grads)
    saved = node.saved
    holds = False  # the node holds argument tensors themselves (freed after the run)
    if not node.packed:  # a saved tensor with no counter when recorded (no entry) was at 0
        for s in saved:
            if type(s) in TENSOR_TYPES:
                holds = True
                vc = s._vc
                if vc is not None and vc[0] and not any(t is s for t, _, _ in versions):
                    _raise_modified(node, s, vc[0], 0, grads)
    if node.out_meta is None:  # a recorded op's one output
        grad_arg = grads[0]
        if grad_arg is None:  # a pre-hook took its gradient away: none flows on
            return [(edge, nr, None, False) for edge, nr in zip(node.edges, node.edge_nrs)]
        out = None if node.out_data is None else _outputs(node, create_graph, grad_arg._device)
    else:
        if node.materialize:
            for k, grad in enumerate(grads):
                if grad is None and node.out_meta[k] is not None:  # None: not a tensor
                    grads[k] = _zeros(node.out_meta[k])
        out = _outputs(node, create_graph, None)
        grad_arg = grads[0] if node.n_outputs == 1 else tuple(grads)
    if node.packed:
        saved = [s.unpacked() if type(s) is Packed else s for s in saved]
    if node.takes_needs:
        results = formula(grad_arg, out, *saved, needs=[e is not None for e in node.edges])
    else:
        results = formula(grad_arg, out, *saved)
    if type(results) is not tuple:
        results = (results,)
    single = len(results) == 1 and len(grads) == 1
    edges = []
    for edge, nr, meta, grad in zip(node.edges, node.edge_nrs, node.input_meta, results):
        if edge is None or grad is None:
            edges.append((edge, nr, None, False))
            continue
        if type(meta) is TensorMeta:
            shape, dtype = meta.raw_shape, meta.np_dtype
        else:  # the saved argument itself
            data = meta._data
            shape, dtype = data.shape, data.dtype
        data = grad._data
        if data.shape != shape or data.dtype is not dtype:
            shaped = _conform(grad, shape, dtype)
            if shaped is not grad:
                edges.append((edge, nr, shaped, True))
                continue
        if single:  # fresh unless it is a view or the incoming gradient passed on
            edges.append((edge, nr, grad, grad._base is None and grad is not grads[0]))
        else:
            edges.append((edge, nr, grad, _exclusive(grad, grads, results)))
    if RECORD_EXTRAS.active and ANOMALY.enabled:
        check_nan(node, [g for _, _, g, _ in edges])
    if node.hooks is not None:
        _run_node_hooks(node, edges, grads)
    if not retain_graph and (holds or versions or node.out_data is not None or node.packed):
        node.released = True
        node.saved = None
        node.out_data = None
        node.versions = ()
        if holds:
            freeze_metas(node)
    return edges


def _run_node_hooks(node, edges: list, grads) -> None:
    """A node's hooks on the gradients it computed (`edges`' entries), each of which may
    replace them."""
    for hook in node.hooks:
        replaced = hook(tuple(g for _, _, g, _ in edges), tuple(grads))
        if replaced is not None:
            replaced = checked_node_hook_result(hook, replaced, len(edges))
            for i, ((edge, nr, _, _), grad) in enumerate(zip(edges, replaced)):
                edges[i] = (edge, nr, grad, False)


def _exclusive(grad, incoming, results) -> bool:
    """Whether a formula's result is a fresh tensor that no other edge receives (so the
    engine may accumulate into it in place)."""
    if grad._base is not None:
        return False
    for g in incoming:
        if g is grad:
            return False
    count = 0
    for r in results:
        if r is grad:
            count += 1
    return count == 1


def _outputs(node, create_graph: bool, dev):
    """The node's saved outputs as tensors for its formula (None when it saved none); `dev`
    is the device of a recorded op's one output (the others' is in ``out_meta``)."""
    if node.out_data is None:
        return None
    tensors = [
        None
        if data is None
        else output_tensor(
            node,
            data.unpacked() if type(data) is Packed else data,
            dev if dev is not None else node.out_meta[k].device,
            k,
            create_graph,
        )
        for k, data in enumerate(node.out_data)
    ]
    return tensors[0] if node.n_outputs == 1 else tuple(tensors)


def _zeros(meta) -> Tensor:
    import tocha

    return tocha.zeros(meta.shape, dtype=meta.dtype, device=meta.device)


def _conform(grad: Tensor, shape: tuple, np_dtype) -> Tensor:
    """A gradient reduced to its input's shape (undoing broadcasting) and cast to its dtype
    (given as its array's)."""
    if grad._data.shape != shape:
        grad = sum_to(grad, shape)
    if grad._data.dtype != np_dtype:
        dtype = FROM_NP[np_dtype]
        if grad.dtype.is_complex and not dtype.is_complex:
            grad = grad.real
        grad = grad.to(dtype)
    return grad


def sum_to(grad: Tensor, shape) -> Tensor:
    """Sum `grad` over the dimensions that broadcasting added or expanded to reach it."""
    lead = grad.dim() - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1
    )
    if dims:
        grad = grad.sum(dims, keepdim=True)
    if lead:
        grad = grad.reshape(shape)
    return grad


def _accumulate_into(t: Tensor, grad: Tensor, owned: bool, create_graph: bool) -> None:
    meta = t._ag
    if meta.hooks and meta.grad_fn is None:  # a non-leaf's hooks are its node's pre-hooks
        hooked = _leaf_hooked(t, grad)
        if hooked is not grad:
            grad, owned = hooked, False
    current = meta.grad
    if current is None:
        if create_graph:
            _warn_reference_cycle()
            meta.grad = grad
        elif type(grad) is Tensor and grad._ag is None and grad._data.strides != t._data.strides:
            meta.grad = _laid_out_as(t, grad)
        else:
            meta.grad = grad if owned and grad._ag is None else _detached_copy(grad)
    elif (
        create_graph
        or current._ag is not None
        or grad._ag is not None
        or grad._device is not current._device
    ):
        if create_graph:
            _warn_reference_cycle()
        meta.grad = current + grad
    elif _sums_in_place(current, grad):
        kernel_context().run(
            ADD.kernels[current._device], current._data, grad._data, out=current._data
        )
        bump_version(current)
    elif type(current) is Tensor:
        current += grad
    else:
        meta.grad = gradient_sum(current, grad)
    if meta.post_accumulate_hooks:
        for hook in meta.post_accumulate_hooks:
            returned = hook(t)
            if returned is not None:
                if not isinstance(returned, Tensor):
                    raise TypeError(
                        f"expected Variable, but hook returned '{type(returned).__name__}'"
                    )
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")


_CYCLE_WARNING = [
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak."
]  # emptied once given: PyTorch warns once per process


def _warn_reference_cycle() -> None:
    """A gradient that is part of a graph goes into a ``.grad``: warn, once."""
    if _CYCLE_WARNING:
        warnings.warn(_CYCLE_WARNING.pop(), UserWarning, stacklevel=5)


def _laid_out_as(t: Tensor, grad: Tensor) -> Tensor:
    """A copy of `grad` laid out in memory as leaf `t` is (PyTorch's layout of ``.grad``: a
    channels-last parameter gets a channels-last gradient, whatever its op produced)."""
    return tocha.empty_like(t, dtype=grad.dtype, device=grad.device).copy_(grad)


def _detached_copy(grad: Tensor) -> Tensor:
    if grad._ag is not None:  # a tangent or a batch it carries: through the ops
        return grad.detach().clone()

    data = (
        grad._data.copy()
        if grad._device.type == "cpu"
        else backend_of(grad._device).xp.array(grad._data, copy=True)
    )
    return wrap(data, grad._device)


def _raise_modified(node, tensor, now: int, expected: int, grads):
    """A saved tensor of `node` (None: its output, on the device of its gradients `grads`)
    was changed in place since it was saved."""
    if tensor is None:
        k = next(i for i, data in enumerate(node.out_data) if data is not None)
        data = node.out_data[k]
        data = data.unpacked() if type(data) is Packed else data
        if not isinstance(data, Tensor):
            data = wrap(data, next(g for g in grads if g is not None)._device)
        tensor = data
        producer = (k, node)
    else:
        meta = tensor._ag
        grad_fn = meta.grad_fn if meta is not None else None
        producer = None if grad_fn is None else (meta.output_nr, grad_fn)
    raise RuntimeError(modified_message(tensor, producer, now, expected))


def modified_message(tensor: Tensor, producer, now: int, expected: int) -> str:
    """PyTorch's error for a saved `tensor` changed in place: `producer` is (output number,
    node) of the node whose output it is, or None for a leaf."""
    described = f"[{tensor.type()} {list(tensor.shape)}]"
    if producer is not None:
        k, node = producer
        described += f", which is output {k} of {_op_name(node)},"
    if ANOMALY.enabled:
        hint = (
            "Hint: the backtrace further above may show the operation that failed to compute "
            "its gradient. The variable in question was changed in there or anywhere later. "
            "Good luck!"
        )
    else:
        hint = (
            "Hint: enable anomaly detection to find the operation that failed to compute its "
            "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
        )
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: {described} is at version {now}; expected version {expected} "
        f"instead. {hint}"
    )


def _op_name(node) -> str:
    """A node's name as PyTorch's in-place error names it: without its Backward suffix."""
    return re.sub(r"Backward\d*$", "", node.name())


def retain_grad_hook(t: Tensor):
    """A hook that stores the gradient flowing into non-leaf `t` as ``t.grad``."""
    ref = weakref.ref(t)

    def hook(grad):
        target = ref()
        if target is None:
            return None
        meta = target._ag
        meta.grad = grad if meta.grad is None else meta.grad + grad
        return None

    hook.retains_grad = True
    return hook
