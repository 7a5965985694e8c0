"""The autograd layer of the dispatcher: records one node per op that needs it.

tocha-core calls `record(op, args, out)` after running an op's kernel, when grad mode is on
and an argument requires grad; `rebase(target, result)` after an in-place op.
"""

from __future__ import annotations

import tocha
from tocha import Tensor
from tocha.library import GRAD_MODE, INFERENCE_VC, LAYERS, TENSOR_TYPES, wrap

from ._formulas import FORMULAS
from ._forward import LEVEL, propagate, set_tangent, tangent_of
from ._graph import (
    RECORD_EXTRAS,
    AutogradMeta,
    Node,
    TensorMeta,
    carrier,
    meta_of,
    node_type,
)
from ._views import current_view_history, rebase_view
from .anomaly_mode import ANOMALY, creation_trace
from .graph import HOOKS, pack

# The saves of an op without a formula (its node raises when run): everything.
_NO_FORMULA = (None, True)


def _version_counter(t: Tensor) -> list:
    vc = t._vc
    if vc is None:
        vc = t._vc = [0]
    elif vc is INFERENCE_VC:
        raise RuntimeError(
            "Inference tensors cannot be saved for backward. Please do not use Tensors created "
            "in inference mode in computation tracked by autograd. To work around this, you "
            "can make a clone to get a normal tensor and use it in autograd, or use "
            "`tocha.no_grad()` instead of `tocha.inference_mode()`."
        )
    return vc


def record(op, args, out, tape_only=False):
    """The autograd layer: record `op(*args) -> out` on the tape when grad mode is on and an
    argument requires grad, and give the outputs their tangents inside a forward-AD level.
    Inside vmap, `out` is first replaced by the batched result (`LAYERS.batching`).
    `tape_only` (the transforms' own call) records on the tape and does no more.
    Returns `out`.

    Recording is lazy: a node keeps the arguments its formula saves as they came (they are
    also their own shape metadata, frozen when backward frees them), a leaf argument itself
    where its AccumulateGrad goes (made when backward or ``next_functions`` first needs it),
    and, for one output, no metadata of it: the node is that output's `AutogradMeta`. The
    common case (one output, no saved-tensor hooks, no anomaly mode) is written out in this
    one function: each call, object or thread-local read fewer is a measurable part of
    recording a small op."""
    if GRAD_MODE.transforms and not tape_only:
        return _record_in_transforms(op, args, out)
    entry = FORMULAS.get(op.name)
    if entry is not None:
        saves, save_out = entry.saves
    elif op.differentiable:
        saves, save_out = _NO_FORMULA
    else:
        return out
    n = len(args)
    edges = [None, None] if n == 2 else [None] * n
    nrs = _ZEROS[n] if n < 8 else (0,) * n  # a list only when an edge's output_nr is not 0
    metas = saved = args
    versions = ()  # a list once a saved tensor has a version counter
    tracked = False
    stale_views = _BASES_REWRITTEN
    i = -1
    for arg in args:
        i += 1
        if type(arg) is not Tensor and type(arg) not in TENSOR_TYPES:
            continue
        ag = arg._ag
        if ag is not None and ag.requires_grad:
            tracked = True
            if stale_views and arg._base is not None:
                ag = current_view_history(arg, ag)
            if type(ag).__base__ is Node:  # the output of a recorded one-output op
                edges[i] = ag
            else:
                grad_fn = ag.grad_fn
                if grad_fn is None:
                    edges[i] = arg  # a leaf: where its AccumulateGrad will go
                else:
                    edges[i] = grad_fn
                    if ag.output_nr:
                        nrs = list(nrs)
                        nrs[i] = ag.output_nr
        if saves is None or i in saves:
            vc = arg._vc
            if vc is not None:  # a saved tensor without a counter is at version 0: no entry
                if vc is INFERENCE_VC:
                    _version_counter(arg)  # raises
                if versions:
                    versions.append((arg, vc, vc[0]))
                else:
                    versions = [(arg, vc, vc[0])]
        else:
            if saved is args:
                saved = list(args)
                metas = list(args)
            data = arg._data
            meta = TensorMeta()
            meta.raw_shape = data.shape
            meta.np_dtype = data.dtype
            meta.device = arg._device
            saved[i] = metas[i] = meta
    if not tracked:
        return out
    # a class call: faster than object.__new__ (nodes have no __init__)
    node = entry.node_type() if entry is not None else node_type(op.name)()
    node.op_name = op.name
    node.formula = None if entry is None else entry.formula
    node.edges = edges
    node.edge_nrs = nrs
    node.input_meta = metas
    node.saved = saved
    node.versions = versions
    if entry is not None and entry.special:
        if not entry.materialize:  # set only when not the class default: no node __dict__
            node.materialize = False
        if entry.takes_needs:
            node.takes_needs = True
        needed_by = entry.needed_by
        if needed_by is not None:
            for edge in edges:
                if edge is None:  # a gradient not wanted: what only it reads need not be kept
                    save_out = _unsave_unneeded(node, needed_by, save_out)
                    break
    if tape_only:  # recorded under a transform: its gradients may be batched
        node.transformed = True
    hooked = ()
    if RECORD_EXTRAS.active:
        if ANOMALY.enabled:
            node.trace = creation_trace()
        hooked = HOOKS.stack
        if hooked:
            _pack_saved(node)
    if type(out) is tuple:
        return _record_outputs(node, out, save_out, hooked)
    data = out._data
    if not save_out:
        node.out_data = None
    elif hooked:
        node.out_data = (pack(out),)
        save_out = False  # what the hooks packed is theirs: no version check, as in PyTorch
    else:
        node.out_data = (data,)
    dtype = data.dtype
    if _DIFFERENTIABLE.get(dtype) or _differentiable(dtype):
        out._ag = node
        if save_out:
            vc = out._vc
            if vc is None:
                vc = out._vc = [0]
            node.versions = [*node.versions, (None, vc, vc[0])]
    return out


