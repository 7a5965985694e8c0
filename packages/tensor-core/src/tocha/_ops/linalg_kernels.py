"""Array kernels of tocha.linalg that neither NumPy nor CuPy have, written against ``xp``.

- `lu_factor`: LU with partial pivoting (LAPACK's getrf: 1-based int32 pivots and info),
  vectorised over the batch; the only Python loop runs over the columns.
- `solve_triangular`: blocked recursive substitution (halves solved in turn, the coupling
  block applied by one matmul), vectorised over the batch and the right-hand sides.
- `lu_solve`: the pivots applied as a permutation, then two triangular solves.
- `cholesky_partial`: LAPACK's potrf result and info (the order of the first leading minor
  that is not positive-definite), for the error messages and ``cholesky_ex``.
- `ldl_factor`, `ldl_solve`: Bunch-Kaufman's symmetric indefinite factorisation and its solve
  as LAPACK's unblocked sytf2/hetf2 and sytrs/hetrs (lower triangle), in their format; one
  matrix at a time on the host, a Python loop over the columns.
- `matrix_exp`: scaling and squaring with the [13/13] Pade approximant (Higham, SIAM J. Matrix
  Anal. Appl. 26, 2005), each matrix of a batch scaled by its own power of two.

Arrays are ``(..., m, n)`` stacks of matrices; batch dims broadcast.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

_INT32 = np.dtype("int32")
# Coefficients of the [13/13] Pade approximant of exp and its 1-norm threshold.
_PADE13 = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)
_THETA13 = 5.371920351148152
_BLOCK = 16


def quiet(xp):
    """A context silencing NumPy's floating point warnings (inf and nan results are meant)."""
    errstate = getattr(xp, "errstate", None)
    return errstate(all="ignore") if errstate is not None else contextlib.nullcontext()


def mh(x):
    """The conjugate transpose of the last two dims."""
    x = x.swapaxes(-1, -2)
    return x.conj() if x.dtype.kind == "c" else x


def lu_factor(xp, a):
    """(LU, pivots, info) of ``a = P L U``: L unit lower (below the diagonal of LU), U upper;
    row i was swapped with row ``pivots[i] - 1``; info is the 1-based index of the first zero
    pivot (0: none)."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    lu = a.reshape((math.prod(batch), m, n)).copy()  # -1 is ambiguous when a is empty
    count, k_max = lu.shape[0], min(m, n)
    rows = xp.arange(count)
    pivots = xp.empty((count, k_max), _INT32)
    info = xp.zeros(count, _INT32)
    with quiet(xp):
        for k in range(k_max):
            p = xp.argmax(xp.abs(lu[:, k:, k]), axis=1) + k
            pivots[:, k] = p + 1
            row_k, row_p = lu[:, k].copy(), lu[rows, p]
            lu[rows, p] = row_k
            lu[:, k] = row_p
            pivot = lu[:, k, k]
            zero = pivot == 0
            info = xp.where((info == 0) & zero, k + 1, info).astype(_INT32)
            lu[:, k + 1 :, k] /= xp.where(zero, 1, pivot)[:, None]
            lu[:, k + 1 :, k + 1 :] -= lu[:, k + 1 :, k : k + 1] * lu[:, k : k + 1, k + 1 :]
    return lu.reshape(a.shape), pivots.reshape(batch + (k_max,)), info.reshape(batch)


def permutation(xp, pivots, m: int):
    """The row order ``perm`` with ``(P^T A)[i] = A[perm[i]]`` from LAPACK pivots."""
    batch = pivots.shape[:-1]
    count = math.prod(batch)  # not -1: ambiguous for empty pivots
    perm = xp.broadcast_to(xp.arange(m), batch + (m,)).reshape(count, m).copy()
    piv = pivots.reshape(count, pivots.shape[-1]).astype(np.int64) - 1
    rows = xp.arange(perm.shape[0])
    for k in range(piv.shape[1]):
        p = piv[:, k]
        at_k, at_p = perm[:, k].copy(), perm[rows, p]
        perm[:, k] = at_p
        perm[rows, p] = at_k
    return perm.reshape(batch + (m,))


def _substitute(xp, a, b, upper: bool, unit: bool):
    """Row-by-row substitution for small triangular systems."""
    n = a.shape[-1]
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:]
    x = xp.empty(shape, xp.result_type(a, b))
    for i in range(n - 1, -1, -1) if upper else range(n):
        known = slice(i + 1, n) if upper else slice(0, i)
        row = b[..., i, :] - (a[..., i : i + 1, known] @ x[..., known, :])[..., 0, :]
        x[..., i, :] = row if unit else row / a[..., i, i, None]
    return x


def solve_triangular(xp, a, b, upper: bool, unit: bool):
    """x with ``a x = b`` for triangular `a` (only its triangle is read); inf or nan where
    a diagonal element is zero, as LAPACK's trtrs without its check."""
    n = a.shape[-1]
    with quiet(xp):
        if n <= _BLOCK:
            return _substitute(xp, a, b, upper, unit)
        h = n // 2
        if upper:
            x2 = solve_triangular(xp, a[..., h:, h:], b[..., h:, :], upper, unit)
            x1 = solve_triangular(
                xp, a[..., :h, :h], b[..., :h, :] - a[..., :h, h:] @ x2, upper, unit
            )
        else:
            x1 = solve_triangular(xp, a[..., :h, :h], b[..., :h, :], upper, unit)
            x2 = solve_triangular(
                xp, a[..., h:, h:], b[..., h:, :] - a[..., h:, :h] @ x1, upper, unit
            )
    x1, x2 = xp.broadcast_arrays(x1, x2) if x1.shape[:-2] != x2.shape[:-2] else (x1, x2)
    return xp.concatenate([x1, x2], axis=-2)


