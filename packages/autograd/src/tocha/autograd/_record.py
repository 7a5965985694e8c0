"""The autograd layer of the dispatcher: records one node per op that needs it.

tocha-core calls `record(op, args, out)` after running an op's kernel, when grad mode is on
and an argument requires grad; `rebase(target, result)` after an in-place op.
"""

from __future__ import annotations

import weakref

import tocha
from tocha import Size, Tensor
from tocha.library import FROM_NP, GRAD_MODE, INFERENCE_VC, LAYERS, TENSOR_TYPES, wrap

from ._formulas import FORMULAS
from ._forward import LEVEL, propagate, set_tangent, tangent_of
from ._graph import AccumulateGrad, AutogradMeta, Node, carrier
from .anomaly_mode import ANOMALY, creation_trace
from .graph import HOOKS, pack

_new = object.__new__
_weakref = weakref.ref
# The saves of an op without a formula (its node raises when run): everything.
_NO_FORMULA = (None, True)


class TensorMeta:
    """Stands in a node for an argument tensor its formula does not need: shape, dtype,
    device; enough to shape a gradient, never its values."""

    __slots__ = ("raw_shape", "np_dtype", "device")

    def __init__(self, t: Tensor):
        data = t._data
        self.raw_shape = data.shape
        self.np_dtype = data.dtype
        self.device = t._device

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

    The common case, one output and no saved-tensor hooks, is written out in this one
    function: each call or object fewer is a measurable part of recording a small op."""
    if GRAD_MODE.transforms and not tape_only:
        return _record_in_transforms(op, args, out)
    if not op.differentiable:
        return out
    entry = FORMULAS.get(op.name)
    saves, save_out = entry.saves if entry is not None else _NO_FORMULA
    n = len(args)
    edges = [None] * n
    nrs = [0] * n
    metas = [None] * n
    saved = list(args)
    versions = []
    hooked = HOOKS.stack
    tracked = False
    shared = None
    for i, arg in enumerate(args):
        if type(arg) not in TENSOR_TYPES:
            continue
        ag = arg._ag
        if ag is not None and ag.requires_grad:
            tracked = True
            edge = ag.grad_fn
            if edge is None:
                ref = ag.accumulator
                edge = ref() if ref is not None else None
                if edge is None:  # `accumulator_of`, inline
                    edge = AccumulateGrad(arg)
                    ag.accumulator = _weakref(edge)
            edges[i] = edge
            nrs[i] = ag.output_nr
        data = arg._data
        if (
            shared is None
            or data.shape != shared.raw_shape
            or data.dtype is not shared.np_dtype
            or arg._device is not shared.device
        ):
            shared = _new(TensorMeta)  # immutable: arguments alike share one
            shared.raw_shape = data.shape
            shared.np_dtype = data.dtype
            shared.device = arg._device
        metas[i] = shared
        if saves is None or i in saves:
            vc = arg._vc
            if vc is None or vc is INFERENCE_VC:
                vc = _version_counter(arg)
            if hooked:  # the hooks own what is kept: no reference to the tensor itself
                versions.append((False, vc, vc[0]))
                saved[i] = pack(arg)
            else:
                versions.append((arg, vc, vc[0]))
        else:
            saved[i] = shared
    if not tracked:
        return out
    node = _new(Node)
    node.op_name = op.name
    node.formula = None if entry is None else entry.formula
    node.edges = edges
    node.edge_nrs = nrs
    node.input_meta = metas
    node.saved = saved
    node.versions = versions
    if entry is not None and not entry.materialize:
        node.materialize = False
    if ANOMALY.enabled:
        node.trace = creation_trace()
    if type(out) is tuple:
        return _record_outputs(node, out, save_out, hooked)
    data = out._data
    if (
        shared is None
        or data.shape != shared.raw_shape
        or data.dtype is not shared.np_dtype
        or out._device is not shared.device
    ):
        shared = TensorMeta(out)
    node.out_meta = (shared,)
    node.n_outputs = 1
    node.out_data = None if not save_out else (pack(out),) if hooked else (data,)
    if data.dtype.kind in "fcV":
        meta = out._ag = _new(AutogradMeta)
        meta.requires_grad = True
        meta.grad_fn = node
        meta.output_nr = 0
        if save_out:
            vc = out._vc
            if vc is None:
                vc = out._vc = [0]
            versions.append((None, vc, vc[0]))
    return out


def _record_in_transforms(op, args, out):
    """`record` while a transform (vmap, a forward-AD level) is active."""
    if LAYERS.batching is not None:
        out = LAYERS.batching(op, args, out)
    if GRAD_MODE.grad_enabled and _requires_grad(args):
        record(op, args, out, True)
    propagate(op, args, out)
    _keep_carriers(out)
    return out


def _record_outputs(node, outputs: tuple, save_out: bool, hooked) -> tuple:
    """The rest of `record` for an op with several outputs."""
    node.out_meta = tuple(TensorMeta(t) for t in outputs)
    node.n_outputs = len(outputs)
    if not save_out:
        node.out_data = None
    elif hooked:
        node.out_data = tuple(pack(t) for t in outputs)
    else:
        node.out_data = tuple(t._data for t in outputs)
    for i, t in enumerate(outputs):
        if t._data.dtype.kind in "fcV":
            t._ag = AutogradMeta(True, node, i)
            if save_out:
                vc = _version_counter(t)
                node.versions.append((None, vc, vc[0]))
    return outputs


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
    node.out_data = tuple(carrier(t) for t in outputs)


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
    _keep_original(target, result)
    if base is None or not (_requires(result) or _requires(target) or _requires(base)):
        if base is not None and LEVEL.current is not None:
            _rebase_tangent(target, base, result, LEVEL.current)
        target._ag = result._ag  # the history, or only a tangent (forward mode)
        return
    from ._views import rebase_view

    base_fw = base._ag.fw if base._ag is not None else None
    rebase_view(target, base, result)
    base._ag.fw = base_fw
    if LEVEL.current is not None:
        _rebase_tangent(target, base, result, LEVEL.current)
    if result._ag is not None:
        target._ag.fw = result._ag.fw


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
    if node is None or not any(t is target for t, _, _ in node.versions):
        return
    original = wrap(target._data.copy(), target._device)
    original._ag = target._ag
    original._vc = [0]
    node.saved = [original if s is target else s for s in node.saved]
    node.versions = [
        (original, original._vc, 0) if t is target else (t, vc, v) for t, vc, v in node.versions
    ]


def install() -> None:
    LAYERS.autograd = record
    LAYERS.rebase = rebase
