"""Derivatives and forward rules of the primitives of tocha.linalg, tocha.fft and tocha.special.

Same tables as `_formulas`: ``d(name, saves, formula)`` for reverse mode and, beside each,
``fwd(name, rule)`` for forward mode (the Jacobian-vector product, see `_forward`), all in
tocha ops so that they differentiate again. The backward formulas are the adjoints of the
forward rules, with PyTorch's conventions: for complex inputs the gradient is the conjugate
Wirtinger derivative (``conj(df/dz)`` times the output's gradient), so every transpose of
the real formulas is a conjugate transpose. The forward rules are the differentials of the
defining equations (``A X = B``, ``A = Q R``, ``A V = V diag(L)``...); where a factorisation
is defined up to a phase (eig, eigh, svd) the tangent has PyTorch's gauge, and the gradient
of a loss that depends on the phase raises PyTorch's error.
"""

from __future__ import annotations

import math

import numpy as np

import tocha
from tocha import fft as _fft
from tocha import linalg as la
from tocha import special as sp
from tocha.library import call

from ._formulas import conj, d
from ._forward import fwd, fwd_linear, fwd_multilinear

_tril, _triu, _diag_embed = la.tril, la.triu, la.diag_embed


def _t(x):
    return x.mT


def _h(x):
    """The conjugate transpose (the transpose of a real matrix)."""
    return x.mH


def _diag(M):
    return M.diagonal(dim1=-2, dim2=-1)


def _trace(M):
    return _diag(M).sum(-1)


def _check_gauge(name: str, what: str, ill_defined: str, imaginary) -> None:
    """PyTorch's check that a loss does not depend on the phases of complex eigenvectors or
    singular vectors: `imaginary` (the rate of change of the loss with each phase) must be
    within 1e-2 of 0."""
    if bool((imaginary.abs() > 1e-2).any().item()):
        raise RuntimeError(
            f"{name}: The {what} in the complex case are specified up to multiplication by "
            f"e^{{i phi}}. The specified loss function depends on this {ill_defined}"
        )


def _total(*terms):
    """The sum of the tangent terms that are not None (None when all are)."""
    present = [t for t in terms if t is not None]
    if not present:
        return None
    total = present[0]
    for t in present[1:]:
        total = total + t
    return total


def _neg(t):
    return None if t is None else -t


def _solve(A, B):
    """X with A X = B, B a matrix (the primitive, without `la.solve`'s vector guess)."""
    return call(la.OPS["linalg_solve"], (A, B))


def _solve_triangular(A, B, upper: bool, left: bool = True, unitriangular: bool = False):
    return call(la.OPS["linalg_solve_triangular"], (A, B), upper, left, unitriangular)


def _triangle(M, upper: bool, unitriangular: bool):
    """The triangle of M a triangular solve reads (without the diagonal if unitriangular)."""
    if upper:
        return _triu(M, 1 if unitriangular else 0)
    return _tril(M, -1 if unitriangular else 0)


def _reciprocal_gaps(values):
    """F with ``F[i, j] = 1 / (values[j] - values[i])`` off the diagonal and 0 on it."""
    gaps = values.unsqueeze(-2) - values.unsqueeze(-1)
    eye = tocha.eye(values.shape[-1], dtype=tocha.bool, device=values.device)
    return tocha.where(eye, 0.0, 1 / tocha.where(eye, 1.0, gaps))


def _quadratic_diagonal(V, M):
    """The diagonal of ``V^H M V`` (without forming the product)."""
    return (V.conj() * (M @ V)).sum(-2)


def _imaginary(x):
    """i Im(x) of a complex tensor."""
    return x - x.real


# -- determinants and inverses ----------------------------------------------------------------
def _adjugate(A):
    """adj(A) (``det(A) A^-1`` where A is invertible) through the SVD ``A = U diag(S) Vh``:
    ``det(U) det(Vh) Vh^H diag(prod_{j != i} s_j) U^H``, defined for singular A too."""
    U, S, Vh = la.svd(A)
    n = S.shape[-1]
    others = tocha.stack(
        [
            tocha.cat([S.narrow(-1, 0, i), S.narrow(-1, i + 1, n - i - 1)], -1).prod(-1)
            for i in range(n)
        ],
        -1,
    )
    phase = (la.det(U) * la.det(Vh)).unsqueeze(-1).unsqueeze(-1)
    return (_h(Vh) * others.to(Vh.dtype).unsqueeze(-2)) @ _h(U) * phase


