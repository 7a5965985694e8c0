"""Derivatives of the primitives of tocha.linalg, tocha.fft and tocha.special.

Same table as `_formulas` (``d(name, saves, formula)``, formulas in tocha ops so that they
differentiate again). The matrix formulas follow PyTorch's ``FunctionsManual.cpp`` (and so
its gauge conventions for eigenvectors and singular vectors) for real inputs; complex inputs
of the factorisations raise NotImplementedError rather than give a wrong gradient.
"""

from __future__ import annotations

import math

import numpy as np

import tocha
from tocha import fft as _fft
from tocha import linalg as la
from tocha import special as sp
from tocha.library import call

from ._formulas import d

_tril, _triu, _diag_embed = la.tril, la.triu, la.diag_embed


def _t(x):
    return x.mT


def _real_only(name: str, *tensors) -> None:
    if any(getattr(getattr(t, "dtype", None), "is_complex", False) for t in tensors):
        raise NotImplementedError(f"the derivative of {name} for complex inputs is not implemented")


def _solve(A, B):
    return la.solve(A, B)


# -- determinants and inverses ----------------------------------------------------------------
def _det(g, out, A):
    _real_only("linalg.det", A)
    if A.shape[-1] == 0:
        return tocha.zeros_like(A)
    if bool((out == 0).any().item()):
        # the adjugate through the SVD: adj(A)^T = U diag(prod_{j != i} s_j) Vh, times signs
        U, S, Vh = la.svd(A)
        n = S.shape[-1]
        others = tocha.stack(
            [
                tocha.cat([S.narrow(-1, 0, i), S.narrow(-1, i + 1, n - i - 1)], -1).prod(-1)
                for i in range(n)
            ],
            -1,
        )
        sign = la.det(U) * la.det(Vh)
        cofactor = (U * others.unsqueeze(-2)) @ Vh * sign.unsqueeze(-1).unsqueeze(-1)
        return g.unsqueeze(-1).unsqueeze(-1) * cofactor
    return (g * out).unsqueeze(-1).unsqueeze(-1) * _t(la.inv(A))


d("linalg_det", "0o", _det)
d(
    "linalg_slogdet",
    "0",
    lambda g, out, A: (
        _real_only("linalg.slogdet", A) or g[1].unsqueeze(-1).unsqueeze(-1) * _t(la.inv(A))
    ),
)


def _inv_ex(g, out, A):
    _real_only("linalg.inv", A)
    inverse = out[0]
    return -_t(inverse) @ g[0] @ _t(inverse)


d("linalg_inv_ex", "o", _inv_ex)


def _solve_back(g, out, A, B):
    _real_only("linalg.solve", A, B)
    gB = la.solve(_t(A), g)
    return -gB @ _t(out), gB


d("linalg_solve", "0o", _solve_back)


def _pinv_back(g, out, A, atol, rtol, hermitian):
    _real_only("linalg.pinv", A)
    m, n = A.shape[-2:]
    p, ph, gh = out, _t(out), _t(g)
    if m <= n:
        K = gh @ p
        KpH = K @ ph
        grad = -_t(p @ K) + KpH - (A @ p) @ KpH + (ph @ p) @ (gh - K @ A)
    else:
        K = p @ gh
        pHK = ph @ K
        grad = -_t(K @ p) + (gh - A @ K) @ p @ ph + pHK - pHK @ p @ A
    return grad, None, None, None


d("linalg_pinv", "0o", _pinv_back)


def _lstsq_back(g, out, A, B, rcond, driver):
    _real_only("linalg.lstsq", A, B)
    p = la.pinv(A)
    gA = _pinv_back(g[0] @ _t(B), p, A, None, None, False)[0]
    return gA, _t(p) @ g[0], None, None


d("linalg_lstsq", "01", _lstsq_back)


def _matrix_exp(g, out, A):
    _real_only("linalg.matrix_exp", A)
    n = A.shape[-1]
    top = tocha.cat([_t(A), g], -1)
    bottom = tocha.cat([tocha.zeros_like(A), _t(A)], -1)
    return la.matrix_exp(tocha.cat([top, bottom], -2)).narrow(-2, 0, n).narrow(-1, n, n)


