"""tocha.linalg: linear algebra, as `torch.linalg`.

Every function takes batches of matrices ``(*, m, n)`` (batch dims broadcast where PyTorch
broadcasts them) and keeps float32 as float32. Primitives run the backend's own routines
(``xp.linalg``) or the kernels of `tocha._ops.linalg_kernels` (LU, triangular solves,
matrix_exp, LDL); the rest compose tocha ops and so need no derivative of their own: norms, cond,
matrix_rank, matrix_power, multi_dot, cross, householder_product, lu, lu_factor, vander,
tensorinv, tensorsolve, and the randomized ``tocha.svd_lowrank`` and ``tocha.pca_lowrank``.
Functions returning several tensors return named tuples (``slogdet(A).logabsdet``).

Failures of a factorisation raise `LinAlgError` (a RuntimeError) with PyTorch's message.
The top-level aliases (``tocha.det``, ``tocha.inverse``, ``tocha.svd``...) live here too.
"""

from __future__ import annotations

import math
import numbers
from functools import partial

import numpy as np

from . import _dtype
from . import return_types as _rt
from ._api import PUBLIC, export
from ._dispatch import autocast_op, call, defop, expect_tensor, not_a_tensor
from ._ops import aliases as _aliases
from ._ops import linalg_kernels as _k
from ._ops._argcheck import check_tensor_list, check_tensors, flag, index_arg, int_arg
from ._ops._out import CPP_NAMES, write_out
from ._ops.reduction import check_norm_dtype
from ._tensor import Tensor, _wrap_dim

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]


class LinAlgError(RuntimeError):
    """A matrix function failed: the input is singular, or not positive-definite."""


# -- return types -----------------------------------------------------------------------------
def _named(name: str, fields: tuple) -> type:
    return _rt._return_type(name, fields)