def _matrices(x):
    return x.unsqueeze(-1).unsqueeze(-1)


def _invertible(A, singular):
    """A with each matrix flagged `singular` replaced by the identity."""
    eye = tocha.eye(A.shape[-1], dtype=A.dtype, device=A.device)
    return tocha.where(_matrices(singular), eye, A)


def _det(g, out, A):
    """``g conj(det) A^-H`` (the conjugate adjugate). Where the determinant is exactly 0,
    PyTorch's: the adjugate under create_graph (its SVD form), otherwise zeros (its LU
    solve of a zero right-hand side)."""
    if A.shape[-1] == 0:
        return tocha.zeros_like(A)
    singular = out == 0
    if not bool(singular.any().item()):
        return _matrices(g * out.conj()) * _h(la.inv(A))
    if tocha.is_grad_enabled():
        return _matrices(g) * _h(_adjugate(A))
    scale = tocha.where(singular, 0.0, g * out.conj())
    return _matrices(scale) * _h(la.inv(_invertible(A, singular)))


def _det_jvp(t, out, A):
    """d det = ``det tr(A^-1 dA)``; 0 where the determinant is exactly 0 (as PyTorch)."""
    if A.shape[-1] == 0:
        return tocha.zeros_like(out)
    singular = out == 0
    if not bool(singular.any().item()):
        return out * _trace(_solve(A, t[0]))
    return tocha.where(singular, 0.0, out * _trace(_solve(_invertible(A, singular), t[0])))


d("linalg_det", "0o", _det)
fwd("linalg_det", _det_jvp)


def _slogdet_jvp(t, out, A):
    """d logabsdet = Re tr(A^-1 dA); the sign of a real determinant is constant, the phase
    of a complex one turns by i Im tr(A^-1 dA)."""
    trace = _trace(_solve(A, t[0]))
    if A.is_complex():
        return out[0] * _imaginary(trace), trace.real
    return None, trace


def _slogdet(g, out, A):
    """``c A^-H`` with c = g_logabsdet, plus for complex A ``i Im(g_sign conj(sign))`` (the
    sign turns with the phase of the determinant, ``Im tr(A^-1 dA)``). A^-H by an LU solve,
    as PyTorch: infinities, not an error, for a singular A."""
    scale = g[1]
    if A.is_complex():
        sign = out[0]
        scale = scale + _imaginary(g[0] * sign.conj())
    eye = tocha.eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(A.shape)
    LU, pivots, _ = la.lu_factor_ex(A)
    return _matrices(scale) * la.lu_solve(LU, pivots, eye, adjoint=True)


d("linalg_slogdet", "0o", _slogdet)
fwd("linalg_slogdet", _slogdet_jvp)


def _inv_ex(g, out, A):
    inverse = _h(out[0])
    return -inverse @ g[0] @ inverse


d("linalg_inv_ex", "o", _inv_ex)
fwd("linalg_inv_ex", lambda t, out, A: (-out[0] @ t[0] @ out[0], None))


def _solve_back(g, out, A, B):
    gB = la.solve(_h(A), g)
    return -gB @ _h(out), gB


def _solve_jvp(t, out, A, B):
    """A dX = dB - dA X."""
    dA, dB = t[0], t[1]
    return _solve(A, _total(dB, _neg(None if dA is None else dA @ out)))


d("linalg_solve", "0o", _solve_back)
fwd("linalg_solve", _solve_jvp)


def _pinv_back(g, out, A, atol, rtol, hermitian):
    m, n = A.shape[-2:]
    p, ph, gh = out, _h(out), _h(g)
    if m <= n:
        K = gh @ p
        KpH = K @ ph
        grad = -_h(p @ K) + KpH - (A @ p) @ KpH + (ph @ p) @ (gh - K @ A)
    else:
        K = p @ gh
        pHK = ph @ K
        grad = -_h(K @ p) + (gh - A @ K) @ p @ ph + pHK - pHK @ p @ A
    return grad, None, None, None


def _pinv_differential(P, A, dA):
    """dP of ``P = pinv(A)`` at constant rank:
    ``-P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P``."""
    dAh = _h(dA)
    return -(P @ dA) @ P + (P @ _h(P)) @ (dAh - (dAh @ A) @ P) + (dAh - P @ (A @ dAh)) @ (_h(P) @ P)


