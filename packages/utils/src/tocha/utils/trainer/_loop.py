"""`fit`, `evaluate` and `predict`: the training loop with progress bars, metrics,
gradient clipping, checkpoints that resume exactly, and callbacks.

The trainer knows models, optimizers and schedulers only by their PyTorch methods
(``model(x)``, ``train()``, ``state_dict()``, ``optimizer.step()``...), so it works with
tocha.nn and tocha.optim without depending on them.
"""

from __future__ import annotations

import itertools
import math
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from tqdm.auto import tqdm

import tocha

from ._callbacks import Callback, TrainState
from ._checkpoint import get_rng_states, set_rng_states
from ._history import write_history

__all__ = ["evaluate", "fit", "predict"]

CHECKPOINT_NAME = "last.pt"


def _to(value, device):
    """`value` with its tensors moved to `device` (through lists, tuples and dicts)."""
    if device is None:
        return value
    if isinstance(value, tocha.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to(v, device) for k, v in value.items()}
    return value


def _split(batch):
    """A batch as (inputs, target): ``(x, y)`` pairs, else the whole batch and None."""
    if isinstance(batch, (list, tuple)) and len(batch) == 2:
        return batch[0], batch[1]
    return batch, None


def _size(inputs) -> int:
    while isinstance(inputs, (list, tuple, dict)):
        inputs = next(iter(inputs.values() if isinstance(inputs, dict) else inputs))
    return inputs.shape[0] if isinstance(inputs, tocha.Tensor) and inputs.dim() else 1


def _number(value) -> float:
    return value.item() if isinstance(value, tocha.Tensor) else float(value)


class _Averages:
    """Running sums of the loss and the metrics, weighted by batch size."""

    def __init__(self, state: dict | None = None) -> None:
        self.sums, self.count = ({}, 0) if state is None else (dict(state["sums"]), state["count"])

    def add(self, values: dict, n: int) -> None:
        for k, v in values.items():
            self.sums[k] = self.sums.get(k, 0.0) + v * n
        self.count += n

    def means(self, prefix: str = "") -> dict:
        return {prefix + k: s / max(self.count, 1) for k, s in self.sums.items()}

    def state(self) -> dict:
        return {"sums": dict(self.sums), "count": self.count}


def _clip_grad_norm(parameters, max_norm: float) -> None:
    """Scale the gradients so that their total L2 norm is at most `max_norm`, as
    ``torch.nn.utils.clip_grad_norm_``."""
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return
    total = math.sqrt(sum(float((g.detach() * g.detach()).sum()) for g in grads))
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for g in grads:
            g.mul_(coef)


