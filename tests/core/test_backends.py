"""Backends as plugins: the testdev plugin (tests/plugins) runs tensors on a device of its own,
broken plugins never break `import tocha`, discovery is lazy, and `tocha.cuda` forwards to the
cuda backend.

The tests that need the plugins installed skip without them: ``nox -s tests`` installs them,
or ``pip install tests/plugins/*``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

import tocha
from tests.installed import installed
from tocha import _backend
from tocha.backends import PLUGIN_API_VERSION, Backend


def _needs(name: str):
    return pytest.mark.skipif(
        not installed(name),
        reason=f"the test plugin {name} is not installed (pip install tests/plugins/{name})",
    )


needs_testdev = _needs("tocha-testdev")
needs_broken_plugins = pytest.mark.skipif(
    not (installed("tocha-badversion") and installed("tocha-broken")),
    reason="the test plugins tocha-badversion and tocha-broken are not installed "
    "(pip install tests/plugins/*)",
)


def run_python(code: str) -> str:
    """Run `code` in a fresh interpreter; its stdout, or a failure showing its stderr."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# -- the public module ----------------------------------------------------------------------
def test_backends_module_reexports_the_protocol():
    assert {"Backend", "PLUGIN_API_VERSION", "status"} <= set(tocha.backends.__all__)
    assert tocha.backends.Backend is _backend.Backend
    assert tocha.backends.status is _backend.status
    assert isinstance(PLUGIN_API_VERSION, int)


def test_status_reports_the_cpu_backend():
    assert tocha.backends.status()["cpu"] == {
        "distribution": "tocha-core",
        "loaded": True,
        "error": None,
    }


def test_unknown_device_type_raises():
    with pytest.raises(RuntimeError, match="no backend is installed for device type 'nosuchdev'"):
        tocha.zeros(2, device="nosuchdev")


# -- a third-party backend: testdev ---------------------------------------------------------
@needs_testdev
def test_create_on_testdev():
    z = tocha.zeros(3, device="testdev")
    assert z.device == tocha.device("testdev")
    assert z.device.type == "testdev" and str(z.device) == "testdev"
    assert z.shape == (3,) and z.dtype == tocha.float32
    np.testing.assert_array_equal(z.cpu().numpy(), np.zeros(3, np.float32))

    t = tocha.tensor([1, 2], device="testdev")
    assert t.device.type == "testdev" and t.dtype == tocha.int64
    assert t.tolist() == [1, 2]
    assert tocha.ones(2, 2, device=tocha.device("testdev")).device.type == "testdev"
    assert tocha.zeros_like(t).device.type == "testdev"


@needs_testdev
def test_to_and_from_cpu_copies():
    x = tocha.tensor([1.0, 2.0, 3.0])
    y = x.to("testdev")
    assert y.device.type == "testdev" and x.device.type == "cpu"
    assert y.to("testdev") is y
    back = y.to("cpu")
    assert back.device.type == "cpu"
    np.testing.assert_array_equal(back.numpy(), [1.0, 2.0, 3.0])
    back.numpy()[0] = 10.0
    assert y.tolist() == [1.0, 2.0, 3.0]
    d = x.to("testdev", tocha.float64)
    assert d.device.type == "testdev" and d.dtype == tocha.float64
    assert x.to(y).device.type == "testdev"


@needs_testdev
def test_numpy_of_a_testdev_tensor_raises():
    with pytest.raises(TypeError, match="can't convert testdev device type tensor to numpy"):
        tocha.zeros(2, device="testdev").numpy()


@needs_testdev
def test_arithmetic_stays_on_testdev():
    a = tocha.tensor([1.0, 2.0, 3.0], device="testdev")
    b = tocha.tensor([4.0, 5.0, 6.0], device="testdev")
    results = {"a + b": a + b, "a * 2": a * 2, "-a": -a, "exp": tocha.exp(a), "a < b": a < b}
    for name, r in results.items():
        assert r.device.type == "testdev", name
    np.testing.assert_allclose((a + b).cpu().numpy(), [5.0, 7.0, 9.0])
    np.testing.assert_allclose(tocha.exp(a).cpu().numpy(), np.exp([1.0, 2.0, 3.0]), rtol=1e-6)
    assert (a < b).tolist() == [True, True, True]


