"""Adagrad."""

from __future__ import annotations

import numpy as np

from tocha import Tensor
from tocha.library import CPU, backend_of, bump_version, wrap

from . import _update_rules as F
from ._elementwise import ElementwiseOptimizer
from .optimizer import ParamsT, scalar_dtype, to_scalar

__all__ = ["Adagrad"]


class Adagrad(ElementwiseOptimizer):
    r"""Adagrad, as ``torch.optim.Adagrad``.

    .. math::
        s \leftarrow s + g^2, \quad
        \theta \leftarrow \theta - \frac{\gamma}{1 + (t-1)\eta} \frac{g}{\sqrt{s} + \epsilon}

    Args:
        params: the tensors to optimize, or parameter groups (dicts).
        lr: learning rate (default 1e-2).
        lr_decay: learning-rate decay :math:`\eta` (default 0).
        weight_decay: L2 penalty (default 0).
        initial_accumulator_value: the starting value of the sum :math:`s` (default 0).
        eps: added to the denominator (default 1e-10).
        foreach: the multi-tensor path (None: when a group has at least 8 parameters).
        maximize: maximize the objective instead of minimizing it.
        differentiable: not supported (must be False).
        fused: taken as ``foreach``.

    State per parameter: ``step``, ``sum`` (made at construction, as in PyTorch).

    Sparse COO gradients (``nn.Embedding(sparse=True)``) update ``sum`` and the parameter
    only at the gradient's coalesced indices; they refuse ``weight_decay`` and ``fused``
    with PyTorch's errors.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._single_init(group, p)

    def _single_init(self, group, p) -> None:
        """PyTorch's Adagrad makes its state when constructed: step 0 and the initial sum."""
        state = self.state[p]
        state["step"] = wrap(np.array(0.0, scalar_dtype()), CPU)
        xp = backend_of(p._device).xp
        state["sum"] = wrap(xp.full_like(p._data, group["initial_accumulator_value"]), p._device)

    def share_memory(self) -> None:
        """Move each parameter's ``sum`` state into shared memory (for Hogwild training
        across processes; needs tocha-mp)."""
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def _step_group(self, group) -> None:
        """Parameters with sparse gradients step one at a time on the gradient's entries;
        the others as usual (all one at a time when the group has a sparse gradient)."""
        params = [p for p in group["params"] if p.grad is not None]
        if not any(p.grad.is_sparse for p in params):
            return super()._step_group(group)
        if group.get("fused"):
            raise RuntimeError("`fused` does not support sparse grad or complex param")
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        for p in params:
            if p.grad.is_sparse:
                self._sparse_step(group, p)
            else:
                self._single_step(group, p)

    def _sparse_step(self, group, p: Tensor) -> None:
        r"""One step on the coalesced entries :math:`(i, g_i)` of a sparse gradient:
        :math:`s_i \leftarrow s_i + g_i^2`, :math:`\theta_i \leftarrow \theta_i -
        \gamma_t g_i / (\sqrt{s_i} + \epsilon)`; the step count advances even when
        the gradient holds no entries."""
        state = self.state[p]
        step = state["step"]._data
        step += 1
        grad = p.grad.coalesce()
        if grad._nnz() == 0:
            return
        where = tuple(grad.indices()._host())
        g = grad.values()._host()
        if group["maximize"]:
            g = -g
        clr = to_scalar(group["lr"]) / (1 + (float(step) - 1) * group["lr_decay"])
        state_sum = state["sum"]._data
        rows = state_sum[where] + g * g
        state_sum[where] = rows
        p._data[where] -= clr * (g / (np.sqrt(rows) + group["eps"]))
        bump_version(p)
        bump_version(state["sum"])

    def _tensor_state(self, group):
        return (("sum", group["initial_accumulator_value"]),)

    def _coefficients(self, group, scalars):
        step = scalars[0]
        step += 1
        return dict(
            step=float(step[0]),
            lr=to_scalar(group["lr"]),
            lr_decay=group["lr_decay"],
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            maximize=group["maximize"],
        )

    def _update(self, xp, p, g, states, tmp, fresh, c):
        F.adagrad(xp, p, g, states[0], tmp, **c)
