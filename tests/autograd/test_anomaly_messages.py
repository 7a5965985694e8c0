"""Anomaly mode's warnings and errors, and ``set_detect_anomaly`` as a context manager.

Each scenario runs on a library (tocha, or PyTorch when installed): the expected values are
PyTorch's, checked live against it where it is installed."""

from __future__ import annotations

import importlib
import warnings

import pytest


@pytest.fixture(params=["tocha", "torch"])
def lib(request):
    if request.param == "torch":
        return pytest.importorskip("torch")
    return importlib.import_module(request.param)


def test_detect_anomaly_warns_that_it_is_on(lib):
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with lib.autograd.detect_anomaly():
            assert lib.is_anomaly_enabled()
    assert not lib.is_anomaly_enabled()


def test_a_failing_node_warns_with_its_forward_trace_and_raises(lib):
    x = lib.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            y = (x * 0).log() * 0  # the forward line the trace shows
            with pytest.raises(RuntimeError) as error:
                y.sum().backward()
    assert str(error.value) == "Function 'LogBackward0' returned nan values in its 0th output."
    detected = [str(w.message) for w in caught if "Error detected in" in str(w.message)]
    assert len(detected) == 1
    assert detected[0].startswith("Error detected in LogBackward0. Traceback of forward call")
    assert "y = (x * 0).log() * 0" in detected[0]


def test_check_nan_off_lets_nan_through(lib):
    x = lib.ones(2, requires_grad=True)
    with pytest.warns(UserWarning):
        with lib.autograd.detect_anomaly(check_nan=False):
            ((x * 0).log() * 0).sum().backward()
    assert all(v != v for v in x.grad.tolist())


def test_set_detect_anomaly_as_a_context_manager(lib):
    with lib.autograd.set_detect_anomaly(True, check_nan=False):
        assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
    assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
    lib.autograd.set_detect_anomaly(True)
    try:
        assert lib.is_anomaly_enabled()
    finally:
        lib.autograd.set_detect_anomaly(False)
    assert not lib.is_anomaly_enabled()
