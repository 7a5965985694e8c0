"""The device modules a PyTorch program touches on a machine without those devices:
``torch.mps``, ``torch.xpu``, ``torch.accelerator``'s memory functions, ``torch.backends.cpu``,
``torch.backends.opt_einsum`` and ``torch.__config__`` answer as PyTorch's do there."""

from __future__ import annotations

import pytest

import tocha


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as exc:  # noqa: BLE001 - the type and message are what is compared
        return type(exc).__name__, str(exc)


MPS = [
    "device_count",
    "is_available",
    "synchronize",
    "empty_cache",
    "current_allocated_memory",
    "driver_allocated_memory",
    "recommended_max_memory",
    "seed",
    "get_rng_state",
]
XPU = [
    "is_available",
    "is_initialized",
    "device_count",
    "current_device",
    "synchronize",
    "empty_cache",
    "memory_allocated",
    "max_memory_allocated",
    "seed",
    "get_device_name",
]


@pytest.mark.parametrize("name", MPS)
def test_mps_answers_as_torch_without_mps(torch, name):
    assert _outcome(getattr(tocha.mps, name)) == _outcome(getattr(torch.mps, name))


@pytest.mark.parametrize("name", XPU)
def test_xpu_answers_as_torch_without_xpu(torch, name):
    assert _outcome(getattr(tocha.xpu, name)) == _outcome(getattr(torch.xpu, name))


def test_seeding_absent_devices_does_nothing(torch):
    for lib in (tocha, torch):
        assert lib.mps.manual_seed(0) is None and lib.xpu.manual_seed(0) is None


@pytest.mark.skipif(tocha.cuda.is_available(), reason="an accelerator is available here")
@pytest.mark.parametrize(
    "name",
    [
        "memory_allocated",
        "max_memory_allocated",
        "memory_reserved",
        "empty_cache",
        "synchronize",
        "current_device_index",
        "memory_stats",
        "reset_peak_memory_stats",
    ],
)
def test_accelerator_functions_without_an_accelerator(torch, name):
    assert _outcome(getattr(tocha.accelerator, name)) == _outcome(getattr(torch.accelerator, name))


def test_backend_flag_modules(torch):
    assert tocha.backends.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")
    assert tocha.backends.opt_einsum.is_available() is False
    assert tocha.backends.opt_einsum.enabled is False
    assert "tocha" in tocha.__config__.show()
    assert f"get_num_threads() : {tocha.get_num_threads()}" in tocha.__config__.parallel_info()