_SLOGDET = _named("linalg_slogdet", ("sign", "logabsdet"))
_QR = _named("linalg_qr", ("Q", "R"))
_EIGH = _named("linalg_eigh", ("eigenvalues", "eigenvectors"))
_EIG = _named("linalg_eig", ("eigenvalues", "eigenvectors"))
_SVD = _named("linalg_svd", ("U", "S", "Vh"))
_TORCH_SVD = _named("svd", ("U", "S", "V"))
_LSTSQ = _named("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
_LU_FACTOR = _named("linalg_lu_factor", ("LU", "pivots"))
_LU_FACTOR_EX = _named("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_LU = _named("linalg_lu", ("P", "L", "U"))
_LU_UNPACK = _named("lu_unpack", ("P", "L", "U"))
_INV_EX = _named("linalg_inv_ex", ("inverse", "info"))
_CHOLESKY_EX = _named("linalg_cholesky_ex", ("L", "info"))
_GEQRF = _named("geqrf", ("a", "tau"))
_SOLVE_EX = _named("linalg_solve_ex", ("result", "info"))
_LDL_FACTOR = _named("linalg_ldl_factor", ("LD", "pivots"))
_LDL_FACTOR_EX = _named("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


# -- kernels ----------------------------------------------------------------------------------
def _same_dtype(fn):
    """Factory of a kernel running ``fn(xp, *arrays_and_args)``, each array result cast to the
    first input's dtype (or its real dtype where NumPy returns a real one)."""

    def factory(xp):
        def kernel(a, *rest):
            if _is_low(a):  # no elements (the only float16/bfloat16 inputs let in)
                widened = tuple(r.astype(np.float32) if _is_low(r) else r for r in (a, *rest))
                result = fn(xp, *widened)
            else:
                result = fn(xp, a, *rest)
            if type(result) is tuple:
                return tuple(_cast_like(xp, r, a) for r in result)
            return _cast_like(xp, result, a)

        return kernel

    return factory


def _is_low(r) -> bool:
    """Whether `r` is a float16 or bfloat16 array (bfloat16's NumPy dtype, from ml_dtypes, is
    not loaded for this)."""
    dtype = getattr(r, "dtype", None)
    return dtype is not None and dtype.itemsize == 2 and dtype.kind in "fV"


def _cast_like(xp, r, a):
    """`r` in the precision of `a`, keeping r's kind (real, complex; integers untouched)."""
    if r.dtype.kind in "biu" or r.dtype == a.dtype:
        return r
    if _is_low(a):
        return r.astype(a.dtype)
    single = a.dtype in (np.float32, np.complex64)
    if r.dtype.kind == "c":
        return r.astype(np.complex64 if single else np.complex128, copy=False)
    return r.astype(np.float32 if single else np.float64, copy=False)


def _inv_ex_kernel(xp, a):
    try:
        return xp.linalg.inv(a), xp.zeros(a.shape[:-2], _k._INT32)
    except xp.linalg.LinAlgError:
        lu, pivots, info = _k.lu_factor(xp, a)
        eye = xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape)
        return _k.lu_solve(xp, lu, pivots, eye, False), info


def _solve_kernel(xp, a, b):
    try:
        return xp.linalg.solve(a, b)
    except xp.linalg.LinAlgError:
        info = _k.lu_factor(xp, a)[2]
        raise _singular_error(
            "torch.linalg.solve", info, "The solver failed because the input matrix is singular."
        ) from None


def _cholesky_kernel(xp, a, upper):
    try:
        low = xp.linalg.cholesky(a)
        info = xp.zeros(a.shape[:-2], _k._INT32)
    except xp.linalg.LinAlgError:
        low, info = _k.cholesky_partial(xp, a)
    return (_k.mh(low) if upper else low), info


def _svd(xp, a, full_matrices: bool = False):
    """``xp.linalg.svd`` that gives NaN factors for matrices holding inf or NaN, where
    LAPACK's divide-and-conquer driver may never return."""
    finite = xp.isfinite(a).all(axis=(-2, -1))
    if bool(finite.all()):
        return xp.linalg.svd(a, full_matrices=full_matrices)
    u, s, vh = xp.linalg.svd(xp.where(finite[..., None, None], a, 0), full_matrices=full_matrices)
    bad = ~finite
    u[bad], s[bad], vh[bad] = xp.nan, xp.nan, xp.nan
    return u, s, vh


def _eig_kernel(xp, a):
    if not bool(xp.isfinite(a).all()):
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    w, v = xp.linalg.eig(a)
    complex_dtype = np.complex128 if a.dtype in (np.float64, np.complex128) else np.complex64
    return w.astype(complex_dtype), v.astype(complex_dtype)


def _eigvals_kernel(xp, a):
    finite = xp.isfinite(a).all(axis=(-2, -1))
    if bool(finite.all()):
        return _eig_kernel(xp, a)[0]
    w = _eig_kernel(xp, xp.where(finite[..., None, None], a, 0))[0]
    w[~finite] = complex(np.nan, np.nan)
    return w


def _pinv_kernel(xp, a, atol, rtol, hermitian):
    m, n = a.shape[-2:]
    if hermitian:
        s, u = xp.linalg.eigh(a)
        vh = _k.mh(u)
        size = xp.abs(s)
    else:
        u, s, vh = _svd(xp, a)
        size = s
    if atol is None and rtol is None:
        rtol = np.finfo(a.dtype).eps * max(m, n)
    largest = size.max(-1, keepdims=True) if size.shape[-1] else size[..., :1]
    tol = xp.maximum(atol or 0.0, (rtol or 0.0) * largest)
    with _k.quiet(xp):
        s_inv = xp.where(size > tol, 1.0 / s, 0.0).astype(s.dtype)
    return (_k.mh(vh) * s_inv[..., None, :]) @ _k.mh(u)


def _lstsq_kernel(xp, a, b, rcond, driver):
    m, n = a.shape[-2:]
    u, s, vh = _svd(xp, a)
    if rcond is None:
        rcond = np.finfo(a.dtype).eps * max(m, n)
    largest = s[..., :1]
    keep = s > rcond * largest
    with _k.quiet(xp):
        s_inv = xp.where(keep, 1.0 / s, 0.0).astype(s.dtype)
    x = _k.mh(vh) @ (s_inv[..., :, None] * (_k.mh(u) @ b))
    rank = keep.sum(-1).astype(np.int64)
    real = s.dtype
    empty = xp.zeros(0, real)
    residuals = empty
    if driver != "gelsy" and m > n and bool((rank == n).all()):
        r = b - a @ x
        residuals = (xp.abs(r) ** 2).sum(-2).astype(real)
    if driver == "gels":
        rank = xp.zeros(0, np.int64)
    singular = s if driver in ("gelsd", "gelss") else empty
    return x, residuals, rank, singular


def _lu_factor_kernel(xp, a):
    return _k.lu_factor(xp, a)


def _lu_solve_kernel(xp, lu, pivots, b, left, adjoint):
    if left:
        return _k.lu_solve(xp, lu, pivots, b, adjoint)
    return _k.mh(_k.lu_solve(xp, lu, pivots, _k.mh(b), not adjoint))


def _solve_triangular_kernel(xp, a, b, upper, left, unitriangular):
    if left:
        return _k.solve_triangular(xp, a, b, upper, unitriangular)
    x = _k.solve_triangular(xp, a.swapaxes(-1, -2), b.swapaxes(-1, -2), not upper, unitriangular)
    return x.swapaxes(-1, -2)


def _permutation_matrix_kernel(xp, pivots, m, dtype):
    perm = _k.permutation(xp, pivots, m)
    return (perm[..., None, :] == xp.arange(m)[:, None]).astype(dtype)


def _vecdot_kernel(xp, x, y, dim):
    return (x.conj() * y).sum(dim) if x.dtype.kind == "c" else (x * y).sum(dim)


def _qr_kernel(xp, a, mode):
    if mode == "r":
        return xp.zeros(0, a.dtype), xp.linalg.qr(a, mode="r")
    return tuple(xp.linalg.qr(a, mode=mode))


_OPS = {
    "linalg_det": (lambda xp, a: xp.linalg.det(a), True),
    "linalg_slogdet": (lambda xp, a: tuple(xp.linalg.slogdet(a)), True),
    "linalg_inv_ex": (_inv_ex_kernel, True),
    "linalg_solve": (_solve_kernel, True),
    "linalg_cholesky_ex": (_cholesky_kernel, True),
    "linalg_qr": (_qr_kernel, True),
    "linalg_eigh": (lambda xp, a, uplo: tuple(xp.linalg.eigh(a, UPLO=uplo)), True),
    "linalg_eigvalsh": (lambda xp, a, uplo: xp.linalg.eigvalsh(a, UPLO=uplo), True),
    "linalg_eig": (_eig_kernel, True),
    "linalg_eigvals": (_eigvals_kernel, True),
    "linalg_svd": (lambda xp, a, full: tuple(_svd(xp, a, full)), True),
    "linalg_svdvals": (lambda xp, a: xp.linalg.svd(a, compute_uv=False), True),
    "linalg_pinv": (_pinv_kernel, True),
    "linalg_lstsq": (_lstsq_kernel, True),
    "linalg_matrix_exp": (_k.matrix_exp, True),
    "linalg_solve_triangular": (_solve_triangular_kernel, True),
    "linalg_lu_factor_ex": (_lu_factor_kernel, True),
    "linalg_lu_solve": (_lu_solve_kernel, True),
    "linalg_vecdot": (_vecdot_kernel, True),
}
OPS = {name: defop(name, _same_dtype(fn), diff) for name, (fn, diff) in _OPS.items()}
OPS["linalg_ldl_factor_ex"] = defop("linalg_ldl_factor_ex", lambda xp: partial(_k.ldl_factor, xp))
OPS["linalg_ldl_solve"] = defop("linalg_ldl_solve", lambda xp: partial(_k.ldl_solve, xp))
OPS["geqrf"] = defop("geqrf", lambda xp: partial(_k.geqrf, xp))
OPS["lu_permutation_matrix"] = defop(
    "lu_permutation_matrix", lambda xp: partial(_permutation_matrix_kernel, xp), False
)


# -- checks -----------------------------------------------------------------------------------
def _singular_error(name: str, info, message: str) -> LinAlgError:
    info = np.asarray(info.get() if hasattr(info, "get") else info)
    failed = np.flatnonzero(info.reshape(-1))
    batch = f"(Batch element {failed[0]}): " if info.ndim and failed.size else ""
    return LinAlgError(f"{name}: {batch}{message}")


def _check_info(name: str, info: Tensor, message) -> None:
    """Raise LinAlgError with `message(first nonzero info)` where any matrix failed."""
    data = info._host()
    if data.size and data.any():
        flat = data.reshape(-1)
        first = int(np.flatnonzero(flat)[0])
        batch = f"(Batch element {first}): " if data.ndim else ""
        raise LinAlgError(f"{name}: {batch}{message(int(flat[first]))}")


def _check(name: str, A, *, square: bool = True, arg: str = "A") -> None:
    expect_tensor(name, A, arg)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{name}: {arg} must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )
    _check_floating(name, A)


def _check_floating(name: str, A: Tensor, low_precision: bool = False) -> None:
    """Refuse an input that is not floating or complex, and a float16/bfloat16 one unless the
    function takes those (`low_precision`: the norms that need no factorization)."""
    if not isinstance(A, Tensor):
        raise not_a_tensor(name, A, "A", 2)
    dt = A.dtype
    # the LU kernel's own refusal, which PyTorch never reaches on no elements
    lu_empty = name in _LU_KERNELS and not A._data.size
    if not (dt.is_floating_point or dt.is_complex):
        if name in _LU_KERNELS:
            if lu_empty:
                return
            raise NotImplementedError(f"\"lu_cpu\" not implemented for '{_dtype.TITLE[dt]}'")
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {_dtype.TITLE[dt]}"
        )
    if not low_precision and dt in (_dtype.float16, _dtype.bfloat16):
        kernel = _LOW_PRECISION_KERNELS.get(name)
        skipped = kernel in _SKIPPED_WHEN_EMPTY and not A._data.size
        if kernel is not None and not skipped:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.TITLE[dt]}'")
        if skipped:
            return
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_dtype.TITLE[dt]}")


