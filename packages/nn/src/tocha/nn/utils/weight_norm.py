"""``weight_norm`` by a forward pre-hook: PyTorch's older form of
``parametrizations.weight_norm`` (deprecated there), whose parameters are ``<name>_g`` and
``<name>_v`` and whose ``<name>`` is recomputed before each forward."""

from __future__ import annotations

import warnings

import tocha

from ..modules.module import Module
from ..parameter import Parameter
from .parametrizations import _norm_except_dim

__all__ = ["remove_weight_norm", "weight_norm"]


class _WeightNormHook:
    """The pre-hook that sets ``module.<name> = v * g / ||v||`` (the norm over every dim but
    `dim`; over all of them when `dim` is -1)."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = dim
        self.handle = None

    def compute(self, module: Module) -> tocha.Tensor:
        g = getattr(module, f"{self.name}_g")
        v = getattr(module, f"{self.name}_v")
        return v * (g / _norm_except_dim(v, self.dim))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute(module))


def _hooks_of(module: Module, kind: type, name: str) -> list:
    """The forward pre-hooks of `module` of class `kind` that act on its `name`."""
    hooks = [h for h in module._forward_pre_hooks.values() if isinstance(h, kind)]
    return [h for h in hooks if getattr(h, "name", None) == name]


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split ``module.<name>`` into a magnitude ``<name>_g`` (the norm over every dim but
    `dim`, or over all with ``dim=None``) and a direction ``<name>_v``, both parameters, and
    recompute ``<name> = v * g / ||v||`` before each forward. Returns `module`.

    Deprecated in PyTorch in favour of ``tocha.nn.utils.parametrizations.weight_norm``
    (a FutureWarning)."""
    warnings.warn(
        "`torch.nn.utils.weight_norm` is deprecated in favor of "
        "`torch.nn.utils.parametrizations.weight_norm`.",
        FutureWarning,
        stacklevel=2,
    )
    if _hooks_of(module, _WeightNormHook, name):
        raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    hook = _WeightNormHook(name, -1 if dim is None else dim)
    weight = getattr(module, name)
    del module._parameters[name]
    module.register_parameter(f"{name}_g", Parameter(_norm_except_dim(weight, hook.dim).detach()))
    module.register_parameter(f"{name}_v", Parameter(weight.detach()))
    setattr(module, name, hook.compute(module))
    hook.handle = module.register_forward_pre_hook(hook)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo `weight_norm`: ``<name>`` becomes one parameter again, with its current value."""
    hooks = _hooks_of(module, _WeightNormHook, name)
    if not hooks:
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    hook = hooks[0]
    weight = hook.compute(module)
    hook.handle.remove()
    delattr(module, name)
    del module._parameters[f"{name}_g"]
    del module._parameters[f"{name}_v"]
    module.register_parameter(name, Parameter(weight.detach()))
    return module
