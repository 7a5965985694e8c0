"""tocha.amp.custom_fwd / custom_bwd on a custom autograd Function, and the top-level anomaly
switches (is_anomaly_enabled, is_anomaly_check_nan_enabled, set_anomaly_enabled), as
PyTorch's."""

from __future__ import annotations

import pytest

import tocha


class _CastMatmul(tocha.autograd.Function):
    seen: list = []

    @staticmethod
    @tocha.amp.custom_fwd(device_type="cpu", cast_inputs=tocha.float32)
    def forward(ctx, a, b):
        _CastMatmul.seen.append(("fwd", tocha.is_autocast_enabled("cpu"), a.dtype, b.dtype))
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    @tocha.amp.custom_bwd(device_type="cpu")
    def backward(ctx, g):
        _CastMatmul.seen.append(("bwd", tocha.is_autocast_enabled("cpu"), g.dtype))
        a, b = ctx.saved_tensors
        return g @ b.T, a.T @ g


class _Double(tocha.autograd.Function):
    seen: list = []

    @staticmethod
    @tocha.amp.custom_fwd(device_type="cpu")
    def forward(ctx, a):
        _Double.seen.append(("fwd", tocha.is_autocast_enabled("cpu")))
        return a * 2

    @staticmethod
    @tocha.amp.custom_bwd(device_type="cpu")
    def backward(ctx, g):
        _Double.seen.append(
            ("bwd", tocha.is_autocast_enabled("cpu"), tocha.get_autocast_dtype("cpu"))
        )
        return g * 2


def test_cast_inputs_runs_the_forward_in_float32_without_autocast():
    _CastMatmul.seen.clear()
    a = tocha.randn(2, 2, dtype=tocha.bfloat16, requires_grad=True)
    b = tocha.randn(2, 2, requires_grad=True)
    with tocha.autocast("cpu"):
        y = _CastMatmul.apply(a, b)
    assert y.dtype is tocha.float32
    y.sum().backward()
    assert a.grad.dtype is tocha.bfloat16 and b.grad.dtype is tocha.float32
    assert _CastMatmul.seen == [
        ("fwd", False, tocha.float32, tocha.float32),
        ("bwd", False, tocha.float32),
    ]


def test_without_cast_inputs_backward_runs_in_the_forwards_autocast_state():
    _Double.seen.clear()
    x = tocha.randn(3, requires_grad=True)
    with tocha.autocast("cpu", dtype=tocha.float16):
        y = _Double.apply(x)
    y.sum().backward()
    _Double.apply(x).sum().backward()
    assert _Double.seen == [
        ("fwd", True),
        ("bwd", True, tocha.float16),
        ("fwd", False),
        ("bwd", False, tocha.bfloat16),
    ]


def test_outside_autocast_cast_inputs_changes_nothing():
    _CastMatmul.seen.clear()
    a = tocha.randn(2, 2, dtype=tocha.float64, requires_grad=True)
    _CastMatmul.apply(a, a.detach())
    assert _CastMatmul.seen == [("fwd", False, tocha.float64, tocha.float64)]


def test_device_type_is_required_and_a_string():
    with pytest.raises(TypeError, match="device_type"):
        tocha.amp.custom_fwd(lambda ctx, x: x)
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        tocha.amp.custom_fwd(device_type=3)
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        tocha.amp.custom_bwd(device_type=None)


def test_anomaly_switches():
    assert not tocha.is_anomaly_enabled() and tocha.is_anomaly_check_nan_enabled()
    try:
        tocha.set_anomaly_enabled(True)
        assert tocha.is_anomaly_enabled() and tocha.autograd.is_anomaly_enabled()
        tocha.set_anomaly_enabled(True, False)
        assert not tocha.is_anomaly_check_nan_enabled()
        with tocha.autograd.detect_anomaly(check_nan=True):
            assert tocha.is_anomaly_check_nan_enabled()
        assert tocha.is_anomaly_enabled() and not tocha.is_anomaly_check_nan_enabled()
    finally:
        tocha.set_anomaly_enabled(False)
    assert not tocha.is_anomaly_enabled() and tocha.is_anomaly_check_nan_enabled()
    with pytest.raises(TypeError, match=r"argument 'enabled' \(position 1\) must be bool, not str"):
        tocha.set_anomaly_enabled("x")
