"""`backward` and `grad`, and the Tensor methods autograd gives."""

from __future__ import annotations

import warnings

import numpy as np

import tocha
from tocha import Tensor
from tocha.library import GRAD_MODE, REGISTRY, wrap

from ._engine import retain_grad_hook, run_backward
from ._graph import AutogradMeta, _Handle
from .graph import GradientEdge

ONES = REGISTRY["ones"]


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def _one_like(data, device):
    """A fresh array of one 1 shaped and typed as `data` (a NumPy scalar array: a copy of a
    cached one, as ``np.ones`` costs several times more)."""
    if device.type != "cpu" or type(data) is not np.ndarray:
        return ONES.kernels[device](data.shape, data.dtype)
    one = _ONE.get((data.shape, data.dtype))
    if one is None:
        one = _ONE[data.shape, data.dtype] = np.ones(data.shape, data.dtype)
    return one.copy()


_ONE: dict = {}  # (shape, NumPy dtype) -> ones


def _edge_roots(outputs: tuple, grad_outputs) -> tuple:
    """The outputs, each `GradientEdge` among them as a stand-in tensor of its gradient's
    shape whose gradient goes into that edge."""
    for out in outputs:
        if type(out) is GradientEdge:
            break
    else:
        return outputs
    grads = list(_as_tuple(grad_outputs)) if grad_outputs is not None else []
    roots = []
    for i, out in enumerate(outputs):
        if type(out) is GradientEdge:
            grad = grads[i] if i < len(grads) else None
            if not isinstance(grad, Tensor):
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            out_root = grad.detach()
            out_root._ag = AutogradMeta(True, out.node, out.output_nr)
            out = out_root
        roots.append(out)
    return tuple(roots)


def _root_grads(outputs, grad_outputs, create_graph) -> list:
    grads = list(_as_tuple(grad_outputs)) if grad_outputs is not None else [None] * len(outputs)
    result = []
    for i, (out, grad) in enumerate(zip(outputs, grads)):
        plain = type(out) is Tensor  # its array is all of it: read it, not its methods
        if not (out._ag is not None and out._ag.requires_grad if plain else out.requires_grad):
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        if grad is None:
            if (out._data.size if plain else out.numel()) != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not (out._data.dtype.kind in "fV" if plain else out.is_floating_point()):
                raise RuntimeError(
                    "grad can be implicitly created only for real scalar outputs but got "
                    f"{out.dtype}"
                )
            grad = wrap(_one_like(out._data, out._device), out._device)
        elif not isinstance(grad, Tensor):
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(grad).__name__}"
            )
        elif grad.shape != out.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {grad.shape} and "
                f"output[{i}] has a shape of {out.shape}."
            )
        result.append(grad)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    return result


def backward(
    tensors,
    grad_tensors=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs=None,
) -> None:
    """Accumulate into the leaves' ``.grad`` the gradient of `tensors` (weighted by
    `grad_tensors`, needed for non-scalar outputs); only into `inputs` when given."""
    outputs = _edge_roots(_as_tuple(tensors), grad_tensors)
    grads = _root_grads(outputs, grad_tensors, create_graph)
    retain = create_graph if retain_graph is None else retain_graph
    chosen = _as_tuple(inputs) if inputs is not None else None
    if chosen is not None and not chosen:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    run_backward(outputs, grads, retain, create_graph, chosen, accumulate=True)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple:
    """The gradients of `outputs` with respect to `inputs`, returned (not accumulated).
    With `is_grads_batched`, each of `grad_outputs` has a leading batch dim: the result is
    the gradients for each batch entry, stacked along a leading dim (one vector-Jacobian
    product per entry)."""
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "torch.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    outs = _edge_roots(_as_tuple(outputs), grad_outputs)
    ins = _as_tuple(inputs)
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if is_grads_batched:
        return _batched_grad(
            outs, ins, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads
        )
    for t in ins:
        if isinstance(t, Tensor) and not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    grads = _root_grads(outs, grad_outputs, create_graph)
    retain = create_graph if retain_graph is None else retain_graph
    results = run_backward(outs, grads, retain, create_graph, ins, accumulate=False)
    final = []
    for i, (t, g) in enumerate(zip(ins, results)):
        if g is None:
            if materialize_grads and isinstance(t, Tensor):
                g = tocha.zeros_like(t, requires_grad=create_graph)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
        final.append(g)
    return tuple(final)