d("linalg_pinv", "0o", _pinv_back)
fwd("linalg_pinv", lambda t, out, A, atol, rtol, hermitian: _pinv_differential(out, A, t[0]))


def _lstsq_back(g, out, A, B, rcond, driver):
    """The solution's gradient through pinv(A) (X = pinv(A) B), and the residuals'
    ``|B - A X|^2`` (summed over rows): 2 R g by B and -2 R g X^H by A, the X term vanishing
    at the solution."""
    p = la.pinv(A, rtol=rcond)
    gA = _pinv_back(g[0] @ _h(B), p, A, None, None, False)[0]
    gB = _h(p) @ g[0]
    if out[1].numel():
        weighted = 2 * (B - A @ out[0]) * g[1].unsqueeze(-2)
        gA, gB = gA - weighted @ _h(out[0]), gB + weighted
    return gA, gB, None, None


def _lstsq_jvp(t, out, A, B, rcond, driver):
    """dX = dpinv(A) B + pinv(A) dB; residuals ``|R|^2`` with R = B - A X move by
    ``2 Re(conj(R) dR)``, summed over rows. Rank and singular values get none (as PyTorch)."""
    dA, dB = t[0], t[1]
    X, residuals = out[0], out[1]
    P = la.pinv(A, rtol=rcond)
    dX = _total(
        None if dA is None else _pinv_differential(P, A, dA) @ B,
        None if dB is None else P @ dB,
    )
    if not residuals.numel():
        return dX, None, None, None
    dR = _total(dB, _neg(None if dA is None else dA @ X), -(A @ dX))
    return dX, 2 * (((B - A @ X).conj() * dR).real.sum(-2)), None, None


d("linalg_lstsq", "01o", _lstsq_back)
fwd("linalg_lstsq", _lstsq_jvp)


def _exp_frechet(A, E):
    """The derivative of the matrix exponential at A in the direction E: the upper-right
    block of ``exp([[A, E], [0, A]])``."""
    n = A.shape[-1]
    top = tocha.cat([A, E], -1)
    bottom = tocha.cat([tocha.zeros_like(A), A], -1)
    return la.matrix_exp(tocha.cat([top, bottom], -2)).narrow(-2, 0, n).narrow(-1, n, n)


def _matrix_exp(g, out, A):
    return _exp_frechet(_h(A), g)


d("linalg_matrix_exp", "0", _matrix_exp)
fwd("linalg_matrix_exp", lambda t, out, A: _exp_frechet(A, t[0]))


# -- factorisations ---------------------------------------------------------------------------
def _cholesky(g, out, A, upper):
    """``L^-H phi(L^H gL) L^-1`` made Hermitian, phi the lower triangle with half the
    (real part of the) diagonal."""
    L, gL = (_h(out[0]), _h(g[0])) if upper else (out[0], g[0])
    gA = _tril(_h(L) @ gL, -1) + 0.5 * _diag_embed(_diag(_h(L) @ gL).real.to(gL.dtype))
    gA = 0.5 * (gA + _h(gA))
    gA = la.solve_triangular(_h(L), gA, upper=True, left=True)
    return la.solve_triangular(L, gA, upper=False, left=False), None


def _cholesky_jvp(t, out, A, upper):
    """dL = L phi(L^-1 dA L^-H), phi the lower triangle with half the diagonal (dA as given,
    as PyTorch: not made Hermitian first)."""
    L = _h(out[0]) if upper else out[0]
    C = _solve_triangular(_h(L), _solve_triangular(L, t[0], False), True, left=False)
    dL = L @ (_tril(C, -1) + 0.5 * _diag_embed(_diag(C)))
    return (_h(dL) if upper else dL), None


d("linalg_cholesky_ex", "o", _cholesky)
fwd("linalg_cholesky_ex", _cholesky_jvp)


def _copyltu(M):
    """The lower triangle of M mirrored (conjugated) onto the upper one, the diagonal's real
    part on the diagonal: a Hermitian matrix."""
    lower = _tril(M, -1)
    return lower + _h(lower) + _diag_embed(la.diagonal(M).real.to(M.dtype))


