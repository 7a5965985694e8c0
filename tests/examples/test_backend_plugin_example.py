"""examples/backend-plugin, the backend author's walkthrough, installed as a distribution
(nox's tests session installs it): what its README's "Try it" section promises."""

from __future__ import annotations

import importlib.metadata

import numpy as np
import pytest

import tocha

pytest.importorskip("tocha_mydev", reason="examples/backend-plugin is not installed")


def test_entry_point_is_declared():
    names = {ep.name for ep in importlib.metadata.entry_points(group="tocha.backends")}
    assert "mydev" in names


def test_ops_run_on_mydev_through_generic_kernels():
    x = tocha.arange(4.0, device="mydev")
    assert x.device == tocha.device("mydev", 0)
    y = (x + 1) * 2
    assert y.device == x.device and y.cpu().tolist() == [2.0, 4.0, 6.0, 8.0]
    assert tocha.ones(2, device="mydev:1").device == tocha.device("mydev", 1)
    np.testing.assert_allclose(x.softmax(0).cpu().numpy(), tocha.arange(4.0).softmax(0).numpy())


def test_neg_runs_the_override():
    from tocha_mydev import _backend

    calls = []

    def counting(xp):
        kernel = _backend._neg_kernel(xp)
        return lambda a: calls.append(a.shape) or kernel(a)

    backend = tocha._backend.backend_of(tocha.device("mydev", 0))
    original = backend.overrides
    backend.overrides = {"neg": counting}
    neg = tocha._dispatch.REGISTRY["neg"]
    cached = {d: k for d, k in neg.kernels.items() if d.type == "mydev"}
    for d in cached:
        del neg.kernels[d]
    try:
        assert (-tocha.arange(3.0, device="mydev")).cpu().tolist() == [-0.0, -1.0, -2.0]
        assert calls == [(3,)]
    finally:
        backend.overrides = original
        for d in [d for d in neg.kernels if d.type == "mydev"]:
            del neg.kernels[d]
        neg.kernels.update(cached)


def test_refused_op_and_mixed_devices_raise():
    x = tocha.arange(4.0, device="mydev")
    with pytest.raises(NotImplementedError, match="'matmul' on device 'mydev"):
        x @ x
    with pytest.raises(RuntimeError, match="mydev:0 and cpu!"):
        x + tocha.ones(4)
    with pytest.raises(RuntimeError, match="mydev has 2 devices"):
        tocha.zeros(1, device="mydev:2")


def test_status_and_memory_statistics():
    tocha.zeros(1, device="mydev")
    status = tocha.backends.status()["mydev"]
    assert status["distribution"] == "tocha-mydev" and status["loaded"] is True
    backend = tocha._backend.backend_of(tocha.device("mydev", 0))
    before = backend.memory_stats()["allocated_bytes.all.current"]
    tocha.ones(10, dtype=tocha.float64).to("mydev")
    assert backend.memory_stats()["allocated_bytes.all.current"] == before + 80
