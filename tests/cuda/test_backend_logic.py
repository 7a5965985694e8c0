"""The cuda backend's own logic, run over a fake CuPy made of NumPy (tests/cuda/fakecupy.py)
as a device type of its own, ``fakecuda``: devices, transfers, pinned memory, memory
statistics and out-of-memory handling, generator states, the kernel namespace's fills."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tocha import _backend

pytest.importorskip("tocha_cuda", reason="tocha-cuda is not installed")

from tests.cuda import fakecupy  # noqa: E402
from tocha_cuda._namespace import kernel_namespace  # noqa: E402


@pytest.fixture
def fake(monkeypatch):
    """A fakecuda backend with two GPUs, registered for one test."""
    backend = fakecupy.FakeCudaBackend(fakecupy.make(count=2))
    _backend._discover()
    entry = _backend._Entry("fakecuda", "tocha-cuda", "tocha_cuda:register")
    entry.backend = backend
    monkeypatch.setitem(_backend._entries, "fakecuda", entry)
    return backend


def test_devices(fake):
    assert fake.device_count() == 2
    assert tocha.zeros(1, device="fakecuda").device == tocha.device("fakecuda", 0)
    fake.set_device(1)
    assert str(tocha.zeros(1, device="fakecuda").device) == "fakecuda:1"
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        tocha.zeros(1, device="fakecuda:2")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        fake.set_device(5)
    assert fake.device_properties(1) == {
        "name": "Fake GPU 1",
        "total_memory": 1 << 30,
        "major": 8,
        "minor": 0,
        "multi_processor_count": 4,
    }


def test_transfers_copy_both_ways(fake):
    x = tocha.arange(6.0).reshape(2, 3)
    y = x.to("fakecuda")
    assert y.device.type == "fakecuda" and y.tolist() == x.tolist()
    x[0, 0] = 10.0
    assert y[0, 0].item() == 0.0
    back = (y * 2).cpu()
    assert back.device.type == "cpu" and back.tolist() == [[0, 2, 4], [6, 8, 10]]
    assert x.to("fakecuda", non_blocking=True).tolist() == x.tolist()


def test_ops_run_through_the_kernel_namespace(fake):
    x = tocha.tensor([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0], device="fakecuda")
    values, indices = tocha.cummax(x, 0)
    assert values.tolist() == [3, 3, 4, 4, 5, 9, 9] and indices.tolist() == [0, 0, 2, 2, 4, 5, 5]
    np.testing.assert_allclose(
        tocha.logcumsumexp(x, 0).cpu().numpy(), np.logaddexp.accumulate(x.cpu().numpy()), rtol=1e-6
    )
    counts = tocha.zeros(3, dtype=tocha.int8, device="fakecuda")
    counts.index_put_(
        (tocha.tensor([0, 2, 2], device="fakecuda"),),
        tocha.ones(3, dtype=tocha.int8, device="fakecuda"),
        accumulate=True,
    )
    assert counts.tolist() == [1, 0, 2]


def test_pinned_memory(fake, monkeypatch):
    monkeypatch.setattr(tocha.cuda, "_usable", lambda: fake)
    monkeypatch.setattr(tocha.cuda, "_require", lambda: fake)
    x = tocha.arange(6.0).reshape(2, 3)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.tolist() == x.tolist() and p.dtype == x.dtype
    assert p.pin_memory() is p
    assert p[1].is_pinned() and not p.clone().is_pinned()
    empty = tocha.zeros(0).pin_memory()
    assert empty.is_pinned() and empty.shape == (0,)


def test_memory_stats_and_peaks(fake):
    dev0 = tocha.device("fakecuda", 0)
    pool = fake.pool
    first, second = fake.allocator(1000), fake.allocator(500)
    stats = fake.memory_stats(dev0)
    assert stats["allocated_bytes.all.current"] == 1500
    assert stats["allocated_bytes.all.peak"] == 1500
    pool.release(first)
    stats = fake.memory_stats(dev0)
    assert stats["allocated_bytes.all.current"] == 500
    assert stats["allocated_bytes.all.peak"] == 1500
    assert stats["reserved_bytes.all.current"] == 1500
    fake.reset_peak_memory_stats(dev0)
    assert fake.memory_stats(dev0)["allocated_bytes.all.peak"] == 500
    fake.empty_cache()
    assert fake.memory_stats(dev0)["reserved_bytes.all.current"] == 500
    assert fake.memory_stats(tocha.device("fakecuda", 1))["allocated_bytes.all.current"] == 0
    pool.release(second)


def test_out_of_memory_retries_once_after_emptying_the_cache(fake):
    pool = fake.pool
    pool.release(fake.allocator(600_000))  # cached, not used: the retry frees it
    before = pool.frees
    fake.allocator(600_000)
    assert pool.frees == before + 1
    assert fake.memory_stats(tocha.device("fakecuda", 0))["num_alloc_retries"] == 1
    with pytest.raises(
        tocha.cuda.OutOfMemoryError,
        match=r"Tried to allocate 1\.00 GiB\. GPU 0 "
        r"has a total capacity of 1\.00 GiB of which 1\.00 MiB is free",
    ):
        fake.allocator(1 << 30)
    assert issubclass(tocha.cuda.OutOfMemoryError, RuntimeError)
    assert fake.memory_stats(tocha.device("fakecuda", 0))["num_ooms"] == 1


def test_generators_round_trip_their_state(fake):
    g = tocha.Generator("fakecuda").manual_seed(123)
    first = tocha.randn(5, generator=g, device="fakecuda")
    state = g.get_state()
    assert state.dtype == tocha.uint8 and state.numel() == 8 + 16
    a = tocha.rand(4, generator=g, device="fakecuda")
    b = tocha.randint(0, 10, (4,), generator=g, device="fakecuda")
    g.set_state(state)
    assert tocha.rand(4, generator=g, device="fakecuda").tolist() == a.tolist()
    assert tocha.randint(0, 10, (4,), generator=g, device="fakecuda").tolist() == b.tolist()
    g.manual_seed(123)
    assert tocha.randn(5, generator=g, device="fakecuda").tolist() == first.tolist()
    perm = tocha.randperm(10, generator=g, device="fakecuda")
    assert sorted(perm.tolist()) == list(range(10))
    with pytest.raises(RuntimeError):
        g.set_state(tocha.zeros(9, dtype=tocha.uint8))


def test_streams_and_events(fake, monkeypatch):
    monkeypatch.setattr(tocha.cuda, "_require", lambda: fake)
    monkeypatch.setattr(tocha.cuda, "_resolve", lambda backend, d: d or tocha.device("fakecuda", 0))
    s = tocha.cuda.Stream()
    start, end = tocha.cuda.Event(enable_timing=True), tocha.cuda.Event(enable_timing=True)
    with tocha.cuda.stream(s) as current:
        assert current is s
        start.record(s)
        end.record()
    assert start._native.recorded_on is s._native
    end.synchronize()
    assert start.elapsed_time(end) == 1.5 and s.query() and end.query()
    s.wait_stream(tocha.cuda.current_stream())
    assert len(s._native.waited) == 1


@pytest.mark.parametrize("name", ["maximum", "minimum", "logaddexp"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_namespace_scans_match_numpy(name, axis):
    xp = kernel_namespace(np)
    x = np.random.default_rng(0).standard_normal((5, 9, 3))
    x[2, 3, 1] = np.nan
    with np.errstate(all="ignore"):  # nan in, nan out, silently as in a kernel
        got = getattr(xp, name).accumulate(x, axis=axis)
        expected = getattr(np, name).accumulate(x, axis=axis)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert xp.maximum(2, 3) == 3


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int64", "float16", "float32"])
def test_namespace_add_at_matches_numpy(dtype):
    xp = kernel_namespace(np)
    base = (np.arange(6) % 2).astype(dtype)
    index = np.array([0, 1, 1, 5, 5, 5])
    values = np.ones(6, dtype)
    want = base.copy()
    np.add.at(want, index, values)
    got = base.copy()
    xp.add.at(got, index, values)
    np.testing.assert_array_equal(got, want)


def test_namespace_lexsort_of_a_tuple_matches_numpy():
    xp = kernel_namespace(np)
    rng = np.random.default_rng(1)
    keys = (rng.integers(0, 3, 50), rng.random(50).round(1), rng.integers(0, 2, 50) > 0)
    np.testing.assert_array_equal(xp.lexsort(keys), np.lexsort(keys))
    np.testing.assert_array_equal(xp.lexsort(np.stack(keys[:2])), np.lexsort(np.stack(keys[:2])))
