"""Sizes that PyTorch refuses (zero or negative output sizes, kernels, strides, weights of the
wrong rank, tensors too large to address) are refused with its exception and message, and the
empty outputs it allows are given."""

from __future__ import annotations

import pytest

import tocha
import tocha.nn.functional as F


def _x(lib):
    return lib.ones(1, 1, 4, 4)


CALLS = {
    "interpolate_zero": lambda F, lib: F.interpolate(_x(lib), size=(0, 2)),
    "interpolate_negative": lambda F, lib: F.interpolate(_x(lib), size=(-1, 2)),
    "interpolate_scale_zero": lambda F, lib: F.interpolate(_x(lib), scale_factor=0),
    "interpolate_1d_zero": lambda F, lib: F.interpolate(_x(lib)[0], size=0),
    "interpolate_3d_zero": lambda F, lib: F.interpolate(lib.ones(1, 1, 2, 2, 2), size=(2, 0, 2)),
    "interpolate_bilinear_zero": lambda F, lib: F.interpolate(
        _x(lib), size=(2, 0), mode="bilinear"
    ),
    "adaptive_avg_negative": lambda F, lib: F.adaptive_avg_pool2d(_x(lib), (-1, 2)),
    "adaptive_avg_1d_negative": lambda F, lib: F.adaptive_avg_pool1d(_x(lib)[0], -1),
    "adaptive_max_negative": lambda F, lib: F.adaptive_max_pool2d(_x(lib), (-1, 2)),
    "adaptive_max_1d_negative": lambda F, lib: F.adaptive_max_pool1d(_x(lib)[0], -1),
    "unfold_kernel_zero": lambda F, lib: F.unfold(_x(lib), kernel_size=0),
    "unfold_kernel_negative": lambda F, lib: F.unfold(_x(lib), kernel_size=-2),
    "unfold_stride_zero": lambda F, lib: F.unfold(_x(lib), kernel_size=2, stride=0),
    "unfold_dilation_zero": lambda F, lib: F.unfold(_x(lib), kernel_size=2, dilation=(1, 0)),
    "unfold_padding_negative": lambda F, lib: F.unfold(_x(lib), kernel_size=2, padding=-1),
    "fold_stride_zero": lambda F, lib: F.fold(lib.ones(1, 4, 9), (4, 4), 2, stride=0),
    "embedding_1d_weight": lambda F, lib: F.embedding(lib.tensor([1]), lib.ones(5)),
    "one_hot_overflow": lambda F, lib: F.one_hot(lib.tensor([1]), num_classes=2**63 - 1),
    "transpose_bool_dim": lambda F, lib: lib.ones(2, 3).transpose(True, 0),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_refused_as_torch(name, torch):
    with pytest.raises(Exception) as want:
        CALLS[name](torch.nn.functional, torch)
    with pytest.raises(want.type) as got:
        CALLS[name](F, tocha)
    if want.type is RuntimeError:
        assert str(got.value) == str(want.value)


EMPTY = {
    "adaptive_avg_zero": lambda F, lib: F.adaptive_avg_pool2d(_x(lib), (0, 2)),
    "adaptive_max_zero": lambda F, lib: F.adaptive_max_pool2d(_x(lib), (0, 2)),
    "adaptive_max_1d_zero": lambda F, lib: F.adaptive_max_pool1d(_x(lib)[0], 0),
    "interpolate_area_zero": lambda F, lib: F.interpolate(_x(lib), size=(0, 2), mode="area"),
}


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_empty_outputs_as_torch(name, torch):
    want = EMPTY[name](torch.nn.functional, torch)
    got = EMPTY[name](F, tocha)
    assert tuple(got.shape) == tuple(want.shape)


def _ctc(F, lib, input_lengths, target_lengths):
    log_probs = lib.zeros(5, 2, 4).log_softmax(2)
    targets = lib.tensor([[1, 2], [1, 1]])
    return F.ctc_loss(log_probs, targets, lib.tensor(input_lengths), lib.tensor(target_lengths))


MORE = {
    "softmax_bool_dim": lambda F, lib: lib.ones(2, 3).softmax(True),
    "log_softmax_float_dim": lambda F, lib: F.log_softmax(lib.ones(2, 3), 1.0),
    "ctc_negative_target_length": lambda F, lib: _ctc(F, lib, [5, 5], [-1, 2]),
    "ctc_negative_input_length": lambda F, lib: _ctc(F, lib, [-5, 5], [1, 2]),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_refused_as_torch(name, torch):
    with pytest.raises(Exception) as want:
        MORE[name](torch.nn.functional, torch)
    with pytest.raises(want.type) as got:
        MORE[name](F, tocha)
    assert str(got.value) == str(want.value)