def lu_solve(xp, lu, pivots, b, adjoint: bool):
    """x with ``A x = b`` (``A^H x = b`` when `adjoint`) from A's `lu_factor`."""
    n = lu.shape[-1]
    perm = permutation(xp, pivots, n)
    shape = np.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    perm = xp.broadcast_to(perm, shape + (n,))
    b = xp.broadcast_to(b, shape + b.shape[-2:])
    if not adjoint:
        pb = xp.take_along_axis(b, perm[..., None], axis=-2)
        y = solve_triangular(xp, lu, pb, upper=False, unit=True)
        return solve_triangular(xp, lu, y, upper=True, unit=False)
    lu_h = mh(lu)
    z = solve_triangular(xp, lu_h, b, upper=False, unit=False)
    w = solve_triangular(xp, lu_h, z, upper=True, unit=True)
    inverse = xp.argsort(perm, axis=-1)
    return xp.take_along_axis(w, inverse[..., None], axis=-2)


def cholesky_partial(xp, a):
    """LAPACK's unblocked potrf on each matrix of `a`: its lower Cholesky factor and info (0,
    or the order of the first leading minor that is not positive-definite). A matrix that
    fails at column j keeps the columns before j, the unrooted pivot at (j, j) and its own
    lower values from there on, as LAPACK leaves them; the upper triangle is zero."""
    n = a.shape[-1]
    low = xp.tril(a).copy()
    info = xp.zeros(a.shape[:-2], _INT32)
    failed = xp.zeros(a.shape[:-2], bool)
    with quiet(xp):
        for j in range(n):
            row = low[..., j, :j]
            d = a[..., j, j] - (row * row.conj()).sum(-1)
            d = d.real if d.dtype.kind == "c" else d
            bad = ~(d > 0) & ~failed
            info = xp.where(bad, j + 1, info).astype(_INT32)
            ok = ~(failed | bad)
            root = xp.sqrt(xp.where(ok, d, 1.0))
            low[..., j, j] = xp.where(ok, root, xp.where(bad, d, a[..., j, j]))
            col = a[..., j + 1 :, j] - (low[..., j + 1 :, :j] @ row.conj()[..., None])[..., 0]
            below = a[..., j + 1 :, j]
            low[..., j + 1 :, j] = xp.where(ok[..., None], col / root[..., None], below)
            failed |= bad
    return low, info


