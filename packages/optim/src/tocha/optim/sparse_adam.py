"""SparseAdam: Adam for sparse gradients, which tocha does not have."""

from __future__ import annotations

from collections.abc import Callable

import tocha
from tocha import Tensor

from .optimizer import Optimizer, ParamsT

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam, as ``torch.optim.SparseAdam``: Adam that updates only the entries present
    in sparse gradients.

    tocha has no sparse tensors: every gradient is dense, so `step` raises the RuntimeError
    PyTorch raises for a dense gradient; use `Adam` instead. The constructor checks its
    arguments (and refuses complex parameters) as PyTorch does.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        complex_params = [
            [i, j]
            for i, group in enumerate(self.param_groups)
            for j, p in enumerate(group["params"])
            if p.is_complex()
        ]
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not "
                "support complex parameters"
            )

    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """Evaluate `closure` if given, then raise: tocha's gradients are never sparse."""
        loss = None
        if closure is not None:
            with tocha.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    raise RuntimeError(
                        "SparseAdam does not support dense gradients, please consider Adam instead"
                    )
        return loss