def _progress(enabled: bool | None, total, desc: str):
    """A tqdm bar, on when `enabled` (None: when stderr is a terminal)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    return tqdm(total=total, desc=desc, disable=not enabled, leave=False, dynamic_ncols=True)


def _loader_len(loader):
    try:
        return len(loader)
    except TypeError:
        return None


def _metric_values(metrics: dict, outputs, target) -> dict:
    return {name: _number(fn(outputs, target)) for name, fn in metrics.items()}


def evaluate(
    model,
    loader: Iterable,
    *,
    loss_fn: Callable | None = None,
    metrics: dict | None = None,
    device=None,
    progress: bool | None = False,
) -> dict:
    """The mean loss and metrics of `model` over `loader`, in eval mode without gradients.

    Args:
        model: called as ``model(inputs)`` on each batch's inputs.
        loader: yields ``(inputs, target)`` batches.
        loss_fn: ``loss_fn(outputs, target)``; its mean is reported as ``"loss"``.
        metrics: name -> ``fn(outputs, target)`` giving a number, averaged over samples.
        device: where to move each batch (None: leave it).
        progress: show a progress bar (None: when stderr is a terminal).

    Returns:
        ``{"loss": ..., name: ...}`` averaged over the samples.
    """
    metrics = metrics or {}
    was_training = model.training
    model.eval()
    averages = _Averages()
    try:
        with tocha.no_grad(), _progress(progress, _loader_len(loader), "eval") as bar:
            for batch in loader:
                inputs, target = _split(_to(batch, device))
                outputs = model(inputs)
                values = _metric_values(metrics, outputs, target)
                if loss_fn is not None:
                    values["loss"] = _number(loss_fn(outputs, target))
                averages.add(values, _size(inputs))
                bar.update()
    finally:
        model.train(was_training)
    return averages.means()


def predict(model, loader: Iterable, *, device=None, progress: bool | None = False):
    """`model`'s outputs over `loader`, concatenated along the first dimension, in eval mode
    without gradients. A batch that is an ``(inputs, target)`` pair gives its inputs."""
    was_training = model.training
    model.eval()
    outputs = []
    try:
        with tocha.no_grad(), _progress(progress, _loader_len(loader), "predict") as bar:
            for batch in loader:
                outputs.append(model(_split(_to(batch, device))[0]))
                bar.update()
    finally:
        model.train(was_training)
    return tocha.cat(outputs) if outputs else None


def _save_checkpoint(directory: Path, state: TrainState, callbacks, extra: dict) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    scheduler = state.scheduler
    tocha.save(
        {
            "model": state.model.state_dict(),
            "optimizer": state.optimizer.state_dict(),
            "scheduler": None if scheduler is None else scheduler.state_dict(),
            "epoch": state.epoch,
            "batch": state.batch,
            "history": state.history,
            "callbacks": [cb.state_dict() for cb in callbacks],
            **extra,
        },
        directory / CHECKPOINT_NAME,
    )


def _step_scheduler(scheduler, record: dict) -> None:
    if scheduler is None:
        return
    if type(scheduler).__name__ == "ReduceLROnPlateau":
        scheduler.step(record.get("val_loss", record["loss"]))
    else:
        scheduler.step()


def fit(
    model,
    optimizer,
    train_loader: Iterable,
    val_loader: Iterable | None = None,
    *,
    epochs: int = 1,
    loss_fn: Callable,
    metrics: dict | None = None,
    scheduler=None,
    device=None,
    grad_clip: float | None = None,
    callbacks: Iterable[Callback] = (),
    checkpoint_dir=None,
    resume_from=None,
    history_path=None,
    progress: bool | None = None,
) -> list[dict]:
    """Train `model` for `epochs` epochs; returns the history, one record per epoch.

    Each epoch: ``model.train()``; for each ``(inputs, target)`` batch, ``loss_fn(model
    (inputs), target)``, backward, optional gradient clipping, ``optimizer.step()``; then
    `evaluate` on `val_loader`, ``scheduler.step()`` (``step(val_loss)`` for
    ReduceLROnPlateau), the record ``{"epoch", "loss", <metrics>, "val_loss",
    "val_<metrics>", "lr", "time", "samples_per_s"}``, the callbacks, the history file and
    the checkpoint.

    Args:
        model, optimizer: the model and its optimizer.
        train_loader, val_loader: yield ``(inputs, target)`` batches.
        epochs: the total number of epochs (a resumed run goes on up to it).
        loss_fn: ``loss_fn(outputs, target)``, a scalar tensor.
        metrics: name -> ``fn(outputs, target)``, averaged over samples each epoch.
        scheduler: an lr scheduler, stepped once per epoch.
        device: where to move the model and each batch (None: leave them).
        grad_clip: the largest total L2 norm of the gradients (None: no clipping).
        callbacks: `Callback` objects, e.g. `EarlyStopping`.
        checkpoint_dir: where ``last.pt`` (model, optimizer, scheduler, epoch, RNG states,
            history, callbacks) is written with `tocha.save` after every epoch and when
            training is interrupted (an exception or Ctrl-C mid-epoch).
        resume_from: a checkpoint file (or a directory holding ``last.pt``) to go on from;
            the run then ends with the weights an uninterrupted run would have had.
        history_path: a ``.jsonl`` or ``.csv`` file rewritten after every epoch.
        progress: show a tqdm bar per epoch with the loss and throughput (None: when
            stderr is a terminal).

    Example::

        >>> history = fit(model, torch.optim.SGD(model.parameters(), lr=0.1), loader,
        ...               epochs=5, loss_fn=torch.nn.functional.mse_loss)
        >>> history[-1]["loss"]
    """
    metrics = metrics or {}
    callbacks = list(callbacks)
    if device is not None:
        model.to(device)
    state = TrainState(model, optimizer, scheduler)
    start_batch, partial, epoch_rng = 0, None, None
    if resume_from is not None:
        path = Path(resume_from)
        checkpoint = tocha.load(path / CHECKPOINT_NAME if path.is_dir() else path)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        if scheduler is not None and checkpoint["scheduler"] is not None:
            scheduler.load_state_dict(checkpoint["scheduler"])
        for cb, cb_state in zip(callbacks, checkpoint["callbacks"]):
            cb.load_state_dict(cb_state)
        state.epoch, state.history = checkpoint["epoch"], list(checkpoint["history"])
        start_batch, partial = checkpoint["batch"], checkpoint.get("partial")
        epoch_rng = checkpoint["epoch_rng"]
        set_rng_states(checkpoint["rng"], train_loader)
    for cb in callbacks:
        cb.on_fit_start(state)
    while state.epoch < epochs and not state.stop:
        if epoch_rng is None or start_batch == 0:
            epoch_rng = get_rng_states(train_loader)
        record = _train_epoch(
            state,
            train_loader,
            val_loader,
            loss_fn,
            metrics,
            device,
            grad_clip,
            callbacks,
            checkpoint_dir,
            progress,
            start_batch,
            partial,
            epoch_rng,
        )
        start_batch, partial = 0, None
        _step_scheduler(scheduler, record)
        state.history.append(record)
        state.epoch += 1
        state.batch = 0
        for cb in callbacks:
            cb.on_epoch_end(state, record)
        if history_path is not None:
            write_history(state.history, history_path)
        if checkpoint_dir is not None:
            rng = get_rng_states(train_loader)
            _save_checkpoint(Path(checkpoint_dir), state, callbacks, {"rng": rng, "epoch_rng": rng})
    for cb in callbacks:
        cb.on_fit_end(state)
    return state.history


def _train_epoch(
    state: TrainState,
    train_loader,
    val_loader,
    loss_fn,
    metrics,
    device,
    grad_clip,
    callbacks,
    checkpoint_dir,
    progress,
    start_batch: int,
    partial,
    epoch_rng,
) -> dict:
    """One epoch of `fit`, from batch `start_batch` on (a resumed epoch replays the loader
    from the epoch's first random state and skips the batches already done)."""
    model, optimizer = state.model, state.optimizer
    model.train()
    for cb in callbacks:
        cb.on_epoch_start(state)
    averages = _Averages(partial)
    started = time.perf_counter()
    samples = 0
    if not start_batch:
        batches = iter(train_loader)
    else:
        resume_rng = get_rng_states(train_loader)
        set_rng_states(epoch_rng, train_loader)
        batches = iter(train_loader)
        next(itertools.islice(batches, start_batch, start_batch), None)
        set_rng_states(resume_rng, train_loader)
    state.batch = start_batch
    bar = _progress(progress, _loader_len(train_loader), f"epoch {state.epoch + 1}")
    bar.update(start_batch)
    try:
        for batch in batches:
            inputs, target = _split(_to(batch, device))
            outputs = model(inputs)
            loss = loss_fn(outputs, target)
            optimizer.zero_grad()
            loss.backward()
            if grad_clip is not None:
                _clip_grad_norm(model.parameters(), grad_clip)
            optimizer.step()
            n = _size(inputs)
            state.loss = loss.item()
            with tocha.no_grad():
                values = _metric_values(metrics, outputs, target)
            averages.add({"loss": state.loss, **values}, n)
            samples += n
            state.batch += 1
            bar.update()
            bar.set_postfix(
                loss=f"{state.loss:.4g}",
                samples_per_s=f"{samples / (time.perf_counter() - started):.4g}",
            )
            for cb in callbacks:
                cb.on_batch_end(state)
    except BaseException:
        if checkpoint_dir is not None:
            _save_checkpoint(
                Path(checkpoint_dir),
                state,
                callbacks,
                {
                    "rng": get_rng_states(train_loader),
                    "epoch_rng": epoch_rng,
                    "partial": averages.state(),
                },
            )
        raise
    finally:
        bar.close()
    elapsed = time.perf_counter() - started
    record = {"epoch": state.epoch, **averages.means()}
    if val_loader is not None:
        scores = evaluate(
            model, val_loader, loss_fn=loss_fn, metrics=metrics, device=device, progress=False
        )
        record.update({f"val_{k}": v for k, v in scores.items()})
    record["lr"] = optimizer.param_groups[0]["lr"]
    record["time"] = elapsed
    record["samples_per_s"] = samples / elapsed if elapsed > 0 else math.nan
    return record
