"""tocha-cuda as a plugin where there is no GPU: its entry point is cheap, and without CuPy,
a driver or a device tocha still imports, `tocha.cuda.is_available()` is False and asking for
a cuda tensor raises a RuntimeError naming tocha-cuda and the reason."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

import pytest

import tocha
from tocha import _backend

pytest.importorskip(
    "tocha_cuda", reason="tocha-cuda is not installed (pip install --no-deps -e packages/cuda)"
)

from tests.cuda import fakecupy  # noqa: E402
from tocha_cuda._backend import CudaBackend, count_devices  # noqa: E402


def run_python(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_entry_point_is_declared():
    (ep,) = [ep for ep in entry_points(group="tocha.backends") if ep.name == "cuda"]
    assert ep.value == "tocha_cuda:register"
    assert ep.dist.name == "tocha-cuda"


def test_importing_the_plugin_imports_neither_cupy_nor_tocha():
    out = run_python(
        "import sys, tocha_cuda\n"
        "print('cupy' in sys.modules, 'tocha' in sys.modules, "
        "callable(tocha_cuda.register))"
    )
    assert out.split() == ["False", "False", "True"]


# Simulations: `cupy` made unimportable, or a runtime that fails, in a fresh interpreter.
NO_CUPY = "import sys\nsys.modules['cupy'] = None\n"


def _fake_cupy_module(error: str) -> str:
    return (
        "import sys, types\n"
        "class CUDARuntimeError(RuntimeError): pass\n"
        "def count(): raise CUDARuntimeError(" + repr(error) + ")\n"
        "cp = types.ModuleType('cupy')\n"
        "cp.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=count))\n"
        "sys.modules['cupy'] = cp\n"
        "sys.modules['cupy.lib'] = types.ModuleType('cupy.lib')\n"
        "sys.modules['cupy.lib.stride_tricks'] = types.ModuleType('cupy.lib.stride_tricks')\n"
    )


@pytest.mark.parametrize(
    ("prelude", "reason"),
    [
        (NO_CUPY, "CuPy is not installed"),
        (
            _fake_cupy_module("cudaErrorInsufficientDriver: CUDA driver version is insufficient"),
            "no usable NVIDIA driver",
        ),
        (
            _fake_cupy_module("cudaErrorNoDevice: no CUDA-capable device is detected"),
            "no CUDA GPU is visible",
        ),
    ],
    ids=["no-cupy", "no-driver", "no-device"],
)
def test_without_a_usable_gpu_asking_for_cuda_says_why(prelude, reason):
    out = run_python(
        prelude + "import tocha\n"
        "print(tocha.cuda.is_available(), tocha.cuda.device_count())\n"
        "for ask in (lambda: tocha.zeros(2, device='cuda'), lambda: tocha.ones(2).cuda(),\n"
        "            tocha.cuda.current_device):\n"
        "    try:\n"
        "        ask()\n"
        "    except RuntimeError as exc:\n"
        "        print('ERROR', exc)\n"
        "print((tocha.ones(2) + 1).tolist(), tocha.backends.status()['cuda']['loaded'])\n"
    )
    lines = out.splitlines()
    assert lines[0] == "False 0"
    errors = [line for line in lines if line.startswith("ERROR")]
    assert len(errors) == 3
    for line in errors:
        assert "tocha-cuda" in line and reason in line, line
    assert lines[-1] == "[2.0, 2.0] False"


def test_count_devices_explains_runtime_errors():
    for text, why in [
        ("cudaErrorNoDevice: no CUDA-capable device", "no CUDA GPU is visible"),
        ("cudaErrorInsufficientDriver: driver too old", "no usable NVIDIA driver"),
        ("cudaErrorUnknown: unknown error", "CUDA cannot be initialised"),
    ]:
        cp = fakecupy.make(error=RuntimeError(text))
        with pytest.raises(RuntimeError, match=why):
            count_devices(cp)
    with pytest.raises(RuntimeError, match="No CUDA GPUs are available"):
        CudaBackend(fakecupy.make(count=0))


def test_mixing_cuda_and_cpu_tensors_names_both(monkeypatch):
    # The message the dispatcher gives, on a stand-in registered as device type "cuda".
    class StandIn(fakecupy.FakeCudaBackend):
        device_type = "cuda"

    _backend._discover()
    entry = _backend._Entry("cuda", "tocha-cuda", "tocha_cuda:register")
    entry.backend = StandIn(fakecupy.make())
    monkeypatch.setitem(_backend._entries, "cuda", entry)
    a = tocha.zeros(3, device="cuda")
    assert str(a.device) == "cuda:0"
    with pytest.raises(
        RuntimeError,
        match=r"Expected all tensors to be on the same device, but "
        r"found at least two devices, cuda:0 and cpu!",
    ):
        a + tocha.zeros(3)
