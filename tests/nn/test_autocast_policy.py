"""CPU autocast follows PyTorch 2.13's op lists: the lower-precision ops cast every floating
input to bfloat16 (a bfloat16 activation meeting a float32 weight, the usual second layer),
the float32 ops upcast bfloat16 inputs (losses, linear algebra, FFTs, 3-D pooling, padding),
the promoting ops take the widest input, and ops PyTorch runs as one kernel (mv, dot,
adaptive average pooling) cast nothing inside. Output dtypes against PyTorch; values within
the precision of the dtype they were computed in."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

RNG = np.random.default_rng(0)


def _normal(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _uniform(*shape):
    return RNG.uniform(0.1, 0.9, shape).astype(np.float32)


M, V, B3 = _normal(4, 4), _normal(4), _normal(2, 4, 4)
SPD = (M @ M.T + 4 * np.eye(4)).astype(np.float32)
IMG, VOL, SEQ = _normal(2, 3, 6, 6), _normal(1, 2, 4, 4, 4), _normal(2, 3, 8)
W2, W1 = _normal(4, 3, 3, 3), _normal(4, 3, 3)
P, Q = _uniform(4, 4), _uniform(4)
GRID = RNG.uniform(-1, 1, (2, 3, 3, 2)).astype(np.float32)
TARGET = np.array([0, 1, 2, 3])
SIGN = np.array([1.0, -1.0, 1.0, -1.0], np.float32)


def _mlp(lib, c):
    """Linear -> ReLU -> Linear: the second layer meets a bfloat16 activation."""
    F = lib.nn.functional
    h = F.relu(F.linear(c(M), lib.tensor(M), lib.tensor(V)))
    return F.linear(h, lib.tensor(M), lib.tensor(V))


CASES = {
    # lower precision: every floating input becomes bfloat16
    "mlp": _mlp,
    "linear": lambda lib, c: lib.nn.functional.linear(c(M), lib.tensor(M), lib.tensor(V)),
    "conv2d": lambda lib, c: lib.nn.functional.conv2d(c(IMG), lib.tensor(W2)),
    "conv1d": lambda lib, c: lib.nn.functional.conv1d(c(SEQ), lib.tensor(W1)),
    "conv_transpose2d": lambda lib, c: lib.nn.functional.conv_transpose2d(
        c(IMG), lib.tensor(W2).transpose(0, 1)
    ),
    "mm": lambda lib, c: lib.mm(c(M), lib.tensor(M)),
    "bmm": lambda lib, c: lib.bmm(c(B3), lib.tensor(B3)),
    "matmul": lambda lib, c: c(M) @ lib.tensor(M),
    "addmm": lambda lib, c: lib.addmm(lib.tensor(M), c(M), lib.tensor(M)),
    "baddbmm": lambda lib, c: lib.baddbmm(lib.tensor(B3), c(B3), lib.tensor(B3)),
    "addbmm": lambda lib, c: lib.addbmm(lib.tensor(M), c(B3), lib.tensor(B3)),
    "prelu": lambda lib, c: lib.nn.functional.prelu(c(IMG), lib.tensor([0.25])),
    "vecdot": lambda lib, c: lib.linalg.vecdot(c(M), lib.tensor(M)),
    "einsum_contraction": lambda lib, c: lib.einsum("ij,jk->ik", c(M), lib.tensor(M)),
    "einsum_product": lambda lib, c: lib.einsum("ij,ij->ij", c(M), lib.tensor(M)),
    # one kernel in PyTorch, not listed: nothing inside is cast
    "mv": lambda lib, c: lib.mv(c(M), c(V)),
    "dot": lambda lib, c: lib.dot(c(V), c(V)),
    "addmv": lambda lib, c: lib.addmv(c(V), c(M), c(V)),
    "adaptive_avg_pool2d": lambda lib, c: lib.nn.functional.adaptive_avg_pool2d(c(IMG), 4),
    # float32
    "mse_loss": lambda lib, c: lib.nn.functional.mse_loss(c(M), c(P)),
    "l1_loss": lambda lib, c: lib.nn.functional.l1_loss(c(M), c(P)),
    "smooth_l1_loss": lambda lib, c: lib.nn.functional.smooth_l1_loss(c(M), c(P)),
    "huber_loss": lambda lib, c: lib.nn.functional.huber_loss(c(M), c(P)),
    "kl_div": lambda lib, c: lib.nn.functional.kl_div(c(M), c(P), reduction="batchmean"),
    "poisson_nll_loss": lambda lib, c: lib.nn.functional.poisson_nll_loss(c(M), c(P)),
    "margin_ranking_loss": lambda lib, c: lib.nn.functional.margin_ranking_loss(
        c(V), c(Q), c(SIGN)
    ),
    "hinge_embedding_loss": lambda lib, c: lib.nn.functional.hinge_embedding_loss(c(M), c(SIGN)),
    "soft_margin_loss": lambda lib, c: lib.nn.functional.soft_margin_loss(c(M), c(P)),
    "cosine_embedding_loss": lambda lib, c: lib.nn.functional.cosine_embedding_loss(
        c(M), c(P), lib.tensor(SIGN)
    ),
    "triplet_margin_loss": lambda lib, c: lib.nn.functional.triplet_margin_loss(
        c(M), c(P), c(M.T.copy())
    ),
    "multi_margin_loss": lambda lib, c: lib.nn.functional.multi_margin_loss(
        c(M), lib.tensor(TARGET)
    ),
    "nll_loss": lambda lib, c: lib.nn.functional.nll_loss(c(M), lib.tensor(TARGET)),
    "cross_entropy": lambda lib, c: lib.nn.functional.cross_entropy(c(M), lib.tensor(TARGET)),
    "binary_cross_entropy": lambda lib, c: lib.nn.functional.binary_cross_entropy(c(P), c(P)),
    "binary_cross_entropy_with_logits": (
        lambda lib, c: lib.nn.functional.binary_cross_entropy_with_logits(c(M), c(P))
    ),
    "grid_sample": lambda lib, c: lib.nn.functional.grid_sample(
        c(IMG), c(GRID), align_corners=False
    ),
    "max_pool3d": lambda lib, c: lib.nn.functional.max_pool3d(c(VOL), 2),
    "avg_pool3d": lambda lib, c: lib.nn.functional.avg_pool3d(c(VOL), 2),
    "adaptive_avg_pool3d": lambda lib, c: lib.nn.functional.adaptive_avg_pool3d(c(VOL), 3),
    "reflection_pad1d": lambda lib, c: lib.nn.functional.pad(c(SEQ), (1, 2), mode="reflect"),
    "reflection_pad2d": lambda lib, c: lib.nn.functional.pad(c(IMG), (1, 1, 2, 1), mode="reflect"),
    "replication_pad3d": lambda lib, c: lib.nn.functional.pad(
        c(VOL), (1, 1, 1, 1, 1, 1), mode="replicate"
    ),
    "local_response_norm": lambda lib, c: lib.nn.functional.local_response_norm(c(IMG), 2),
    "trace": lambda lib, c: lib.trace(c(M)),
    "prod": lambda lib, c: lib.prod(c(P), 1),
    "cdist": lambda lib, c: lib.cdist(c(M), c(P)),
    "inverse": lambda lib, c: lib.inverse(c(SPD)),
    "linalg_inv": lambda lib, c: lib.linalg.inv(c(SPD)),
    "linalg_solve": lambda lib, c: lib.linalg.solve(c(SPD), c(M)),
    "linalg_cholesky": lambda lib, c: lib.linalg.cholesky(c(SPD)),
    "linalg_eigvalsh": lambda lib, c: lib.linalg.eigvalsh(c(SPD)),
    "linalg_svdvals": lambda lib, c: lib.linalg.svdvals(c(M)),
    "quantile": lambda lib, c: lib.quantile(c(V), 0.3),
    "fft_rfft": lambda lib, c: lib.fft.rfft(c(V)).abs(),
    "fft_fft2": lambda lib, c: lib.fft.fft2(c(M)).real,
    "stft": lambda lib, c: lib.stft(
        c(np.tile(V, 4)), 4, window=lib.ones(4), return_complex=True
    ).abs(),
    # the widest input
    "cat": lambda lib, c: lib.cat([c(M), lib.tensor(M).bfloat16()]),
    "stack": lambda lib, c: lib.stack([c(M), lib.tensor(M).bfloat16()]),
    "index_copy": lambda lib, c: c(M).index_copy(0, lib.tensor([0]), lib.tensor(M[:1]).bfloat16()),
}


def _run(lib, name, dtype):
    cast = (lambda a: lib.tensor(a)) if dtype == "float32" else lambda a: lib.tensor(a).bfloat16()
    with lib.autocast("cpu", dtype=lib.bfloat16):
        out = CASES[name](lib, cast)
    return str(out.dtype).split(".")[-1], out.detach().double().numpy()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("name", list(CASES))
def test_cpu_autocast_matches_torch(torch, name, dtype):
    got_dtype, got = _run(tocha, name, dtype)
    want_dtype, want = _run(torch, name, dtype)
    assert got_dtype == want_dtype
    # bfloat16 results: PyTorch's oneDNN kernels accumulate their own way
    tol = 2e-2 if want_dtype == "bfloat16" else 1e-4
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


def test_lower_precision_gradients_reach_float32_weights():
    w = tocha.nn.Parameter(tocha.tensor(M))
    with tocha.autocast("cpu"):
        h = tocha.nn.functional.linear(tocha.tensor(M).bfloat16(), w)
        loss = tocha.nn.functional.mse_loss(h, tocha.zeros(4, 4))
    assert h.dtype is tocha.bfloat16 and loss.dtype is tocha.float32
    loss.backward()
    assert w.grad.dtype is tocha.float32


def test_out_argument_and_float64_are_not_cast():
    a = tocha.tensor(M)
    with tocha.autocast("cpu"):
        out = tocha.empty(4, 4)
        assert tocha.mm(a, a, out=out).dtype is tocha.float32
        assert tocha.mm(a.double(), a.double()).dtype is tocha.float64
        # an op that PyTorch lists runs with autocast off inside: no bfloat16 product
        assert tocha.cdist(a, a).dtype is tocha.float32


def test_another_devices_region_leaves_cpu_tensors_alone():
    a = tocha.tensor(M)
    with tocha.autocast("cuda"):
        assert tocha.mm(a, a).dtype is tocha.float32
        assert tocha.nn.functional.linear(a, a).dtype is tocha.float32
        assert tocha.nn.functional.mse_loss(a.bfloat16(), a.bfloat16()).dtype is tocha.bfloat16
