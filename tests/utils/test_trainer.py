"""tocha.utils.trainer: fit / evaluate / predict, checkpoints and exact resume, early
stopping, the history files and plot_history."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tocha
from tocha.utils.data import DataLoader, TensorDataset
from tocha.utils.trainer import (
    Callback,
    EarlyStopping,
    evaluate,
    fit,
    plot_history,
    predict,
    read_history,
)

nn = pytest.importorskip("tocha.nn")
optim = pytest.importorskip("tocha.optim")


def data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], np.float32))[:, None] + 0.1
    return TensorDataset(tocha.from_numpy(x), tocha.from_numpy(y))


def setup(workers=0, seed=0):
    tocha.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 1))
    opt = optim.SGD(model.parameters(), lr=0.02, momentum=0.5)
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    loader = DataLoader(
        data(),
        batch_size=8,
        shuffle=True,
        num_workers=workers,
        generator=tocha.Generator().manual_seed(1),
    )
    return model, opt, sched, loader


def mae(outputs, target):
    return (outputs - target).abs().mean()


def weights(model):
    values = [p.detach().numpy().copy() for p in model.parameters()]
    assert all(np.isfinite(v).all() for v in values)
    return values


class Interrupt(Callback):
    """Raises KeyboardInterrupt after `at` optimizer steps in all."""

    def __init__(self, at):
        self.at, self.steps = at, 0

    def on_batch_end(self, state):
        self.steps += 1
        if self.steps == self.at:
            raise KeyboardInterrupt


def test_fit_records_history_and_learns(tmp_path):
    model, opt, sched, loader = setup()
    history = fit(
        model,
        opt,
        loader,
        DataLoader(data(32, 1), batch_size=16),
        epochs=4,
        loss_fn=nn.functional.mse_loss,
        metrics={"mae": mae},
        scheduler=sched,
        grad_clip=5.0,
        history_path=tmp_path / "h.jsonl",
        progress=False,
    )
    assert [r["epoch"] for r in history] == [0, 1, 2, 3]
    assert {"loss", "mae", "val_loss", "val_mae", "lr", "time", "samples_per_s"} <= set(history[0])
    assert history[-1]["loss"] < history[0]["loss"]
    assert [r["lr"] for r in history] == pytest.approx([0.02, 0.02, 0.01, 0.01])
    lines = (tmp_path / "h.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == history
    scores = evaluate(
        model,
        DataLoader(data(32, 1), batch_size=16),
        loss_fn=nn.functional.mse_loss,
        metrics={"mae": mae},
    )
    assert scores["loss"] == pytest.approx(history[-1]["val_loss"], rel=1e-5)
    assert model.training


def test_predict_concatenates_outputs():
    model, *_ = setup()
    out = predict(model, DataLoader(data(10), batch_size=4))
    assert out.shape == (10, 1) and not out.requires_grad
    x = data(10).tensors[0]
    model.eval()
    np.testing.assert_allclose(out.numpy(), model(x).detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("workers", [0, 2])
def test_resume_after_epoch_gives_the_same_weights(tmp_path, workers):
    model, opt, sched, loader = setup(workers)
    fit(
        model,
        opt,
        loader,
        epochs=4,
        loss_fn=nn.functional.mse_loss,
        scheduler=sched,
        progress=False,
    )
    expected = weights(model)

    model, opt, sched, loader = setup(workers)
    fit(
        model,
        opt,
        loader,
        epochs=2,
        loss_fn=nn.functional.mse_loss,
        scheduler=sched,
        checkpoint_dir=tmp_path,
        progress=False,
    )
    tocha.manual_seed(999)  # a new process would start from other random states
    model, opt, sched, loader = setup(workers, seed=5)
    history = fit(
        model,
        opt,
        loader,
        epochs=4,
        loss_fn=nn.functional.mse_loss,
        scheduler=sched,
        resume_from=tmp_path,
        progress=False,
    )
    assert len(history) == 4
    for a, b in zip(weights(model), expected):
        np.testing.assert_array_equal(a, b)


def test_resume_after_interruption_mid_epoch_gives_the_same_weights(tmp_path):
    model, opt, sched, loader = setup()
    expected_history = fit(
        model,
        opt,
        loader,
        epochs=3,
        loss_fn=nn.functional.mse_loss,
        scheduler=sched,
        progress=False,
    )
    expected = weights(model)

    model, opt, sched, loader = setup()
    with pytest.raises(KeyboardInterrupt):
        fit(
            model,
            opt,
            loader,
            epochs=3,
            loss_fn=nn.functional.mse_loss,
            scheduler=sched,
            checkpoint_dir=tmp_path,
            callbacks=[Interrupt(at=11)],
            progress=False,
        )
    checkpoint = tocha.load(tmp_path / "last.pt")
    assert (checkpoint["epoch"], checkpoint["batch"]) == (1, 3)
    model, opt, sched, loader = setup(seed=3)
    history = fit(
        model,
        opt,
        loader,
        epochs=3,
        loss_fn=nn.functional.mse_loss,
        scheduler=sched,
        resume_from=tmp_path / "last.pt",
        progress=False,
    )
    for a, b in zip(weights(model), expected):
        np.testing.assert_array_equal(a, b)
    assert [r["loss"] for r in history] == pytest.approx([r["loss"] for r in expected_history])


def test_early_stopping_and_csv_history(tmp_path):
    model, opt, _, loader = setup()
    stopper = EarlyStopping(monitor="val_loss", patience=2, min_delta=1e9)
    history = fit(
        model,
        opt,
        loader,
        DataLoader(data(16, 1), batch_size=8),
        epochs=10,
        loss_fn=nn.functional.mse_loss,
        callbacks=[stopper],
        history_path=tmp_path / "h.csv",
        progress=False,
    )
    assert len(history) == 3  # the first epoch sets the best; two more without progress
    rows = read_history(tmp_path / "h.csv")
    assert [r["epoch"] for r in rows] == [0, 1, 2]
    assert rows[0]["loss"] == pytest.approx(history[0]["loss"])
    with pytest.raises(ValueError, match="mode 'up' is unknown"):
        EarlyStopping(mode="up")


def test_progress_bar_shows_loss_and_throughput(capsys):
    model, opt, _, loader = setup()
    fit(model, opt, loader, epochs=1, loss_fn=nn.functional.mse_loss, progress=True)
    err = capsys.readouterr().err
    assert "epoch 1" in err and "loss=" in err and "samples_per_s=" in err
    fit(model, opt, loader, epochs=1, loss_fn=nn.functional.mse_loss, progress=False)
    assert capsys.readouterr().err == ""


def test_plot_history(tmp_path):
    pytest.importorskip("matplotlib")
    model, opt, _, loader = setup()
    fit(
        model,
        opt,
        loader,
        DataLoader(data(16, 1), batch_size=8),
        epochs=2,
        loss_fn=nn.functional.mse_loss,
        metrics={"mae": mae},
        history_path=tmp_path / "h.jsonl",
        progress=False,
    )
    png = plot_history(tmp_path / "h.jsonl")
    assert png == tmp_path / "h.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
