"""The top-level neural-network functions whose signature differs from their
``nn.functional`` form (``torch.embedding(weight, indices)``, ``torch.batch_norm(input,
weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled)``, losses
taking the reduction as an int, dropout taking ``train`` without a default...).

They call tocha-nn's functions when called: tocha-core does not import tocha-nn, and without
it a call raises the ModuleNotFoundError that names the distribution. The top-level functions
whose signature is ``nn.functional``'s (``tocha.conv2d``) are tocha-nn's own, bound on first
access (`tocha._missing.PROVIDED`).
"""

from __future__ import annotations

from .._api import PUBLIC, export
from .._dispatch import not_a_tensor
from .._tensor import Tensor
from ._argcheck import flag, int_arg
from ._out import write_out

__all__: list[str] = []

# PyTorch's reduction enum (at::Reduction) -> nn.functional's string.
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _functional():
    import tocha

    return tocha.nn.functional


def _reduction(value) -> str:
    """An aten loss's int `reduction` as nn.functional's name (PyTorch's parser takes no
    bool and no name for it)."""
    if type(value) is not int:
        raise TypeError(f"argument 'reduction' must be int, not {type(value).__name__}")
    if value not in _REDUCTIONS:
        raise ValueError(f"{value} is not a valid value for reduction")
    return _REDUCTIONS[value]


def embedding(
    weight: Tensor,
    indices: Tensor,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of `weight` at `indices` (`padding_idx` -1, or any index not a row's: none)."""
    padding_idx = int_arg("embedding", padding_idx, "padding_idx")
    rows = weight.shape[0] if isinstance(weight, Tensor) and weight.dim() else 0
    return _functional().embedding(
        indices,
        weight,
        padding_idx=padding_idx if 0 <= padding_idx < rows else None,
        scale_grad_by_freq=scale_grad_by_freq,
        sparse=sparse,
    )


def batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Tensor:
    """`nn.functional.batch_norm` with PyTorch's top-level argument order."""
    return _functional().batch_norm(
        input, running_mean, running_var, weight, bias, training, momentum, eps
    )


def instance_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    use_input_stats: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Tensor:
    """`nn.functional.instance_norm` with PyTorch's top-level argument order."""
    return _functional().instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


def layer_norm(
    input: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-05,
    cudnn_enable: bool = True,
) -> Tensor:
    """`nn.functional.layer_norm` (`cudnn_enable` is ignored)."""
    return _functional().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-05,
    cudnn_enabled: bool = True,
) -> Tensor:
    """`nn.functional.group_norm` (`cudnn_enabled` is ignored)."""
    flag("group_norm", cudnn_enabled, "cudnn_enabled")
    if isinstance(input, Tensor):
        input.size(0), input.size(1)  # PyTorch's IndexError for a missing batch or channel dim
    return _functional().group_norm(input, num_groups, weight, bias, eps)


def _dropout_family(name: str, functional_name: str | None, inplace: bool):
    def fn(input: Tensor, p: float, train: bool) -> Tensor:
        if not 0 <= p <= 1:  # PyTorch's native check: a RuntimeError (nn.functional's: ValueError)
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")
        if functional_name is None:
            result = _feature_dropout(input, p, train, alpha=name.startswith("feature_alpha"))
            return input.copy_(result) if inplace else result
        return getattr(_functional(), functional_name)(input, p, train, inplace)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        (f"`nn.functional.{functional_name}`" if functional_name else "Channel dropout")
        + (" in place" if inplace else "")
        + ", as ``torch."
        + name
        + "(input, p, train)``."
    )
    return fn


def _feature_dropout(input: Tensor, p: float, train: bool, alpha: bool) -> Tensor:
    """Dropout of whole channels (dim 1) of an input of at least 2 dims."""
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0:
        return input
    shape = (*input.shape[:2], *(1,) * (input.dim() - 2))
    keep = PUBLIC["bernoulli"](
        PUBLIC["full"](shape, 1 - p, dtype=input.dtype, device=input._device)
    )
    if not alpha:
        return input * keep / (1 - p) if p < 1 else input * 0
    alpha_prime = -1.7580993408473766  # -SELU's scale * alpha
    a = ((1 - p) * (1 + p * alpha_prime**2)) ** -0.5
    b = -a * alpha_prime * p
    return (input * keep + alpha_prime * (1 - keep)) * a + b


for _name, _functional_name in (
    ("dropout", "dropout"),
    ("alpha_dropout", "alpha_dropout"),
    ("feature_dropout", None),
    ("feature_alpha_dropout", None),
):
    export(_dropout_family(_name, _functional_name, False))
    export(_dropout_family(f"{_name}_", _functional_name, True))


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    pos_weight: Tensor | None = None,
    reduction: int = 0,
) -> Tensor:
    """`nn.functional.binary_cross_entropy_with_logits`, the reduction an int (0 none, the
    default of every top-level loss, as PyTorch's; 1 mean, 2 sum). The input broadcasts to
    the target's shape (the functional form wants them equal)."""
    if isinstance(input, Tensor) and isinstance(target, Tensor) and input.shape != target.shape:
        shape = list((target + input).shape)  # PyTorch's error where they do not broadcast
        if shape != list(target.shape):
            raise RuntimeError(
                f"output with shape {list(target.shape)} doesn't match the broadcast shape {shape}"
            )
        input = input.expand(target.shape)
    return _functional().binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction(reduction), pos_weight=pos_weight
    )


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False):
    """`nn.functional.kl_div`, the reduction an int (0: none, 1: the mean over elements)."""
    log_target = flag("kl_div", log_target, "log_target")
    return _functional().kl_div(
        input, target, reduction=_reduction(reduction), log_target=log_target
    )