def _qr_square(gQ, gR, Q, R):
    """m >= n: gA = (gQ + Q copyltu(M)) R^-H, M = R gR^H - gQ^H Q."""
    M = R @ _h(gR) - _h(gQ) @ Q
    rhs = gQ + Q @ _copyltu(M)
    return la.solve_triangular(_h(R), rhs, upper=False, left=False)


def _check_qr_mode(mode: str, m: int, n: int) -> None:
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed "
            "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
            "going to differentiate through linalg.qr."
        )
    if mode == "complete" and m > n:
        raise NotImplementedError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )


def _qr(g, out, A, mode):
    gQ, gR = g
    Q, R = out
    m, n = A.shape[-2:]
    _check_qr_mode(mode, m, n)
    if m >= n:
        return _qr_square(gQ, gR, Q, R), None
    # m < n: A = [X | Y] with X = Q U (U square) and Y = Q V.
    U = R.narrow(-1, 0, m)
    Y = A.narrow(-1, m, n - m)
    gV = gR.narrow(-1, m, n - m)
    gX = _qr_square(gQ + Y @ _h(gV), gR.narrow(-1, 0, m), Q, U)
    return tocha.cat([gX, Q @ gV], -1), None


def _qr_tall_jvp(Q, R, dA):
    """m >= n: with C = Q^H dA R^-1 = Q^H dQ + dR R^-1, Q^H dQ is the skew-Hermitian part
    Omega read off C's strict lower triangle (its diagonal: i Im diag(C), R's diagonal being
    real), and dR = (C - Omega) R, dQ = Q Omega + (I - Q Q^H) dA R^-1."""
    dA_Rinv = _solve_triangular(R, dA, True, left=False)
    C = _h(Q) @ dA_Rinv
    lower = _tril(C, -1)
    omega = lower - _h(lower)
    if C.is_complex():
        omega = omega + _diag_embed(_imaginary(_diag(C)))
    return Q @ omega + dA_Rinv - Q @ C, (C - omega) @ R


def _qr_jvp(t, out, A, mode):
    Q, R = out
    m, n = A.shape[-2:]
    _check_qr_mode(mode, m, n)
    dA = t[0]
    if m >= n:
        return _qr_tall_jvp(Q, R, dA)
    # m < n: A = [X | Y] = Q [U | V]: X's square factorisation, then dV = Q^H (dY - dQ V).
    dQ, dU = _qr_tall_jvp(Q, R.narrow(-1, 0, m), dA.narrow(-1, 0, m))
    dV = _h(Q) @ (dA.narrow(-1, m, n - m) - dQ @ R.narrow(-1, m, n - m))
    return dQ, tocha.cat([dU, dV], -1)


d("linalg_qr", "0o", _qr)
fwd("linalg_qr", _qr_jvp)


def _eigh(g, out, A, uplo):
    """``V (diag(gL) + F o skew(V^H gV)) V^H``, F the reciprocal eigenvalue gaps."""
    gL, gV = g
    L, V = out
    VhgV = _h(V) @ gV
    if VhgV.is_complex():
        _check_gauge(
            "linalg_eigh_backward",
            "eigenvectors",
            "quantity, so it is ill-defined.",
            _diag(VhgV).imag,
        )
    VhgV = 0.5 * (VhgV - _h(VhgV))
    inner = _diag_embed(gL.to(V.dtype)) + _reciprocal_gaps(L).to(V.dtype) * VhgV
    return V @ inner @ _h(V), None


def _eigh_jvp(t, out, A, uplo):
    """With C = V^H dA V: dL = Re diag(C), dV = V (F o C), F the reciprocal eigenvalue gaps
    (``V^H dV`` with a zero diagonal: PyTorch's gauge)."""
    L, V = out
    C = _h(V) @ t[0] @ V
    return _diag(C).real, V @ (_reciprocal_gaps(L).to(C.dtype) * C)


d("linalg_eigh", "o", _eigh)
fwd("linalg_eigh", _eigh_jvp)


def _eigvalsh(g, out, A, uplo):
    V = la.eigh(A, uplo).eigenvectors
    return (V * g.unsqueeze(-2).to(V.dtype)) @ _h(V), None


d("linalg_eigvalsh", "0", _eigvalsh)
fwd(
    "linalg_eigvalsh",
    lambda t, out, A, uplo: _quadratic_diagonal(la.eigh(A, uplo).eigenvectors, t[0]).real,
)


