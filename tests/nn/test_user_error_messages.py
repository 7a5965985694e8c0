"""The errors of common mistakes in training programs, against torch.nn: mismatched dtypes
of convolutions and linear layers, bilinear batch dims, bag offsets, recurrent states,
batch-norm statistics and adaptive pooling sizes."""

from __future__ import annotations

import pytest

import tocha


def _conv(lib, cls, bias, x_dtype, w_dtype):
    layer = getattr(lib.nn, cls)(3, 4, 3, bias=bias).to(getattr(lib, w_dtype))
    layer(lib.ones(1, 3, 5, 5, dtype=getattr(lib, x_dtype)))


CASES = {
    "conv-bias": lambda lib: _conv(lib, "Conv2d", True, "float64", "float32"),
    "conv-half-bias": lambda lib: _conv(lib, "Conv2d", True, "float16", "float32"),
    "conv-long-bias": lambda lib: _conv(lib, "Conv2d", True, "int64", "float32"),
    "linear-bias": lambda lib: lib.nn.Linear(3, 2)(lib.ones(4, 3, dtype=lib.float64)),
    "linear-long": lambda lib: lib.nn.Linear(3, 2)(lib.ones(1, 3, dtype=lib.int64)),
    "linear-nobias-long": lambda lib: lib.nn.functional.linear(
        lib.ones(1, 3, dtype=lib.int64), lib.ones(2, 3)
    ),
    "linear-bias-double": lambda lib: lib.nn.functional.linear(
        lib.ones(2, 3), lib.ones(4, 3), lib.ones(4, dtype=lib.float64)
    ),
    "linear-bias-half": lambda lib: lib.nn.functional.linear(
        lib.ones(2, 3, dtype=lib.float16), lib.ones(4, 3, dtype=lib.float16), lib.ones(4)
    ),
    "bilinear-batch": lambda lib: lib.nn.Bilinear(2, 3, 4)(lib.ones(5, 2), lib.ones(4, 3)),
    "bilinear-batch-dim1": lambda lib: lib.nn.Bilinear(2, 3, 4)(
        lib.ones(2, 5, 2), lib.ones(2, 4, 3)
    ),
    "bilinear-dims": lambda lib: lib.nn.Bilinear(2, 3, 4)(lib.ones(5, 2), lib.ones(2, 5, 3)),
    "bag-first-offset": lambda lib: lib.nn.EmbeddingBag(5, 2)(
        lib.tensor([1, 2, 3]), lib.tensor([1, 2])
    ),
    "bag-last-offset": lambda lib: lib.nn.EmbeddingBag(5, 2, include_last_offset=True)(
        lib.tensor([1, 2, 3]), lib.tensor([0, 4])
    ),
    "lstm-cell-tensor-hx": lambda lib: lib.nn.LSTMCell(3, 4)(lib.ones(2, 3), lib.zeros(2, 4)),
    "lstm-cell-one-state": lambda lib: lib.nn.LSTMCell(3, 4)(lib.ones(2, 3), (lib.zeros(2, 4),)),
    "lstm-tensor-hx": lambda lib: lib.nn.LSTM(3, 4)(lib.ones(5, 2, 3), lib.zeros(1, 2, 4)),
    "bn-running-mean-first": lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(4, 5)),
    "bn-running-var": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(4, 5), lib.zeros(5), lib.ones(3), lib.ones(3), lib.ones(3)
    ),
    "bn-eval-undefined": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(4, 5), None, None, lib.ones(3), lib.ones(3), training=False
    ),
    "adaptive-avg-2d-seq": lambda lib: lib.nn.AdaptiveAvgPool2d((2, 2))(lib.ones(2, 3)),
    "adaptive-max-3d-seq": lambda lib: lib.nn.functional.adaptive_max_pool3d(
        lib.ones(2, 3, 4), (2, 2, 2)
    ),
    "adaptive-avg-1d-none": lambda lib: lib.nn.functional.adaptive_avg_pool1d(
        lib.ones(2, 3), (None,)
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_error_matches_torch(torch, case):
    with pytest.raises(Exception) as theirs:
        CASES[case](torch)
    with pytest.raises(type(theirs.value)) as ours:
        CASES[case](tocha)
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


def test_decreasing_bag_offsets_raise():
    """PyTorch raises (with an internal message); tocha said nothing and made bags."""
    with pytest.raises(RuntimeError, match="offsets must be non-decreasing"):
        tocha.nn.EmbeddingBag(5, 2)(tocha.tensor([1, 2, 3]), tocha.tensor([0, 2, 1]))
