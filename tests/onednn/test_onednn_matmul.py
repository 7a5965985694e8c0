"""tocha-onednn's batched matmul (oneDNN's matmul primitive on strided operands) against
tocha's built-in kernel: attention's shapes and transposed views, broadcast batch dims,
expanded operands; the calls it declines; gradients through the provider (the backward
runs the same op on transposed views)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tocha_onednn")
import tocha  # noqa: E402
from tests.onednn.spies import provided  # noqa: E402
from tocha_onednn import _matmul  # noqa: E402

RNG = np.random.default_rng(5)


def f32(*shape):
    return RNG.standard_normal(shape, dtype=np.float32)


@pytest.fixture(autouse=True)
def one_thread():
    """tocha-onednn's matmul serves one thread (from two it declines)."""
    before = tocha.get_num_threads()
    tocha.set_num_threads(1)
    yield
    tocha.set_num_threads(before)


def served_here() -> bool:
    """Whether tocha-onednn serves matmul in this run (not switched off by the environment)."""
    return tocha.backends.provided_kernels().get("matmul") == "onednn"


def pair():
    return provided(_matmul, "matmul", "matmul")


def heads(b, t, h, d):
    """(b, h, t, d) as attention makes it: a transposed view of (b, t, h, d)."""
    return f32(b, t, h, d).transpose(0, 2, 1, 3)


SERVED = {
    "q@kT": lambda: (heads(2, 128, 3, 64), heads(2, 128, 3, 64).swapaxes(-1, -2)),
    "att@v": lambda: (f32(2, 3, 128, 128), heads(2, 128, 3, 64)),
    "grad-att": lambda: (heads(2, 128, 3, 64), heads(2, 128, 3, 64).swapaxes(-1, -2)),
    "grad-v": lambda: (f32(2, 3, 128, 128).swapaxes(-1, -2), heads(2, 128, 3, 64)),
    "3d": lambda: (f32(5, 130, 70), f32(5, 70, 129)),
    "3d@2d": lambda: (f32(3, 128, 64), f32(64, 128)),
    "2d@3d": lambda: (f32(128, 64), f32(3, 64, 128)),
    "broadcast-batch": lambda: (f32(2, 1, 128, 64), f32(3, 64, 128)),
    "broadcast-both": lambda: (f32(2, 1, 128, 64), f32(1, 3, 64, 128)),
    "expanded-left": lambda: (np.broadcast_to(f32(1, 128, 64), (4, 128, 64)), f32(4, 64, 128)),
    "sliced-batch": lambda: (f32(6, 128, 64)[::2], f32(3, 64, 128)),
    "column-slice": lambda: (f32(2, 128, 80)[..., 8:72], f32(2, 64, 128)),
    "5d": lambda: (f32(2, 1, 2, 128, 64), f32(2, 1, 64, 128)),
}


@pytest.mark.parametrize("case", list(SERVED), ids=list(SERVED))
def test_matmul_matches_built_in(case):
    a, b = SERVED[case]()
    kernel, generic, spy = pair()
    got, want = kernel(a, b), generic(a, b)
    assert spy.calls == 0
    assert got.shape == want.shape and got.dtype == np.float32 and got.flags.c_contiguous
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


DECLINED = {
    "float64": lambda: (f32(2, 128, 64).astype(np.float64), f32(2, 64, 128).astype(np.float64)),
    "mixed": lambda: (f32(2, 128, 64), f32(2, 64, 128).astype(np.float64)),
    "2d@2d": lambda: (f32(128, 64), f32(64, 128)),
    "1d@3d": lambda: (f32(64), f32(2, 64, 128)),
    "3d@1d": lambda: (f32(2, 128, 64), f32(64)),
    "small": lambda: (f32(4, 8, 8), f32(4, 8, 8)),
    "gpt-d128-heads": lambda: (heads(2, 64, 4, 32), heads(2, 64, 4, 32).swapaxes(-1, -2)),
    "empty": lambda: (f32(0, 128, 64), f32(0, 64, 128)),
    "empty-inner": lambda: (f32(2, 128, 0), f32(2, 0, 128)),
    "reversed": lambda: (f32(2, 128, 64)[:, ::-1], f32(2, 64, 128)),
    "inner-stride-2": lambda: (f32(2, 128, 128)[..., ::2], f32(2, 64, 128)),
    "expanded-both": lambda: (
        np.broadcast_to(f32(1, 128, 64), (3, 128, 64)),
        np.broadcast_to(f32(1, 64, 128), (3, 64, 128)),
    ),
    "expanded-matrix": lambda: (np.broadcast_to(f32(2, 1, 64), (2, 128, 64)), f32(2, 64, 128)),
}


