"""tocha.compile on a real GPU (marked ``cuda``; skipped without tocha-cuda, CuPy and a GPU):
models compiled on cuda train as they do eagerly on cuda, with fused kernels generated as
CUDA C."""

from __future__ import annotations

import copy

import pytest

import tocha
from tests.compiler.models import CASES

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(
        not tocha.cuda.is_available(), reason="no CUDA GPU (tocha-cuda, CuPy and a GPU are needed)"
    ),
]


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
@pytest.mark.parametrize("name", list(CASES))
def test_training_on_cuda_matches_eager(name, backend):
    pytest.importorskip("tocha.compiler")
    make_model, make_inputs, loss_of = CASES[name]
    tocha.manual_seed(0)
    model = make_model().to("cuda")
    reference = copy.deepcopy(model)
    compiled = tocha.compile(model, backend=backend)
    opt = tocha.optim.AdamW(model.parameters(), lr=1e-2)
    opt_ref = tocha.optim.AdamW(reference.parameters(), lr=1e-2)
    for step in range(5):
        tocha.manual_seed(100 + step)
        inputs = [t.to("cuda") for t in make_inputs()]
        tocha.manual_seed(7 + step)
        out = compiled(*inputs)
        tocha.manual_seed(7 + step)
        want = reference(*inputs)
        assert out.device.type == "cuda"
        tocha.testing.assert_close(out, want, rtol=1e-4, atol=1e-4)
        loss_of(out).backward()
        loss_of(want).backward()
        for p, q in zip(model.parameters(), reference.parameters()):
            tocha.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-4)
        opt.step()
        opt_ref.step()
        opt.zero_grad()
        opt_ref.zero_grad()


def test_an_elementwise_chain_is_one_generated_kernel_on_cuda():
    pytest.importorskip("tocha.compiler")
    fn = tocha.compile(lambda x, w, b: ((x * w + b).tanh() * 0.5 + x).relu())
    x, w, b = (tocha.randn(1000, device="cuda") for _ in range(3))
    for _ in range(2):
        tocha.testing.assert_close(fn(x, w, b), ((x * w + b).tanh() * 0.5 + x).relu())
