"""tocha.utils.trainer: a small training loop.

`fit` trains a model with a tqdm progress bar per epoch (loss and throughput), metrics,
gradient clipping, an lr scheduler and callbacks (`EarlyStopping`); it writes a checkpoint
(model, optimizer, scheduler, epoch, RNG states) with `tocha.save` after every epoch and
when interrupted, resumes from one exactly (``resume_from=``), and keeps a history of the
metrics as JSON lines or CSV, which `plot_history` draws to a PNG (needs matplotlib).
`evaluate` and `predict` run a model over a loader without gradients.

Example::

    >>> from tocha.utils.trainer import EarlyStopping, fit
    >>> history = fit(model, optimizer, train_loader, val_loader, epochs=10,
    ...               loss_fn=torch.nn.functional.cross_entropy,
    ...               callbacks=[EarlyStopping(patience=2)], checkpoint_dir="ckpt")
"""

from ._callbacks import Callback, EarlyStopping, TrainState
from ._history import plot_history, read_history, write_history
from ._loop import evaluate, fit, predict

__all__ = [
    "Callback",
    "EarlyStopping",
    "TrainState",
    "evaluate",
    "fit",
    "plot_history",
    "predict",
    "read_history",
    "write_history",
]