d("linalg_matrix_exp", "0", _matrix_exp)


# -- factorisations ---------------------------------------------------------------------------
def _cholesky(g, out, A, upper):
    _real_only("linalg.cholesky", A)
    L, gL = (_t(out[0]), _t(g[0])) if upper else (out[0], g[0])
    gA = _tril(_t(L) @ gL)
    gA = 0.5 * (gA + _t(_tril(gA, -1)))
    gA = la.solve_triangular(_t(L), gA, upper=True, left=True)
    return la.solve_triangular(L, gA, upper=False, left=False), None


d("linalg_cholesky_ex", "o", _cholesky)


def _copyltu(M):
    """The lower triangle of M mirrored onto the upper one."""
    return _tril(M, -1) + _t(_tril(M, -1)) + _diag_embed(la.diagonal(M))


def _qr_square(gQ, gR, Q, R):
    """m >= n: gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q."""
    M = R @ _t(gR) - _t(gQ) @ Q
    rhs = gQ + Q @ _copyltu(M)
    return la.solve_triangular(_t(R), rhs, upper=False, left=False)


def _qr(g, out, A, mode):
    _real_only("linalg.qr", A)
    gQ, gR = g
    Q, R = out
    m, n = A.shape[-2:]
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed "
            "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
            "going to differentiate through linalg.qr."
        )
    if m >= n:
        if mode == "complete" and m > n:
            raise NotImplementedError(
                "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
            )
        return _qr_square(gQ, gR, Q, R), None
    # m < n: A = [X | Y] with X = Q U (U square) and Y = Q V.
    U = R.narrow(-1, 0, m)
    Y = A.narrow(-1, m, n - m)
    gV = gR.narrow(-1, m, n - m)
    gX = _qr_square(gQ + Y @ _t(gV), gR.narrow(-1, 0, m), Q, U)
    return tocha.cat([gX, Q @ gV], -1), None


d("linalg_qr", "0o", _qr)


def _eigh(g, out, A, uplo):
    _real_only("linalg.eigh", A)
    gL, gV = g
    L, V = out
    VhgV = _t(V) @ gV
    VhgV = 0.5 * (VhgV - _t(VhgV))
    E = L.unsqueeze(-2) - L.unsqueeze(-1)
    eye = tocha.eye(L.shape[-1], dtype=tocha.bool, device=L.device)
    inner = tocha.where(eye, _diag_embed(gL), VhgV / tocha.where(eye, 1.0, E))
    return V @ inner @ _t(V), None


d("linalg_eigh", "o", _eigh)


def _eigvalsh(g, out, A, uplo):
    _real_only("linalg.eigvalsh", A)
    V = la.eigh(A, uplo).eigenvectors
    return (V * g.unsqueeze(-2)) @ _t(V), None


d("linalg_eigvalsh", "0", _eigvalsh)


def _no_eig(g, out, A):
    raise NotImplementedError("the derivative of linalg.eig and linalg.eigvals is not implemented")


d("linalg_eig", "", _no_eig)
d("linalg_eigvals", "", _no_eig)


def _svd(g, out, A, full_matrices):
    _real_only("linalg.svd", A)
    gU, gS, gVh = g
    U, S, Vh = out
    m, n = A.shape[-2:]
    k = S.shape[-1]
    if full_matrices and m != n:
        U, gU = U.narrow(-1, 0, k), gU.narrow(-1, 0, k)
        Vh, gVh = Vh.narrow(-2, 0, k), gVh.narrow(-2, 0, k)
    S2 = S * S
    eye = tocha.eye(k, dtype=tocha.bool, device=S.device)
    E = tocha.where(eye, 1.0, S2.unsqueeze(-2) - S2.unsqueeze(-1))
    UhgU = _t(U) @ gU
    VhgV = Vh @ _t(gVh)
    inner = ((UhgU - _t(UhgU)) * S.unsqueeze(-2) + S.unsqueeze(-1) * (VhgV - _t(VhgV))) / E
    inner = tocha.where(eye, 0.0, inner) + _diag_embed(gS)
    if m > n:
        gUSinv = gU / S.unsqueeze(-2)
        grad = (U @ inner + gUSinv - U @ (_t(U) @ gUSinv)) @ Vh
    elif m < n:
        SinvgVh = gVh / S.unsqueeze(-1)
        grad = U @ (inner @ Vh + SinvgVh - (SinvgVh @ _t(Vh)) @ Vh)
    else:
        grad = U @ inner @ Vh
    return grad, None


