"""bfloat16 through tocha-onednn: where oneDNN has no bfloat16 primitive on this CPU (AVX2
without AVX-512 BF16 or AMX), every provided op's bfloat16 call is declined and gives the
built-in kernel's answer, with the provider on exactly what it is with the provider off."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tocha_onednn")
pytest.importorskip("tocha.nn")
import tocha  # noqa: E402
import tocha.nn.functional as F  # noqa: E402
from tocha.export import ops  # noqa: E402
from tocha_onednn import _dnnl as D  # noqa: E402
from tocha_onednn._runtime import library  # noqa: E402


def _bf16_matmul_exists() -> bool:
    lib = library()
    descs = [D.shape_desc(lib, s, D.BF16) for s in ((4, 8), (8, 4), (4, 4))]
    try:
        pd = D.create_pd(
            lib,
            "dnnl_matmul_primitive_desc_create",
            descs[0].handle,
            descs[1].handle,
            None,
            descs[2].handle,
        )
    except D.DnnlError:
        return False
    lib.lib.dnnl_primitive_desc_destroy(pd)
    return True


CALLS = {
    "conv2d": lambda x: F.conv2d(x, x[:4, :3], padding=1),
    "conv_transpose2d": lambda x: F.conv_transpose2d(x, x[:3, :2]),
    "max_pool2d": lambda x: F.max_pool2d(x, 2),
    "avg_pool2d": lambda x: F.avg_pool2d(x, 2),
    "layer_norm": lambda x: F.layer_norm(x, x.shape[-2:]),
    "group_norm": lambda x: F.group_norm(x, 3),
    "batch_norm": lambda x: F.batch_norm(x, None, None, training=True),
    "softmax": lambda x: F.softmax(x, 1),
    "linear_pointwise": lambda x: ops.linear_pointwise(x.flatten(1), x.flatten(1)[:5], "relu"),
}


def _with_and_without_provider(name):
    """`CALLS[name]` on a bfloat16 input, and its input gradient, with tocha-onednn on, then
    off: ``(y, grad, y_built_in, grad_built_in)``."""
    gen = tocha.Generator().manual_seed(0)
    x = tocha.randn(6, 3, 8, 8, generator=gen).to(tocha.bfloat16).requires_grad_()
    y = CALLS[name](x)
    (gx,) = tocha.autograd.grad(y.float().sum(), x)
    tocha.backends.set_kernel_provider_enabled("onednn", False)
    try:
        y_ref = CALLS[name](x)
        (gx_ref,) = tocha.autograd.grad(y_ref.float().sum(), x)
    finally:
        tocha.backends.set_kernel_provider_enabled("onednn", True)
    return y, gx, y_ref, gx_ref


@pytest.mark.parametrize("name", list(CALLS))
def test_bfloat16_gives_the_built_in_answer(name):
    if _bf16_matmul_exists():
        pytest.skip("this CPU has bfloat16 primitives in oneDNN")
    y, gx, y_ref, gx_ref = _with_and_without_provider(name)
    assert y.dtype == y_ref.dtype
    np.testing.assert_array_equal(y.float().detach().numpy(), y_ref.float().detach().numpy())
    np.testing.assert_array_equal(gx.float().numpy(), gx_ref.float().numpy())


def test_convolutions_try_bfloat16_and_decline_here():
    """The convolution kernels ask oneDNN for bfloat16 primitives; refused here, each call
    reaches the built-in kernel (the refusal is cached: one try per shape)."""
    if _bf16_matmul_exists():
        pytest.skip("this CPU has bfloat16 primitives in oneDNN")
    from tests.onednn.spies import provided
    from tocha_onednn import _conv

    x = tocha.randn(2, 3, 6, 6).to(tocha.bfloat16)._data
    w = tocha.randn(4, 3, 3, 3).to(tocha.bfloat16)._data
    geometry = ((1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    forward, generic, spy = provided(_conv, "convolution", "convolution")
    before = len(_conv._cache.plans)
    for _ in range(2):
        got = forward(x, w, *geometry, (6, 6), None)
    assert spy.calls == 2 and len(_conv._cache.plans) == before + 1
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(
        got.astype(np.float32), generic(x, w, *geometry, (6, 6), None).astype(np.float32)
    )


@pytest.mark.parametrize("name", list(CALLS))
def test_bfloat16_primitives_agree_with_the_built_in(name):
    """Where oneDNN has bfloat16 primitives (AVX-512 BF16 or AMX), the provider serves
    bfloat16 calls: values and gradients within bfloat16's rounding of the built-in ones."""
    if not _bf16_matmul_exists():
        pytest.skip("this CPU has no bfloat16 primitives in oneDNN")
    y, gx, y_ref, gx_ref = _with_and_without_provider(name)
    assert y.dtype == y_ref.dtype == tocha.bfloat16
    scale = float(y_ref.float().abs().max()) + 1.0
    np.testing.assert_allclose(
        y.float().detach().numpy(), y_ref.float().detach().numpy(), rtol=0, atol=2**-7 * scale
    )
    gscale = float(gx_ref.float().abs().max()) + 1.0
    np.testing.assert_allclose(
        gx.float().numpy(), gx_ref.float().numpy(), rtol=0, atol=2**-6 * gscale
    )
