"""autocast's thread settings outside `with` blocks, as PyTorch's: set_autocast_enabled,
set_autocast_dtype, the cache flag, the deprecated CPU spellings, is_autocast_available."""

from __future__ import annotations

import threading

import pytest

import tocha


@pytest.fixture(autouse=True)
def _restore():
    yield
    tocha.set_autocast_enabled("cpu", False)
    tocha.set_autocast_enabled("cuda", False)
    tocha.set_autocast_dtype("cpu", tocha.bfloat16)
    tocha.set_autocast_dtype("cuda", tocha.float16)
    tocha.set_autocast_cache_enabled(True)


def test_set_autocast_enabled_casts_without_a_block():
    a = tocha.randn(2, 2)
    tocha.set_autocast_enabled("cpu", True)
    assert tocha.is_autocast_enabled("cpu") and not tocha.is_autocast_enabled("cuda")
    assert (a @ a).dtype is tocha.bfloat16
    tocha.set_autocast_enabled("cpu", False)
    assert not tocha.is_autocast_enabled("cpu")
    assert (a @ a).dtype is tocha.float32


def test_one_argument_form_is_cuda():
    tocha.set_autocast_enabled(True)
    assert tocha.is_autocast_enabled() and tocha.is_autocast_enabled("cuda")
    assert not tocha.is_autocast_enabled("cpu")


def test_set_autocast_dtype_is_the_default_of_later_blocks():
    assert tocha.get_autocast_dtype("cpu") is tocha.bfloat16
    assert tocha.get_autocast_dtype("cuda") is tocha.float16
    tocha.set_autocast_dtype("cpu", tocha.float16)
    assert tocha.get_autocast_dtype("cpu") is tocha.float16
    a = tocha.randn(2, 2)
    with tocha.autocast("cpu"):
        assert (a @ a).dtype is tocha.float16


def test_a_block_restores_the_dtype_it_found():
    a = tocha.randn(2, 2)
    with tocha.autocast("cpu", dtype=tocha.bfloat16):
        tocha.set_autocast_dtype("cpu", tocha.float16)
        assert tocha.get_autocast_dtype("cpu") is tocha.float16
        assert (a @ a).dtype is tocha.float16
    assert tocha.get_autocast_dtype("cpu") is tocha.bfloat16
    assert not tocha.is_autocast_enabled("cpu")


def test_settings_are_per_thread():
    tocha.set_autocast_dtype("cpu", tocha.float16)
    tocha.set_autocast_enabled("cpu", True)
    seen = []

    def other():
        seen.append((tocha.get_autocast_dtype("cpu"), tocha.is_autocast_enabled("cpu")))

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert seen == [(tocha.bfloat16, False)]


def test_bad_arguments():
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        tocha.is_autocast_enabled("foo")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        tocha.get_autocast_dtype("foo")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        tocha.set_autocast_enabled("foo", True)
    with pytest.raises(TypeError, match=r"argument 'enabled' \(position 2\) must be bool, not int"):
        tocha.set_autocast_enabled("cpu", 1)
    with pytest.raises(TypeError, match=r"argument 'dtype' \(position 2\) must be torch.dtype"):
        tocha.set_autocast_dtype("cpu", 3)
    with pytest.raises(TypeError, match=r"enabled must be a bool \(got int\)"):
        tocha.set_autocast_cache_enabled(1)


def test_cache_flag():
    assert tocha.is_autocast_cache_enabled()
    tocha.set_autocast_cache_enabled(False)
    assert not tocha.is_autocast_cache_enabled()
    assert tocha.clear_autocast_cache() is None


def test_deprecated_cpu_spellings_warn_and_work():
    with pytest.warns(DeprecationWarning, match=r"is_autocast_enabled\('cpu'\)"):
        assert tocha.is_autocast_cpu_enabled() is False
    with pytest.warns(DeprecationWarning, match=r"set_autocast_enabled\('cpu', enabled\)"):
        tocha.set_autocast_cpu_enabled(True)
    assert tocha.is_autocast_enabled("cpu")
    with pytest.warns(DeprecationWarning, match=r"set_autocast_dtype\('cpu', dtype\)"):
        tocha.set_autocast_cpu_dtype(tocha.float16)
    with pytest.warns(DeprecationWarning, match=r"get_autocast_dtype\('cpu'\)"):
        assert tocha.get_autocast_cpu_dtype() is tocha.float16


def test_is_autocast_available():
    assert tocha.amp.is_autocast_available("cpu")
    assert tocha.amp.is_autocast_available("cuda")
    assert not tocha.amp.is_autocast_available("meta")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        tocha.amp.is_autocast_available("foo")