d("linalg_svd", "o", _svd)


def _svdvals(g, out, A):
    _real_only("linalg.svdvals", A)
    U, _, Vh = la.svd(A, full_matrices=False)
    return (U * g.unsqueeze(-2)) @ Vh


d("linalg_svdvals", "0", _svdvals)


def _lu_factor(g, out, A):
    _real_only("linalg.lu_factor", A)
    m, n = A.shape[-2:]
    if m != n:
        raise NotImplementedError(
            "the derivative of linalg.lu_factor is implemented for square matrices only"
        )
    P, L, U = la.lu_unpack(out[0], out[1])
    gLU = g[0]
    phi = _tril(_t(L) @ _tril(gLU, -1), -1) + _triu(_triu(gLU) @ _t(U))
    gA = la.solve_triangular(_t(L), phi, upper=True, unitriangular=True)
    gA = la.solve_triangular(_t(U), gA, upper=False, left=False)
    return P @ gA


d("linalg_lu_factor_ex", "o", _lu_factor)


def _lu_solve(g, out, LU, pivots, B, left, adjoint):
    _real_only("linalg.lu_solve", LU, B)
    X = out
    gB = la.lu_solve(LU, pivots, g, left=left, adjoint=not adjoint)
    if left:
        gA = -gB @ _t(X) if not adjoint else -X @ _t(gB)
    else:
        gA = -_t(X) @ gB if not adjoint else -_t(gB) @ X
    P, L, U = la.lu_unpack(LU, pivots)
    PtgA = _t(P) @ gA
    gLU = _tril(PtgA @ _t(U), -1) + _triu(_t(L) @ PtgA)
    return gLU, None, gB, None, None


d("linalg_lu_solve", "01o", _lu_solve)


def _solve_triangular(g, out, A, B, upper, left, unitriangular):
    _real_only("linalg.solve_triangular", A, B)
    X = out
    gB = la.solve_triangular(_t(A), g, upper=not upper, left=left, unitriangular=unitriangular)
    gA = -gB @ _t(X) if left else -_t(X) @ gB
    gA = _triu(gA, 1 if unitriangular else 0) if upper else _tril(gA, -1 if unitriangular else 0)
    return gA, gB, None, None, None


d("linalg_solve_triangular", "0o", _solve_triangular)


def _vecdot(g, out, x, y, dim):
    _real_only("linalg.vecdot", x, y)
    g = g.unsqueeze(dim if dim < 0 else dim - (max(x.dim(), y.dim()) - g.dim() - 1))
    return g * y, g * x, None


d("linalg_vecdot", "01", _vecdot)


# -- fft: linear maps, whose adjoints are the transforms the other way ------------------------
def _half_weights(g, n: int, dim: int, double: bool):
    """Weights along `dim` of the half spectrum `g`: 2 (`double`) or 1/2 at the bins that
    stand for two conjugate frequencies (1 .. n - half), 1 elsewhere; in g's real dtype."""
    half = g.shape[dim]
    w = np.ones(half, g.dtype.to_real().np)
    w[1 : n - half + 1] = 2.0 if double else 0.5
    return tocha.from_numpy(w).to(g.device).reshape([-1] + [1] * (g.dim() - 1 - dim))


def _c2c(g, out, x, dims, scale, forward):
    return call(_fft.C2C, (g,), dims, scale, not forward), None, None, None


