"""Adam and AdamW."""

from __future__ import annotations

from tocha import Tensor
from tocha.library import defop

from . import _update_rules as F
from ._elementwise import ElementwiseOptimizer
from .optimizer import ParamsT, to_scalar

__all__ = ["Adam"]


def check_adam_args(lr, betas, eps, weight_decay) -> None:
    """PyTorch's checks of Adam-like arguments, with its messages."""
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _check_tensor_hyperparameters(lr, betas, foreach, capturable) -> None:
    """PyTorch's checks of Adam's tensor ``lr`` and ``betas``: one element each, both betas
    tensors or neither, and none on the multi-tensor path unless capturable."""
    multi_tensor = foreach and not capturable
    if isinstance(lr, Tensor):
        if multi_tensor:
            raise ValueError(
                "lr as a Tensor is not supported for capturable=False and foreach=True"
            )
        if lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
    tensors = [isinstance(b, Tensor) for b in betas]
    if any(tensors) and not all(tensors):
        raise ValueError("betas must be either both floats or both Tensors")
    if all(tensors):
        for i, beta in enumerate(betas):
            if multi_tensor:
                raise ValueError(
                    f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True"
                )
            if beta.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")


def _adam_group_kernel(xp):
    def kernel(params, grads, states, coefficients):
        """One Adam step of a whole group: the flat arrays `params` and `grads`, one per
        parameter, and the moments `states`, flat over the group in parameter order."""
        start = 0
        for p, g in zip(params, grads):
            end = start + p.size
            parts = [s[start:end] for s in states]
            tmp = [xp.empty_like(p), xp.empty_like(p)]
            F.adam(xp, p, g, *parts[:2], parts[2] if len(parts) > 2 else None, tmp, **coefficients)
            start = end

    return kernel


# A backend overrides it with one kernel over the group (tocha-cuda); on the CPU the blocked
# path of `ElementwiseOptimizer` is faster, and this generic kernel serves other devices.
adam_group_op = defop("_adam_step", _adam_group_kernel, differentiable=False)


class Adam(ElementwiseOptimizer):
    r"""Adam, as ``torch.optim.Adam``.

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g, \quad v \leftarrow \beta_2 v + (1-\beta_2) g^2,
        \quad \theta \leftarrow \theta - \frac{\gamma}{1-\beta_1^t}
        \frac{m}{\sqrt{v / (1-\beta_2^t)} + \epsilon}

    Args:
        params: the tensors to optimize, or parameter groups (dicts).
        lr: learning rate (default 1e-3).
        betas: coefficients of the running averages of the gradient and its square.
        eps: added to the denominator (default 1e-8).
        weight_decay: L2 penalty (default 0), or decoupled decay with
            ``decoupled_weight_decay=True`` (AdamW).
        amsgrad: use the maximum of past squared-gradient averages (AMSGrad).
        foreach: the multi-tensor path (None: when a group has at least 8 parameters).
        maximize: maximize the objective instead of minimizing it.
        capturable: accepted for compatibility; a step on CPU parameters raises, as in PyTorch.
        differentiable: not supported (must be False).
        fused: taken as ``foreach``.
        decoupled_weight_decay: AdamW's decay of the parameters.

    State per parameter: ``step`` (0-dim float), ``exp_avg``, ``exp_avg_sq`` and, with
    amsgrad, ``max_exp_avg_sq``.

    Example:
        >>> opt = tocha.optim.Adam(model.parameters(), lr=1e-3)
    """

    sparse_error = "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        check_adam_args(lr, betas, eps, weight_decay)
        _check_tensor_hyperparameters(lr, betas, foreach, capturable)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)

    group_op = adam_group_op

    def _tensor_state(self, group):
        names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())
        return tuple((name, 0.0) for name in names)

    def _coefficients(self, group, scalars):
        step = scalars[0]
        step += 1
        beta1, beta2 = group["betas"]
        return dict(
            step=float(step[0]),
            lr=to_scalar(group["lr"]),
            beta1=to_scalar(beta1),
            beta2=to_scalar(beta2),
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            amsgrad=group["amsgrad"],
            maximize=group["maximize"],
            decoupled_weight_decay=group["decoupled_weight_decay"],
        )

    def _update(self, xp, p, g, states, tmp, fresh, c):
        F.adam(xp, p, g, states[0], states[1], states[2] if len(states) > 2 else None, tmp, **c)
