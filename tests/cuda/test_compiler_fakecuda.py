"""tocha.compile on a device other than the CPU, without a GPU: the cuda backend over a fake
CuPy made of NumPy (tests/cuda/fakecupy.py, device type ``fakecuda``). Kernels, the random
stream, write-backs into buffers and gradients all go through that device's backend."""

from __future__ import annotations

import copy

import pytest

import tocha
from tests.compiler.models import CASES
from tocha import _backend

pytest.importorskip("tocha_cuda", reason="tocha-cuda is not installed")
pytest.importorskip("tocha.compiler", reason="tocha-compiler is not installed")

from tests.cuda import fakecupy  # noqa: E402


@pytest.fixture
def fake(monkeypatch):
    backend = fakecupy.FakeCudaBackend(fakecupy.make(count=1))
    _backend._discover()
    entry = _backend._Entry("fakecuda", "tocha-cuda", "tocha_cuda:register")
    entry.backend = backend
    monkeypatch.setitem(_backend._entries, "fakecuda", entry)
    return backend


def _batchnorm():
    nn = tocha.nn
    return nn.Sequential(nn.Linear(8, 6), nn.BatchNorm1d(6), nn.Tanh(), nn.Linear(6, 2))


# The fake's CuPy has no RawModule, so models using tocha-cuda's own CUDA kernels (softmax,
# layer norm, dropout) run only on a real GPU (test_compiler_on_gpu.py).
MODELS = {
    "mlp": CASES["mlp"],
    "batchnorm": (_batchnorm, lambda: (tocha.randn(5, 8),), lambda out: out.square().mean()),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_training_on_another_device_matches_eager(fake, name):
    make_model, make_inputs, loss_of = MODELS[name]
    tocha.manual_seed(0)
    model = make_model().to("fakecuda")
    reference = copy.deepcopy(model)
    compiled = tocha.compile(model)
    for step in range(3):
        tocha.manual_seed(100 + step)
        inputs = [t.to("fakecuda") for t in make_inputs()]
        tocha.manual_seed(step)
        out = compiled(*inputs)
        tocha.manual_seed(step)
        want = reference(*inputs)
        assert out.device.type == "fakecuda"
        tocha.testing.assert_close(out, want)
        loss_of(out).backward()
        loss_of(want).backward()
        for p, q in zip(model.parameters(), reference.parameters()):
            tocha.testing.assert_close(p.grad, q.grad)
    for a, b in zip(model.buffers(), reference.buffers()):
        tocha.testing.assert_close(a, b)
