"""`SummaryWriter`, as ``torch.utils.tensorboard.SummaryWriter``: scalars, histograms, text
and images written to TensorBoard event files."""

from __future__ import annotations

import itertools
import os
import socket
import time
import warnings
from datetime import datetime

import numpy as np

from . import _image, _proto
from ._record import frame

__all__ = ["SummaryWriter"]

_FILE_IDS = itertools.count()


def _tensorflow_bins() -> np.ndarray:
    """TensorFlow's default histogram bucket edges: +-1e-12 growing by 10% up to 1e20."""
    positive = 1e-12 * 1.1 ** np.arange(int(np.ceil(np.log(1e32) / np.log(1.1))))
    positive = positive[positive < 1e20]
    return np.concatenate([-positive[::-1], [0.0], positive])


def _numpy(value) -> np.ndarray:
    """A tensor (detached, on the host), array or number as a NumPy array."""
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "cpu"):
        value = value.cpu()
    return np.asarray(value)


class _EventFile:
    """One event file: the file-version event first, then framed events; flushed on demand
    and when `flush_secs` have passed since the last flush."""

    def __init__(self, logdir: str, flush_secs: float, filename_suffix: str):
        os.makedirs(logdir, exist_ok=True)
        name = (
            f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
            f"{os.getpid()}.{next(_FILE_IDS)}{filename_suffix}"
        )
        self.logdir = logdir
        self.path = os.path.join(logdir, name)
        self._file = open(self.path, "wb")  # noqa: SIM115 - closed by close()
        self._flush_secs = flush_secs
        self._last_flush = time.time()
        self.write(_proto.event(time.time(), file_version="brain.Event:2"))
        self.flush()

    def write(self, event: bytes) -> None:
        self._file.write(frame(event))
        if time.time() - self._last_flush > self._flush_secs:
            self.flush()

    def flush(self) -> None:
        self._file.flush()
        self._last_flush = time.time()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()


class SummaryWriter:
    """Writes TensorBoard event files into `log_dir`, as
    ``torch.utils.tensorboard.SummaryWriter``; ``tensorboard --logdir runs`` shows them.

    Args:
        log_dir: the folder; default ``runs/<month><day>_<hh-mm-ss>_<hostname><comment>``.
        comment: appended to the default `log_dir`.
        purge_step: accepted for compatibility (events are never purged).
        max_queue: accepted for compatibility (events are written as they come).
        flush_secs: at most this many seconds between flushes to disk.
        filename_suffix: appended to the event files' names.

    Example:
        >>> with SummaryWriter("runs/demo") as writer:
        ...     for step in range(3):
        ...         writer.add_scalar("loss", 1.0 / (step + 1), step)
    """

    def __init__(
        self,
        log_dir: str | None = None,
        comment: str = "",
        purge_step=None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ):
        if log_dir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = os.fspath(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self._writer: _EventFile | None = None
        self._scalar_writers: dict[str, _EventFile] = {}

    def get_logdir(self) -> str:
        """The folder the event files are written to."""
        return self.log_dir

    def _file(self) -> _EventFile:
        if self._writer is None:
            self._writer = _EventFile(self.log_dir, self.flush_secs, self.filename_suffix)
        return self._writer

    @staticmethod
    def _event(values: bytes, global_step, walltime) -> bytes:
        return _proto.event(
            time.time() if walltime is None else float(walltime),
            0 if global_step is None else int(global_step),
            summary=_proto.summary(values),
        )

    def add_scalar(
        self,
        tag: str,
        scalar_value,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """Record one number (a Python number, or a one-element tensor or array)."""
        value = float(_numpy(scalar_value).reshape(()))
        self._file().write(self._event(_proto.scalar_value(tag, value), global_step, walltime))

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Record several numbers on one chart: each goes to its own run, the subfolder
        ``<main_tag>_<tag>`` of the log folder, under the tag `main_tag`."""
        for tag, scalar_value in tag_scalar_dict.items():
            folder = os.path.join(self.log_dir, main_tag.replace("/", "_") + "_" + tag)
            writer = self._scalar_writers.get(folder)
            if writer is None:
                writer = _EventFile(folder, self.flush_secs, self.filename_suffix)
                self._scalar_writers[folder] = writer
            value = float(_numpy(scalar_value).reshape(()))
            writer.write(self._event(_proto.scalar_value(main_tag, value), global_step, walltime))

    def add_histogram(
        self,
        tag: str,
        values,
        global_step: int | None = None,
        bins="tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        """Record the distribution of `values`: `bins` is ``"tensorflow"`` (TensorFlow's
        exponential buckets), a NumPy bins rule (``"auto"``, ``"fd"``...), a count, or
        edges."""
        data = _numpy(values).astype(np.float64).ravel()
        if data.size == 0:
            raise ValueError("The input has no element.")
        edges = _tensorflow_bins() if isinstance(bins, str) and bins == "tensorflow" else bins
        counts, limits = np.histogram(data, bins=edges)
        used = np.flatnonzero(counts)
        first, last = (used[0], used[-1] + 1) if used.size else (0, len(counts))
        histogram = _proto.histogram_value(
            tag,
            float(data.min()),
            float(data.max()),
            data.size,
            float(data.sum()),
            float(data @ data),
            limits[first + 1 : last + 1].tolist(),
            counts[first:last].astype(np.float64).tolist(),
        )
        self._file().write(self._event(histogram, global_step, walltime))

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Record a piece of text (TensorBoard renders it as Markdown)."""
        self._file().write(self._event(_proto.text_value(tag, text_string), global_step, walltime))

    def add_image(
        self,
        tag: str,
        img_tensor,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        """Record an image: 1, 3 or 4 channels laid out as `dataformats`; floats in [0, 1],
        or uint8."""
        hwc = _image.to_hwc_uint8(_numpy(img_tensor), dataformats)
        value = _proto.image_value(tag, hwc.shape[0], hwc.shape[1], hwc.shape[2], _image.png(hwc))
        self._file().write(self._event(value, global_step, walltime))

    def add_graph(
        self, model, input_to_model=None, verbose: bool = False, use_strict_trace: bool = True
    ) -> None:
        """Not supported: tocha does not trace graphs; warns and records nothing."""
        warnings.warn(
            "SummaryWriter.add_graph is not supported by tocha (no graph tracing): "
            "nothing was recorded",
            UserWarning,
            stacklevel=2,
        )

    def flush(self) -> None:
        """Write what is pending to disk."""
        for writer in self._writers():
            writer.flush()

    def close(self) -> None:
        """Flush and close the event files; adding again opens new ones."""
        for writer in self._writers():
            writer.flush()
            writer.close()
        self._writer = None
        self._scalar_writers = {}

    def _writers(self) -> list[_EventFile]:
        return ([] if self._writer is None else [self._writer]) + list(
            self._scalar_writers.values()
        )

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