@needs_testdev
def test_zero_dim_cpu_tensor_joins_as_a_scalar():
    a = tocha.tensor([1.0, 2.0], device="testdev")
    r = a + tocha.tensor(2.0)
    assert r.device.type == "testdev" and r.tolist() == [3.0, 4.0]


@needs_testdev
def test_mixing_devices_raises():
    a = tocha.zeros(3, device="testdev")
    b = tocha.zeros(3)
    message = "Expected all tensors to be on the same device, but found at least two devices, "
    with pytest.raises(RuntimeError, match=re.escape(message + "testdev and cpu!")):
        a + b
    with pytest.raises(RuntimeError, match=re.escape(message + "cpu and testdev!")):
        b * a


@needs_testdev
@pytest.mark.parametrize("op", ["sin", "matmul"])
def test_unsupported_op_raises_not_implemented(op):
    if not hasattr(tocha, op):
        pytest.skip(f"tocha.{op} is not declared yet")
    a = tocha.ones(2, 2, device="testdev")
    args = (a,) if op == "sin" else (a, a)
    with pytest.raises(NotImplementedError, match=rf"'{op}'.*'testdev'"):
        getattr(tocha, op)(*args)
    assert getattr(tocha, op)(*(x.cpu() for x in args)).device.type == "cpu"


@needs_testdev
def test_status_reports_testdev():
    assert tocha.backends.status()["testdev"] == {
        "distribution": "tocha-testdev",
        "loaded": True,
        "error": None,
    }


# -- plugins that fail ----------------------------------------------------------------------
@needs_broken_plugins
@pytest.mark.parametrize(
    ("device", "dist", "reason"),
    [
        ("badver", "tocha-badversion", "plugin API version 999"),
        ("brokendev", "tocha-broken", "ImportError: libbrokendev.so.1"),
    ],
)
def test_asking_for_a_failed_plugin_raises_its_error(device, dist, reason):
    with pytest.raises(RuntimeError, match=rf"'{device}' \(distribution {dist}\).*{reason}"):
        tocha.zeros(1, device=device)
    with pytest.raises(RuntimeError, match=dist):
        tocha.tensor([1.0]).to(device)


@needs_broken_plugins
def test_failed_plugins_leave_tocha_working():
    out = run_python(
        "import json, tocha\n"
        "errors = {}\n"
        "for dev in ('badver', 'brokendev'):\n"
        "    try:\n"
        "        tocha.zeros(1, device=dev)\n"
        "    except RuntimeError as exc:\n"
        "        errors[dev] = str(exc)\n"
        "assert (tocha.ones(2) + 1).tolist() == [2.0, 2.0]\n"
        "print(json.dumps({'errors': errors, 'status': tocha.backends.status()}))\n"
    )
    report = json.loads(out)
    assert "tocha-badversion" in report["errors"]["badver"]
    assert "tocha-broken" in report["errors"]["brokendev"]
    status = report["status"]
    assert status["badver"]["loaded"] is False
    assert "999" in status["badver"]["error"]
    assert status["brokendev"]["distribution"] == "tocha-broken"
    assert status["brokendev"]["error"].startswith("ImportError: libbrokendev.so.1")
    assert status["cpu"]["loaded"] is True


@needs_testdev
@needs_broken_plugins
def test_status_reports_every_plugin():
    status = tocha.backends.status()
    assert {"cpu", "testdev", "badver", "brokendev"} <= set(status)
    assert [status[d]["loaded"] for d in ("cpu", "testdev", "badver", "brokendev")] == [
        True,
        True,
        False,
        False,
    ]


# -- lazy discovery -------------------------------------------------------------------------
def test_import_tocha_reads_no_entry_points():
    out = run_python(
        "import importlib.metadata\n"
        "def refuse(*args, **kwargs):\n"
        "    raise AssertionError('entry points read')\n"
        "read = importlib.metadata.entry_points\n"
        "importlib.metadata.entry_points = refuse\n"
        "import tocha\n"
        "importlib.metadata.entry_points = read\n"  # the first op asks for kernel providers
        "x = tocha.ones(3, device='cpu') * 2\n"
        "print(tocha._backend._discovered, x.tolist())\n"
    )
    assert out.split() == ["False", "[2.0,", "2.0,", "2.0]"]


@needs_testdev
def test_entry_points_are_read_on_first_other_device():
    out = run_python(
        "import tocha\n"
        "before = tocha._backend._discovered\n"
        "tocha.zeros(1, device='testdev')\n"
        "print(before, tocha._backend._discovered)\n"
    )
    assert out.split() == ["False", "True"]