# Whether an in-place op ever gave a base a new history: from then on, `record` checks that
# each view it takes sees its base's current history (`current_view_history`).
_BASES_REWRITTEN = False


def _bases_rewritten() -> None:
    global _BASES_REWRITTEN
    _BASES_REWRITTEN = True


def _unsave_unneeded(node, needed_by: dict, save_out):
    """Let go of the saves that only unwanted gradients need (as PyTorch saves them only
    for the gradients it computes): an argument becomes its metadata, the outputs are not
    kept. Returns the op's outputs saving, updated."""
    edges = node.edges
    n = len(edges)
    for item, users in needed_by.items():
        for u in users:
            if u < n and edges[u] is not None:
                break
        else:
            if item == "o":
                save_out = False
                continue
            arg = node.saved[item]
            if type(arg) not in TENSOR_TYPES:
                continue
            node.saved = saved = list(node.saved)
            node.input_meta = metas = list(node.input_meta)
            saved[item] = metas[item] = meta_of(arg)
            if node.versions:
                node.versions = [v for v in node.versions if v[0] is not arg]
    return save_out


_ZEROS = tuple((0,) * n for n in range(8))  # the output numbers of edges that are all first


_DIFFERENTIABLE: dict = {}  # NumPy dtype -> whether gradients flow through it


def _differentiable(dtype) -> bool:
    """Whether tensors of a NumPy dtype take gradients (floating and complex), cached."""
    result = _DIFFERENTIABLE[dtype] = dtype.kind in "fcV"
    return result


def _pack_saved(node) -> None:
    """Saved-tensor hooks are active: the saved arguments pass through the pack hook, and the
    node keeps no reference to the tensors themselves (nor their shapes: metadata). What
    the hooks packed is theirs: as in PyTorch, later in-place changes to the tensors are not
    checked."""
    if not any(isinstance(s, Tensor) for s in node.saved):
        return
    metas = list(node.input_meta)
    saved = list(node.saved)
    for k, s in enumerate(saved):
        if isinstance(s, Tensor):
            metas[k] = meta_of(s)
            saved[k] = pack(s)
    node.input_meta = metas
    node.saved = saved
    node.packed = True
    node.versions = ()


def _record_in_transforms(op, args, out):
    """`record` while a transform (vmap, a forward-AD level) is active."""
    if LAYERS.batching is not None:
        out = LAYERS.batching(op, args, out)
    recorded = GRAD_MODE.grad_enabled and _requires_grad(args)
    if recorded:
        record(op, args, out, True)
    propagate(op, args, out)
    if recorded:  # only a node made here can hold the outputs' arrays
        _keep_carriers(out)
    return out


def _record_outputs(node, outputs: tuple, save_out: bool, hooked) -> tuple:
    """The rest of `record` for an op with several outputs."""
    node.out_meta = tuple([meta_of(t) for t in outputs])
    node.n_outputs = len(outputs)
    n = len(outputs)
    if save_out is True:
        save_out = range(n)
    if not save_out:
        node.out_data = None
    else:
        node.out_data = tuple(
            [
                (pack(t) if hooked else t._data) if k in save_out or k - n in save_out else None
                for k, t in enumerate(outputs)
            ]
        )
    if hooked:  # what the hooks packed is theirs: no version check, as in PyTorch
        save_out = ()
    versions = list(node.versions) if save_out else None
    i = 0
    for t in outputs:
        dtype = t._data.dtype
        if _DIFFERENTIABLE.get(dtype) or _differentiable(dtype):
            meta = t._ag = _BareMeta()
            meta.requires_grad = True
            meta.grad_fn = node
            if i:
                meta.output_nr = i
            if save_out and (i in save_out or i - n in save_out):
                vc = _version_counter(t)
                versions.append((None, vc, vc[0]))
        i += 1
    if save_out:
        node.versions = versions
    return outputs


class _BareMeta(AutogradMeta):
    """An `AutogradMeta` made by a bare class call (no Python ``__init__``)."""

    __slots__ = ()
    __init__ = object.__init__


def _requires_grad(args) -> bool:
    for arg in args:
        if type(arg) in TENSOR_TYPES:
            meta = arg._ag
            if meta is not None and meta.requires_grad:
                return True
    return False


