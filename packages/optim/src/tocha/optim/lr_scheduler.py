"""Learning-rate schedulers, as in ``torch.optim.lr_scheduler``.

A scheduler sets ``group["lr"]`` of each of an optimizer's ``param_groups`` once per
:meth:`LRScheduler.step`. One base class, :class:`LRScheduler`, counts the epochs, writes the
rates, watches that the optimizer steps first, and saves and loads the state. The simple
schedulers are rows of one table, ``_RULES``: each row gives a group's rate at an epoch from its
base rate (the closed form, used by ``step(epoch)``) and from the previous epoch's rate (the
chainable form, used by ``step()``, so that several schedulers may act on one optimizer). The
schedulers that keep more state (warm restarts, cyclic rates, one cycle, plateaus, sequences
and chains) are small subclasses. Rates, state dicts and warnings are PyTorch's: a state dict
written by one loads in the other.

Example::

    >>> optimizer = tocha.optim.SGD(model.parameters(), lr=0.1)
    >>> scheduler = StepLR(optimizer, step_size=30, gamma=0.1)
    >>> for epoch in range(100):
    ...     train(...)
    ...     scheduler.step()
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, NamedTuple, SupportsFloat
from weakref import WeakKeyDictionary

from tocha import Tensor

from .optimizer import Optimizer

__all__ = [
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "CosineAnnealingLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "PolynomialLR",
    "LRScheduler",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)

_SEE_DOCS = (
    "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)
_REPLACED_STEP_WARNING = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before "
    f"`lr_scheduler.step()`. {_SEE_DOCS}"
)
_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
    "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
    f"will result in PyTorch skipping the first value of the learning rate schedule. {_SEE_DOCS}"
)
_GET_LR_WARNING = (
    "To get the last learning rate computed by the scheduler, please use `get_last_lr()`."
)

# How a step reaches its epoch: the constructor's first step, the next epoch, or a given one.
FIRST, NEXT, JUMP = "first", "next", "jump"


def _snapshot(value: Any) -> Any:
    """A rate that does not alias the group's (Tensors are cloned)."""
    return value.clone() if isinstance(value, Tensor) else value


def _set_lr(group: dict[str, Any], lr: Any) -> None:
    """Set the group's rate, writing into it in place when it is a Tensor."""
    if isinstance(group["lr"], Tensor):
        group["lr"][...] = lr
    else:
        group["lr"] = lr


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """One value of the setting ``name`` per param group, from one value or a list of them."""
    groups = len(optimizer.param_groups)
    if not isinstance(value, (list, tuple)):
        value = [value] * groups
    elif len(value) != groups:
        raise ValueError(
            f"{name} must have the same length as optimizer.param_groups. "
            f"{name} has {len(value)} values, param_groups has {groups}."
        )
    return [_snapshot(v) for v in value]


def _require_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _callable_state(fn: Any) -> dict[str, Any] | None:
    """What a checkpoint keeps of a user's callable: a callable object's attributes only."""
    if fn is None or isinstance(fn, types.FunctionType):
        return None
    return dict(vars(fn))


class _StepWatch:
    """Whether an optimizer has stepped since a scheduler was first attached to it.

    It also remembers the optimizer's own ``step`` attribute at that time, to tell when the
    user replaced ``optimizer.step`` (whose replacement no longer runs the step hooks).
    """

    def __init__(self, optimizer: Optimizer) -> None:
        self.stepped = False
        self.own_step = vars(optimizer).get("step")
        optimizer.register_step_post_hook(self._saw_step)

    def _saw_step(self, optimizer: Optimizer, args: Any, kwargs: Any) -> None:
        self.stepped = True


_WATCHES: WeakKeyDictionary[Optimizer, _StepWatch] = WeakKeyDictionary()


def _warn_if_stepped_first(optimizer: Optimizer) -> None:
    """Warn, at a scheduler's first step, if the optimizer has not stepped before it."""
    watch = _WATCHES.get(optimizer)
    if watch is None or vars(optimizer).get("step") is not watch.own_step:
        warnings.warn(_REPLACED_STEP_WARNING, UserWarning, stacklevel=3)
    elif not watch.stepped:
        warnings.warn(_ORDER_WARNING, UserWarning, stacklevel=3)


