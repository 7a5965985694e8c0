"""The metrics history of `fit`: written as JSON lines or CSV, read back, and drawn by
`plot_history` (needs matplotlib: ``pip install tocha-utils[plot]``)."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

__all__ = ["plot_history", "read_history", "write_history"]


def write_history(records: list[dict], path) -> None:
    """Write one record per epoch to `path`: CSV when it ends in ``.csv``, else JSON lines.
    The file is replaced atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        if path.suffix == ".csv":
            keys = list(dict.fromkeys(k for r in records for k in r))
            writer = csv.DictWriter(f, fieldnames=keys)
            writer.writeheader()
            writer.writerows(records)
        else:
            f.writelines(json.dumps(r) + "\n" for r in records)
    os.replace(tmp, path)


def read_history(path) -> list[dict]:
    """The records of a history file written by `write_history` (CSV values as floats)."""
    path = Path(path)
    with open(path, newline="") as f:
        if path.suffix == ".csv":
            return [{k: float(v) for k, v in row.items() if v != ""} for row in csv.DictReader(f)]
        return [json.loads(line) for line in f if line.strip()]


def plot_history(path, out=None) -> Path:
    """Draw the loss and metric curves of a history (a file of `fit`'s ``history_path``,
    or a list of records) to a PNG: one panel per quantity, training and validation
    (``val_``) curves together.

    Args:
        path: the history file, or the records.
        out: the PNG to write (default: the history file with a ``.png`` suffix).

    Returns:
        The path of the PNG.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plot_history needs matplotlib: pip install tocha-utils[plot]") from None
    records = path if isinstance(path, list) else read_history(path)
    if out is None:
        if isinstance(path, list):
            raise ValueError("plot_history needs `out` when given records, not a file")
        out = Path(path).with_suffix(".png")
    skip = {"epoch", "time", "samples_per_s", "lr"}
    names = [
        k
        for k in dict.fromkeys(k for r in records for k in r)
        if k not in skip and not k.startswith("val_")
    ]
    fig, axes = plt.subplots(
        1, max(len(names), 1), figsize=(5 * max(len(names), 1), 4), squeeze=False
    )
    epochs = [r.get("epoch", i) + 1 for i, r in enumerate(records)]
    for ax, name in zip(axes[0], names):
        for key in (name, f"val_{name}"):
            points = [(e, r[key]) for e, r in zip(epochs, records) if key in r]
            if points:
                ax.plot(*zip(*points), marker="o", label=key)
        ax.set_xlabel("epoch")
        ax.set_title(name)
        ax.legend()
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return Path(out)