def _eig_back(gL, gV, L, V):
    """The adjoint of `_eig_jvp`: ``V^-H (diag(gL) + conj(F) o (W - V^H V Re diag(W))) V^H``
    with W = V^H gV (F the reciprocal eigenvalue gaps; the Re diag term undoes the norm
    kept at 1). A loss that depends on the phases of the eigenvectors (Im diag(W) != 0)
    raises PyTorch's error."""
    inner = _diag_embed(gL) if gL is not None else tocha.zeros_like(V)
    if gV is not None:
        W = _h(V) @ gV
        _check_gauge(
            "linalg_eig_backward", "eigenvectors", "quantity, so it is ill-defined.", _diag(W).imag
        )
        W = W - (_h(V) @ V) * _diag(W).real.unsqueeze(-2)
        inner = inner + _reciprocal_gaps(L).conj() * W
    return _solve(_h(V), inner @ _h(V))


def _eig(g, out, A):
    return _eig_back(g[0], g[1], *out)


_eig.accepts_none = True


def _eigvals(g, out, A):
    L, V = la.eig(A)
    return _eig_back(g, None, L, V)


def _eig_jvp(t, out, A):
    """A V = V diag(L): with C = V^-1 dA V, dL = diag(C) and dV = V (F o C), less
    ``V Re diag(V^H dV)`` to keep every eigenvector of norm 1."""
    L, V = out
    C = _solve(V, t[0].to(V.dtype) @ V)
    dV = V @ (_reciprocal_gaps(L) * C)
    return _diag(C), dV - V * _diag(_h(V) @ dV).real.unsqueeze(-2)


def _eigvals_jvp(t, out, A):
    V = la.eig(A).eigenvectors
    return _diag(_solve(V, t[0].to(V.dtype) @ V))


d("linalg_eig", "o", _eig)
fwd("linalg_eig", _eig_jvp)
d("linalg_eigvals", "0", _eigvals)
fwd("linalg_eigvals", _eigvals_jvp)


def _svd(g, out, A, full_matrices):
    """The adjoint of `_svd_jvp`: with J = U^H gU and K = V^H gV, ``U (F o (skew(J) S +
    S skew(K)) + diag(gS)) V^H``, F the reciprocal gaps of S^2, plus for complex A
    ``i Im(diag(J) - diag(K)) / 2S`` on the diagonal, plus the terms of a tall or wide A.
    A loss that depends on the phases of the singular vectors raises PyTorch's error."""
    gU, gS, gVh = g
    U, S, Vh = out
    m, n = A.shape[-2:]
    k = S.shape[-1]
    if full_matrices and m != n:
        U, gU = U.narrow(-1, 0, k), gU.narrow(-1, 0, k)
        Vh, gVh = Vh.narrow(-2, 0, k), gVh.narrow(-2, 0, k)
    UhgU = _h(U) @ gU
    VhgV = Vh @ _h(gVh)
    inner = _reciprocal_gaps(S * S).to(U.dtype) * (
        (UhgU - _h(UhgU)) * S.unsqueeze(-2) + S.unsqueeze(-1) * (VhgV - _h(VhgV))
    )
    inner = inner + _diag_embed(gS.to(U.dtype))
    if U.is_complex():
        phases = _diag(UhgU).imag, _diag(VhgV).imag
        _check_gauge(
            "svd_backward", "singular vectors", "phase term, making it ill-defined.", sum(phases)
        )
        inner = inner + _diag_embed((phases[0] - phases[1]) / (2 * S)) * 1j
    if m > n:
        gUSinv = gU / S.unsqueeze(-2)
        grad = (U @ inner + gUSinv - U @ (_h(U) @ gUSinv)) @ Vh
    elif m < n:
        SinvgVh = gVh / S.unsqueeze(-1)
        grad = U @ (inner @ Vh + SinvgVh - (SinvgVh @ _h(Vh)) @ Vh)
    else:
        grad = U @ inner @ Vh
    return grad, None


def _pad(x, size: int, dim: int):
    """`x` with zeros appended along `dim` up to `size`."""
    missing = size - x.shape[dim]
    if not missing:
        return x
    shape = list(x.shape)
    shape[dim] = missing
    return tocha.cat([x, tocha.zeros(shape, dtype=x.dtype, device=x.device)], dim)


