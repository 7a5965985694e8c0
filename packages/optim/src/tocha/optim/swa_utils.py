"""Stochastic Weight Averaging (SWA) and exponential moving averages, as in
``torch.optim.swa_utils``.

:class:`AveragedModel` keeps a running average of a model's parameters, :class:`SWALR` anneals
the learning rate to a constant SWA rate, and :func:`update_bn` recomputes the batch-norm
statistics of the averaged model.

Example::

    >>> swa_model = AveragedModel(model)
    >>> swa_scheduler = SWALR(optimizer, swa_lr=0.05)
    >>> for epoch in range(100):
    ...     train(model, optimizer)
    ...     if epoch > 75:
    ...         swa_model.update_parameters(model)
    ...         swa_scheduler.step()
    >>> update_bn(loader, swa_model)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, Literal

import tocha
from tocha import Tensor
from tocha.nn import Module

from .lr_scheduler import LRScheduler, _per_group
from .optimizer import Optimizer

__all__ = [
    "AveragedModel",
    "update_bn",
    "SWALR",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]

PARAM_LIST = tuple[Tensor, ...] | list[Tensor]


def _assign(dst: Tensor, src: Tensor) -> None:
    """Copy ``src`` into ``dst`` in place (``dst.copy_(src)``)."""
    dst[...] = src


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """An in-place exponential-moving-average update of lists of parameters.

    Each averaged parameter becomes ``decay * ema + (1 - decay) * current``.

    Args:
        decay (float): weight of the old average, in [0, 1]. Default: 0.999.
    """
    _check_decay(decay)

    @tocha.no_grad()
    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _: Any) -> None:
        if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                _assign(p_ema, p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """An in-place running-mean update of lists of parameters.

    With ``n`` models averaged so far, each average becomes ``avg + (current - avg) / (n + 1)``.
    """

    @tocha.no_grad()
    def swa_update(
        averaged_param_list: PARAM_LIST, current_param_list: PARAM_LIST, num_averaged: Any
    ) -> None:
        weight = 1 / (int(num_averaged) + 1)
        if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                p_avg.lerp_(p_model, weight)
        else:
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                _assign(p_avg, p_avg + (p_model - p_avg) * weight)

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The exponential moving average of one parameter: ``decay * ema + (1 - decay) * current``.

    Args:
        decay (float): weight of the old average, in [0, 1]. Default: 0.999.
    """
    _check_decay(decay)

    @tocha.no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The running mean of one parameter: ``avg + (current - avg) / (num_averaged + 1)``."""

    @tocha.no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of a model whose parameters hold an average of the model's over time.

    :meth:`update_parameters` folds the model's current parameters into the average: the first
    call copies them, later ones apply ``avg_fn`` (one parameter at a time) or ``multi_avg_fn``
    (lists of parameters sharing a device and dtype, in place). With neither, it keeps the
    equally weighted mean (SWA); :func:`get_ema_multi_avg_fn` gives an exponential moving
    average. Buffers are copied from the model, or averaged too when ``use_buffers=True``.

    Calling the averaged model calls the copy (registered as the submodule ``module``);
    ``n_averaged``, an int64 buffer, counts the updates.

    Args:
        model (Module): the model to average.
        device (device, optional): where to keep the averaged copy. Default: the model's.
        avg_fn (callable, optional): ``avg_fn(averaged, current, num_averaged)`` returning the
            new average of one parameter.
        multi_avg_fn (callable, optional): ``multi_avg_fn(averaged_list, current_list,
            num_averaged)`` updating the averages in place.
        use_buffers (bool): average the buffers too (and the parameters with them).
            Default: False.

    Example::

        >>> ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
        >>> for x in loader:
        ...     train_step(model, x)
        ...     ema_model.update_parameters(model)
    """

    def __init__(
        self,
        model: Any,
        device: int | str | tocha.device | None = None,
        avg_fn: Callable[[Tensor, Tensor, Any], Tensor] | None = None,
        multi_avg_fn: Callable[[PARAM_LIST, PARAM_LIST, Any], None] | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tocha.tensor(0, dtype=tocha.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the averaged copy of the model."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Any) -> None:
        """Fold ``model``'s current parameters (and buffers if ``use_buffers``) into the average."""
        if self.use_buffers:
            self_params = itertools.chain(self.module.parameters(), self.module.buffers())
            model_params = itertools.chain(model.parameters(), model.buffers())
        else:
            self_params = self.parameters()
            model_params = model.parameters()
        averaged: list[Tensor] = []
        current: list[Tensor] = []
        copy_param = bool(self.n_averaged == 0)
        with tocha.no_grad():
            for p_averaged, p_model in zip(self_params, model_params):
                p_model_ = p_model.detach().to(p_averaged.device)
                averaged.append(p_averaged.detach())
                current.append(p_model_)
                if copy_param:
                    _assign(p_averaged.detach(), p_model_)
            if self.n_averaged > 0:
                self._average(averaged, current)
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    _assign(b_swa.detach(), b_model.detach().to(b_swa.device))
        self.n_averaged += 1

    def _average(self, averaged: list[Tensor], current: list[Tensor]) -> None:
        """Apply the averaging function to the detached parameter pairs."""
        if self.multi_avg_fn is not None:
            groups: dict[tuple[str, Any], tuple[list[Tensor], list[Tensor]]] = {}
            for p_averaged, p_model in zip(averaged, current, strict=True):
                group = groups.setdefault((str(p_averaged.device), p_averaged.dtype), ([], []))
                group[0].append(p_averaged)
                group[1].append(p_model)
            for self_group, model_group in groups.values():
                n_averaged = self.n_averaged.to(self_group[0].device)
                self.multi_avg_fn(self_group, model_group, n_averaged)
            return
        avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
        for p_averaged, p_model in zip(averaged, current, strict=True):
            n_averaged = self.n_averaged.to(p_averaged.device)
            _assign(p_averaged, avg_fn(p_averaged, p_model, n_averaged))


def _is_batchnorm(module: Any) -> bool:
    """Whether ``module`` is a batch-norm layer: an instance of a class named ``_BatchNorm``.

    The name stands for ``tocha.nn.modules.batchnorm._BatchNorm``, which tocha-optim may not
    import; instance norms, which share the running statistics but not that base, are skipped.
    """
    return any(cls.__name__ == "_BatchNorm" for cls in type(module).__mro__)


@tocha.no_grad()
def update_bn(
    loader: Iterable[Any], model: Any, device: int | str | tocha.device | None = None
) -> None:
    """Recompute the running statistics of the batch-norm layers of ``model`` over ``loader``.

    Each batch-norm layer's statistics are reset and then averaged over one pass of the data
    (``momentum=None``) in training mode; the layers' momentum and the model's mode are restored.

    Args:
        loader (iterable): the batches; a list or tuple batch contributes its first element.
        model (Module): the model, typically an :class:`AveragedModel`.
        device (device, optional): where to move each batch first.

    Example::

        >>> update_bn(loader, swa_model)
    """
    momenta = {}
    for module in model.modules():
        if _is_batchnorm(module):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for bn_module in momenta:
        bn_module.momentum = momenta[bn_module]
    model.train(was_training)


def _annealed_from(lr: float, swa_lr: float, alpha: float) -> float:
    """The rate the annealing started from, given the rate ``lr`` it reached at ``alpha``."""
    if alpha == 1:
        return swa_lr
    return (lr - alpha * swa_lr) / (1 - alpha)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to a constant ``swa_lr`` over ``anneal_epochs``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        swa_lr (float or list): the SWA learning rate, per group or for all.
        anneal_epochs (int): number of epochs of the annealing; 0 jumps to ``swa_lr``.
            Default: 10.
        anneal_strategy (str): ``"cos"`` or ``"linear"``. Default: ``"cos"``.
        last_epoch (int): index of the last epoch. Default: -1.

    Example::

        >>> swa_scheduler = SWALR(optimizer, swa_lr=0.05, anneal_epochs=5,
        ...                       anneal_strategy="linear")
    """

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | list[float],
        anneal_epochs: int = 10,
        anneal_strategy: Literal["cos", "linear"] = "cos",
        last_epoch: int = -1,
    ) -> None:
        swa_lrs = _per_group("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._use_anneal(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    def get_lr(self) -> list[Any]:
        """The next rates: ``swa_lr * alpha + start_lr * (1 - alpha)``."""
        self._how()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [
            _annealed_from(group["lr"], group["swa_lr"], prev_alpha)
            for group in self.optimizer.param_groups
        ]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            group["swa_lr"] * alpha + lr * (1 - alpha)
            for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)
        ]

    def _use_anneal(self, anneal_strategy: Literal["cos", "linear"]) -> None:
        self._anneal_strategy = anneal_strategy
        if anneal_strategy == "cos":
            self.anneal_func = self._cosine_anneal
        else:
            self.anneal_func = self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state, without the optimizer and the annealing function."""
        state = super().state_dict()
        del state["anneal_func"]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state returned by :meth:`state_dict`."""
        super().load_state_dict(state_dict)
        self._use_anneal(self._anneal_strategy)
