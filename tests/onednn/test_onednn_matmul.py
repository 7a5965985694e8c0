"""tocha-onednn's ``matmul`` and ``linear`` kernels (oneDNN's matmul primitive) against
tocha's built-in NumPy kernels: operands read in place whatever their strides (transposed
views, batches, broadcast batch dims; other layouts through a copy), the calls left to BLAS
(small products, vectors, other dtypes), and a training step through the provider against
float64."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tocha_onednn")
pytest.importorskip("tocha.nn")
import tocha  # noqa: E402
import tocha.nn.functional as F  # noqa: E402
from tests.onednn.spies import provided  # noqa: E402
from tocha_onednn import _matmul  # noqa: E402

RNG = np.random.default_rng(11)


def f32(*shape):
    return RNG.standard_normal(shape, dtype=np.float32)


def check(kernel, generic, spy, *args, served=True):
    got, want = kernel(*args), generic(*args)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert spy.calls == (0 if served else 1)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


SERVED = {
    "plain": lambda: (f32(64, 256), f32(256, 96)),
    "a-transposed": lambda: (f32(256, 64).T, f32(256, 96)),
    "b-transposed": lambda: (f32(64, 256), f32(96, 256).T),
    "both-transposed": lambda: (f32(256, 64).T, f32(96, 256).T),
    "row-padded": lambda: (f32(64, 300)[:, :256], f32(256, 96)),
    "batched": lambda: (f32(4, 64, 128), f32(4, 128, 48)),
    "batch-by-matrix": lambda: (f32(4, 64, 128), f32(128, 48)),
    "matrix-by-batch": lambda: (f32(64, 128), f32(4, 128, 48)),
    "broadcast-batches": lambda: (f32(3, 1, 64, 64), f32(1, 5, 64, 64)),
    "heads-permuted": lambda: (
        f32(2, 64, 4, 32).transpose(0, 2, 1, 3),
        f32(2, 4, 64, 32).transpose(0, 1, 3, 2),
    ),
    "every-other-batch": lambda: (f32(8, 64, 128)[::2], f32(4, 128, 48)),
    # layouts oneDNN cannot read in place: copied first
    "expanded-gradient": lambda: (np.broadcast_to(np.float32(1), (8, 64, 128)), f32(128, 512)),
    "expanded-batch": lambda: (np.broadcast_to(f32(1, 64, 128), (4, 64, 128)), f32(4, 128, 64)),
    "strided-both-dims": lambda: (f32(128, 512)[::2, ::2], f32(256, 96)),
    "overlapping-rows": lambda: (
        np.lib.stride_tricks.as_strided(f32(4096), (64, 256), (4, 4)),
        f32(256, 96),
    ),
    "reversed-rows": lambda: (f32(64, 256)[::-1], f32(256, 96)),
}


@pytest.mark.parametrize("make", SERVED.values(), ids=SERVED.keys())
def test_matmul_reads_operands_in_place(make):
    check(*provided(_matmul, "matmul", "matmul"), *make())


DECLINED = {
    "small": lambda: (f32(16, 16), f32(16, 16)),
    "matrix-vector": lambda: (f32(4, 512, 512), f32(512, 1)),
    "vector": lambda: (f32(4096), f32(4096, 300)),
    "float64": lambda: (f32(64, 256).astype(np.float64), f32(256, 96).astype(np.float64)),
    "mixed-dtypes": lambda: (f32(64, 256), f32(256, 96).astype(np.float64)),
    "empty": lambda: (f32(0, 256), f32(256, 4096)),
}


@pytest.mark.parametrize("make", DECLINED.values(), ids=DECLINED.keys())
def test_matmul_leaves_other_calls_to_numpy(make):
    a, b = make()
    kernel, generic, spy = provided(_matmul, "matmul", "matmul")
    got = kernel(a, b)
    assert spy.calls == 1
    np.testing.assert_array_equal(got, generic(a, b))


@pytest.mark.parametrize("lead", [(64,), (4, 16)], ids=["2d", "3d"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
def test_linear_matches_built_in(lead, bias):
    x, w = f32(*lead, 256), f32(96, 256)
    args = (x, w, f32(96)) if bias else (x, w)
    check(*provided(_matmul, "linear", "linear"), *args)


def test_linear_leaves_small_and_vector_inputs_to_numpy():
    for x in (f32(4, 8), f32(4096)):
        kernel, generic, spy = provided(_matmul, "linear", "linear")
        w = f32(300, x.shape[-1])
        np.testing.assert_array_equal(kernel(x, w), generic(x, w))
        assert spy.calls == 1


def test_linear_of_a_non_contiguous_input():
    x = f32(256, 64).T  # (64, 256), read through a copy
    check(*provided(_matmul, "linear", "linear"), x, f32(96, 256), f32(96))


def test_bfloat16_matmul_is_served_where_the_cpu_has_it_else_declined():
    from tests.onednn.test_onednn_bfloat16 import _bf16_matmul_exists

    kernel, generic, spy = provided(_matmul, "matmul", "matmul")
    a = tocha.randn(64, 256, dtype=tocha.bfloat16)._data
    b = tocha.randn(256, 96, dtype=tocha.bfloat16)._data
    got = kernel(a, b)
    want = generic(a, b).astype(np.float32)
    assert got.dtype == a.dtype
    if _bf16_matmul_exists():
        assert spy.calls == 0
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=2**-6, atol=0.5)
    else:
        assert spy.calls == 1
        np.testing.assert_array_equal(got.astype(np.float32), want)


def test_an_mlp_step_through_the_provider_matches_float64():
    """Forward, loss and every gradient of a two-layer MLP big enough for oneDNN, against the
    same step in float64 (which NumPy runs)."""
    arrays = [f32(64, 300), f32(128, 300) * 0.05, f32(128), f32(10, 128) * 0.1, f32(10)]
    target = tocha.tensor(RNG.integers(0, 10, 64))

    def step(dtype):
        x, w1, b1, w2, b2 = (tocha.tensor(a, dtype=dtype, requires_grad=True) for a in arrays)
        hidden = F.relu(F.linear(x, w1, b1))
        loss = F.cross_entropy(hidden @ w2.T + b2, target)
        loss.backward()
        return [loss.detach().double().numpy()] + [
            t.grad.double().numpy() for t in (x, w1, b1, w2, b2)
        ]

    ours = step(tocha.float32)
    served = tocha.backends.provided_kernels()
    assert served["matmul"] == served["linear"] == "onednn"
    for a, b in zip(ours, step(tocha.float64), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
