"""tocha.nn.init: parameter initialisation, as ``torch.nn.init``.

Every function fills its tensor in place (without recording autograd history) and returns
it; the random ones take an optional ``generator``.
"""

from __future__ import annotations

import math
import warnings

import tocha
from tocha import Tensor

__all__ = [
    "calculate_gain",
    "constant_",
    "dirac_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "sparse_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
    "constant",
    "dirac",
    "eye",
    "kaiming_normal",
    "kaiming_uniform",
    "normal",
    "orthogonal",
    "sparse",
    "uniform",
    "xavier_normal",
    "xavier_uniform",
]

_LINEAR = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity: 1 (linear, conv, sigmoid), 5/3 (tanh),
    sqrt(2) (relu), sqrt(2 / (1 + slope^2)) (leaky_relu), 3/4 (selu).

    Example:
        >>> nn.init.calculate_gain("leaky_relu", 0.2)
        1.3867504905630728
    """
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _no_op(tensor: Tensor) -> bool:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def uniform_(
    tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: tocha.Generator | None = None
) -> Tensor:
    """Fill with draws from ``U(a, b)``."""
    with tocha.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: tocha.Generator | None = None
) -> Tensor:
    """Fill with draws from ``N(mean, std^2)``."""
    with tocha.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: tocha.Generator | None = None,
) -> Tensor:
    """Fill with draws from ``N(mean, std^2)`` truncated to ``[a, b]``: values outside are
    drawn again until inside. When ``[a, b]`` holds more than 0.3 of the normal's mass, each
    round draws a whole tensor of normals and keeps them where a value is still missing and
    the draw falls inside; else each round draws uniforms in ``[a, b]`` and keeps each with
    probability ``density(x) / max density on [a, b]`` (rejection sampling), as PyTorch's.
    Half-precision tensors are drawn in float32."""

    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    inside_mass = cdf((b - mean) / std) - cdf((a - mean) / std)
    with tocha.no_grad():
        work = tensor
        if inside_mass > 0.3:
            work.normal_(mean, std, generator=generator)
            missing = (work < a) | (work > b)
            while missing.any():
                draw = tocha.empty_like(work).normal_(mean, std, generator=generator)
                take = missing & (draw >= a) & (draw <= b)
                work[take] = draw[take]
                missing &= ~take
        else:
            peak = min(max(mean, a), b)  # where the density on [a, b] is highest
            missing = tocha.ones(work.shape, dtype=tocha.bool, device=work.device)
            while missing.any():
                x = tocha.empty_like(work).uniform_(a, b, generator=generator)
                u = tocha.empty_like(work).uniform_(generator=generator)
                ratio = tocha.exp(((peak - mean) ** 2 - (x - mean) ** 2) / (2 * std * std))
                take = missing & (u < ratio)
                work[take] = x[take]
                missing &= ~take
        if work is not tensor:
            tensor.copy_(work)
        return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with `val`."""
    with tocha.no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    with tocha.no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix (ones on the diagonal)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with tocha.no_grad():
        eye = tocha.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device)
        return tensor.copy_(eye)


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta: the convolution keeps
    its input channels (in each of `groups` groups)."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    with tocha.no_grad():
        tensor.zero_()
        centre = tuple(n // 2 for n in sizes[2:])
        for g in range(groups):
            for d in range(min_dim):
                tensor[(g * out_per_group + d, d) + centre] = 1
    return tensor


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    dims = tensor.dim()
    if dims < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive_field = 1
    for n in tensor.shape[2:]:
        receptive_field *= n
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(
    tensor: Tensor, gain: float = 1.0, generator: tocha.Generator | None = None
) -> Tensor:
    """Glorot uniform: ``U(-a, a)``, ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(
    tensor: Tensor, gain: float = 1.0, generator: tocha.Generator | None = None
) -> Tensor:
    """Glorot normal: ``N(0, std^2)``, ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: tocha.Generator | None = None,
) -> Tensor:
    """He uniform: ``U(-bound, bound)``, ``bound = gain * sqrt(3 / fan)`` (`mode` picks
    fan_in or fan_out; `a` is leaky_relu's negative slope)."""
    if _no_op(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: tocha.Generator | None = None,
) -> Tensor:
    """He normal: ``N(0, std^2)``, ``std = gain / sqrt(fan)``."""
    if _no_op(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(
    tensor: Tensor, gain: float = 1, generator: tocha.Generator | None = None
) -> Tensor:
    """Fill with a (semi-)orthogonal matrix (the trailing dims flattened), times `gain`."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with tocha.no_grad():
        flattened = tocha.empty((rows, cols), dtype=tensor.dtype, device=tensor.device)
        flattened.normal_(0, 1, generator=generator)
        if rows < cols:
            flattened = flattened.t()
        q, r = tocha.linalg.qr(flattened)
        q = q * tocha.diagonal(r, 0).sign()
        if rows < cols:
            q = q.t()
        tensor.copy_(q.reshape(tensor.shape))
        tensor.mul_(gain)
    return tensor


def sparse_(
    tensor: Tensor, sparsity: float, std: float = 0.01, generator: tocha.Generator | None = None
) -> Tensor:
    """Fill a 2-D tensor from ``N(0, std^2)``, then zero ``ceil(sparsity * rows)`` random
    entries of each column. As in PyTorch, `generator` draws the normal values only: the
    zeroed rows come from the global generator."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with tocha.no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            zero_rows = tocha.randperm(rows)[:num_zeros]
            tensor[zero_rows, col] = 0
    return tensor


def _deprecated_alias(name: str):
    """``nn.init.<name>``: PyTorch's old spelling of ``<name>_``, which warns and calls it."""
    modern = globals()[f"{name}_"]

    def alias(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.",
            FutureWarning,
            stacklevel=2,
        )
        return modern(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = name
    alias.__doc__ = f"Deprecated: `{name}_` (warns)."
    return alias


constant = _deprecated_alias("constant")
dirac = _deprecated_alias("dirac")
eye = _deprecated_alias("eye")
kaiming_normal = _deprecated_alias("kaiming_normal")
kaiming_uniform = _deprecated_alias("kaiming_uniform")
normal = _deprecated_alias("normal")
orthogonal = _deprecated_alias("orthogonal")
sparse = _deprecated_alias("sparse")
uniform = _deprecated_alias("uniform")
xavier_normal = _deprecated_alias("xavier_normal")
xavier_uniform = _deprecated_alias("xavier_uniform")