# -- the tocha.cuda facade ------------------------------------------------------------------
class FakeCuda(Backend):
    """A cuda backend with two GPUs that records what the facade asks of it."""

    device_type = "cuda"
    xp = np

    def __init__(self, count=2):
        self.count = count
        self.calls = []

    def device_count(self):
        return self.count

    def normalize(self, dev):
        return dev if dev.index is not None else tocha.device("cuda", self.current_device())

    def current_device(self):
        return 1

    def synchronize(self, dev=None):
        self.calls.append(("synchronize", str(dev)))

    def memory_stats(self, dev=None):
        self.calls.append(("memory_stats", str(dev)))
        return {
            "reserved_bytes.all.current": 2048,
            "allocated_bytes.all.peak": 1536,
            "allocated_bytes.all.current": 1024,
        }

    def manual_seed(self, seed):
        self.calls.append(("manual_seed", seed))

    def empty_cache(self):
        self.calls.append(("empty_cache",))


def _install_cuda(monkeypatch, backend=None, error=None):
    """Put a cuda entry in the backend registry for one test."""
    _backend._discover()
    entry = _backend._Entry("cuda", "tocha-cuda", "tocha_cuda:register")
    entry.backend = backend
    entry.error = None if error is None else (error, "")
    monkeypatch.setitem(_backend._entries, "cuda", entry)


def test_cuda_facade_without_tocha_cuda(monkeypatch):
    _backend._discover()
    monkeypatch.delitem(_backend._entries, "cuda", raising=False)
    assert tocha.cuda.is_available() is False
    assert tocha.cuda.device_count() == 0
    assert tocha.cuda.memory_allocated() == 0
    assert tocha.cuda.max_memory_allocated() == 0
    assert tocha.cuda.memory_reserved() == 0
    assert tocha.cuda.memory_stats() == {}
    assert tocha.cuda.manual_seed(0) is None
    assert tocha.cuda.manual_seed_all(0) is None
    assert tocha.cuda.empty_cache() is None
    for fn in (tocha.cuda.synchronize, tocha.cuda.current_device):
        with pytest.raises(RuntimeError, match="pip install tocha-cuda"):
            fn()


def test_cuda_facade_with_a_broken_tocha_cuda(monkeypatch):
    _install_cuda(monkeypatch, error=ImportError("libcudart.so.12: cannot open shared object"))
    assert tocha.cuda.is_available() is False
    assert tocha.cuda.device_count() == 0
    with pytest.raises(RuntimeError, match=r"distribution tocha-cuda.*libcudart"):
        tocha.cuda.synchronize()


def test_cuda_facade_without_a_gpu(monkeypatch):
    _install_cuda(monkeypatch, backend=FakeCuda(count=0))
    assert tocha.cuda.is_available() is False
    assert tocha.cuda.memory_allocated() == 0
    with pytest.raises(RuntimeError, match="No CUDA GPUs are available"):
        tocha.cuda.current_device()


def test_cuda_facade_forwards_to_the_backend(monkeypatch):
    fake = FakeCuda()
    _install_cuda(monkeypatch, backend=fake)
    assert tocha.cuda.is_available() is True
    assert tocha.cuda.device_count() == 2
    assert tocha.cuda.current_device() == 1
    tocha.cuda.synchronize()
    tocha.cuda.synchronize(0)
    tocha.cuda.synchronize("cuda:1")
    tocha.cuda.synchronize(tocha.device("cuda"))
    assert fake.calls == [("synchronize", d) for d in ("cuda:1", "cuda:0", "cuda:1", "cuda:1")]
    fake.calls.clear()
    assert tocha.cuda.memory_allocated(0) == 1024
    assert tocha.cuda.max_memory_allocated() == 1536
    assert tocha.cuda.memory_reserved() == 2048
    assert list(tocha.cuda.memory_stats()) == sorted(fake.memory_stats())
    assert fake.calls[0] == ("memory_stats", "cuda:0")
    fake.calls.clear()
    tocha.cuda.manual_seed(7)
    tocha.cuda.manual_seed_all(8)
    tocha.cuda.empty_cache()
    assert fake.calls == [("manual_seed", 7), ("manual_seed", 8), ("empty_cache",)]
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        tocha.cuda.synchronize("cpu")