# The functions whose float16/bfloat16 inputs reach a PyTorch CPU kernel that has no such
# form (a NotImplementedError naming it) rather than its "Low precision" check.
_LOW_PRECISION_KERNELS = {
    **dict.fromkeys(
        ("linalg.lu", "linalg.lu_factor", "linalg.lu_factor_ex", "linalg.det", "linalg.solve"),
        "lu_cpu",
    ),
    **dict.fromkeys(
        ("linalg.svd", "linalg.svdvals", "linalg.cond", "linalg.matrix_rank"), "linalg_svd_cpu"
    ),
    **dict.fromkeys(("linalg.eigh", "linalg.eigvalsh"), "linalg_eigh_cpu"),
    **dict.fromkeys(("linalg.eig", "linalg.eigvals"), "linalg_eig_out_cpu"),
    "linalg.cholesky": "cholesky_cpu",
    "linalg.qr": "geqrf_cpu",
    "torch.linalg.householder_product": "orgqr_cpu",
    "linalg.lu_solve": "linalg.lu_solve_cpu",
    "linalg.solve_triangular": "triangular_solve_cpu",
}
# The kernels PyTorch does not run (nor check the dtype of) on no elements.
_SKIPPED_WHEN_EMPTY = ("lu_cpu", "linalg_svd_cpu", "linalg_eigh_cpu", "cholesky_cpu")
# The LU functions' integer and bool inputs also reach their kernel.
_LU_KERNELS = ("linalg.lu", "linalg.lu_factor", "linalg.lu_factor_ex")


def _check_same_dtype(name: str, A: Tensor, B: Tensor) -> None:
    if not isinstance(A, Tensor):
        raise not_a_tensor(name, A, "A", 2)
    if not isinstance(B, Tensor):
        raise not_a_tensor(name, B, "B", 3)
    if A.dtype is not B.dtype:
        raise RuntimeError(
            f"{name}: Expected A and B to have the same dtype, but found "
            f"A of type {_dtype.TITLE[A.dtype]} and B of type "
            f"{_dtype.TITLE[B.dtype]} instead"
        )


def _finish(result, out):
    if out is None:
        return result
    if isinstance(result, tuple):
        for o, r in zip(out, result):
            write_out(o, r)
        return out
    return write_out(out, result)


# -- matrix helpers in tocha ops (also used by the derivatives) -------------------------------
def _band(A: Tensor, k: int, lower: bool) -> Tensor:
    """The elements of `A` on and below (`lower`) or above the k-th diagonal, the rest 0."""
    m, n = A.shape[-2:]
    rows = PUBLIC["arange"](m, device=A.device).unsqueeze(-1)
    cols = PUBLIC["arange"](n, device=A.device)
    mask = (cols - rows <= k) if lower else (cols - rows >= k)
    return PUBLIC["where"](mask, A, PUBLIC["zeros"]((), dtype=A.dtype, device=A.device))


def tril(A: Tensor, k: int = 0) -> Tensor:
    """The lower triangle of each matrix (on and below diagonal `k`)."""
    return _band(A, k, True)


def triu(A: Tensor, k: int = 0) -> Tensor:
    """The upper triangle of each matrix (on and above diagonal `k`)."""
    return _band(A, k, False)


def _eye_like(A: Tensor, n: int | None = None) -> Tensor:
    n = A.shape[-1] if n is None else n
    return PUBLIC["eye"](n, dtype=A.dtype, device=A.device)


def diag_embed(v: Tensor) -> Tensor:
    """Matrices with the last dim of `v` on their diagonals."""
    return v.unsqueeze(-1) * _eye_like(v, v.shape[-1])


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """`tocha.diagonal` with the matrices in the last two dims by default: the `offset`-th
    diagonal of each matrix, as the last dim of the result."""
    if not isinstance(A, Tensor):
        raise not_a_tensor("diagonal", A, "A", 1)
    return A.diagonal(offset, dim1, dim2)


def _mH(A: Tensor) -> Tensor:
    return A.mH if A.is_complex() else A.mT


# -- determinants and inverses ----------------------------------------------------------------
def det(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The determinant of each square matrix of `A` (shape ``(*, n, n)`` -> ``(*)``).

    Example: ``tocha.linalg.det(tocha.eye(3))`` is ``tensor(1.)``.
    """
    _check("linalg.det", A)
    return _finish(call(OPS["linalg_det"], (A,)), out)


def slogdet(A: Tensor, *, out=None):
    """(sign, logabsdet): the sign (or phase, for complex inputs) and the log of the absolute
    value of the determinant; ``det = sign * exp(logabsdet)``."""
    _check("linalg.slogdet", A)
    return _finish(_SLOGDET(call(OPS["linalg_slogdet"], (A,))), out)


def logdet(input: Tensor) -> Tensor:
    """log of the determinant: nan for a negative determinant, -inf for a zero one."""
    _check("logdet", input)
    sign, logabsdet = slogdet(input)
    if input.is_complex():
        return logabsdet + sign.log()
    return PUBLIC["where"](sign < 0, math.nan, logabsdet)


@autocast_op("linalg_inv_ex")
def inv_ex(A: Tensor, *, check_errors: bool = False, out=None):
    """(inverse, info): the inverse of each matrix and LAPACK's info (0, or the 1-based index
    of the zero diagonal element of U that makes the matrix singular), without raising."""
    _check("linalg.inv", A)
    result = _INV_EX(call(OPS["linalg_inv_ex"], (A,)))
    if check_errors:
        _check_info("linalg.inv", result.info, _inv_message)
    return _finish(result, out)


def _inv_message(i: int) -> str:
    return (
        f"The diagonal element {i} is zero, the inversion could not be completed because "
        "the input matrix is singular."
    )


@autocast_op("linalg_inv")
def inv(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The inverse of each square matrix; LinAlgError for a singular one."""
    _check("linalg.inv", A)
    inverse, info = call(OPS["linalg_inv_ex"], (A,))
    _check_info("linalg.inv", info, _inv_message)
    return _finish(inverse, out)