def _batched_grad(outs, ins, grad_outputs, retain_graph, create_graph, allow_unused, materialize):
    """`grad` with ``is_grads_batched``: one backward per batch entry of `grad_outputs`, the
    graph kept until the last, the gradients stacked."""
    if grad_outputs is None:
        raise RuntimeError("grad_outputs must be given when is_grads_batched=True")
    batches = _as_tuple(grad_outputs)
    sizes = {g.shape[0] for g in batches if isinstance(g, Tensor)}
    if len(sizes) != 1:
        raise RuntimeError("grad_outputs must have the same batch size (their first dim)")
    (size,) = sizes
    retain = create_graph if retain_graph is None else retain_graph
    entries = []
    for i in range(size):
        entries.append(
            grad(
                outs,
                ins,
                [g[i] if isinstance(g, Tensor) else g for g in batches],
                retain_graph=True if i < size - 1 else retain,
                create_graph=create_graph,
                allow_unused=allow_unused,
                materialize_grads=materialize,
            )
        )
    return tuple(
        None if column[0] is None else tocha.stack(list(column)) for column in zip(*entries)
    )


# -- what Tensor methods need ---------------------------------------------------------------
def set_requires_grad(t: Tensor, value: bool) -> None:
    meta = t._ag
    if meta is not None and meta.grad_fn is not None:
        if not value:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        return
    if value and t.is_inference() and not GRAD_MODE.inference:
        raise RuntimeError(
            "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
        )
    if value and t._data.dtype.kind not in "fcV":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    if meta is None:
        t._ag = AutogradMeta(value)
    else:
        meta.requires_grad = value


def set_grad(t: Tensor, value) -> None:
    if value is not None:
        if not isinstance(value, Tensor):
            raise TypeError(
                f"assigned grad expected to be a Tensor or None but got grad of "
                f"type {type(value).__name__}"
            )
        if value.shape != t.shape:
            raise RuntimeError("assigned grad has data of a different size")
        if value.dtype is not t.dtype:
            raise RuntimeError("assigned grad has data of a different type")
        if value._device is not t._device:
            raise RuntimeError("assigned grad has data located on a different device")
    if t._ag is None:
        t._ag = AutogradMeta(False)
    t._ag.grad = value


def _backward(
    self: Tensor, gradient=None, retain_graph=None, create_graph=False, inputs=None
) -> None:
    """Accumulate the gradient of this tensor into the leaves' ``.grad``."""
    if gradient is None and inputs is None and type(self) is Tensor:
        meta, data = self._ag, self._data
        if meta is not None and meta.requires_grad and data.size == 1 and data.dtype.kind in "fV":
            # the common call, a real scalar: `backward`'s checks pass, its root gradient is 1
            dev = self._device
            retain = create_graph if retain_graph is None else retain_graph
            run_backward((self,), (wrap(_one_like(data, dev), dev),), retain, create_graph)
            return
    backward(self, gradient, retain_graph, create_graph, inputs)


def _register_hook(self: Tensor, hook):
    """`hook(grad)` runs when this tensor's gradient is computed; it may return a new one."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    meta = self._ag
    if meta.grad_fn is None:
        if meta.hooks is None:
            meta.hooks = []
        meta.hooks.append(hook)
        return _Handle(meta.hooks, hook)
    node = meta.grad_fn
    if node.pre_hooks is None:
        node.pre_hooks = []
    entry = (meta.output_nr, hook)
    node.pre_hooks.append(entry)
    return _Handle(node.pre_hooks, entry)


def _register_post_accumulate_grad_hook(self: Tensor, hook):
    """`hook(tensor)` runs after a gradient was accumulated into this leaf's ``.grad``."""
    meta = self._ag
    if meta is None or meta.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if meta.post_accumulate_hooks is None:
        meta.post_accumulate_hooks = []
    meta.post_accumulate_hooks.append(hook)
    return _Handle(meta.post_accumulate_hooks, hook)


def _retain_grad(self: Tensor) -> None:
    """Keep the gradient of this non-leaf tensor in ``.grad`` after backward."""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    meta = self._ag
    if meta.grad_fn is None or meta.retains_grad:
        return
    meta.retains_grad = True
    _register_hook(self, retain_grad_hook(self))


def _retains_grad(self: Tensor) -> bool:
    return self._ag is not None and self._ag.retains_grad


def install_methods() -> None:
    Tensor.backward = _backward
    Tensor.register_hook = _register_hook
    Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
    Tensor.retain_grad = _retain_grad
    Tensor.retains_grad = property(_retains_grad)
