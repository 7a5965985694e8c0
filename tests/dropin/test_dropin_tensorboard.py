"""``tocha.utils.tensorboard.SummaryWriter`` writes event files that TensorBoard's own reader
(the ``tensorboard`` package, a test-only dependency) reads back."""

from __future__ import annotations

import io
import struct
import warnings

import numpy as np
import pytest

import tocha
from tocha.utils.tensorboard import SummaryWriter
from tocha.utils.tensorboard._record import crc32c, frame, masked_crc32c


def test_crc32c_and_framing():
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0
    record = frame(b"abc")
    assert struct.unpack("<Q", record[:8])[0] == 3 and record[12:15] == b"abc"
    assert struct.unpack("<I", record[15:])[0] == masked_crc32c(b"abc")


@pytest.fixture
def accumulator():
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing import event_accumulator

    def read(path):
        guidance = {
            event_accumulator.IMAGES: 0,
            event_accumulator.TENSORS: 0,
            event_accumulator.SCALARS: 0,
            event_accumulator.HISTOGRAMS: 0,
        }
        acc = event_accumulator.EventAccumulator(str(path), size_guidance=guidance)
        acc.Reload()
        return acc

    return read


def test_tensorboard_reads_what_summary_writer_writes(tmp_path, accumulator):
    values = np.random.default_rng(0).standard_normal(500)
    with SummaryWriter(tmp_path / "run") as writer:
        for step in range(3):
            writer.add_scalar("loss", tocha.tensor(1.0 / (step + 1)), step)
        writer.add_histogram("weights", tocha.from_numpy(values), 7)
        writer.add_histogram("counts", np.arange(10.0), 8, bins="auto")
        writer.add_text("note", "hello **world**", 1)
        writer.add_image("rgb", tocha.rand(3, 8, 10), 2)
        writer.add_image("grey", np.full((5, 6), 200, np.uint8), 3, dataformats="HW")
        writer.add_scalars("pair", {"a": 1.0, "b": tocha.tensor(2.0)}, 4)
        with pytest.warns(UserWarning, match="add_graph"):
            writer.add_graph(tocha.nn.Linear(1, 1))
    acc = accumulator(tmp_path / "run")
    assert [(e.step, round(e.value, 6)) for e in acc.Scalars("loss")] == [
        (0, 1.0),
        (1, 0.5),
        (2, 0.333333),
    ]
    histogram = acc.Histograms("weights")[0]
    assert histogram.step == 7 and histogram.histogram_value.num == 500
    assert sum(histogram.histogram_value.bucket) == 500
    assert histogram.histogram_value.min == pytest.approx(values.min())
    assert histogram.histogram_value.sum_squares == pytest.approx(values @ values)
    assert sum(acc.Histograms("counts")[0].histogram_value.bucket) == 10
    assert acc.Tensors("note")[0].tensor_proto.string_val == [b"hello **world**"]
    image = acc.Images("rgb")[0]
    assert (image.step, image.width, image.height) == (2, 10, 8)
    assert image.encoded_image_string.startswith(b"\x89PNG")
    try:
        from PIL import Image
    except ImportError:
        pass
    else:
        grey = Image.open(io.BytesIO(acc.Images("grey")[0].encoded_image_string))
        assert grey.size == (6, 5) and grey.getpixel((0, 0)) == 200
    for tag, value in (("a", 1.0), ("b", 2.0)):
        sub = accumulator(tmp_path / "run" / f"pair_{tag}")
        assert [(e.step, e.value) for e in sub.Scalars("pair")] == [(4, value)]


def test_flush_makes_events_readable_before_close(tmp_path, accumulator):
    writer = SummaryWriter(str(tmp_path), filename_suffix=".x")
    writer.add_scalar("a", 3, 0)
    writer.flush()
    assert [e.value for e in accumulator(tmp_path).Scalars("a")] == [3.0]
    assert all(p.name.endswith(".x") for p in tmp_path.iterdir())
    writer.close()


def test_default_log_dir_and_bad_images(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    writer = SummaryWriter(comment="_exp")
    assert writer.get_logdir().startswith("runs") and writer.get_logdir().endswith("_exp")
    with pytest.raises(ValueError, match="input format"):
        writer.add_image("bad", np.zeros((3, 4)), 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        writer.close()
