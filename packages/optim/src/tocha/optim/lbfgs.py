"""L-BFGS (Nocedal & Wright, *Numerical Optimization*, 2nd ed., chapter 7): quasi-Newton steps
whose inverse Hessian comes from the last few curvature pairs through the two-loop recursion,
with a fixed step length or a strong Wolfe line search (`._line_search`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import tocha
from tocha import Tensor
from tocha.library import backend_of, bump_version, wrap

from ._line_search import Trial, strong_wolfe
from .optimizer import Optimizer, ParamsT, to_scalar

__all__ = ["LBFGS"]


def _real(data):
    """A complex array as its pairs of real numbers; a real one as itself."""
    return data.view(data.real.dtype) if data.dtype.kind == "c" else data


class _FlatView:
    """The parameters read and moved as one flat real vector, in their order."""

    def __init__(self, params: list[Tensor]) -> None:
        self.params = params
        self.xp = backend_of(params[0]._device).xp

    def grad(self):
        """The gradients, concatenated (zeros for a parameter without one)."""
        parts = []
        for p in self.params:
            if p.grad is None:
                data = _real(p._data)
                parts.append(self.xp.zeros(data.size, data.dtype))
            else:
                parts.append(_real(p.grad._data).reshape(-1))
        return self.xp.concatenate(parts)

    def add(self, scale: float, vector) -> None:
        """Move the parameters, in place, by `scale` times the flat `vector`."""
        offset = 0
        for p in self.params:
            data = _real(p._data)
            data += vector[offset : offset + data.size].reshape(data.shape) * scale
            offset += data.size
            bump_version(p)

    def along(self, direction, closure: Callable[[], Any]) -> Callable[[float], Trial]:
        """The objective along `direction` from the parameters' present values, for the line
        search: each probe moves the parameters by a step, evaluates `closure` and the
        gradient there, and puts the parameters back."""
        origin = [p._data.copy() for p in self.params]

        def probe(step: float) -> Trial:
            self.add(step, direction)
            value, grad = _number(closure()), self.grad()
            for p, data in zip(self.params, origin):
                self.xp.copyto(p._data, data)
                bump_version(p)
            return Trial(step, value, grad, float(self.xp.dot(grad, direction)))

        return probe


def _number(loss) -> float:
    """The closure's loss as a Python float, read without the warning ``float`` gives a
    tensor that requires grad (PyTorch's LBFGS reads it so too)."""
    return loss.item() if isinstance(loss, Tensor) else float(loss)


@dataclass
class _Memory:
    """What L-BFGS carries from one `step` to the next, in the order of its state keys
    (`_KEYS`): the last direction and step length, the curvature pairs (s = the change of
    the parameters, y = the change of the gradient, rho = 1 / y.s), the scale gamma of the
    initial inverse Hessian, and the last gradient and loss."""

    direction: Any = None
    step: float | None = None
    grad_changes: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    rho: list = field(default_factory=list)
    gamma: float = 1
    last_grad: Any = None
    last_loss: float | None = None

    def learn(self, xp, s, y, size: int) -> None:
        """Keep the pair (`s`, `y`) when its curvature y.s is clearly positive, forgetting
        the oldest pair beyond `size`; gamma becomes y.s / y.y (N&W eq. 7.20)."""
        ys = float(xp.dot(y, s))
        if ys > 1e-10:
            if len(self.steps) == size:
                del self.grad_changes[0], self.steps[0], self.rho[0]
            self.grad_changes.append(y)
            self.steps.append(s)
            self.rho.append(1.0 / ys)
            self.gamma = ys / float(xp.dot(y, y))

    def direction_for(self, xp, grad, alphas: list):
        """The quasi-Newton direction ``-H grad`` by the two-loop recursion (N&W algorithm
        7.4), H being gamma * I updated by the stored pairs; the first loop's coefficients
        are written to `alphas`."""
        q = -grad
        pairs = range(len(self.steps))
        for i in reversed(pairs):
            alphas[i] = float(xp.dot(self.steps[i], q)) * self.rho[i]
            q -= self.grad_changes[i] * alphas[i]
        r = q * self.gamma
        for i in pairs:
            beta = float(xp.dot(self.grad_changes[i], r)) * self.rho[i]
            r += self.steps[i] * (alphas[i] - beta)
        return r


# The state keys of `_Memory`'s fields, as PyTorch's checkpoints name them.
_KEYS = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss")


def _from_state(value):
    """A state entry as the step works on it: a tensor as its array (a 0-dim one as a Python
    number), a list entry by entry."""
    if isinstance(value, Tensor):
        return value._data if value.dim() else value.item()
    if isinstance(value, list):
        return [_from_state(v) for v in value]
    return value


def _to_state(value, device):
    """A `_Memory` field as it is saved: arrays as tensors on `device`, lists entry by entry."""
    if isinstance(value, list):
        return [_to_state(v, device) for v in value]
    if value is None or isinstance(value, (int, float)):
        return value
    return wrap(value, device)


class LBFGS(Optimizer):
    r"""L-BFGS, as ``torch.optim.LBFGS``: quasi-Newton steps from the last `history_size`
    curvature pairs, each `step` running up to `max_iter` iterations that re-evaluate the
    loss through the closure.

    All parameters form one flat vector (one parameter group only); the state lives in the
    first parameter's entry: ``func_evals``, ``n_iter``, ``d``, ``t``, ``old_dirs``,
    ``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``, ``prev_loss``, ``al`` (scalars as
    Python numbers where PyTorch keeps 0-dim tensors).

    Args:
        params: the tensors to optimize.
        lr: learning rate (default 1).
        max_iter: iterations per step (default 20).
        max_eval: loss evaluations per step (default ``max_iter * 5 // 4``).
        tolerance_grad: stop when the largest gradient entry is below this (default 1e-7).
        tolerance_change: stop when the loss or the step changes less (default 1e-9).
        history_size: curvature pairs kept (default 100).
        line_search_fn: None (fixed step ``lr``) or ``"strong_wolfe"``.

    Example:
        >>> opt = tocha.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad(); loss = loss_fn(model(x), y); loss.backward(); return loss
        >>> opt.step(closure)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(
            lr=lr,
            max_iter=max_iter,
            max_eval=max_eval,
            tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change,
            history_size=history_size,
            line_search_fn=line_search_fn,
        )
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    def step(self, closure: Callable[[], float]) -> float:  # type: ignore[override]
        """Perform one optimization step: up to `max_iter` L-BFGS iterations.

        Args:
            closure: re-evaluates the model and returns the loss (required).

        Returns:
            What `closure` returned first, before the parameters moved.
        """
        with tocha.no_grad():
            return self._iterate(tocha.enable_grad()(closure))

    def _iterate(self, closure):
        group = self.param_groups[0]
        lr = to_scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        flat = _FlatView(group["params"])
        xp = flat.xp

        def largest(vector) -> float:
            return float(xp.abs(vector).max())

        state = self.state[flat.params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        first_loss = closure()
        loss, grad = _number(first_loss), flat.grad()
        state["func_evals"] += 1
        evals = 1
        if largest(grad) <= tolerance_grad:
            return first_loss

        memory = _Memory(*(_from_state(state.get(key)) for key in _KEYS))
        for iteration in range(1, max_iter + 1):
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                memory = _Memory(direction=-grad)
            else:
                memory.learn(
                    xp,
                    memory.direction * memory.step,
                    grad - memory.last_grad,
                    group["history_size"],
                )
                alphas = state.setdefault("al", [None] * group["history_size"])
                memory.direction = memory.direction_for(xp, grad, alphas)
            memory.last_grad, memory.last_loss = grad, loss
            direction = memory.direction
            if state["n_iter"] == 1:
                memory.step = min(1.0, 1.0 / float(xp.abs(grad).sum())) * lr
            else:
                memory.step = lr
            slope = float(xp.dot(grad, direction))
            if slope > -tolerance_change:
                break

            if group["line_search_fn"] is not None:
                if group["line_search_fn"] != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                found, used = strong_wolfe(
                    flat.along(direction, closure),
                    Trial(0, loss, grad, slope),
                    memory.step,
                    largest(direction),
                    max_eval - evals,
                    tolerance_change,
                )
                loss, grad, memory.step = found.value, found.grad, found.step
                flat.add(memory.step, direction)
                converged = largest(grad) <= tolerance_grad
            else:
                flat.add(memory.step, direction)
                used, converged = 0, False
                if iteration != max_iter:
                    loss, grad, used = _number(closure()), flat.grad(), 1
                    converged = largest(grad) <= tolerance_grad
            evals += used
            state["func_evals"] += used

            if evals >= max_eval or converged:
                break
            if largest(direction) * abs(memory.step) <= tolerance_change:
                break
            if abs(loss - memory.last_loss) < tolerance_change:
                break

        device = flat.params[0]._device
        for key, spec in zip(_KEYS, fields(memory)):
            state[key] = _to_state(getattr(memory, spec.name), device)
        return first_loss