def _keep_carriers(out) -> None:
    """A node saved its outputs' arrays; an output that is batched or carries a tangent is
    more than its array, so the node keeps a detached alias of it (with the tangent)."""
    outputs = out if type(out) is tuple else (out,)
    meta = outputs[0]._ag
    node = meta.grad_fn if meta is not None else None
    if node is None or node.out_data is None:
        return
    if all(type(t) is Tensor and (t._ag is None or t._ag.fw is None) for t in outputs):
        return
    node.out_data = tuple(
        None if data is None else carrier(t) for t, data in zip(outputs, node.out_data)
    )


def rebase(target: Tensor, result: Tensor) -> None:
    """An in-place op on a tensor autograd tracks, before `result`'s values overwrite
    `target`: give `target` the history of `result` (a view's base is rewired too), keeping
    target's current values for the nodes that saved them."""
    meta = target._ag
    base = target._base
    if not GRAD_MODE.grad_enabled:  # only a transform sees the op: tangents move, history stays
        level = LEVEL.current
        if level is not None:
            if base is not None:
                _rebase_tangent(target, base, result, level)
            set_tangent(target, tangent_of(result, level), level)
        return
    if meta is not None and meta.requires_grad and meta.grad_fn is None and base is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    if (
        base is not None
        and base._ag is not None
        and base._ag.requires_grad
        and base._ag.grad_fn is None
    ):
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )
    retained = None
    if (meta is not None and meta.retains_grad) or (
        base is not None and base._ag is not None and base._ag.retains_grad
    ):
        retained = [(t, t._ag) for t in (target, base) if t is not None and t._ag is not None]
    _keep_original(target, result)
    if base is None or not (_requires(result) or _requires(target) or _requires(base)):
        if base is not None and LEVEL.current is not None:
            _rebase_tangent(target, base, result, LEVEL.current)
        target._ag = result._ag  # the history, or only a tangent (forward mode)
        if base is None and target._ag is not None:
            target._ag.rebased = True  # its views' histories are stale now
            _bases_rewritten()
        if retained:
            carry_retained(retained)
        return
    base_fw = base._ag.fw if base._ag is not None else None
    rebase_view(target, base, result)
    _bases_rewritten()
    base._ag.fw = base_fw
    if LEVEL.current is not None:
        _rebase_tangent(target, base, result, LEVEL.current)
    if result._ag is not None:
        target._ag.fw = result._ag.fw
    if retained:
        carry_retained(retained)


def carry_retained(tensors: list) -> None:
    """Tensors (with their metadata before an in-place op) that retain their gradient and
    got a new history: the gradient retained is the one of the new history, as in PyTorch
    (their other hooks stay on the old node)."""
    from ._engine import retain_grad_hook

    for t, old in tensors:
        new = t._ag
        if new is old or not old.retains_grad or new is None or new.grad_fn is None:
            continue
        node = old.grad_fn
        if node is not None and node.pre_hooks:
            node.pre_hooks[:] = [e for e in node.pre_hooks if not hasattr(e[1], "retains_grad")]
        new.retains_grad = True
        new.grad = old.grad
        target = new.grad_fn
        if target.pre_hooks is None:
            target.pre_hooks = []
        target.pre_hooks.append((new.output_nr, retain_grad_hook(t)))


def _rebase_tangent(target: Tensor, base: Tensor, result: Tensor, level) -> None:
    """Forward mode: the base of a view written in place takes the result's tangent (zero
    when it has none) in the view's region."""
    base_tangent = tangent_of(base, level)
    result_tangent = tangent_of(result, level)
    if base_tangent is None and result_tangent is None:
        return
    from ._views import positions

    LEVEL.current = None
    try:
        index = tocha.from_numpy(positions(target, base).reshape(-1)).to(base.device)
        flat = (
            base_tangent.reshape(-1).clone()
            if base_tangent is not None
            else tocha.zeros(base.numel(), dtype=result_tangent.dtype, device=base.device)
        )
        values = (
            result_tangent.reshape(-1).to(flat.dtype)
            if result_tangent is not None
            else tocha.zeros(index.numel(), dtype=flat.dtype, device=base.device)
        )
        flat = flat.index_put((index,), values)
    finally:
        LEVEL.current = level
    set_tangent(base, flat.reshape(base.shape), level)


def _requires(t: Tensor) -> bool:
    return t._ag is not None and t._ag.requires_grad


def _keep_original(target: Tensor, result: Tensor) -> None:
    """The node of `result` may have saved `target`, about to be overwritten: give it a copy
    of target's current values and history instead (as PyTorch saves ``original_self``)."""
    node = result._ag.grad_fn if result._ag is not None else None
    if node is None or node.packed or not any(s is target for s in node.saved):
        return
    original = wrap(target._data.copy(), target._device)
    original._ag = target._ag
    node.saved = [original if s is target else s for s in node.saved]
    node.versions = [entry for entry in node.versions if entry[0] is not target]


def install() -> None:
    LAYERS.autograd = record
    LAYERS.rebase = rebase