class LRScheduler:
    """Base class of the learning-rate schedulers.

    The constructor records ``group["initial_lr"]`` (the base rates, ``base_lrs``) and takes
    the first step, which may change ``group["lr"]``. A subclass gives :meth:`get_lr`, the rates
    of epoch ``last_epoch``. :meth:`state_dict` holds every attribute but the optimizer.

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        last_epoch (int): index of the last epoch. ``-1`` (default) starts the schedule; another
            value resumes it, and needs ``initial_lr`` in every param group.
    """

    _stepping: str | None = None  # how the step under way reaches its epoch (FIRST, NEXT, JUMP)
    # Entries PyTorch's checkpoints hold besides the attributes: flags that are False between
    # steps. Written so that PyTorch can load our checkpoints, dropped when loading.
    _idle_flags: dict[str, bool] = {"_is_initial": False, "_get_lr_called_within_step": False}

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", _snapshot(group["lr"]))
            elif "initial_lr" not in group:
                raise KeyError(
                    f"param 'initial_lr' is not specified in param_groups[{i}] when "
                    "resuming scheduler with last_epoch >= 0.\n"
                    "This typically happens when:\n"
                    "1. You're trying to resume training from a checkpoint but haven't "
                    "properly loaded the optimizer state\n"
                    "2. You're using last_epoch >= 0 for a fresh training run "
                    "(not recommended)"
                )
        self.base_lrs: list[Any] = [_snapshot(g["initial_lr"]) for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        if optimizer not in _WATCHES:
            _WATCHES[optimizer] = _StepWatch(optimizer)
        self._first_step()

    def _first_step(self) -> None:
        """Take the step that starts (or, for SequentialLR, restarts) the schedule."""
        self._step_count = 0
        self.step()

    def get_lr(self) -> list[Any]:
        """The rates of epoch ``last_epoch``; use :meth:`get_last_lr` to read the current ones."""
        raise NotImplementedError

    def get_last_lr(self) -> list[Any]:
        """The rates of the param groups set by the last step."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule by one epoch and write the new rates into the optimizer.

        Call it after ``optimizer.step()``; its first call warns otherwise.

        Args:
            epoch (int, optional): deprecated; go to this epoch, computing the rates from the
                base rates (the closed form) where the scheduler has one.
        """
        if self._step_count == 1:
            _warn_if_stepped_first(self.optimizer)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        how = FIRST if self._step_count == 1 else NEXT if epoch is None else JUMP
        self._go(self.last_epoch + 1 if epoch is None else epoch, how)

    def _go(self, epoch: int, how: str) -> None:
        self.last_epoch = epoch
        self._write_rates(how)

    def _write_rates(self, how: str) -> None:
        """Write the rates of ``get_lr`` (told how the epoch was reached) into the groups."""
        self._stepping = how
        try:
            rates = self.get_lr()
        finally:
            del self._stepping
        groups = self.optimizer.param_groups
        for group, lr in zip(groups, rates, strict=True):
            _set_lr(group, lr)
        self._last_lr: list[Any] = [_snapshot(group["lr"]) for group in groups]

    def _how(self) -> str:
        """How the step under way reached ``last_epoch``; outside a step, warn and say NEXT."""
        if self._stepping is None:
            warnings.warn(_GET_LR_WARNING, UserWarning, stacklevel=3)
            return NEXT
        return self._stepping

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state: every attribute but the optimizer."""
        state: dict[str, Any] = {}
        for key, value in vars(self).items():
            if key == "_last_lr":  # PyTorch's checkpoints hold the flags just before it
                state.update(self._idle_flags)
            if key != "optimizer":
                state[key] = value
        return {**state, **self._idle_flags}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state returned by :meth:`state_dict` (PyTorch's or tocha's)."""
        flags = LRScheduler._idle_flags
        vars(self).update({k: v for k, v in state_dict.items() if k not in flags})


class _LRScheduler(LRScheduler):
    """Former name of :class:`LRScheduler`, kept for compatibility."""


class _Rule(NamedTuple):
    """One simple scheduler: group ``i``'s rate at epoch ``e``.

    ``closed(s, i, e)`` computes it from the base rate (None: no closed form), ``chained(s, i,
    lr, e)`` from the group's current rate ``lr`` (None: always closed). On the constructor's
    step, ``first`` says whether the rate is kept: ``"chain"`` never, ``"hold"`` always,
    ``"hold_on_resume"`` when resuming (``last_epoch`` given).
    """

    closed: Callable[..., Any] | None
    chained: Callable[..., Any] | None
    first: str = "chain"


def _linear_closed(s: LinearLR, i: int, e: int) -> Any:
    delta = s.end_factor - s.start_factor
    return s.base_lrs[i] * (s.start_factor + delta * min(s.total_iters, e) / s.total_iters)


def _linear_chained(s: LinearLR, i: int, lr: Any, e: int) -> Any:
    if e == 0:
        return lr * s.start_factor
    if e > s.total_iters:
        return lr
    delta = s.end_factor - s.start_factor
    return lr * (1.0 + delta / (s.total_iters * s.start_factor + (e - 1) * delta))


def _polynomial_chained(s: PolynomialLR, i: int, lr: Any, e: int) -> Any:
    if e > s.total_iters:
        return lr
    return lr * ((1.0 - e / s.total_iters) / (1.0 - (e - 1) / s.total_iters)) ** s.power


def _cosine_closed(s: CosineAnnealingLR, i: int, e: int) -> Any:
    return s.eta_min + (s.base_lrs[i] - s.eta_min) * (1 + math.cos(math.pi * e / s.T_max)) / 2


def _cosine_chained(s: CosineAnnealingLR, i: int, lr: Any, e: int) -> Any:
    if (e - 1 - s.T_max) % (2 * s.T_max) == 0:  # leaving the minimum: 1 + cos is 0 there
        return lr + (s.base_lrs[i] - s.eta_min) * (1 - math.cos(math.pi / s.T_max)) / 2
    ratio = (1 + math.cos(math.pi * e / s.T_max)) / (1 + math.cos(math.pi * (e - 1) / s.T_max))
    return ratio * (lr - s.eta_min) + s.eta_min


_RULES: dict[str, _Rule] = {
    "LambdaLR": _Rule(lambda s, i, e: s.base_lrs[i] * s.lr_lambdas[i](e), None),
    "MultiplicativeLR": _Rule(None, lambda s, i, lr, e: lr * s.lr_lambdas[i](e), "hold"),
    "StepLR": _Rule(
        lambda s, i, e: s.base_lrs[i] * s.gamma ** (e // s.step_size),
        lambda s, i, lr, e: lr * s.gamma if e != 0 and e % s.step_size == 0 else lr,
    ),
    "MultiStepLR": _Rule(
        lambda s, i, e: s.base_lrs[i] * s.gamma ** bisect_right(sorted(s.milestones.elements()), e),
        lambda s, i, lr, e: lr * s.gamma ** s.milestones[e] if e in s.milestones else lr,
    ),
    "ConstantLR": _Rule(
        lambda s, i, e: s.base_lrs[i] * (s.factor + (e >= s.total_iters) * (1 - s.factor)),
        lambda s, i, lr, e: (
            lr * s.factor if e == 0 else lr * (1.0 / s.factor) if e == s.total_iters else lr
        ),
    ),
    "LinearLR": _Rule(_linear_closed, _linear_chained, "hold_on_resume"),
    "ExponentialLR": _Rule(
        lambda s, i, e: s.base_lrs[i] * s.gamma**e, lambda s, i, lr, e: lr * s.gamma, "hold"
    ),
    "PolynomialLR": _Rule(
        lambda s, i, e: s.base_lrs[i] * (1.0 - min(s.total_iters, e) / s.total_iters) ** s.power,
        _polynomial_chained,
        "hold",
    ),
    "CosineAnnealingLR": _Rule(_cosine_closed, _cosine_chained, "hold"),
}


class _RuleScheduler(LRScheduler):
    """A scheduler given by its row of ``_RULES``."""

    _rule: str  # the row's name

    def get_lr(self) -> list[Any]:
        """The rates of epoch ``last_epoch``; use :meth:`get_last_lr` to read the current ones."""
        how = self._how()
        rule = _RULES[self._rule]
        e, groups = self.last_epoch, self.optimizer.param_groups
        if rule.chained is None or (how == JUMP and rule.closed is not None):
            return [rule.closed(self, i, e) for i in range(len(self.base_lrs))]
        if how == FIRST and (rule.first == "hold" or (rule.first == "hold_on_resume" and e > 0)):
            return [group["lr"] for group in groups]
        return [rule.chained(self, i, group["lr"], e) for i, group in enumerate(groups)]


class _LambdaScheduler(_RuleScheduler):
    """A rule scheduler driven by one user function of the epoch per param group."""

    _lambdas_must_be_callable = False

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = optimizer
        groups = len(optimizer.param_groups)
        if not isinstance(lr_lambda, (list, tuple)):
            lr_lambda = [lr_lambda] * groups
        elif len(lr_lambda) != groups:
            raise ValueError(f"Expected {groups} lr_lambdas, but got {len(lr_lambda)}")
        self.lr_lambdas = list(lr_lambda)
        wrong = [type(fn).__name__ for fn in self.lr_lambdas if not callable(fn)]
        if wrong and self._lambdas_must_be_callable:
            raise TypeError(f"lr_lambda should be a function, but got {wrong[0]}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state; lambdas are saved only when they are callable objects."""
        return {**super().state_dict(), "lr_lambdas": list(map(_callable_state, self.lr_lambdas))}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state returned by :meth:`state_dict`."""
        lambdas = self.lr_lambdas
        super().load_state_dict(state_dict)
        self.lr_lambdas = lambdas
        for fn, fn_state in zip(lambdas, state_dict["lr_lambdas"]):
            if fn_state is not None:
                vars(fn).update(fn_state)


class LambdaLR(_LambdaScheduler):
    """Set each group's rate to its initial rate times ``lr_lambda(epoch)``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        lr_lambda (callable or list): a function of the epoch giving the factor, or one such
            function per param group.
        last_epoch (int): index of the last epoch. Default: -1.

    Example::

        >>> scheduler = LambdaLR(optimizer, lr_lambda=lambda epoch: 0.95**epoch)
    """

    _rule = "LambdaLR"


class MultiplicativeLR(_LambdaScheduler):
    """Multiply each group's rate by ``lr_lambda(epoch)`` every epoch.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        lr_lambda (callable or list): a function of the epoch giving the factor, or one such
            function per param group.
        last_epoch (int): index of the last epoch. Default: -1.

    Example::

        >>> scheduler = MultiplicativeLR(optimizer, lr_lambda=lambda epoch: 0.95)
    """

    _rule = "MultiplicativeLR"
    _lambdas_must_be_callable = True


class StepLR(_RuleScheduler):
    """Multiply each group's rate by ``gamma`` every ``step_size`` epochs.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        step_size (int): period of the decay.
        gamma (float): multiplicative factor of the decay. Default: 0.1.
        last_epoch (int): index of the last epoch. Default: -1.

    Example::

        >>> scheduler = StepLR(optimizer, step_size=30, gamma=0.1)
    """

    _rule = "StepLR"

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)


class MultiStepLR(_RuleScheduler):
    """Multiply each group's rate by ``gamma`` at each milestone epoch.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        milestones (list): epoch indices, increasing; a repeated milestone decays repeatedly.
        gamma (float): multiplicative factor of the decay. Default: 0.1.
        last_epoch (int): index of the last epoch. Default: -1.

    Example::

        >>> scheduler = MultiStepLR(optimizer, milestones=[30, 80], gamma=0.1)
    """

    _rule = "MultiStepLR"

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)


class ConstantLR(_RuleScheduler):
    """Multiply each group's rate by ``factor`` until epoch ``total_iters``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        factor (float): the factor, in [0, 1]. Default: 1/3.
        total_iters (int): number of epochs the factor applies. Default: 5.
        last_epoch (int): index of the last epoch. Default: -1.

    Example::

        >>> scheduler = ConstantLR(optimizer, factor=0.5, total_iters=4)
    """

    _rule = "ConstantLR"

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)


class LinearLR(_RuleScheduler):
    """Scale each group's rate by a factor going linearly from ``start_factor`` to ``end_factor``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        start_factor (float): factor of the first epoch, in (0, 1]. Default: 1/3.
        end_factor (float): factor reached at ``total_iters``, in [0, 1]. Default: 1.0.
        total_iters (int): number of epochs of the ramp. Default: 5.
        last_epoch (int): index of the last epoch. Default: -1.

    Example::

        >>> scheduler = LinearLR(optimizer, start_factor=0.05, total_iters=4)
    """

    _rule = "LinearLR"

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or "
                "equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)


class ExponentialLR(_RuleScheduler):
    """Multiply each group's rate by ``gamma`` every epoch.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        gamma (float): multiplicative factor of the decay.
        last_epoch (int): index of the last epoch. Default: -1.

    Example::

        >>> scheduler = ExponentialLR(optimizer, gamma=0.9)
    """

    _rule = "ExponentialLR"

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)


class PolynomialLR(_RuleScheduler):
    """Decay each group's rate as ``base_lr * (1 - epoch / total_iters) ** power``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        total_iters (int): number of epochs of the decay. Default: 5.
        power (float): power of the polynomial. Default: 1.0.
        last_epoch (int): index of the last epoch. Default: -1.

    Example::

        >>> scheduler = PolynomialLR(optimizer, total_iters=4, power=1.0)
    """

    _rule = "PolynomialLR"

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)


class CosineAnnealingLR(_RuleScheduler):
    r"""Anneal each group's rate along a cosine from its initial rate to ``eta_min``.

    .. math::
        \eta_t = \eta_{min} + \frac{1}{2}(\eta_{max} - \eta_{min})
        \left(1 + \cos\left(\frac{t}{T_{max}}\pi\right)\right)

    ``step()`` follows it by the recursion
    :math:`\eta_{t+1} = \eta_{min} + (\eta_t - \eta_{min})
    \frac{1 + \cos((t+1)\pi/T_{max})}{1 + \cos(t\pi/T_{max})}`, so that it composes with other
    schedulers; past ``T_max`` the rate climbs back (the period is ``2 * T_max``).

    Args:
        optimizer (Optimizer): wrapped optimizer.
        T_max (int): number of epochs of the half period.
        eta_min (float): minimum learning rate. Default: 0.
        last_epoch (int): index of the last epoch. Default: -1.

    Example::

        >>> scheduler = CosineAnnealingLR(optimizer, T_max=10, eta_min=1e-3)
    """

    _rule = "CosineAnnealingLR"

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Cosine annealing with warm restarts (SGDR).

    .. math::
        \eta_t = \eta_{min} + \frac{1}{2}(\eta_{max} - \eta_{min})
        \left(1 + \cos\left(\frac{T_{cur}}{T_{i}}\pi\right)\right)

    where :math:`T_{cur}` counts the epochs since the last restart and :math:`T_i`, the length of
    the current cycle, starts at ``T_0`` and is multiplied by ``T_mult`` at each restart.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        T_0 (int): epochs until the first restart.
        T_mult (int): growth factor of the cycle length. Default: 1.
        eta_min (float): minimum learning rate. Default: 0.
        last_epoch (int): index of the last epoch. Default: -1.

    Example::

        >>> scheduler = CosineAnnealingWarmRestarts(optimizer, T_0=10, T_mult=2)
        >>> for epoch in range(20):
        ...     for i in range(iters):
        ...         train(...)
        ...         scheduler.step(epoch + i / iters)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"
            )
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The rates at ``T_cur`` of the current cycle."""
        self._how()
        return [
            self.eta_min
            + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
            for base_lr in self.base_lrs
        ]

    def step(self, epoch: float | None = None) -> None:
        """Advance by one epoch, or go to ``epoch``, which may be fractional.

        Args:
            epoch (float, optional): the epoch, e.g. ``epoch + i / iters`` after batch ``i``.
        """
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch < self.T_0:
            self.T_i = self.T_0
            self.T_cur = epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:  # cycle n starts at T_0 * (T_mult**n - 1) / (T_mult - 1)
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult**n
        self.last_epoch = math.floor(epoch)
        self._write_rates(NEXT)


def _anneal_cos(start: float, end: float, pct: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


_ANNEAL = {"cos": _anneal_cos, "linear": lambda start, end, pct: (end - start) * pct + start}


def _cycle_momentum(
    scheduler: CyclicLR | OneCycleLR, base_momentum: Any, max_momentum: Any, last_epoch: int
) -> tuple[list[Any], list[Any]]:
    """Set up the momentum cycle (``momentum``, or Adam's ``betas[0]``) of CyclicLR and OneCycleLR.

    Returns the base and max momentum of each group; a fresh schedule also starts each group at
    its max momentum and records both bounds in the group.
    """
    optimizer = scheduler.optimizer
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(
            "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
        )
    scheduler.use_beta1 = "betas" in optimizer.defaults
    bases = _per_group("base_momentum", optimizer, base_momentum)
    maxima = _per_group("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for group, base, top in zip(optimizer.param_groups, bases, maxima, strict=True):
            _set_momentum(scheduler, group, top)
            group["max_momentum"] = top
            group["base_momentum"] = base
    return bases, maxima


def _set_momentum(scheduler: CyclicLR | OneCycleLR, group: dict[str, Any], momentum: Any) -> None:
    if scheduler.use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


# CyclicLR's policies: the argument their scale function takes, and the function of it.
_CYCLIC_MODES: dict[str, tuple[str, Callable[[float, float], float]]] = {
    "triangular": ("cycle", lambda gamma, x: 1.0),
    "triangular2": ("cycle", lambda gamma, x: 1 / (2.0 ** (x - 1))),
    "exp_range": ("iterations", lambda gamma, x: gamma**x),
}


class CyclicLR(LRScheduler):
    """Cycle each group's rate between ``base_lr`` and ``max_lr`` (cyclical learning rates).

    Step it after every batch. The built-in policies: ``"triangular"`` (no amplitude scaling),
    ``"triangular2"`` (amplitude halved each cycle), ``"exp_range"`` (amplitude scaled by
    ``gamma ** iteration``). A custom ``scale_fn`` overrides ``mode``. With ``cycle_momentum``,
    momentum cycles inversely between ``max_momentum`` and ``base_momentum``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        base_lr (float or list): lower rate of the cycle, per group or for all.
        max_lr (float or list): upper rate of the cycle.
        step_size_up (int): iterations of the rising half. Default: 2000.
        step_size_down (int, optional): iterations of the falling half. Default: ``step_size_up``.
        mode (str): ``"triangular"``, ``"triangular2"`` or ``"exp_range"``.
            Default: ``"triangular"``.
        gamma (float): constant of ``"exp_range"``. Default: 1.0.
        scale_fn (callable, optional): custom scaling policy, ``0 <= scale_fn(x) <= 1``.
        scale_mode (str): ``"cycle"`` or ``"iterations"``, the argument of ``scale_fn``.
            Default: ``"cycle"``.
        cycle_momentum (bool): whether to cycle momentum. Default: True.
        base_momentum (float or list): lower momentum. Default: 0.8.
        max_momentum (float or list): upper momentum. Default: 0.9.
        last_epoch (int): index of the last batch. Default: -1.

    Example::

        >>> scheduler = CyclicLR(optimizer, base_lr=0.01, max_lr=0.1, step_size_up=10)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: Literal["triangular", "triangular2", "exp_range"] = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: Literal["cycle", "iterations"] = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float = 0.8,
        max_momentum: float = 0.9,
        last_epoch: int = -1,
    ) -> None:
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                _set_lr(group, lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        self.total_size = up + (float(step_size_down) if step_size_down is not None else up)
        self.step_ratio = up / self.total_size
        if mode not in _CYCLIC_MODES and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else _CYCLIC_MODES[mode][0]
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _cycle_momentum(
                self, base_momentum, max_momentum, last_epoch
            )
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at ``x`` (the cycle or the iteration, per ``scale_mode``)."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return _CYCLIC_MODES[self.mode][1](self.gamma, x)

    def get_lr(self) -> list[Any]:
        """The rates at batch ``last_epoch``; also sets the momentums when they cycle."""
        self._how()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # position in the cycle, in [0, 1)
        if x <= self.step_ratio:
            rise = x / self.step_ratio
        else:
            rise = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        rates = [
            base + (top - base) * rise * scale
            for base, top in zip(self.base_lrs, self.max_lrs, strict=True)
        ]
        if self.cycle_momentum:
            for group, base, top in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums, strict=True
            ):
                _set_momentum(self, group, top - (top - base) * rise * scale)
        return rates

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state; a custom ``scale_fn`` is saved only as a callable object."""
        state = super().state_dict()
        state["_scale_fn_custom"] = _callable_state(self._scale_fn_custom)
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state returned by :meth:`state_dict`."""
        scale_fn = self._scale_fn_custom
        super().load_state_dict(state_dict)
        self._scale_fn_custom = scale_fn
        if state_dict["_scale_fn_custom"] is not None:
            vars(scale_fn).update(state_dict["_scale_fn_custom"])


class OneCycleLR(LRScheduler):
    """The 1cycle policy: warm up from ``max_lr / div_factor`` to ``max_lr``, then anneal.

    Step it after every batch, ``total_steps`` times in all (or ``epochs * steps_per_epoch``);
    one step more raises ValueError. By default two phases (fastai's); ``three_phase=True``
    follows the paper: up, back down to the initial rate, then down to the minimum
    ``initial_lr / final_div_factor``. With ``cycle_momentum``, momentum moves inversely.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        max_lr (float or list): peak rate, per group or for all.
        total_steps (int, optional): number of steps of the cycle.
        epochs (int, optional): with ``steps_per_epoch``, gives ``total_steps``.
        steps_per_epoch (int, optional): steps per epoch.
        pct_start (float): fraction of the cycle spent increasing the rate. Default: 0.3.
        anneal_strategy (str): ``"cos"`` or ``"linear"``. Default: ``"cos"``.
        cycle_momentum (bool): whether to cycle momentum. Default: True.
        base_momentum (float or list): lower momentum. Default: 0.85.
        max_momentum (float or list): upper momentum. Default: 0.95.
        div_factor (float): ``initial_lr = max_lr / div_factor``. Default: 25.
        final_div_factor (float): ``min_lr = initial_lr / final_div_factor``. Default: 1e4.
        three_phase (bool): use the three-phase schedule. Default: False.
        last_epoch (int): index of the last batch. Default: -1.

    Example::

        >>> scheduler = OneCycleLR(optimizer, max_lr=0.01, steps_per_epoch=10, epochs=10)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: Literal["cos", "linear"] = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(
                    f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
                )
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in _ANNEAL:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._schedule_phases = self._phases(pct_start, three_phase)
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs, strict=True):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _cycle_momentum(self, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _phases(self, pct_start: float, three_phase: bool) -> list[dict[str, Any]]:
        """Each phase: the step it ends at, and the group keys of its start and end values."""
        up = float(pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        if three_phase:
            down = float(2 * pct_start * self.total_steps) - 2
            rows = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (down, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                (last, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            rows = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (last, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        keys = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def get_lr(self) -> list[Any]:
        """The rates at step ``last_epoch``; also sets the momentums when they cycle."""
        self._how()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"Tried to step {step} times. "
                f"The specified number of total steps is {self.total_steps}"
            )
        start = 0.0
        for phase in self._schedule_phases:
            end = phase["end_step"]
            if step <= end or phase is self._schedule_phases[-1]:
                break
            start = end
        pct = (step - start) / (end - start)
        anneal = _ANNEAL[self._anneal_func_type]
        rates = []
        for group in self.optimizer.param_groups:
            rates.append(anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
            if self.cycle_momentum:
                momentum = anneal(group[phase["start_momentum"]], group[phase["end_momentum"]], pct)
                _set_momentum(self, group, momentum)
        return rates


class _SchedulerList(LRScheduler):
    """SequentialLR and ChainedScheduler: schedulers of one optimizer driven together."""

    _idle_flags: dict[str, bool] = {}

    def _take(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler]) -> None:
        """Check and keep the schedulers, which must all step ``optimizer``."""
        name = type(self).__name__
        for idx, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{name} at index {idx} should have `optimizer` as its attribute.")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(
                    f"{name} does not support `ReduceLROnPlateau` scheduler as it "
                    "requires additional kwargs to be specified when calling `step`, "
                    f"but got one at index {idx} in the given schedulers sequence."
                )
            if optimizer != scheduler.optimizer:
                raise ValueError(
                    f"{name} expects all schedulers to belong to the same optimizer, but "
                    f"got scheduler {type(scheduler).__name__} at index {idx} has "
                    f"{scheduler.optimizer}, which is different from {type(optimizer).__name__}."
                )
        self._schedulers = schedulers
        self.optimizer = optimizer

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state, with the wrapped schedulers' states."""
        state = {k: v for k, v in vars(self).items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state returned by :meth:`state_dict`."""
        schedulers = self._schedulers
        super().load_state_dict(state_dict)
        self._schedulers = schedulers
        for scheduler, state in zip(schedulers, state_dict["_schedulers"]):
            scheduler.load_state_dict(state)


class SequentialLR(_SchedulerList):
    """Run schedulers one after another, switching at the milestone epochs.

    Each scheduler takes over at its milestone from epoch 0 of its own schedule.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        schedulers (list): the schedulers, in order.
        milestones (list): the epochs at which the next scheduler takes over
            (one fewer than the schedulers).
        last_epoch (int): index of the last epoch. Default: -1.

    Example::

        >>> warmup = ConstantLR(optimizer, factor=0.1, total_iters=2)
        >>> decay = ExponentialLR(optimizer, gamma=0.9)
        >>> scheduler = SequentialLR(optimizer, schedulers=[warmup, decay], milestones=[2])
    """

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: list[LRScheduler],
        milestones: list[int],
        last_epoch: int = -1,
    ) -> None:
        if len(schedulers) < 1:
            raise ValueError(
                f"{type(self).__name__} expects at least one scheduler, but got no scheduler."
            )
        self._take(optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                "than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to {len(milestones)}"
            )
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        for group in optimizer.param_groups:
            _set_lr(group, group["initial_lr"])
        self.recursive_undo()
        first = schedulers[bisect_right(milestones, 0)]
        first._first_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched: LRScheduler | None = None) -> None:
        """Take back the epoch that the wrapped schedulers' constructors stepped."""
        target = self if sched is None else sched
        if hasattr(target, "_schedulers"):
            for scheduler in target._schedulers:
                self.recursive_undo(scheduler)
        elif hasattr(target, "last_epoch"):
            target.last_epoch -= 1

    def step(self) -> None:
        """Step the scheduler of the current epoch (restarting it at its milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._go(0, JUMP)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_SchedulerList):
    """Step several chainable schedulers of one optimizer in one call.

    Args:
        schedulers (sequence): the schedulers, stepped in order.
        optimizer (Optimizer, optional): their optimizer. Default: the first scheduler's.

    Example::

        >>> scheduler = ChainedScheduler([ConstantLR(opt, 0.1, 2), ExponentialLR(opt, 0.9)])
    """

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        if len(schedulers) < 1:
            raise ValueError(
                f"{type(self).__name__} expects at least one scheduler to be chained, "
                "but got no scheduler."
            )
        self._take(optimizer or schedulers[0].optimizer, schedulers)
        self._last_lr = self._rates()

    def _rates(self) -> list[Any]:
        return [_snapshot(group["lr"]) for group in self._schedulers[-1].optimizer.param_groups]

    def step(self) -> None:
        """Step every wrapped scheduler."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = self._rates()


class ReduceLROnPlateau(LRScheduler):
    """Reduce the learning rates when a metric has stopped improving.

    After more than ``patience`` epochs without improvement, each group's rate becomes
    ``max(lr * factor, min_lr)`` (a change smaller than ``eps`` is skipped), then
    ``cooldown`` epochs pass before bad epochs are counted again.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        mode (str): ``"min"`` (the metric should decrease) or ``"max"``. Default: ``"min"``.
        factor (float): factor of the reduction, below 1. Default: 0.1.
        patience (int): number of bad epochs tolerated. Default: 10.
        threshold (float): minimal improvement that counts. Default: 1e-4.
        threshold_mode (str): ``"rel"`` (better than ``best * (1 -+ threshold)``) or ``"abs"``
            (better than ``best -+ threshold``). Default: ``"rel"``.
        cooldown (int): epochs to wait after a reduction. Default: 0.
        min_lr (float or list): lower bound of the rates, one for all groups or one per group.
            Default: 0.
        eps (float): minimal change of a rate. Default: 1e-8.

    Example::

        >>> scheduler = ReduceLROnPlateau(optimizer, "min", patience=2)
        >>> for epoch in range(10):
        ...     scheduler.step(validate(...))
    """

    _idle_flags: dict[str, bool] = {}

    def __init__(
        self,
        optimizer: Optimizer,
        mode: Literal["min", "max"] = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: Literal["rel", "abs"] = "rel",
        cooldown: int = 0,
        min_lr: list[float] | float = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _require_optimizer(optimizer)
        groups = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != groups:
                raise ValueError(f"expected {groups} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * groups
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        self.optimizer = optimizer
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = [_snapshot(group["lr"]) for group in optimizer.param_groups]
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        """Whether the scheduler is waiting after a reduction."""
        return self.cooldown_counter > 0

    def _improves(self, metric: float) -> bool:
        """Whether ``metric`` beats the best value by more than the threshold."""
        sign = 1.0 if self.mode == "min" else -1.0
        if self.threshold_mode == "rel":
            bound = self.best * (1.0 - sign * self.threshold)
        else:
            bound = self.best - sign * self.threshold
        return metric < bound if self.mode == "min" else metric > bound

    def step(self, metrics: SupportsFloat, epoch: int | None = None) -> None:
        """Record this epoch's metric and reduce the rates if it is time to.

        Args:
            metrics (float): the monitored quantity.
            epoch (int, optional): deprecated; the index of this epoch.
        """
        current = float(metrics)
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._improves(current):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [_snapshot(group["lr"]) for group in self.optimizer.param_groups]

    def _reduce(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                    "usually due to a new param group being added to the optimizer. Please "
                    "modify the `min_lrs` field to match the length of the `optimizer` param "
                    "groups."
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs, strict=True):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                _set_lr(group, new)
