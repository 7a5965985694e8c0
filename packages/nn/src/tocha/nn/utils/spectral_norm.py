"""``spectral_norm`` by a forward pre-hook: PyTorch's older form of
``parametrizations.spectral_norm``, with the parameter ``<name>_orig``, the power method's
vectors as buffers ``<name>_u`` and ``<name>_v`` (the state-dict keys of checkpoints saved
with it), and ``<name>`` recomputed before each forward."""

from __future__ import annotations

import tocha

from .. import functional as F
from ..modules.module import Module
from ..parameter import Parameter
from .weight_norm import _hooks_of

__all__ = ["remove_spectral_norm", "spectral_norm"]


class _SpectralNormHook:
    """The pre-hook that sets ``module.<name> = W / sigma``, sigma the largest singular value
    of W (as a matrix over `dim`) estimated by the power method, iterated
    `n_power_iterations` times per forward in training mode."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.name = name
        self.n_power_iterations = n_power_iterations
        self.dim = dim
        self.eps = eps
        self.handle = None

    def matrix(self, weight: tocha.Tensor) -> tocha.Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute(self, module: Module, power_iterations: bool) -> tocha.Tensor:
        weight = getattr(module, f"{self.name}_orig")
        u = getattr(module, f"{self.name}_u")
        v = getattr(module, f"{self.name}_v")
        weight_mat = self.matrix(weight)
        if power_iterations:
            with tocha.no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(tocha.mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(tocha.mv(weight_mat, v), dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()
        sigma = tocha.dot(u, tocha.mv(weight_mat, v))
        return weight / sigma

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute(module, module.training))


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divide ``module.<name>`` by its spectral norm before each forward, estimated by
    `n_power_iterations` steps of the power method per training forward (`dim`, the output
    dimension: 1 for transposed convolutions, else 0). Returns `module`."""
    if _hooks_of(module, _SpectralNormHook, name):
        raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    if dim is None:
        transposed = (
            tocha.nn.ConvTranspose1d,
            tocha.nn.ConvTranspose2d,
            tocha.nn.ConvTranspose3d,
        )
        dim = 1 if isinstance(module, transposed) else 0
    hook = _SpectralNormHook(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    with tocha.no_grad():
        h, w = hook.matrix(weight).shape
        u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=eps)
        v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=eps)
    del module._parameters[name]
    module.register_parameter(f"{name}_orig", weight)
    setattr(module, name, weight.detach())
    module.register_buffer(f"{name}_u", u)
    module.register_buffer(f"{name}_v", v)
    hook.handle = module.register_forward_pre_hook(hook)
    module._register_state_dict_hook(_VersionRecord(name))
    return module


class _VersionRecord:
    """A state-dict hook noting, as PyTorch's does, the version of the spectral norm of
    `name` in the module's metadata (``{"spectral_norm": {"<name>.version": 1}}``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        versions = local_metadata.setdefault("spectral_norm", {})
        key = f"{self.name}.version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = 1


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo `spectral_norm`: ``<name>`` becomes one parameter again, with its current
    normalised value."""
    hooks = _hooks_of(module, _SpectralNormHook, name)
    if not hooks:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    hook = hooks[0]
    with tocha.no_grad():
        weight = hook.compute(module, power_iterations=False)
    hook.handle.remove()
    for key, record in list(module._state_dict_hooks.items()):
        if isinstance(record, _VersionRecord) and record.name == name:
            del module._state_dict_hooks[key]
    delattr(module, name)
    del module._parameters[f"{name}_orig"]
    del module._buffers[f"{name}_u"]
    del module._buffers[f"{name}_v"]
    module.register_parameter(name, Parameter(weight.detach()))
    return module