def _svd_jvp(t, out, A, full_matrices):
    """A = U S V^H: with dP = U^H dA V, dS = Re diag(dP), and U^H dU, V^H dV the
    skew-Hermitian ``F o (dP S + S dP^H)`` and ``F o (S dP + dP^H S)`` (F the reciprocal gaps
    of S^2), plus, for complex A, ``i Im diag(dP) / 2S`` and its opposite (PyTorch's gauge:
    half the phase to each side). A tall A adds
    ``(I - U U^H) dA V / S`` to dU, a wide one ``(I - V V^H) dA^H U / S`` to dV. The columns
    of full_matrices' U or V beyond min(m, n) get zero tangents (as PyTorch)."""
    U, S, Vh = out
    m, n = A.shape[-2:]
    k = S.shape[-1]
    U, V = U.narrow(-1, 0, k), _h(Vh.narrow(-2, 0, k))
    dA = t[0]
    dA_V = dA @ V
    dP = _h(U) @ dA_V
    dPh = _h(dP)
    gaps = _reciprocal_gaps(S * S).to(dP.dtype)
    row, column = S.unsqueeze(-2), S.unsqueeze(-1)
    omega_U = gaps * (dP * row + column * dPh)
    omega_V = gaps * (column * dP + dPh * row)
    if dP.is_complex():
        half = _diag_embed(_imaginary(_diag(dP)) / (2 * S))
        omega_U, omega_V = omega_U + half, omega_V - half
    dU = U @ omega_U
    dV = V @ omega_V
    if m > n:
        dU = dU + (dA_V - U @ dP) / row
    elif m < n:
        dV = dV + (_h(dA) @ U - V @ dPh) / row
    if full_matrices:
        dU, dV = _pad(dU, m, -1), _pad(dV, n, -1)
    return dU, _diag(dP).real, _h(dV)


d("linalg_svd", "o", _svd)
fwd("linalg_svd", _svd_jvp)


def _svdvals(g, out, A):
    U, _, Vh = la.svd(A, full_matrices=False)
    return (U * g.unsqueeze(-2).to(U.dtype)) @ Vh


def _svdvals_jvp(t, out, A):
    U, _, Vh = la.svd(A, full_matrices=False)
    return (U.conj() * (t[0] @ _h(Vh))).sum(-2).real


d("linalg_svdvals", "0", _svdvals)
fwd("linalg_svdvals", _svdvals_jvp)


def _lu_factor(g, out, A):
    m, n = A.shape[-2:]
    if m != n:
        raise NotImplementedError(
            "the derivative of linalg.lu_factor is implemented for square matrices only"
        )
    P, L, U = la.lu_unpack(out[0], out[1])
    gLU = g[0]
    phi = _tril(_h(L) @ _tril(gLU, -1), -1) + _triu(_triu(gLU) @ _h(U))
    gA = la.solve_triangular(_h(L), phi, upper=True, unitriangular=True)
    gA = la.solve_triangular(_h(U), gA, upper=False, left=False)
    return P @ gA


def _lu_factor_jvp(t, out, A):
    """P^T A = L U: on the leading k x k block (k = min(m, n)), C = L^-1 P^T dA U^-1 splits
    into ``L^-1 dL`` (strictly lower) and ``dU U^-1`` (upper); the rows of a tall A below it
    give dL there, the columns of a wide A beyond it dU there. The tangent is packed as LU."""
    P, L, U = la.lu_unpack(out[0], out[1])
    m, n = A.shape[-2:]
    k = min(m, n)
    dA = _t(P) @ t[0]
    L1, U1 = L.narrow(-2, 0, k), U.narrow(-1, 0, k)
    C = _solve_triangular(L1, dA.narrow(-2, 0, k).narrow(-1, 0, k), False, unitriangular=True)
    C = _solve_triangular(U1, C, True, left=False)
    dL1, dU1 = L1 @ _tril(C, -1), _triu(C) @ U1
    if m > n:
        below = dA.narrow(-2, k, m - k) - L.narrow(-2, k, m - k) @ dU1
        dL2 = _solve_triangular(U1, below, True, left=False)
        return tocha.cat([dL1 + dU1, dL2], -2), None, None
    if m < n:
        right = dA.narrow(-2, 0, k).narrow(-1, k, n - k) - dL1 @ U.narrow(-1, k, n - k)
        dU2 = _solve_triangular(L1, right, False, unitriangular=True)
        return tocha.cat([dL1 + dU1, dU2], -1), None, None
    return dL1 + dU1, None, None