def _r2c(g, out, x, dims, scale, onesided, forward):
    if not onesided:
        full = call(_fft.C2C, (g,), dims, scale, not forward)
        return call(_fft.REAL, (full,)), None, None, None, None
    last = dims[-1] % x.dim()
    n = x.shape[last]
    weighted = g * _half_weights(g, n, last, False)
    return call(_fft.C2R, (weighted,), dims, scale, n, not forward), None, None, None, None


def _c2r(g, out, x, dims, scale, last_size, forward):
    last = dims[-1] % x.dim()
    gx = call(_fft.R2C, (g,), dims, scale, True, not forward)
    return gx * _half_weights(gx, last_size, last, True), None, None, None, None


d("fft_c2c", "", _c2c)
d("fft_r2c", "", _r2c)
d("fft_c2r", "", _c2r)
d("fft_real", "0", lambda g, out, x: g.to(x.dtype))


# -- special functions ------------------------------------------------------------------------
_SQRT_2PI = math.sqrt(2 * math.pi)
_RSQRT2 = math.sqrt(0.5)


def _i1(g, out, x):
    return g * tocha.where(x == 0, 0.5, sp.i0(x) - out / tocha.where(x == 0, 1.0, x))


def _i1e(g, out, x):
    safe = tocha.where(x == 0, 1.0, x)
    return g * tocha.where(x == 0, 0.5, sp.i0e(x) - out * (x.sgn() + 1 / safe))


def _pair(dx, dy, x, y):
    """Gradients of a binary op whose operands may be numbers (which get none)."""
    return (
        dx() if isinstance(x, tocha.Tensor) else None,
        dy() if isinstance(y, tocha.Tensor) else None,
    )


def _xlogy(g, out, x, y):
    # as PyTorch: g log(y), except 0 where x == 0 and y <= 0
    return _pair(
        lambda: tocha.where((x == 0) & (y <= 0), 0.0, g * _log(y)), lambda: g * x / y, x, y
    )


def _xlog1py(g, out, x, y):
    return _pair(
        lambda: tocha.where((x == 0) & (y <= -1), 0.0, g * _log1p(y)), lambda: g * x / (1 + y), x, y
    )


def _log(y):
    return y.log() if isinstance(y, tocha.Tensor) else math.log(y) if y > 0 else math.nan


def _log1p(y):
    return y.log1p() if isinstance(y, tocha.Tensor) else math.log1p(y) if y > -1 else math.nan


def _zeta(g, out, x, q):
    if isinstance(x, tocha.Tensor) and x.requires_grad:
        raise NotImplementedError(
            "the derivative of special.zeta with respect to its first argument is not implemented"
        )
    return None, (g * -x * sp.zeta(x + 1, q) if isinstance(q, tocha.Tensor) else None)


d("lgamma", "0", lambda g, out, x: g * sp.digamma(x))
d("digamma", "0", lambda g, out, x: g * sp.polygamma(1, x))
d("polygamma", "0", lambda g, out, x, n: (g * sp.polygamma(n + 1, x), None))
d("i0", "0", lambda g, out, x: g * sp.i1(x))
d("special_i0e", "0o", lambda g, out, x: g * (sp.i1e(x) - x.sgn() * out))
d("special_i1", "0o", _i1)
d("special_i1e", "0o", _i1e)
d("special_erfcx", "0o", lambda g, out, x: g * (2 * x * out - 2 / math.sqrt(math.pi)))
d("special_ndtri", "o", lambda g, out, x: g * _SQRT_2PI * (out * out * 0.5).exp())
d("special_log_ndtr", "0", lambda g, out, x: g / (math.sqrt(math.pi / 2) * sp.erfcx(x * -_RSQRT2)))
d("special_entr", "0", lambda g, out, x: g * -(x.log() + 1))
d(
    "sinc",
    "0o",
    lambda g, out, x: (
        g * tocha.where(x == 0, 0.0, ((x * math.pi).cos() - out) / tocha.where(x == 0, 1.0, x))
    ),
)
d("xlogy", "01", _xlogy)
d("special_xlog1py", "01", _xlog1py)
d("special_zeta", "01", _zeta)
