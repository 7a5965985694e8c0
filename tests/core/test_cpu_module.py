"""tocha.cpu (torch.cpu), get_device_module, the top-level device errors and is_distributed."""

from __future__ import annotations

import pytest

import tocha


def test_cpu_queries():
    cpu = tocha.cpu
    assert cpu.is_available() and cpu.is_initialized()
    assert cpu.device_count() == 1
    assert cpu.current_device() == "cpu"
    assert cpu.synchronize() is None and cpu.synchronize("cpu") is None
    assert cpu.set_device("cpu") is None
    assert all(value is True for value in cpu.get_capabilities().values())


def test_cpu_streams_and_events():
    cpu = tocha.cpu
    default = cpu.current_stream()
    assert default is cpu.current_stream()
    stream = cpu.Stream()
    with cpu.stream(stream):
        assert cpu.current_stream() is stream
    assert cpu.current_stream() is default
    assert stream.record_event() is None and stream.wait_stream(default) is None
    event = cpu.Event()
    assert event.query() is True and event.record() is None and event.synchronize() is None


def test_cpu_amp_spellings_are_deprecated():
    with pytest.warns(FutureWarning, match=r"torch.amp.autocast\('cpu', args...\)"):
        block = tocha.cpu.amp.autocast()
    assert isinstance(block, tocha.autocast)
    with block:
        assert tocha.is_autocast_enabled("cpu")
        assert tocha.get_autocast_dtype("cpu") is tocha.bfloat16
    assert not tocha.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning, match=r"torch.amp.GradScaler\('cpu', args...\)"):
        assert isinstance(tocha.cpu.amp.GradScaler(), tocha.amp.GradScaler)


def test_get_device_module():
    assert tocha.get_device_module("cpu") is tocha.cpu
    assert tocha.get_device_module(tocha.device("cpu")) is tocha.cpu
    assert tocha.get_device_module("cuda:1") is tocha.cuda
    expected = tocha.cpu if not tocha.cuda.is_available() else tocha.cuda
    assert tocha.get_device_module() is expected
    with pytest.raises(RuntimeError, match="Device 'meta' does not have a corresponding module"):
        tocha.get_device_module("meta")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        tocha.get_device_module("foo")
    with pytest.raises(RuntimeError, match="Invalid value of device '3'"):
        tocha.get_device_module(3)


def test_device_errors():
    assert tocha.OutOfMemoryError is tocha.cuda.OutOfMemoryError
    assert issubclass(tocha.OutOfMemoryError, RuntimeError)
    assert issubclass(tocha.AcceleratorError, RuntimeError)


def test_is_distributed():
    assert tocha.is_distributed(tocha.ones(2)) is False
    with pytest.raises(TypeError, match=r"argument 'input' \(position 1\) must be Tensor, not int"):
        tocha.is_distributed(3)