def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    """PyTorch's rule: B is a (batch of) vector(s) when 1-D or when its shape is A's minus
    the last dim."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


@autocast_op("linalg_solve")
def solve(A: Tensor, B: Tensor, *, left: bool = True, out: Tensor | None = None) -> Tensor:
    """X with ``A X = B`` (``X A = B`` when not `left`); B a matrix or vector (batch), batch
    dims broadcast. LinAlgError for a singular A."""
    _check("linalg.solve", A)
    _check_same_dtype("linalg.solve", A, B)
    vector = _is_vector_rhs(A, B)
    Bm = B.unsqueeze(-1) if vector else B
    n = A.shape[-1]
    if not left:
        A, Bm = A.mT, Bm.mT
    if Bm.shape[-2] != n:
        k = Bm.shape[-1]
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
            f"{Bm.shape[-2]}x{k})"
        )
    X = call(OPS["linalg_solve"], (A, Bm))
    if not left:
        X = X.mT
    return _finish(X.squeeze(-1) if vector else X, out)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False, out=None):
    """(result, info) of `solve`; info is 0 for every matrix that was solved."""
    _check("linalg.solve_ex", A)
    info = call(OPS["linalg_lu_factor_ex"], (A,))[2]
    if check_errors:
        _check_info(
            "torch.linalg.solve_ex",
            info,
            lambda i: "The solver failed because the input matrix is singular.",
        )
    if info._host().any():
        lu, pivots, _ = lu_factor_ex(A)
        result = lu_solve(lu, pivots, B.unsqueeze(-1) if _is_vector_rhs(A, B) else B, left=left)
        result = result.squeeze(-1) if _is_vector_rhs(A, B) else result
    else:
        result = solve(A, B, left=left)
    return _finish(_SOLVE_EX((result, info)), out)


def pinv(
    A: Tensor,
    rcond=None,
    hermitian: bool = False,
    *,
    atol=None,
    rtol=None,
    out: Tensor | None = None,
) -> Tensor:
    """The Moore-Penrose pseudo-inverse: singular values below ``max(atol, rtol * largest)``
    count as zero (default rtol: eps * max(m, n) when neither is given; `rcond`, the older
    positional form, is `rtol`)."""
    _check("linalg.pinv", A, square=hermitian)
    if rcond is not None:
        if rtol is not None:
            raise TypeError("linalg.pinv(): rcond and rtol cannot both be given")
        rtol = rcond
    atol = atol.item() if isinstance(atol, Tensor) else atol
    rtol = rtol.item() if isinstance(rtol, Tensor) else rtol
    return _finish(call(OPS["linalg_pinv"], (A,), atol, rtol, hermitian), out)


def matrix_power(A: Tensor, n: int, *, out: Tensor | None = None) -> Tensor:
    """A to the integer power n (n < 0: the inverse's power; n = 0: the identity), by
    repeated squaring."""
    _check("linalg.matrix_power", A)
    if n == 0:
        return _finish(_eye_like(A).expand(A.shape).clone(), out)
    base = inv(A) if n < 0 else A
    n = abs(n)
    result = None
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return _finish(result, out)


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential ``sum_k A^k / k!`` of each square matrix."""
    _check("linalg.matrix_exp", A)
    return call(OPS["linalg_matrix_exp"], (A,))


def vander(x: Tensor, N: int | None = None) -> Tensor:
    """The Vandermonde matrix of `x` (shape ``(*, n)`` -> ``(*, n, N)``): column j holds
    ``x ** j``, j from 0 to N - 1 (N defaults to n). Integer inputs give int64."""
    expect_tensor("linalg_vander", x, "x", 1)
    if N is not None:
        N = int_arg("linalg_vander", N, "N")
    dt = x.dtype
    if dt is _dtype.bool or dt in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got "
            f"{_dtype.TITLE[dt]}"
        )
    if x.ndim == 0:
        x = x.reshape(1)
    if N is None:
        N = x.shape[-1]
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    if not (dt.is_floating_point or dt.is_complex):
        x = x.to(_dtype.int64)
    column = x.unsqueeze(-1)
    powers = column.expand(*x.shape, N - 1).cumprod(-1)
    return PUBLIC["cat"]([PUBLIC["ones_like"](column), powers], -1)


def _prod(shape) -> int:
    return math.prod(int(s) for s in shape)


@autocast_op("linalg_tensorinv")
def tensorinv(A: Tensor, ind: int = 2, *, out: Tensor | None = None) -> Tensor:
    """The tensor X with ``tensordot(A, X, ind)`` the identity: A's first `ind` dims are the
    rows of a square matrix, the rest its columns; X has shape
    ``A.shape[ind:] + A.shape[:ind]``."""
    expect_tensor("linalg_tensorinv", A, "input", 1)
    ind = int_arg("linalg_tensorinv", ind, "ind")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if _prod(cols) != _prod(rows):
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {_prod(cols)} != {_prod(rows)}"
        )
    matrix = A.reshape(_prod(rows), _prod(cols))
    _check("linalg.inv", matrix)
    inverse, info = call(OPS["linalg_inv_ex"], (matrix,))
    _check_info("inv", info, _inv_message)
    return _finish(inverse.reshape(cols + rows), out)


@autocast_op("linalg_tensorsolve")
def tensorsolve(A: Tensor, B: Tensor, dims=None, *, out: Tensor | None = None) -> Tensor:
    """The tensor X with ``tensordot(A, X, X.ndim) == B``: X has shape
    ``A.shape[B.ndim:]``; `dims` are dimensions of A moved to its end first."""
    check_tensors("linalg_tensorsolve", ("input", A), ("other", B))
    if dims is not None:
        if not isinstance(dims, (tuple, list)):
            raise TypeError(
                "linalg_tensorsolve(): argument 'dims' must be tuple of ints, not "
                f"{type(dims).__name__}"
            )
        dims = [int_arg("linalg_tensorsolve", d, "dims") for d in dims]
        A = A.movedim(dims, list(range(A.ndim - len(dims), A.ndim)))
    result_shape = tuple(A.shape[B.ndim :])
    if _prod(result_shape) != B.numel():
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {_prod(result_shape)} != {B.numel()}"
        )
    X = solve(A.reshape(B.numel(), _prod(result_shape)), B.reshape(-1))
    return _finish(X.reshape(result_shape), out)


# -- factorisations ---------------------------------------------------------------------------
@autocast_op("linalg_cholesky_ex")
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out=None):
    """(L, info): the Cholesky factor and LAPACK's info (0, or the order of the first leading
    minor that is not positive-definite), without raising."""
    _check("linalg.cholesky", A)
    result = _CHOLESKY_EX(call(OPS["linalg_cholesky_ex"], (A,), bool(upper)))
    if check_errors:
        _check_info("linalg.cholesky", result.info, _cholesky_message)
    return _finish(result, out)


def _cholesky_message(i: int) -> str:
    return (
        "The factorization could not be completed because the input is not "
        f"positive-definite (the leading minor of order {i} is not positive-definite)."
    )


@autocast_op("linalg_cholesky")
def cholesky(A: Tensor, *, upper: bool = False, out: Tensor | None = None) -> Tensor:
    """L lower triangular with ``A = L L^H`` (U = L^H with `upper`) for Hermitian
    positive-definite A (its lower triangle is read); LinAlgError otherwise."""
    _check("linalg.cholesky", A)
    low, info = call(OPS["linalg_cholesky_ex"], (A,), bool(upper))
    _check_info("linalg.cholesky", info, _cholesky_message)
    return _finish(low, out)


