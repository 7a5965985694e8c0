"""AdamW: Adam with decoupled weight decay."""

from __future__ import annotations

from tocha import Tensor

from .adam import Adam
from .optimizer import ParamsT

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""AdamW, as ``torch.optim.AdamW``: Adam whose weight decay shrinks the parameters
    (:math:`\theta \leftarrow \theta (1 - \gamma\lambda)`) instead of adding to the gradient.

    Args: as `Adam`, with ``weight_decay`` defaulting to 1e-2.

    Example:
        >>> opt = tocha.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
