"""copy_, fill_ and zero_: values, broadcasting, casting, devices. Their gradients need
tocha-autograd: tests/autograd/test_fill_grad.py."""

from __future__ import annotations

import numpy as np
import pytest

import tocha


@pytest.mark.parametrize(
    "dst_dtype, src, expected",
    [
        (tocha.float32, [1.5, 2.5, 3.5], [1.5, 2.5, 3.5]),
        (tocha.int64, [1.7, -2.7, 3.2], [1, -2, 3]),
        (tocha.bool, [0.0, 2.0, 0.0], [False, True, False]),
        (tocha.float64, [1, 2, 3], [1.0, 2.0, 3.0]),
    ],
)
def test_copy_casts_to_the_destination_dtype(dst_dtype, src, expected):
    dst = tocha.zeros(2, 3, dtype=dst_dtype)
    result = dst.copy_(tocha.tensor(src))
    assert result is dst and dst.dtype is dst_dtype
    np.testing.assert_array_equal(dst.numpy(), np.array([expected, expected]))


def test_copy_writes_through_views_and_bumps_the_version():
    base = tocha.zeros(3, 4)
    before = base._version
    base[:, 1].copy_(tocha.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(base.numpy()[:, 1], [1, 2, 3])
    assert base._version > before


def test_copy_broadcast_errors_match_torch(torch):
    for lib in (tocha, torch):
        with pytest.raises(RuntimeError) as info:
            lib.zeros(3).copy_(lib.ones(2, 3))
        message = str(info.value)
        assert "doesn't match the broadcast shape" in message or "must match" in message


def test_fill_and_zero():
    x = tocha.ones(2, 2, dtype=tocha.int32)
    x.fill_(7)
    np.testing.assert_array_equal(x.numpy(), np.full((2, 2), 7))
    x.fill_(tocha.tensor(3))
    np.testing.assert_array_equal(x.numpy(), np.full((2, 2), 3))
    x.zero_()
    np.testing.assert_array_equal(x.numpy(), np.zeros((2, 2)))
    with pytest.raises(RuntimeError, match="0-dimension"):
        x.fill_(tocha.ones(2))