@autocast_op("linalg_qr")
def qr(A: Tensor, mode: str = "reduced", *, out=None):
    """(Q, R) with ``A = Q R``: Q with orthonormal columns, R upper triangular. `mode`:
    "reduced" (k = min(m, n) columns), "complete" (Q square) or "r" (Q empty)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of "
            "'reduced' (default), 'r', or 'complete'"
        )
    _check("linalg.qr", A, square=False)
    return _finish(_QR(call(OPS["linalg_qr"], (A,), mode)), out)


def _check_uplo(UPLO: str) -> None:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


@autocast_op("linalg_eigh")
def eigh(A: Tensor, UPLO: str = "L", *, out=None):
    """(eigenvalues ascending, eigenvectors as columns) of Hermitian matrices (only the
    `UPLO` triangle is read)."""
    _check_uplo(UPLO)
    _check("linalg.eigh", A)
    return _finish(_EIGH(call(OPS["linalg_eigh"], (A,), UPLO)), out)


@autocast_op("linalg_eigvalsh")
def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Tensor | None = None) -> Tensor:
    """The eigenvalues of Hermitian matrices, ascending (real dtype)."""
    _check_uplo(UPLO)
    _check("linalg.eigvalsh", A)
    return _finish(call(OPS["linalg_eigvalsh"], (A,), UPLO), out)


@autocast_op("linalg_eig")
def eig(A: Tensor, *, out=None):
    """(eigenvalues, eigenvectors) of general square matrices, always complex."""
    _check("linalg.eig", A)
    return _finish(_EIG(call(OPS["linalg_eig"], (A,))), out)


@autocast_op("linalg_eigvals")
def eigvals(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The eigenvalues of general square matrices (complex)."""
    _check("linalg.eigvals", A)
    return _finish(call(OPS["linalg_eigvals"], (A,)), out)


@autocast_op("linalg_svd")
def svd(A: Tensor, full_matrices: bool = True, *, driver=None, out=None):
    """(U, S, Vh) with ``A = U diag(S) Vh``, S descending (real dtype). With
    `full_matrices` U and Vh are square, else they have k = min(m, n) columns / rows."""
    _check("linalg.svd", A, square=False)
    _check_svd_driver("linalg_svd", driver)
    full_matrices = flag("linalg_svd", full_matrices, "full_matrices")
    return _finish(_SVD(call(OPS["linalg_svd"], (A,), full_matrices)), out)


def _check_svd_driver(fn_name: str, driver) -> None:
    if driver is not None and not isinstance(driver, str):
        raise TypeError(f"{fn_name}(): argument 'driver' must be str, not {type(driver).__name__}")
    if driver is not None:
        raise RuntimeError(
            "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
            "cuSOLVER backend."
        )


@autocast_op("linalg_svdvals")
def svdvals(A: Tensor, *, driver=None, out: Tensor | None = None) -> Tensor:
    """The singular values of each matrix, descending (real dtype)."""
    _check("linalg.svdvals", A, square=False)
    _check_svd_driver("linalg_svdvals", driver)
    return _finish(call(OPS["linalg_svdvals"], (A,)), out)


@autocast_op("linalg_lstsq")
def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None):
    """(solution, residuals, rank, singular_values) of ``min ||A X - B||``, through the SVD
    (the minimum-norm solution). As PyTorch's drivers: residuals for "gelsd", "gelss" and
    "gels" when m > n and every matrix has full rank; rank except for "gels"; singular
    values for "gelsd" and "gelss"; the others are empty."""
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(
            f"torch.linalg.lstsq: parameter `driver` should be one of "
            f"(gels, gelsy, gelsd, gelss), but got {driver}"
        )
    _check("torch.linalg.lstsq", A, square=False)
    _check_same_dtype("torch.linalg.lstsq", A, B)
    vector = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    x, residuals, rank, singular = call(OPS["linalg_lstsq"], (A, Bm), rcond, driver)
    if vector:
        x = x.squeeze(-1)
        residuals = residuals.squeeze(-1) if residuals.numel() else residuals
    return _LSTSQ((x, residuals, rank, singular))


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False, out=None):
    """(LU, pivots, info): the packed LU factorisation with partial pivoting, 1-based int32
    pivots as LAPACK (row i was swapped with row pivots[i] - 1), and info (0, or the index
    of the first zero on U's diagonal)."""
    _check("linalg.lu_factor_ex", A, square=False)
    pivot = flag("linalg_lu_factor_ex", pivot, "pivot")
    check_errors = flag("linalg_lu_factor_ex", check_errors, "check_errors")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    result = _LU_FACTOR_EX(call(OPS["linalg_lu_factor_ex"], (A,)))
    if check_errors:
        _check_info(
            "torch.linalg.lu_factor_ex",
            result.info,
            lambda i: (
                f"U[{i},{i}] is zero and using it on lu_solve would result in a division by zero."
            ),
        )
    return _finish(result, out)


def lu_factor(A: Tensor, *, pivot: bool = True, out=None):
    """(LU, pivots) as `lu_factor_ex`; LinAlgError when U has a zero on its diagonal."""
    _check("linalg.lu_factor", A, square=False)
    if not flag("linalg_lu_factor", pivot, "pivot"):
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    lu, pivots, info = call(OPS["linalg_lu_factor_ex"], (A,))
    _check_info(
        "torch.linalg.lu_factor",
        info,
        lambda i: (
            f"U[{i},{i}] is zero and using it on lu_solve would result in a division by zero. If "
            "you still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
            "linalg.lu_factor_ex(A, pivot)"
        ),
    )
    return _finish(_LU_FACTOR((lu, pivots)), out)


def _check_ldl(name: str, A, kernel: str) -> None:
    if A.dtype in (_dtype.float16, _dtype.bfloat16):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.TITLE[A.dtype]}'")
    _check(f"torch.linalg.{name}", A)


def _ldl_factor(name: str, A: Tensor, hermitian, check_errors: bool):
    expect_tensor(f"linalg_{name}", A, "input", 1)
    hermitian = flag(f"linalg_{name}", hermitian, "hermitian")
    _check_ldl(name, A, "ldl_factor_kernel_cpu")
    LD, pivots, info = call(OPS["linalg_ldl_factor_ex"], (A,), hermitian)
    if check_errors:
        failed = info._host().reshape(-1)
        if failed.any():
            # PyTorch has no message of its own for a zero pivot (an internal assert's)
            code = int(failed[np.flatnonzero(failed)[0]])
            raise RuntimeError(f"torch.linalg.{name}: Unknown error code: {code}.")
    return LD, pivots, info


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False, out=None):
    """(LD, pivots, info): the Bunch-Kaufman factorisation ``A = P L D L^T P^T`` of each
    symmetric matrix (``L^H`` and Hermitian when `hermitian`), only A's lower triangle read,
    in LAPACK's sytrf format: L unit lower triangular below LD's diagonal, D block diagonal
    (1x1 and 2x2 blocks) on LD's diagonal and first subdiagonal, 1-based int32 pivots
    (row k swapped with row pivots[k] - 1; negative on both rows of a 2x2 block), info the
    first zero pivot (0: none)."""
    check_errors = flag("linalg_ldl_factor_ex", check_errors, "check_errors")
    return _finish(_LDL_FACTOR_EX(_ldl_factor("ldl_factor_ex", A, hermitian, check_errors)), out)


def ldl_factor(A: Tensor, *, hermitian: bool = False, out=None):
    """(LD, pivots) of `ldl_factor_ex`, raising where a pivot is zero."""
    LD, pivots, _ = _ldl_factor("ldl_factor", A, hermitian, True)
    return _finish(_LDL_FACTOR((LD, pivots)), out)


