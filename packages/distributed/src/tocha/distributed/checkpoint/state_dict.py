"""The state dicts of models and optimizers by parameter name, as
``torch.distributed.checkpoint.state_dict``: `get_state_dict` and `set_state_dict` (and their
model and optimizer halves).

Names are the model's own, without the ``module.`` that DistributedDataParallel adds or the
``_orig_mod.`` of a compiled model, so that a checkpoint loads into a wrapped or unwrapped
model alike. An optimizer's state is keyed by its parameters' names, not their indices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import tocha
from tocha.nn import Module

__all__ = [
    "StateDictOptions",
    "get_model_state_dict",
    "get_optimizer_state_dict",
    "get_state_dict",
    "set_model_state_dict",
    "set_optimizer_state_dict",
    "set_state_dict",
]


@dataclass
class StateDictOptions:
    """How the state dicts are made. On one machine's CPU, with replicated parameters, the
    sharding options (`full_state_dict`, `cpu_offload`, `broadcast_from_rank0`) change
    nothing; `ignore_frozen_params` leaves out parameters that do not require grad; `strict`
    is `set_model_state_dict`'s."""

    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _wrapper_prefixes(model: Module) -> list[str]:
    """The key prefixes of the wrappers inside `model`: ``"module."`` of a DDP at the top."""
    from .._ddp import DistributedDataParallel

    prefixes = []
    for name, module in model.named_modules():
        base = f"{name}." if name else ""
        if isinstance(module, DistributedDataParallel):
            prefixes.append(f"{base}module.")
        if hasattr(module, "_orig_mod"):
            prefixes.append(f"{base}_orig_mod.")
    return sorted(prefixes, key=len, reverse=True)


def _names(model: Module) -> dict[str, str]:
    """Each state dict key of `model` -> its name without wrappers."""
    prefixes = _wrapper_prefixes(model)
    return {key: _strip(key, prefixes) for key in model.state_dict()}


def _strip(key: str, prefixes: list[str]) -> str:
    for prefix in prefixes:
        if key.startswith(prefix):
            owner = prefix[: -len(prefix.rstrip(".").rsplit(".", 1)[-1]) - 1]
            return _strip(owner + key[len(prefix) :], prefixes)
    return key


def _optimizers(optimizers) -> list:
    """One optimizer (anything with ``param_groups``), or several, as a list."""
    return [optimizers] if hasattr(optimizers, "param_groups") else list(optimizers)


def _param_names(model: Module) -> dict[int, str]:
    prefixes = _wrapper_prefixes(model)
    return {id(p): _strip(n, prefixes) for n, p in model.named_parameters(remove_duplicate=False)}


def get_model_state_dict(
    model: Module, *, submodules=None, options: StateDictOptions | None = None
) -> dict[str, Any]:
    """`model`'s state dict, keyed by the names of the unwrapped model."""
    options = options or StateDictOptions()
    names = _names(model)
    frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
    return {
        names[k]: v
        for k, v in model.state_dict().items()
        if not (options.ignore_frozen_params and k in frozen)
    }


def set_model_state_dict(
    model: Module, model_state_dict: dict[str, Any], *, options: StateDictOptions | None = None
):
    """Load `model_state_dict` (keyed as `get_model_state_dict` keys it) into `model`;
    returns the missing and unexpected keys, as ``Module.load_state_dict``."""
    options = options or StateDictOptions()
    keys = {name: key for key, name in _names(model).items()}
    renamed = {keys.get(name, name): value for name, value in model_state_dict.items()}
    return model.load_state_dict(renamed, strict=options.strict)


def _init_state(optimizer) -> None:
    """Give an optimizer that has not stepped its state, as PyTorch does: a step with zero
    gradients and a learning rate of 0."""
    if optimizer.state:
        return
    params = [p for g in optimizer.param_groups for p in g["params"] if p.requires_grad]
    if not params:
        return
    for p in params:
        if p.grad is None:
            p.grad = tocha.zeros_like(p)
    rates = [g["lr"] for g in optimizer.param_groups]
    for g in optimizer.param_groups:
        g["lr"] = 0.0
    optimizer.step()
    for g, lr in zip(optimizer.param_groups, rates):
        g["lr"] = lr
    optimizer.zero_grad(set_to_none=True)


def get_optimizer_state_dict(
    model: Module, optimizers, *, submodules=None, options: StateDictOptions | None = None
) -> dict[str, Any]:
    """The state of `optimizers` (one or several), keyed by parameter name:
    ``{"state": {name: {...}}, "param_groups": [{..., "params": [names]}]}``."""
    names = _param_names(model)
    state: dict[str, Any] = {}
    groups: list[dict[str, Any]] = []
    for optimizer in _optimizers(optimizers):
        _init_state(optimizer)
        packed = optimizer.state_dict()
        order = [p for g in optimizer.param_groups for p in g["params"]]
        for index, value in packed["state"].items():
            state[names[id(order[index])]] = value
        for group, saved in zip(optimizer.param_groups, packed["param_groups"]):
            groups.append({**saved, "params": [names[id(p)] for p in group["params"]]})
    return {"state": state, "param_groups": groups}


def set_optimizer_state_dict(
    model: Module,
    optimizers,
    optim_state_dict: dict[str, Any],
    *,
    options: StateDictOptions | None = None,
) -> None:
    """Load `optim_state_dict` (keyed as `get_optimizer_state_dict` keys it) into
    `optimizers`."""
    names = _param_names(model)
    saved_groups = list(optim_state_dict["param_groups"])
    for optimizer in _optimizers(optimizers):
        order = [names[id(p)] for g in optimizer.param_groups for p in g["params"]]
        index = {name: i for i, name in enumerate(order)}
        mine = [g for g in saved_groups if g["params"] and g["params"][0] in index]
        if len(mine) != len(optimizer.param_groups):
            mine = saved_groups[: len(optimizer.param_groups)]
        saved_groups = [g for g in saved_groups if all(g is not m for m in mine)]
        groups = [{**g, "params": [index[n] for n in g["params"]]} for g in mine]
        state = {index[n]: v for n, v in optim_state_dict["state"].items() if n in index}
        optimizer.load_state_dict({"state": state, "param_groups": groups})


def get_state_dict(
    model: Module, optimizers, *, submodules=None, options: StateDictOptions | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(get_model_state_dict(model), get_optimizer_state_dict(model, optimizers))``."""
    return (
        get_model_state_dict(model, options=options),
        get_optimizer_state_dict(model, optimizers, options=options),
    )


def set_state_dict(
    model: Module,
    optimizers,
    *,
    model_state_dict: dict[str, Any],
    optim_state_dict: dict[str, Any],
    options: StateDictOptions | None = None,
):
    """Load both halves; returns the model's missing and unexpected keys."""
    result = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return result