d("linalg_lu_factor_ex", "o", _lu_factor)
fwd("linalg_lu_factor_ex", _lu_factor_jvp)


def _lu_solve(g, out, LU, pivots, B, left, adjoint):
    X = out
    gB = la.lu_solve(LU, pivots, g, left=left, adjoint=not adjoint)
    if left:
        gA = -gB @ _h(X) if not adjoint else -X @ _h(gB)
    else:
        gA = -_h(X) @ gB if not adjoint else -_h(gB) @ X
    P, L, U = la.lu_unpack(LU, pivots)
    PtgA = _t(P) @ gA
    gLU = _tril(PtgA @ _h(U), -1) + _triu(_h(L) @ PtgA)
    return gLU, None, gB, None, None


def _lu_solve_jvp(t, X, LU, pivots, B, left, adjoint):
    """op(A) dX = dB - op(dA) X (dX op(A) = dB - X op(dA) when not `left`), op the adjoint
    or not, A = P L U and ``dA = P (dL U + L dU)`` from the packed tangent of LU."""
    dLU, dB = t[0], t[2]
    term = None
    if dLU is not None:
        P, L, U = la.lu_unpack(LU, pivots)
        dA = P @ (_tril(dLU, -1) @ U + L @ _triu(dLU))
        dA = _h(dA) if adjoint else dA
        term = -(dA @ X) if left else -(X @ dA)
    return call(la.OPS["linalg_lu_solve"], (LU, pivots, _total(dB, term)), left, adjoint)


d("linalg_lu_solve", "01o", _lu_solve)
fwd("linalg_lu_solve", _lu_solve_jvp)


def _solve_triangular_back(g, out, A, B, upper, left, unitriangular):
    X = out
    gB = la.solve_triangular(_h(A), g, upper=not upper, left=left, unitriangular=unitriangular)
    gA = -gB @ _h(X) if left else -_h(X) @ gB
    return _triangle(gA, upper, unitriangular), gB, None, None, None


def _solve_triangular_jvp(t, X, A, B, upper, left, unitriangular):
    """A dX = dB - dA X (dX A = dB - X dA when not `left`), dA the triangle A is read from."""
    dA, dB = t[0], t[1]
    term = None
    if dA is not None:
        dA = _triangle(dA, upper, unitriangular)
        term = -(dA @ X) if left else -(X @ dA)
    return _solve_triangular(A, _total(dB, term), upper, left, unitriangular)


d("linalg_solve_triangular", "0o", _solve_triangular_back)
fwd("linalg_solve_triangular", _solve_triangular_jvp)


def _vecdot(g, out, x, y, dim):
    """vecdot(x, y) = sum(conj(x) y): by x, conj(g) y; by y, g x."""
    g = g.unsqueeze(dim if dim < 0 else dim - (max(x.dim(), y.dim()) - g.dim() - 1))
    return (g.conj() if g.is_complex() else g) * y, g * x, None


d("linalg_vecdot", "01", _vecdot)
fwd_multilinear("linalg_vecdot")  # conj(x) y: vecdot(dx, y) + vecdot(x, dy)


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
fwd_linear("fft_c2c", "fft_r2c", "fft_c2r", "fft_real")  # (real-)linear: the transform itself


# -- special functions ------------------------------------------------------------------------
_SQRT_2PI = math.sqrt(2 * math.pi)
_RSQRT2 = math.sqrt(0.5)


def _i1_derivative(out, x):
    return tocha.where(x == 0, 0.5, sp.i0(x) - out / tocha.where(x == 0, 1.0, x))


def _i1e_derivative(out, x):
    safe = tocha.where(x == 0, 1.0, x)
    return tocha.where(x == 0, 0.5, sp.i0e(x) - out * (x.sgn() + 1 / safe))


def _sinc_derivative(out, x):
    return tocha.where(x == 0, 0.0, ((x * math.pi).cos() - out) / tocha.where(x == 0, 1.0, x))