def ldl_solve(
    LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False, out: Tensor | None = None
) -> Tensor:
    """X with ``A X = B`` from A's `ldl_factor` (LD, pivots); batches broadcast."""
    check_tensors("linalg_ldl_solve", ("LD", LD), ("pivots", pivots), ("B", B))
    hermitian = flag("linalg_ldl_solve", hermitian, "hermitian")
    _check_ldl("ldl_solve", LD, "ldl_solve_kernel_cpu")
    if pivots.dtype.is_floating_point or pivots.dtype.is_complex:
        raise RuntimeError(
            "torch.linalg.ldl_solve: Expected pivots to be integers. Got "
            f"{_dtype.TITLE[pivots.dtype]}"
        )
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(
            "torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, "
            f"but got pivots with shape {list(pivots.shape)} instead"
        )
    n = LD.shape[-1]
    if B.size(-2) != n:
        raise RuntimeError(
            "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is "
            f"{n} by {n} but each b matrix is {B.shape[-2]} by {B.shape[-1]}"
        )
    if B.dtype is not LD.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type "
            f"{_dtype.TITLE[B.dtype]} and A of type {_dtype.TITLE[LD.dtype]} instead."
        )
    return _finish(call(OPS["linalg_ldl_solve"], (LD, pivots, B), hermitian), out)


def lu_unpack(
    LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True
):
    """(P, L, U) from a packed LU factorisation: ``A = P L U``. Without `unpack_data`, L and
    U are empty; without `unpack_pivots`, P is."""
    if not isinstance(LU_data, Tensor):
        raise not_a_tensor("lu_unpack", LU_data, "LU_data", 1)
    if not isinstance(LU_pivots, Tensor):
        raise not_a_tensor("lu_unpack", LU_pivots, "LU_pivots", 2)
    if LU_data.dim() < 2:
        raise RuntimeError(
            "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(LU_data.shape)} instead"
        )
    if LU_pivots.dtype is not _dtype.int32:
        raise RuntimeError(
            "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
            "dtype.\nNote: this function is intended to be used with the output produced by "
            "torch.linalg.lu_factor"
        )
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    nothing = LU_data.new_empty(0)
    P = nothing
    if unpack_pivots and k == 0:  # no pivot to apply: identities
        P = _eye_like(LU_data, m).expand(*LU_data.shape[:-2], m, m).clone()
    elif unpack_pivots:
        P = call(OPS["lu_permutation_matrix"], (LU_pivots,), m, LU_data._data.dtype)
    L = U = nothing
    if unpack_data:
        L = tril(LU_data, -1).narrow(-1, 0, k) + _eye_like(LU_data, max(m, n))[:m, :k]
        U = triu(LU_data).narrow(-2, 0, k)
    return _LU_UNPACK((P, L, U))


def lu(A: Tensor, *, pivot: bool = True, out=None):
    """(P, L, U) with ``A = P L U``: P a permutation matrix, L unit lower triangular
    (m x k), U upper triangular (k x n)."""
    _check("linalg.lu", A, square=False)
    pivot = flag("linalg_lu", pivot, "pivot")
    if not pivot:
        raise RuntimeError("linalg.lu: LU without pivoting is not implemented on the CPU")
    LU, pivots, _ = call(OPS["linalg_lu_factor_ex"], (A,))
    return _finish(_LU(lu_unpack(LU, pivots)), out)


def lu_solve(
    LU: Tensor,
    pivots: Tensor,
    B: Tensor,
    *,
    left: bool = True,
    adjoint: bool = False,
    out: Tensor | None = None,
) -> Tensor:
    """X with ``A X = B`` from A's `lu_factor` (``X A = B`` when not `left`; A^H for A with
    `adjoint`)."""
    _check("linalg.lu_solve", LU)
    _check_same_dtype("linalg.lu_solve", LU, B)
    n = LU.shape[-1]
    size = B.shape[-2] if left else B.shape[-1]
    if B.ndim < 2 or size != n:
        raise RuntimeError(
            f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
            f"{'x'.join(map(str, B.shape[-2:]))})"
        )
    return _finish(call(OPS["linalg_lu_solve"], (LU, pivots, B), bool(left), bool(adjoint)), out)


def solve_triangular(
    A: Tensor,
    B: Tensor,
    *,
    upper: bool,
    left: bool = True,
    unitriangular: bool = False,
    out: Tensor | None = None,
) -> Tensor:
    """X with ``A X = B`` (``X A = B`` when not `left`) for triangular A (only its `upper` or
    lower triangle is read; its diagonal taken as ones with `unitriangular`)."""
    _check("linalg.solve_triangular", A)
    if B.ndim < 2:
        raise RuntimeError(
            "linalg.solve_triangular: The input tensor B must have at least 2 dimensions."
        )
    _check_same_dtype("linalg.solve_triangular", A, B)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(
            f"linalg.solve_triangular: Incompatible shapes of A and B for the "
            f"equation {'AX = B' if left else 'XA = B'} ({n}x{n} and "
            f"{B.shape[-2]}x{B.shape[-1]})"
        )
    return _finish(
        call(OPS["linalg_solve_triangular"], (A, B), bool(upper), bool(left), bool(unitriangular)),
        out,
    )


@autocast_op("linalg_householder_product")
def householder_product(A: Tensor, tau: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The first n columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^H``, v_i the i-th
    column of A below the diagonal with a 1 on it (LAPACK's orgqr)."""
    check_tensors("linalg_householder_product", ("input", A), ("tau", tau))
    _check("torch.linalg.householder_product", A, square=False)
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-2] must be greater "
            "than or equal to input.shape[-1]"
        )
    if k > n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-1] must be greater "
            "than or equal to tau.shape[-1]"
        )
    V = tril(A, -1) + _eye_like(A, m)[:, :n]
    Q = _eye_like(A, m)[:, :n].expand(A.shape[:-2] + (m, n))
    for i in range(k - 1, -1, -1):
        v = V.narrow(-1, i, 1)
        t = tau.narrow(-1, i, 1).unsqueeze(-1)
        Q = Q - (t * v) @ (_mH(v) @ Q)
    return _finish(Q, out)


# -- products ---------------------------------------------------------------------------------
@autocast_op("linalg_vecdot")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    """``sum(conj(x) * y)`` along `dim`, broadcast."""
    if type(dim) is not int:
        dim = index_arg("linalg_vecdot", dim, "dim")
    if not isinstance(x, Tensor):
        raise not_a_tensor("vecdot", x, "x", 1)
    if not isinstance(y, Tensor):
        raise not_a_tensor("vecdot", y, "y", 2)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(
            "linalg.vecdot: Expected a floating point or complex tensor as input. Got "
            f"{_dtype.TITLE[x.dtype]}"
        )
    if x.dtype is not y.dtype:
        raise RuntimeError(
            f"linalg.vecdot: Expected x and y to have the same dtype, but found "
            f"x of type {_dtype.TITLE[x.dtype]} and y of type "
            f"{_dtype.TITLE[y.dtype]} instead"
        )
    try:
        return _finish(call(OPS["linalg_vecdot"], (x, y), dim), out)
    except (ValueError, OverflowError):
        _wrap_dim(dim, max(x.dim(), y.dim()))
        raise


