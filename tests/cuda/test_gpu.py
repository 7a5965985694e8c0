"""The cuda backend on a real GPU (marked ``cuda``; skipped without tocha-cuda, CuPy and a
GPU): every op-table sample on cuda against the CPU, nn layers, an optimizer step, float16
matmul, memory statistics, out of memory, pinned memory, random states, streams."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.core.opdb import OPS, to_lib

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(
        not tocha.cuda.is_available(), reason="no CUDA GPU (tocha-cuda, CuPy and a GPU are needed)"
    ),
]
# CuPy has bfloat16 only from version 14, and partly: bfloat16 samples stay on the CPU.
DTYPES = [(info, d) for info in OPS for d in info.dtypes if d != "bfloat16"]


def _run(info, sample, dtype, device):
    args = [to_lib(tocha, a, dtype) for a in sample.args]
    kwargs = {k: to_lib(tocha, v, dtype) for k, v in sample.kwargs.items()}
    if device != "cpu":
        args = [a.to(device) if isinstance(a, tocha.Tensor) else a for a in args]
        kwargs = {k: v.to(device) if isinstance(v, tocha.Tensor) else v for k, v in kwargs.items()}
    try:
        return info(tocha, *args, **kwargs), None
    except Exception as exc:  # the CPU decides whether raising is right
        return None, exc


@pytest.mark.parametrize("info, dtype", [pytest.param(i, d, id=f"{i.id}-{d}") for i, d in DTYPES])
def test_op_table_on_cuda_matches_cpu(info, dtype):
    for sample in info.sample_inputs(dtype):
        want, want_exc = _run(info, sample, dtype, "cpu")
        got, got_exc = _run(info, sample, dtype, "cuda")
        if want_exc is not None:
            assert got_exc is not None, f"{sample}: the CPU raised {want_exc!r}, cuda did not"
            continue
        assert got_exc is None, f"{sample}: cuda raised {got_exc!r}"
        for g, w in zip(*(r if isinstance(r, tuple) else (r,) for r in (got, want))):
            assert g.device.type == "cuda" and g.dtype == w.dtype, sample
            tol = 1e-2 if dtype == "float16" else 1e-5
            np.testing.assert_allclose(
                g.cpu().numpy(), w.numpy(), rtol=tol, atol=tol, err_msg=str(sample)
            )


# Whole-tensor and per-dim reductions, scans and sorts, which the op table samples only in part.
REDUCTIONS = {
    "max()": lambda t: t.max(),
    "min()": lambda t: t.min(),
    "amax(1)": lambda t: t.amax(1),
    "max(1)": lambda t: t.max(1).values,
    "aminmax": lambda t: tocha.aminmax(t)[0],
    "cummax": lambda t: t.cummax(1).values,
    "cummin": lambda t: t.cummin(0).values,
    "prod()": lambda t: t.prod(),
    "logsumexp": lambda t: t.logsumexp(1),
    "std()": lambda t: t.std(),
    "median()": lambda t: t.median(),
    "argmax()": lambda t: t.argmax(),
    "norm()": lambda t: t.norm(),
    "all()": lambda t: (t > 0).all(),
    "nanmean()": lambda t: t.nanmean(),
    "sort": lambda t: t.sort(1).values,
    "topk": lambda t: t.topk(2).values,
    "topk(smallest, dim 0)": lambda t: t.topk(2, 0, largest=False).indices,
    "kthvalue": lambda t: t.kthvalue(2).values,
    "unique": lambda t: t.round().unique(),
    "count_nonzero": lambda t: t.round().count_nonzero(),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reductions_and_sorts_on_cuda_match_cpu(name):
    x = tocha.randn(4, 5)
    got, want = REDUCTIONS[name](x.to("cuda")), REDUCTIONS[name](x)
    assert got.device.type == "cuda" and got.dtype == want.dtype
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_nn_layers_and_an_optimizer_step_match_cpu(optimizer):
    pytest.importorskip(
        "tocha.nn", reason="tocha-nn is not installed (tocha-cuda does not need it)"
    )
    pytest.importorskip(
        "tocha.optim", reason="tocha-optim is not installed (tocha-cuda does not need it)"
    )
    tocha.manual_seed(0)
    model = tocha.nn.Sequential(
        tocha.nn.Conv2d(3, 4, 3, padding=1),
        tocha.nn.BatchNorm2d(4),
        tocha.nn.ReLU(),
        tocha.nn.MaxPool2d(2),
        tocha.nn.Flatten(),
        tocha.nn.Linear(4 * 4 * 4, 5),
        tocha.nn.LayerNorm(5),
        tocha.nn.Dropout(0.0),
    )
    x, y = tocha.randn(2, 3, 8, 8), tocha.tensor([1, 3])
    results = {}
    for device in ("cpu", "cuda"):
        m = __import__("copy").deepcopy(model).to(device)
        opt = getattr(tocha.optim, optimizer)(m.parameters(), lr=1e-2)
        loss = tocha.nn.functional.cross_entropy(m(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
        results[device] = [p.detach().cpu().numpy() for p in m.parameters()]
        if optimizer == "Adam":  # a gradient within rounding of 0 has no sign to follow
            results[device] = [
                p for p, g in zip(results[device], m.parameters()) if g.grad.abs().max() > 1e-5
            ]
    for a, b in zip(results["cpu"], results["cuda"]):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_float16_matmul_and_autocast():
    a = tocha.randn(256, 256, device="cuda").half()
    b = tocha.randn(256, 256, device="cuda").half()
    c = a @ b
    assert c.dtype == tocha.float16 and c.device.type == "cuda"
    np.testing.assert_allclose(
        c.float().cpu().numpy(), (a.float() @ b.float()).cpu().numpy(), rtol=2e-2, atol=2e-1
    )
    with tocha.autocast("cuda"):
        x = tocha.randn(8, 16, device="cuda")
        assert (x @ x.T).dtype == tocha.float16
        assert (x @ x.T).softmax(-1).dtype == tocha.float32


def test_memory_statistics_and_out_of_memory():
    tocha.cuda.empty_cache()
    tocha.cuda.reset_peak_memory_stats()
    before = tocha.cuda.memory_allocated()
    x = tocha.empty(1 << 20, device="cuda")  # 4 MiB
    assert tocha.cuda.memory_allocated() >= before + (4 << 20)
    assert tocha.cuda.max_memory_allocated() >= tocha.cuda.memory_allocated()
    assert tocha.cuda.memory_reserved() >= tocha.cuda.memory_allocated()
    del x
    free, total = tocha.cuda.mem_get_info()
    assert 0 < free <= total
    assert "allocated_bytes.all.current" in tocha.cuda.memory_summary()
    with pytest.raises(tocha.cuda.OutOfMemoryError, match="Tried to allocate"):
        tocha.empty(total, device="cuda")
    assert tocha.cuda.memory_stats()["num_ooms"] >= 1


def test_devices_properties_streams_events_pinned_and_random():
    assert tocha.cuda.device_count() >= 1 and tocha.cuda.current_device() == 0
    assert tocha.zeros(1, device="cuda").device == tocha.device("cuda", 0)
    assert isinstance(tocha.cuda.get_device_name(), str)
    assert tocha.cuda.get_device_capability() >= (5, 0)
    assert tocha.cuda.is_bf16_supported() is (tocha.cuda.get_device_capability() >= (8, 0))
    if tocha.cuda.is_bf16_supported():
        b = tocha.ones(4, 4, device="cuda", dtype=tocha.bfloat16)
        assert (b @ b).float().cpu().tolist() == [[4.0] * 4] * 4
    with tocha.cuda.device(0):
        assert tocha.cuda.current_device() == 0
    s = tocha.cuda.Stream()
    start, end = tocha.cuda.Event(enable_timing=True), tocha.cuda.Event(enable_timing=True)
    with tocha.cuda.stream(s):
        start.record()
        y = tocha.randn(512, 512, device="cuda") @ tocha.randn(512, 512, device="cuda")
        end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0 and y.shape == (512, 512)
    tocha.cuda.synchronize()
    pinned = tocha.arange(10.0).pin_memory()
    assert pinned.is_pinned() and pinned.to("cuda", non_blocking=True).cpu().tolist() == list(
        map(float, range(10))
    )
    tocha.cuda.manual_seed(7)
    a = tocha.rand(5, device="cuda")
    tocha.cuda.manual_seed(7)
    assert tocha.rand(5, device="cuda").tolist() == a.tolist()
    g = tocha.Generator("cuda").manual_seed(3)
    state = g.get_state()
    first = tocha.randn(4, generator=g, device="cuda").tolist()
    g.set_state(state)
    assert tocha.randn(4, generator=g, device="cuda").tolist() == first