@pytest.mark.parametrize("case", list(DECLINED), ids=list(DECLINED))
def test_declined_calls_reach_the_built_in_kernel(case):
    a, b = DECLINED[case]()
    kernel, generic, spy = pair()
    got = kernel(a, b)
    assert spy.calls == 1
    np.testing.assert_array_equal(got, generic(a, b))


@pytest.mark.parametrize(
    "shapes",
    [((2, 128, 64), (2, 65, 128)), ((2, 128, 64), (3, 64, 128)), ((4, 2, 128, 64), (3, 64, 128))],
    ids=["inner", "batch", "batch-4d"],
)
def test_mismatched_shapes_raise_as_built_in(shapes):
    a, b = (f32(*s) for s in shapes)
    kernel, generic, spy = pair()
    with pytest.raises(ValueError):
        generic(a, b)
    with pytest.raises(ValueError):
        kernel(a, b)


def test_tocha_matmul_errors_unchanged():
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        tocha.randn(2, 128, 64) @ tocha.randn(3, 64, 128)


def test_bmm_and_matmul_run_on_the_provider():
    a, b = f32(3, 128, 64), f32(3, 64, 128)
    want = np.matmul(a, b)
    for got in (tocha.bmm(tocha.tensor(a), tocha.tensor(b)), tocha.tensor(a) @ tocha.tensor(b)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)
    assert served_here() == tocha.backends.kernel_providers()["onednn"]["enabled"]


def test_attention_gradients_match_float64():
    """q @ k^T, softmax, @ v: the backward's products run on transposed views."""
    arrays = [f32(2, 128, 2, 64) for _ in range(3)]

    def grads(dtype):
        q, k, v = (tocha.tensor(a, dtype=dtype, requires_grad=True) for a in arrays)
        qh, kh, vh = (t.transpose(1, 2) for t in (q, k, v))
        out = ((qh @ kh.transpose(-2, -1)) * 0.125).softmax(-1) @ vh
        out.backward(tocha.ones_like(out))
        return [out.detach().double().numpy()] + [t.grad.double().numpy() for t in (q, k, v)]

    ours = grads(tocha.float32)
    assert served_here() == tocha.backends.kernel_providers()["onednn"]["enabled"]
    for a, b in zip(ours, grads(tocha.float64)):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-3)


def test_broadcast_gradients_are_summed():
    a, b = f32(3, 128, 64), f32(64, 128)
    ta, tb = tocha.tensor(a, requires_grad=True), tocha.tensor(b, requires_grad=True)
    (ta @ tb).sum().backward()
    ones = np.ones((3, 128, 128), np.float32)
    np.testing.assert_allclose(ta.grad.numpy(), ones @ b.T, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(
        tb.grad.numpy(), (a.swapaxes(1, 2) @ ones).sum(0), rtol=1e-4, atol=1e-2
    )


def test_declined_from_two_threads():
    a, b = SERVED["q@kT"]()
    kernel, generic, spy = pair()
    tocha.set_num_threads(2)
    np.testing.assert_array_equal(kernel(a, b), generic(a, b))
    assert spy.calls == 1


def test_switched_off_gives_the_built_in_answer():
    a, b = tocha.randn(2, 128, 64), tocha.randn(2, 64, 128)
    on = (a @ b).numpy()
    enabled = tocha.backends.kernel_providers()["onednn"]["enabled"]
    tocha.backends.set_kernel_provider_enabled("onednn", False)
    try:
        assert "matmul" not in tocha.backends.provided_kernels()
        off = (a @ b).numpy()
    finally:
        tocha.backends.set_kernel_provider_enabled("onednn", enabled)
    np.testing.assert_allclose(on, off, rtol=1e-4, atol=1e-4)
