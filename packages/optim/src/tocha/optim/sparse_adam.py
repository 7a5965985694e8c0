"""SparseAdam: Adam on the entries that sparse gradients hold (nn.Embedding(sparse=True))."""

from __future__ import annotations

import math

import numpy as np

import tocha
from tocha import Tensor
from tocha.library import bump_version

from ._per_parameter import PerParameterOptimizer
from .optimizer import ParamsT

__all__ = ["SparseAdam"]


class SparseAdam(PerParameterOptimizer):
    r"""SparseAdam, as ``torch.optim.SparseAdam``: Adam that updates only the entries present
    in sparse COO gradients (``nn.Embedding(sparse=True)`` makes them); a dense gradient
    raises PyTorch's RuntimeError. For the entries :math:`i` of the coalesced gradient
    :math:`g`:

    .. math::
        m_i \leftarrow \beta_1 m_i + (1 - \beta_1) g_i, \quad
        v_i \leftarrow \beta_2 v_i + (1 - \beta_2) g_i^2, \quad
        \theta_i \leftarrow \theta_i - \gamma \frac{\sqrt{1 - \beta_2^t}}{1 - \beta_1^t}
        \frac{m_i}{\sqrt{v_i} + \epsilon}

    The moments (``exp_avg``, ``exp_avg_sq``) are dense, the step count (``step``) an int.
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

    def _update(self, group, p: Tensor) -> None:
        grad = p.grad
        if not grad.is_sparse:
            raise RuntimeError(
                "SparseAdam does not support dense gradients, please consider Adam instead"
            )
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["exp_avg"] = tocha.zeros_like(p)
            state["exp_avg_sq"] = tocha.zeros_like(p)
        state["step"] += 1
        grad = grad.coalesce()
        if grad._nnz() == 0:
            return
        where = tuple(grad.indices()._host())
        g = grad.values()._host()
        if group["maximize"]:
            g = -g
        beta1, beta2 = group["betas"]
        lr = float(group["lr"])
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        m_rows = m[where] + (1 - beta1) * (g - m[where])
        v_rows = v[where] + (1 - beta2) * (g * g - v[where])
        m[where], v[where] = m_rows, v_rows
        step = state["step"]
        step_size = lr * math.sqrt(1 - beta2**step) / (1 - beta1**step)
        p._data[where] -= step_size * (m_rows / (np.sqrt(v_rows) + group["eps"]))
        bump_version(p)
        bump_version(state["exp_avg"])
        bump_version(state["exp_avg_sq"])