# Functions of one variable: name: (saves, f'(out, x)); gradient g conj(f') (sinc is the one
# PyTorch differentiates for complex inputs too), tangent t f'.
ELEMENTWISE = {
    "lgamma": ("0", lambda out, x: sp.digamma(x)),
    "digamma": ("0", lambda out, x: sp.polygamma(1, x)),
    "i0": ("0", lambda out, x: sp.i1(x)),
    "special_i0e": ("0o", lambda out, x: sp.i1e(x) - x.sgn() * out),
    "special_i1": ("0o", _i1_derivative),
    "special_i1e": ("0o", _i1e_derivative),
    "special_erfcx": ("0o", lambda out, x: 2 * x * out - 2 / math.sqrt(math.pi)),
    "special_ndtri": ("o", lambda out, x: _SQRT_2PI * (out * out * 0.5).exp()),
    "special_log_ndtr": (
        "0",
        lambda out, x: 1 / (math.sqrt(math.pi / 2) * sp.erfcx(x * -_RSQRT2)),
    ),
    "special_entr": ("0", lambda out, x: -(x.log() + 1)),
    "sinc": ("0o", _sinc_derivative),
}
for _name, (_saves, _derivative) in ELEMENTWISE.items():
    d(_name, _saves, lambda g, out, x, f=_derivative: g * conj(f(out, x)))
    fwd(_name, lambda t, out, x, f=_derivative: t[0] * f(out, x))

d("polygamma", "0", lambda g, out, x, n: (g * sp.polygamma(n + 1, x), None))
fwd("polygamma", lambda t, out, x, n: t[0] * sp.polygamma(n + 1, x))


def _log(y):
    return y.log() if isinstance(y, tocha.Tensor) else math.log(y) if y > 0 else math.nan


def _log1p(y):
    return y.log1p() if isinstance(y, tocha.Tensor) else math.log1p(y) if y > -1 else math.nan


def _pair(dx, dy, x, y):
    """Gradients of a binary op whose operands may be numbers (which get none)."""
    return (
        dx() if isinstance(x, tocha.Tensor) else None,
        dy() if isinstance(y, tocha.Tensor) else None,
    )


# x log(y) and x log1p(y): by x, log(y) (log1p(y)), except 0 where x == 0 and y <= 0 (y <= -1),
# as PyTorch; by y, x / y (x / (1 + y)).
def _by_x(x, y, log, pole):
    return lambda s: tocha.where((x == 0) & (y <= pole), 0.0, s * log(y))


def _xlogy(g, out, x, y):
    return _pair(lambda: _by_x(x, y, _log, 0)(g), lambda: g * x / y, x, y)


def _xlogy_jvp(t, out, x, y):
    return _total(
        None if t[0] is None else _by_x(x, y, _log, 0)(t[0]),
        None if t[1] is None else t[1] * x / y,
    )


def _xlog1py(g, out, x, y):
    return _pair(lambda: _by_x(x, y, _log1p, -1)(g), lambda: g * x / (1 + y), x, y)


def _xlog1py_jvp(t, out, x, y):
    return _total(
        None if t[0] is None else _by_x(x, y, _log1p, -1)(t[0]),
        None if t[1] is None else t[1] * x / (1 + y),
    )


d("xlogy", "01", _xlogy)
fwd("xlogy", _xlogy_jvp)
d("special_xlog1py", "01", _xlog1py)
fwd("special_xlog1py", _xlog1py_jvp)

_NO_ZETA_X = "the derivative of special.zeta with respect to its first argument is not implemented"


def _zeta(g, out, x, q):
    if isinstance(x, tocha.Tensor) and x.requires_grad:
        raise NotImplementedError(_NO_ZETA_X)
    return None, (g * -x * sp.zeta(x + 1, q) if isinstance(q, tocha.Tensor) else None)


def _zeta_jvp(t, out, x, q):
    if t[0] is not None:
        raise NotImplementedError(_NO_ZETA_X)
    return t[1] * -x * sp.zeta(x + 1, q)


d("special_zeta", "01", _zeta)
fwd("special_zeta", _zeta_jvp)


# -- factorisations PyTorch gives no derivative --------------------------------------------
def _no_derivative(name: str):
    def formula(g, out, *args):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    def rule(t, out, *args):
        raise NotImplementedError(
            f"Trying to use forward AD with aten::{name} that does not support it."
        )

    return formula, rule


for _name in ("linalg_ldl_factor_ex", "linalg_ldl_solve"):
    _formula, _rule = _no_derivative(_name)
    d(_name, "", _formula)
    fwd(_name, _rule)