def cross(input: Tensor, other: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    """The cross product of 3-vectors along `dim`, broadcast."""
    try:
        same = input.ndim == other.ndim
    except AttributeError:
        check_tensors("linalg_cross", ("input", input), ("other", other))
        raise
    if not same:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got "
            f"{input.shape[dim]} and {other.shape[dim]}"
        )
    if input.dtype is not other.dtype:
        raise RuntimeError(
            f"expected scalar type {_dtype.TITLE[input.dtype]} but found "
            f"{_dtype.TITLE[other.dtype]}"
        )
    shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    a, b = input.expand(shape), other.expand(shape)
    dim = dim % len(shape)
    a0, a1, a2 = (a.narrow(dim, i, 1) for i in range(3))
    b0, b1, b2 = (b.narrow(dim, i, 1) for i in range(3))
    result = PUBLIC["cat"]([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)
    return _finish(result, out)


def multi_dot(tensors, *, out: Tensor | None = None) -> Tensor:
    """The product of a chain of matrices, in the order that costs the fewest multiplications;
    the first may be a row vector (1-D) and the last a column vector."""
    check_tensor_list("linalg_multi_dot", tensors)
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vector, last_vector = tensors[0].ndim == 1, tensors[-1].ndim == 1
    if first_vector:
        tensors[0] = tensors[0].unsqueeze(0)
    if last_vector:
        tensors[-1] = tensors[-1].unsqueeze(-1)
    for i, t in enumerate(tensors):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    result = _chain(
        tensors,
        _chain_order([t.shape[0] for t in tensors] + [tensors[-1].shape[1]]),
        0,
        len(tensors) - 1,
    )
    if first_vector:
        result = result.squeeze(0)
    if last_vector:
        result = result.squeeze(-1)
    return _finish(result, out)


def _chain_order(dims: list) -> list:
    """split[i][j]: where the cheapest product of matrices i..j splits (dynamic programming)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(tensors, split, i, j):
    if i == j:
        return tensors[i]
    k = split[i][j]
    return _chain(tensors, split, i, k) @ _chain(tensors, split, k + 1, j)


def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``tocha.matmul`` under torch.linalg's name."""
    return PUBLIC["matmul"](input, other, out=out)


# -- norms, rank, condition number ------------------------------------------------------------
def _dims_tuple(dim, fn_name: str = "linalg_vector_norm"):
    if dim is None:
        return None
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    for d in dims:
        if not isinstance(d, numbers.Integral) or isinstance(d, bool):
            raise TypeError(
                f"{fn_name}(): argument 'dim' must be tuple of ints, not {type(dim).__name__}"
            )
    return dims


def vector_norm(
    x: Tensor,
    ord: float = 2,
    dim=None,
    keepdim: bool = False,
    *,
    dtype=None,
    out: Tensor | None = None,
) -> Tensor:
    """``(sum |x|^ord)^(1/ord)`` over `dim` (every dim when None); ord inf / -inf: the
    largest / smallest |x|; ord 0: the count of nonzeros. Real result."""
    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not str")
    _check_floating("linalg.vector_norm", x, low_precision=True)
    return _finish(PUBLIC["norm"](x, float(ord), _dims_tuple(dim), keepdim, dtype=dtype), out)


def matrix_norm(
    A: Tensor,
    ord="fro",
    dim=(-2, -1),
    keepdim: bool = False,
    *,
    dtype=None,
    out: Tensor | None = None,
) -> Tensor:
    """A matrix norm over the two dims `dim`: "fro", "nuc", 2 / -2 (the largest / smallest
    singular value), 1 / -1 (max / min column sum of |A|), inf / -inf (max / min row sum)."""
    if not isinstance(A, Tensor):
        raise not_a_tensor("matrix_norm", A, "A", 1)
    keepdim = flag("linalg_matrix_norm", keepdim, "keepdim")
    if A.ndim < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    _check_floating("linalg.matrix_norm", A, low_precision=ord not in ("nuc", 2, -2))
    if dtype is not None:
        check_norm_dtype("linalg.matrix_norm", A.dtype, dtype)
        A = A.to(dtype)
    if len(dim) != 2:
        raise RuntimeError(
            f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}"
        )
    d0, d1 = (_wrap_dim(d, A.ndim) for d in dim)
    if ord == "fro":
        return _finish(vector_norm(A, 2, (d0, d1), keepdim), out)
    if ord not in ("nuc", 2, -2, 1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if ord in ("nuc", 2, -2):
        S = svdvals(A.movedim((d0, d1), (-2, -1)))
        result = S.sum(-1) if ord == "nuc" else S.amax(-1) if ord == 2 else S.amin(-1)
        if keepdim:
            for d in sorted((d0, d1)):
                result = result.unsqueeze(d)
        return _finish(result, out)
    summed, reduced = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = A.abs().sum(summed, keepdim=True)
    result = sums.amax(reduced, keepdim=True) if ord > 0 else sums.amin(reduced, keepdim=True)
    return _finish(result if keepdim else result.squeeze((d0, d1)), out)


def norm(
    A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None, out: Tensor | None = None
) -> Tensor:
    """`vector_norm` or `matrix_norm`: a matrix norm when `ord` is a string or `dim` has two
    dims (or A is 2-D with `ord` given and no `dim`); with neither, the 2-norm of all of A."""
    if not isinstance(A, Tensor):
        raise not_a_tensor("norm", A, "A", 1)
    keepdim = flag("linalg_norm", keepdim, "keepdim")
    dims = _dims_tuple(dim, "linalg_norm")
    if dims is not None and len(dims) not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}"
        )
    if ord is None:
        return vector_norm(A, 2, dims, keepdim, dtype=dtype, out=out)
    if (
        isinstance(ord, str)
        or (dims is not None and len(dims) == 2)
        or (dims is None and A.ndim == 2)
    ):
        if dims is None and A.ndim != 2:
            raise RuntimeError(
                "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
                if A.ndim < 2
                else f"linalg.norm: If dim is not specified but ord is, the input "
                f"must be 1D or 2D. Got {A.ndim}D."
            )
        return matrix_norm(A, ord, dims or (-2, -1), keepdim, dtype=dtype, out=out)
    if dims is None and A.ndim != 1:
        raise RuntimeError(
            f"linalg.norm: If dim is not specified but ord is, the input must "
            f"be 1D or 2D. Got {A.ndim}D."
        )
    return vector_norm(A, ord, dims, keepdim, dtype=dtype, out=out)


_LOW_FLOATS = (_dtype.float16, _dtype.bfloat16)