def matrix_exp(xp, a):
    """exp of each matrix of `a`, in float64 (complex128) and cast back."""
    dtype = a.dtype
    work = a.astype(np.complex128 if dtype.kind == "c" else np.float64)
    n = work.shape[-1]
    norm = xp.abs(work).sum(-2).max(-1)
    with quiet(xp):
        s = xp.maximum(0, xp.ceil(xp.log2(norm / _THETA13)))
    s = xp.where(xp.isfinite(s), s, 0).astype(np.int64)
    work = work / (2.0**s)[..., None, None]
    eye = xp.eye(n, dtype=work.dtype)
    b = _PADE13
    a2 = work @ work
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = work @ (
        a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye
    )
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    r = xp.linalg.solve(v - u, v + u)
    for step in range(int(s.max()) if s.size else 0):
        r = xp.where((step < s)[..., None, None], r @ r, r)
    return r.astype(dtype, copy=False)


# Bunch and Kaufman's pivot threshold (LAPACK's sytf2): (1 + sqrt(17)) / 8.
_BK_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _cabs1(x):
    """LAPACK's size of a number for pivoting: |re| + |im| (|x| when real)."""
    return abs(x.real) + abs(x.imag) if isinstance(x, complex) or np.iscomplexobj(x) else abs(x)


def _bk_swap(a, k, kk, kp, kstep, herm):
    """Swap rows and columns kk and kp of the trailing lower triangle a[k:, k:]."""
    n = a.shape[0]
    if kp < n - 1:
        a[kp + 1 :, [kk, kp]] = a[kp + 1 :, [kp, kk]]
    segment = a[kk + 1 : kp, kk].copy()
    row = a[kp, kk + 1 : kp].copy()
    a[kk + 1 : kp, kk] = row.conj() if herm else row
    a[kp, kk + 1 : kp] = segment.conj() if herm else segment
    if herm:
        a[kp, kk] = np.conj(a[kp, kk])
    a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
    if kstep == 2:
        a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]


def _bk_pivot(a, k, herm):
    """(kp, kstep, zero): Bunch-Kaufman's choice for column k of the lower triangle a."""
    n = a.shape[0]
    diag = a[k, k].real if herm else a[k, k]
    absakk = _cabs1(diag)
    colmax, imax = 0.0, k
    if k < n - 1:
        column = _abs1(a[k + 1 :, k])
        imax = k + 1 + _iamax(column)
        colmax = float(column[imax - k - 1])
    # Fortran's MAX as LAPACK's builds run it: a NaN on the left gives the right
    if (absakk if absakk > colmax else colmax) == 0:
        return k, 1, True
    if absakk >= _BK_ALPHA * colmax:
        return k, 1, False
    row = _abs1(a[imax, k:imax])
    rowmax = float(row[_iamax(row)])
    if imax < n - 1:
        below = _abs1(a[imax + 1 :, imax])
        other = float(below[_iamax(below)])
        rowmax = rowmax if rowmax > other else other
    if absakk >= _BK_ALPHA * colmax * (colmax / rowmax):
        return k, 1, False
    if _cabs1(a[imax, imax].real if herm else a[imax, imax]) >= _BK_ALPHA * rowmax:
        return imax, 1, False
    return imax, 2, False


def _iamax(v) -> int:
    """BLAS's i_amax: the first largest, skipping NaN unless it comes first."""
    if math.isnan(v[0]):
        return 0
    return int(np.argmax(np.where(np.isnan(v), -np.inf, v)))


def _abs1(v):
    return np.abs(v.real) + np.abs(v.imag) if v.dtype.kind == "c" else np.abs(v)


