"""Modules as functions of their tensors: `functional_call` and `stack_module_state`."""

from __future__ import annotations

import tocha
from tocha import Tensor
from tocha.nn import Module
from tocha.nn.utils import stateless


def _merged(parameter_and_buffer_dicts) -> dict:
    """One dict of the given dict or sequence of dicts, whose keys must be distinct."""
    if isinstance(parameter_and_buffer_dicts, dict):
        return parameter_and_buffer_dicts
    if not isinstance(parameter_and_buffer_dicts, (list, tuple)):
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but "
            f"got {type(parameter_and_buffer_dicts)}"
        )
    if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    merged: dict = {}
    repeated = []
    for d in parameter_and_buffer_dicts:
        for key, value in d.items():
            if key in merged and key not in repeated:
                repeated.append(key)
            merged[key] = value
    if repeated:
        raise ValueError(
            f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
            "ambiguous"
        )
    return merged


def _check_tied(module: Module, tensors: dict) -> None:
    """ValueError when several names of one tied tensor are given other tensors."""
    names_of: dict[int, list[str]] = {}
    for name, t in module.named_parameters(remove_duplicate=False):
        names_of.setdefault(id(t), []).append(name)
    for name, t in module.named_buffers(remove_duplicate=False):
        names_of.setdefault(id(t), []).append(name)
    for names in names_of.values():
        given = sorted(n for n in names if n in tensors)
        if len({id(tensors[n]) for n in given}) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {given}, which are tied. "
                "Consider using tie_weights=False"
            )


def functional_call(
    module: Module,
    parameter_and_buffer_dicts,
    args=None,
    kwargs=None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
):
    """Call `module` with some of its parameters and buffers replaced, for the call only, by
    the tensors of `parameter_and_buffer_dicts` (a dict of dotted names as in
    ``named_parameters()``, or a list or tuple of such dicts with distinct keys).

    `args` is the positional argument tuple (any other value is the single argument),
    `kwargs` the keyword arguments. With `tie_weights`, a tensor registered under several
    names (tied weights) is replaced under all of them when one is given; with `strict`,
    every parameter and buffer must be given, and nothing else. The module's own tensors
    are back in place when the call returns or raises. Differentiable with respect to the
    given tensors, and usable inside `vmap` and `grad`.

    Example:
        >>> params = {k: v.detach() for k, v in model.named_parameters()}
        >>> functional_call(model, params, (x,))
    """
    tensors = _merged(parameter_and_buffer_dicts)
    for value in tensors.values():
        if not isinstance(value, Tensor):
            raise TypeError(f"{value} is not an instance of tocha.Tensor")
    if tie_weights:
        _check_tied(module, tensors)
    return stateless.functional_call(
        module, tensors, args, kwargs, tie_weights=tie_weights, strict=strict
    )


def _stacked(name: str, tensors: list) -> Tensor:
    """`tensors` stacked along a new dim 0: a leaf that requires grad when they do."""
    requires_grad = tensors[0].requires_grad
    if any(t.requires_grad != requires_grad for t in tensors):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    with tocha.no_grad():
        out = tocha.stack([t.detach() for t in tensors])
    return out.requires_grad_() if requires_grad else out


def stack_module_state(models) -> tuple[dict, dict]:
    """``(params, buffers)``: each parameter and buffer of `models` (a sequence or ModuleList
    of modules of one class, all in training or all in eval mode) stacked along a new dim
    0, by name as ``models[0].named_parameters()`` names them. A stacked parameter of shape
    ``(len(models), *shape)`` is a new leaf, requiring grad when the models' parameters do;
    with `functional_call` and `vmap` it runs the ensemble in one call.

    Example:
        >>> params, buffers = stack_module_state(models)
        >>> vmap(lambda p, b, x: functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    named_params = [dict(m.named_parameters()) for m in models]
    named_buffers = [dict(m.named_buffers()) for m in models]
    params = {
        name: _stacked(name, [p[name] for p in named_params])
        for name, _ in models[0].named_parameters()
    }
    buffers = {
        name: _stacked(name, [b[name] for b in named_buffers])
        for name, _ in models[0].named_buffers()
    }
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """Make every batch norm module in `root` (itself included) keep no running statistics,
    in place, so that it normalises by the batch's own statistics under `vmap` (PyTorch's
    advice for model ensembles): ``running_mean``, ``running_var`` and
    ``num_batches_tracked`` become None and ``track_running_stats`` False. Returns `root`."""
    nn = tocha.nn
    kinds = tuple(
        getattr(nn, name)
        for name in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm")
        if hasattr(nn, name)
    )
    for module in root.modules():
        if isinstance(module, kinds):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
