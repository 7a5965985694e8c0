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


# -- writing into an expanded view (its elements share memory) ---------------------------------
OVERLAP = "more than one element of the written-to tensor refers to a single memory location"


def expanded():
    return tocha.ones(2, 1).expand(2, 3)


@pytest.mark.parametrize(
    "write",
    [
        lambda t: t.add_(1),
        lambda t: t.mul_(tocha.ones(2, 3)),
        lambda t: t.sin_(),
        lambda t: t.clamp_(0, 0.5),
        lambda t: t.addcmul_(tocha.ones(2, 3), tocha.ones(2, 3)),
        lambda t: t.lerp_(tocha.zeros(2, 3), 0.5),
        lambda t: t.copy_(tocha.arange(6.0).reshape(2, 3)),
        lambda t: t.copy_(tocha.tensor(3.0)),
        lambda t: t.fill_(tocha.tensor(3.0)),
        lambda t: t.__setitem__(slice(None), tocha.arange(6.0).reshape(2, 3)),
        lambda t: tocha.add(tocha.ones(2, 3), 1, out=t),
    ],
    ids=[
        "add_",
        "mul_",
        "sin_",
        "clamp_",
        "addcmul_",
        "lerp_",
        "copy_",
        "copy_ 0-dim",
        "fill_ 0-dim tensor",
        "setitem tensor",
        "out=",
    ],
)
def test_an_op_writing_into_an_expanded_view_raises_pytorchs_error(write):
    t = expanded()
    with pytest.raises(RuntimeError, match=OVERLAP):
        write(t)
    np.testing.assert_array_equal(t.numpy(), np.ones((2, 3)))


@pytest.mark.parametrize(
    "draw",
    ["uniform_()", "normal_()", "random_(0, 5)", "exponential_()", "bernoulli_(0.5)"],
)
def test_an_in_place_draw_into_an_expanded_view_raises_pytorchs_error(draw):
    t = expanded()
    with pytest.raises(RuntimeError, match=OVERLAP):
        eval(f"t.{draw}")
    np.testing.assert_array_equal(t.numpy(), np.ones((2, 3)))


@pytest.mark.parametrize(
    "write, row0",
    [
        (lambda t: t.fill_(3), 3.0),
        (lambda t: t.zero_(), 0.0),
        (lambda t: t.__setitem__((0, 1), 5.0), 5.0),
        (lambda t: t.__setitem__((0, 1), tocha.tensor(5.0)), 5.0),
        (lambda t: t.masked_fill_(tocha.tensor([True, False, False]), 2.0), 2.0),
    ],
    ids=["fill_", "zero_", "setitem scalar", "setitem 0-dim", "masked_fill_"],
)
def test_a_fill_writes_its_value_into_an_expanded_view(write, row0):
    t = expanded()
    write(t)
    np.testing.assert_array_equal(t.numpy()[0], np.full(3, row0))


def test_a_size_one_expanded_dim_or_a_plain_slice_takes_any_write():
    t = tocha.ones(2, 1).expand(2, 1)
    t.add_(1)
    base = tocha.zeros(6)
    base[1:4].add_(tocha.arange(3.0))
    np.testing.assert_array_equal(t.numpy(), np.full((2, 1), 2.0))
    np.testing.assert_array_equal(base.numpy(), [0, 0, 1, 2, 0, 0])