def _ldl_one(a, herm):
    """LAPACK's unblocked sytf2 / hetf2 (uplo 'L') on one matrix, in place: (pivots, info)."""
    n = a.shape[0]
    pivots = np.zeros(n, dtype=_INT32)
    info = 0
    k = 0
    while k < n:
        kp, kstep, zero = _bk_pivot(a, k, herm)
        if zero:
            info = info or k + 1
            if herm:
                a[k, k] = a[k, k].real
        else:
            kk = k + kstep - 1
            if kp != kk:
                _bk_swap(a, k, kk, kp, kstep, herm)
            if herm:  # a Hermitian matrix's diagonal is read as real
                a[k, k] = a[k, k].real
                a[kk, kk] = a[kk, kk].real
            if kstep == 1:
                _ldl_update_1(a, k, herm)
            else:
                _ldl_update_2(a, k, herm)
        if kstep == 1:
            pivots[k] = kp + 1
        else:
            pivots[k] = pivots[k + 1] = -(kp + 1)
        k += kstep
    return pivots, info


def _ldl_update_1(a, k, herm):
    """A 1x1 pivot: the trailing lower triangle less x x^T / d, then L's column x / d."""
    if k == a.shape[0] - 1:
        return
    x = a[k + 1 :, k].copy()
    r1 = 1.0 / (a[k, k].real if herm else a[k, k])
    temp = -r1 * (x.conj() if herm else x)
    trailing = a[k + 1 :, k + 1 :]
    lower = np.tril(np.ones(trailing.shape, dtype=bool))
    trailing[lower] += (x[:, None] * temp[None, :])[lower]
    if herm:
        idx = np.arange(trailing.shape[0])
        trailing[idx, idx] = trailing[idx, idx].real
    a[k + 1 :, k] = x * r1


def _ldl_update_2(a, k, herm):
    """A 2x2 pivot on rows k, k+1: the trailing lower triangle less W D^-1 W^T, column by
    column, then L's two columns."""
    n = a.shape[0]
    if k >= n - 2:
        return
    if herm:
        d = abs(a[k + 1, k])
        d11 = a[k + 1, k + 1].real / d
        d22 = a[k, k].real / d
        tt = 1.0 / (d11 * d22 - 1.0)
        d21 = a[k + 1, k] / d
        d = tt / d
    else:
        d21 = a[k + 1, k]
        d11 = a[k + 1, k + 1] / d21
        d22 = a[k, k] / d21
        t = 1.0 / (d11 * d22 - 1.0)
        d21 = t / d21
    for j in range(k + 2, n):
        if herm:
            wk = d * (d11 * a[j, k] - d21 * a[j, k + 1])
            wkp1 = d * (d22 * a[j, k + 1] - np.conj(d21) * a[j, k])
            a[j:, j] = a[j:, j] - a[j:, k] * np.conj(wk) - a[j:, k + 1] * np.conj(wkp1)
        else:
            wk = d21 * (d11 * a[j, k] - a[j, k + 1])
            wkp1 = d21 * (d22 * a[j, k + 1] - a[j, k])
            a[j:, j] = a[j:, j] - a[j:, k] * wk - a[j:, k + 1] * wkp1
        a[j, k] = wk
        a[j, k + 1] = wkp1
        if herm:
            a[j, j] = a[j, j].real


