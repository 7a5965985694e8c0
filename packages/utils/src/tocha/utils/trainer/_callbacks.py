"""Callbacks of `fit`: the `Callback` hooks, the `TrainState` they see, and
`EarlyStopping`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["Callback", "EarlyStopping", "TrainState"]


@dataclass
class TrainState:
    """What a callback sees of a running `fit`.

    Attributes:
        model, optimizer, scheduler: as given to `fit`.
        epoch: the epoch in progress (from 0).
        batch: batches done in this epoch.
        loss: the last batch's loss (a float).
        history: one record (dict) per finished epoch.
        stop: set it to True to end training after this epoch.
    """

    model: object
    optimizer: object
    scheduler: object = None
    epoch: int = 0
    batch: int = 0
    loss: float = math.nan
    history: list = field(default_factory=list)
    stop: bool = False


class Callback:
    """Hooks called by `fit`; override any of them. A callback with state to resume
    returns it from `state_dict` (plain values) and takes it back in `load_state_dict`."""

    def on_fit_start(self, state: TrainState) -> None:
        """Before the first epoch (also after a resume)."""

    def on_epoch_start(self, state: TrainState) -> None:
        """Before each epoch."""

    def on_batch_end(self, state: TrainState) -> None:
        """After each optimizer step."""

    def on_epoch_end(self, state: TrainState, record: dict) -> None:
        """After each epoch, with its record (losses, metrics, lr, timing)."""

    def on_fit_end(self, state: TrainState) -> None:
        """After the last epoch, or when training stopped early."""

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


class EarlyStopping(Callback):
    """Stop training when `monitor` has not improved by more than `min_delta` for
    `patience` epochs.

    Args:
        monitor: a key of the epoch records (``"val_loss"``, ``"loss"``, ``"val_acc"``...);
            when missing (no validation set), ``"loss"``.
        patience: epochs without improvement before stopping.
        min_delta: the smallest change that counts as an improvement.
        mode: ``"min"`` (lower is better) or ``"max"``.
    """

    def __init__(
        self,
        monitor: str = "val_loss",
        patience: int = 3,
        min_delta: float = 0.0,
        mode: str = "min",
    ) -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode!r} is unknown: expected 'min' or 'max'")
        self.monitor, self.patience, self.min_delta, self.mode = monitor, patience, min_delta, mode
        self.best = math.inf if mode == "min" else -math.inf
        self.bad_epochs = 0

    def on_epoch_end(self, state: TrainState, record: dict) -> None:
        value = record.get(self.monitor, record.get("loss"))
        better = (
            value < self.best - self.min_delta
            if self.mode == "min"
            else value > self.best + self.min_delta
        )
        if better:
            self.best, self.bad_epochs = value, 0
        else:
            self.bad_epochs += 1
            if self.bad_epochs >= self.patience:
                state.stop = True

    def state_dict(self) -> dict:
        return {"best": self.best, "bad_epochs": self.bad_epochs}

    def load_state_dict(self, state: dict) -> None:
        self.best, self.bad_epochs = state["best"], state["bad_epochs"]