@autocast_op("linalg_matrix_rank")
def matrix_rank(
    A: Tensor,
    tol=None,
    hermitian: bool = False,
    *,
    atol=None,
    rtol=None,
    out: Tensor | None = None,
) -> Tensor:
    """The number of singular values above ``max(atol, rtol * largest)`` (int64); default rtol
    eps * max(m, n) when neither tolerance is given."""
    if tol is atol is rtol is None and getattr(A, "dtype", None) in _LOW_FLOATS:
        # PyTorch's default tolerance reads the dtype's eps first
        raise RuntimeError("This function doesn't handle types other than float and double")
    _check("linalg.matrix_rank", A, square=hermitian)
    S = (eigvalsh(A).abs() if hermitian else svdvals(A)).detach()
    if tol is not None:
        atol, rtol = tol, 0.0
    for name, t in (("atol", atol), ("rtol", rtol)):
        if isinstance(t, Tensor) and t.dtype.is_complex:
            raise RuntimeError(
                f"torch.linalg.matrix_rank: {name} tensor of complex type is not supported. "
                f"Got {_dtype.TITLE[t.dtype]}"
            )
    if atol is None and rtol is None:
        rtol = _dtype.finfo(A.dtype).eps * max(A.shape[-2:])
    # tolerances may be tensors broadcasting with the batch dims (the result takes their shape)
    largest = S.amax(-1) if S.shape[-1] else PUBLIC["zeros"](S.shape[:-1], dtype=S.dtype)
    scaled = largest * (0.0 if rtol is None else rtol)
    floor = (
        atol
        if isinstance(atol, Tensor)
        else PUBLIC["full_like"](scaled, atol or 0.0, dtype=_dtype.float64)
    )
    threshold = PUBLIC["maximum"](scaled, floor.to(scaled.dtype))
    return _finish((S > threshold.unsqueeze(-1)).sum(-1), out)


@autocast_op("linalg_cond")
def cond(A: Tensor, p=None, *, out: Tensor | None = None) -> Tensor:
    """The condition number of each matrix in the norm `p` (None or 2: the ratio of the
    largest to the smallest singular value)."""
    _check("linalg.cond", A, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        S = svdvals(A)
        if not S.shape[-1]:  # empty matrices: PyTorch's condition number 0
            return _finish(PUBLIC["zeros"](S.shape[:-1], dtype=S.dtype), out)
        ratio = S.amax(-1) / S.amin(-1) if p != -2 else S.amin(-1) / S.amax(-1)
        return _finish(ratio, out)
    return _finish(matrix_norm(A, p) * matrix_norm(inv(A), p), out)


# -- randomized low-rank factorisations -------------------------------------------------------
def _approximate_basis(A: Tensor, q: int, niter: int) -> Tensor:
    """An orthonormal basis (*, m, q) of the range of A (*, m, n), by randomized subspace
    iteration (Halko, Martinsson and Tropp, 2009, algorithm 4.4): the range of A times a
    Gaussian matrix, refined by `niter` passes through A^H and A."""
    dtype = A.dtype if A.is_floating_point() or A.is_complex() else _dtype.get_default_dtype()
    R = PUBLIC["randn"](A.shape[-1], q, dtype=dtype, device=A.device)
    Q = qr(A @ R).Q
    AH = _mH(A)
    for _ in range(niter):
        Q = qr(A @ qr(AH @ Q).Q).Q
    return Q


def svd_lowrank(
    A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """(U, S, V): an approximate truncated SVD of rank `q` of each matrix of A (or of
    ``A - M``, M broadcast to A), ``A ~ U diag(S) V^H``, found by randomized subspace
    iteration with `niter` refinement passes; U (*, m, k), S (*, k), V (*, n, k),
    k = min(q, m, n). Random: seed tocha's generator to repeat a result."""
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    if M is not None:
        if M.dtype is not A.dtype:  # PyTorch multiplies M by A's random matrix
            raise RuntimeError(
                "expected m1 and m2 to have the same dtype, but got: "
                f"{CPP_NAMES[M.dtype.name]} != {CPP_NAMES[A.dtype.name]}"
            )
        A = A - M
    m, n = A.shape[-2:]
    if m < n:
        A = _mH(A)
    Q = _approximate_basis(A, q, niter)
    U, S, Vh = svd(_mH(Q) @ A, full_matrices=False)
    U, V = Q @ U, _mH(Vh)
    return (V, S, U) if m < n else (U, S, V)


def pca_lowrank(
    A: Tensor, q: int | None = None, center: bool = True, niter: int = 2
) -> tuple[Tensor, Tensor, Tensor]:
    """(U, S, V): the principal components of the rows of each matrix of A, as `svd_lowrank`
    of A with its column means subtracted (unless not `center`); `q` (default
    min(6, m, n)) may not exceed min(m, n). The columns of V are the principal directions,
    ``S ** 2 / (m - 1)`` the variances along them."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if not (isinstance(niter, int) and niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(-2, keepdim=True)
    return svd_lowrank(A, q, niter)


# -- PyTorch's top-level aliases --------------------------------------------------------------
@autocast_op("inverse")
def inverse(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The inverse of each square matrix (``tocha.linalg.inv``)."""
    return inv(input, out=out)


@autocast_op("svd")
def _legacy_svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out=None):
    """(U, S, V) with ``input = U diag(S) V^H`` (V, not Vh); `some`: reduced factors. Without
    `compute_uv`, U and V are zero matrices."""
    some, compute_uv = flag("svd", some, "some"), flag("svd", compute_uv, "compute_uv")
    U, S, Vh = svd(input, full_matrices=not some)
    if not compute_uv:
        U, Vh = PUBLIC["zeros_like"](U), PUBLIC["zeros_like"](Vh)
    return _finish(_TORCH_SVD((U, S, _mH(Vh))), out)


@autocast_op("qr")
def _legacy_qr(input: Tensor, some: bool = True, *, out=None):
    """(Q, R) of ``tocha.linalg.qr`` with mode "reduced" (`some`) or "complete"."""
    some = flag("qr", some, "some")
    return _finish(qr(input, "reduced" if some else "complete"), out)


@autocast_op("cholesky")
def _legacy_cholesky(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """The Cholesky factor (``tocha.linalg.cholesky``); an input with no elements comes back
    as it is, whatever its shape and dtype, as from PyTorch's legacy kernel."""
    if isinstance(input, Tensor) and not input._data.size:
        return _finish(input.clone(), out)
    return cholesky(input, upper=upper, out=out)


@autocast_op("geqrf")
def geqrf(input: Tensor, *, out=None):
    """(a, tau): the QR factorisation of each matrix in LAPACK's geqrf form: R on and above
    a's diagonal, the Householder vectors below it (their leading 1 implied) with their
    scalars in tau, k = min(m, n) of them; ``linalg.householder_product(a, tau)`` is Q.
    Shapes: a like input ``(*, m, n)``, tau ``(*, k)``. No derivative (as PyTorch)."""
    expect_tensor("geqrf", input, "input")
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    dt = input.dtype
    if not (dt.is_floating_point or dt.is_complex) or dt in (_dtype.float16, _dtype.bfloat16):
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{_dtype.TITLE[dt]}'")
    return _finish(_GEQRF(call(OPS["geqrf"], (input,))), out)


@autocast_op("pinverse")
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The pseudo-inverse with singular values below ``rcond * largest`` dropped."""
    return pinv(input, rtol=rcond)


for _fn, _name in (
    (det, "det"),
    (slogdet, "slogdet"),
    (logdet, "logdet"),
    (inverse, "inverse"),
    (_legacy_svd, "svd"),
    (_legacy_qr, "qr"),
    (_legacy_cholesky, "cholesky"),
    (pinverse, "pinverse"),
    (matrix_power, "matrix_power"),
    (matrix_exp, "matrix_exp"),
    (lu_unpack, "lu_unpack"),
    (geqrf, "geqrf"),
):
    export(_fn, _name, method=_name != "lu_unpack")
export(svd_lowrank)
export(pca_lowrank)

_aliases.alias_module(globals())