def ldl_factor(xp, a, hermitian: bool):
    """(LD, pivots, info): the Bunch-Kaufman factorisation ``A = P L D L^T P^T`` (L^H when
    `hermitian` and complex) of the lower triangles of a batch, in LAPACK's sytrf / hetrf
    format: L unit lower below the diagonal of LD, D's 1x1 and 2x2 blocks on its diagonal
    and first subdiagonal, 1-based int32 pivots (negative for a 2x2 block: both its entries
    name the row swapped with its second row), info the first zero pivot (0: none). Upper
    triangle zero. Each matrix runs on the host, one column at a time."""
    host = np.array(a.get() if hasattr(a, "get") else a)
    herm = hermitian and host.dtype.kind == "c"
    n = host.shape[-1]
    flat = host.reshape((math.prod(host.shape[:-2]), n, n))
    pivots = np.zeros(flat.shape[:-1], dtype=_INT32)
    info = np.zeros(flat.shape[0], dtype=_INT32)
    with np.errstate(all="ignore"):
        for b in range(flat.shape[0]):
            pivots[b], info[b] = _ldl_one(flat[b], herm)
    ld = np.tril(flat).reshape(host.shape)
    return (
        xp.asarray(ld),
        xp.asarray(pivots.reshape(host.shape[:-1])),
        xp.asarray(info.reshape(host.shape[:-2])),
    )


def _ldl_solve_one(ld, pivots, b, herm):
    """LAPACK's sytrs / hetrs (uplo 'L'): X with ``A X = B`` from A's `_ldl_one`, in b."""
    n = ld.shape[0]
    k = 0
    while k < n:  # P L D Y = B, forward
        if pivots[k] > 0:
            kp = pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1 :] -= ld[k + 1 :, k, None] * b[k]
            b[k] /= ld[k, k].real if herm else ld[k, k]
            k += 1
            continue
        kp = -pivots[k] - 1
        b[[k + 1, kp]] = b[[kp, k + 1]]
        b[k + 2 :] -= ld[k + 2 :, k, None] * b[k] + ld[k + 2 :, k + 1, None] * b[k + 1]
        akm1k = ld[k + 1, k]
        lower = np.conj(akm1k) if herm else akm1k
        akm1 = ld[k, k] / lower
        ak = ld[k + 1, k + 1] / akm1k
        denom = akm1 * ak - 1.0
        bkm1, bk = b[k] / lower, b[k + 1] / akm1k
        b[k] = (ak * bkm1 - bk) / denom
        b[k + 1] = (akm1 * bk - bkm1) / denom
        k += 2
    k = n - 1
    while k >= 0:  # L^T P^T X = Y, backward
        step = 1 if pivots[k] > 0 else 2
        column = ld[k + 1 :, k - step + 1 : k + 1]
        b[k - step + 1 : k + 1] -= (column.conj() if herm else column).T @ b[k + 1 :]
        kp = abs(pivots[k]) - 1
        b[[k, kp]] = b[[kp, k]]
        k -= step
    return b


def ldl_solve(xp, ld, pivots, b, hermitian: bool):
    """X with ``A X = B`` from A's `ldl_factor` (LD, pivots), batches broadcast."""
    host = [np.asarray(x.get() if hasattr(x, "get") else x) for x in (ld, pivots, b)]
    ld, pivots, b = host
    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    n, k = ld.shape[-1], b.shape[-1]
    count = math.prod(batch)
    lds = np.broadcast_to(ld, batch + (n, n)).reshape((count, n, n))
    pivs = np.broadcast_to(pivots, batch + (n,)).reshape((count, n)).astype(np.int64)
    x = np.array(np.broadcast_to(b, batch + (n, k)).reshape((count, n, k)))
    herm = hermitian and ld.dtype.kind == "c"
    with np.errstate(all="ignore"):
        for i in range(x.shape[0]):
            _ldl_solve_one(lds[i], pivs[i], x[i], herm)
    return xp.asarray(x.reshape(batch + (n, k)))


def geqrf(xp, a):
    """(a, tau) of LAPACK's geqrf for a batch of matrices: R on and above the diagonal, the
    Householder vectors below it, their scalars in tau ``(*, min(m, n))``."""
    m, n = a.shape[-2:]
    if a.size == 0:
        return a.copy(), xp.zeros(a.shape[:-2] + (min(m, n),), a.dtype)
    h, tau = xp.linalg.qr(a, mode="raw")
    return xp.ascontiguousarray(xp.swapaxes(h, -1, -2)), tau.astype(a.dtype, copy=False)