def margin_ranking_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = 0
) -> Tensor:
    """`nn.functional.margin_ranking_loss`, the reduction an int; the inputs broadcast (the
    functional form's check that they have as many dims is not the op's)."""
    for position, (name, value) in enumerate(
        (("input1", input1), ("input2", input2), ("target", target)), 1
    ):
        if not isinstance(value, Tensor):
            raise not_a_tensor("margin_ranking_loss", value, name, position)
    loss = (-target * (input1 - input2) + float(margin)).clamp_min(0)
    reduction = _reduction(reduction)
    if reduction == "none":
        return loss
    return loss.mean() if reduction == "mean" else loss.sum()


def cosine_embedding_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = 0
) -> Tensor:
    """`nn.functional.cosine_embedding_loss`, the reduction an int."""
    return _functional().cosine_embedding_loss(
        input1, input2, target, margin, reduction=_reduction(reduction)
    )


def hinge_embedding_loss(
    input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0
) -> Tensor:
    """`nn.functional.hinge_embedding_loss`, the reduction an int."""
    return _functional().hinge_embedding_loss(
        input, target, margin, reduction=_reduction(reduction)
    )


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-06,
    swap: bool = False,
    reduction: int = 0,
) -> Tensor:
    """`nn.functional.triplet_margin_loss`, the reduction an int."""
    return _functional().triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction)
    )


def poisson_nll_loss(
    input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float, reduction: int
) -> Tensor:
    """`nn.functional.poisson_nll_loss`, every argument given, the reduction an int."""
    log_input = flag("poisson_nll_loss", log_input, "log_input")
    full = flag("poisson_nll_loss", full, "full")
    return _functional().poisson_nll_loss(
        input, target, log_input, full, eps=eps, reduction=_reduction(reduction)
    )


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: int = 0,
    zero_infinity: bool = False,
) -> Tensor:
    """`nn.functional.ctc_loss`, the reduction an int."""
    return _functional().ctc_loss(
        log_probs,
        targets,
        input_lengths,
        target_lengths,
        blank,
        _reduction(reduction),
        zero_infinity,
    )


def adaptive_max_pool1d(input: Tensor, output_size) -> tuple[Tensor, Tensor]:
    """`nn.functional.adaptive_max_pool1d` with its indices: (values, indices)."""
    return _functional().adaptive_max_pool1d(input, output_size, return_indices=True)


def max_pool1d_with_indices(
    input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False
) -> tuple[Tensor, Tensor]:
    """`nn.functional.max_pool1d` with its indices: (values, indices)."""
    return _functional().max_pool1d(
        input, kernel_size, stride or None, padding, dilation, ceil_mode, return_indices=True
    )


def constant_pad_nd(input: Tensor, pad, value=0) -> Tensor:
    """`input` padded by `value` (``pad``: before and after counts, last dim first)."""
    return _functional().pad(input, tuple(pad), "constant", value)


def _pool(name: str):
    def fn(
        input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False
    ) -> Tensor:
        return getattr(_functional(), name)(
            input, kernel_size, stride or None, padding, dilation, ceil_mode
        )

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"`nn.functional.{name}` (an empty `stride`: the kernel size)."
    return fn


def avg_pool1d(
    input: Tensor,
    kernel_size,
    stride=(),
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """`nn.functional.avg_pool1d` (an empty `stride`: the kernel size)."""
    return _functional().avg_pool1d(
        input, kernel_size, stride or None, padding, ceil_mode, count_include_pad
    )


def threshold(
    input: Tensor, threshold: float, value: float, *, out: Tensor | None = None
) -> Tensor:
    """`nn.functional.threshold`, with ``out=``: `value` where ``input <= threshold``."""
    result = _functional().threshold(input, threshold, value)
    return result if out is None else write_out(out, result)


def hardshrink(input: Tensor, lambd: float = 0.5, *, out: Tensor | None = None) -> Tensor:
    """`nn.functional.hardshrink`, with ``out=`` (of the result's dtype exactly): 0 where
    ``|input| <= lambd``."""
    result = _functional().hardshrink(input, lambd)
    return result if out is None else write_out(out, result, exact=True)


for _fn in (
    threshold,
    hardshrink,
    embedding,
    batch_norm,
    instance_norm,
    layer_norm,
    group_norm,
    binary_cross_entropy_with_logits,
    kl_div,
    margin_ranking_loss,
    cosine_embedding_loss,
    hinge_embedding_loss,
    triplet_margin_loss,
    poisson_nll_loss,
    ctc_loss,
    adaptive_max_pool1d,
    max_pool1d_with_indices,
    constant_pad_nd,
    avg_pool1d,
    *(_pool(n) for n in ("max_pool1d", "max_pool2d", "max_pool3d")),
):
    export(_fn)
