"""The orthogonal parametrization of ``torch.nn.utils.parametrizations.orthogonal``: a matrix
(or batch of matrices) kept orthogonal, or unitary, through the matrix exponential or the
Cayley map of a skew-symmetric matrix, or a product of Householder reflections."""

from __future__ import annotations

import tocha
from tocha import Tensor

from ..modules.module import Module
from . import parametrize

_MAPS = ("matrix_exp", "cayley", "householder")


def _size(shape) -> str:
    return f"torch.Size([{', '.join(map(str, shape))}])"


def _is_orthogonal(q: Tensor) -> bool:
    """Whether the columns of `q` are orthonormal, to ``10 * n * eps``."""
    n, k = q.size(-2), q.size(-1)
    eye = tocha.eye(k, dtype=q.dtype, device=q.device)
    return tocha.allclose(q.mH @ q, eye, atol=10 * n * tocha.finfo(q.dtype).eps)


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of the QR decomposition of `a` whose R has a positive diagonal."""
    q, r = tocha.linalg.qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _householder_form(a: Tensor) -> Tensor:
    """`a`'s Householder QR as LAPACK's geqrf stores it (R on and above the diagonal, each
    reflector below it with an implicit leading 1), with the diagonal replaced by the signs
    that the householder map multiplies its columns by: R's, negated where no reflection
    was needed."""
    r = a.clone()
    taus = []
    for j in range(r.size(-1)):
        alpha, rest = r[..., j, j], r[..., j + 1 :, j]
        rest_norm = tocha.linalg.vector_norm(rest, dim=-1)
        reflect = rest_norm != 0
        beta = -tocha.copysign(tocha.hypot(alpha, rest_norm), alpha)
        tau = tocha.where(reflect, (beta - alpha) / beta, tocha.zeros_like(alpha))
        scale = tocha.where(reflect, alpha - beta, tocha.ones_like(alpha))
        v = tocha.cat([tocha.ones_like(alpha).unsqueeze(-1), rest / scale.unsqueeze(-1)], -1)
        trailing = r[..., j:, j + 1 :]
        r[..., j:, j + 1 :] = trailing - tau[..., None, None] * v.unsqueeze(-1) * (
            v.unsqueeze(-2) @ trailing
        )
        r[..., j, j] = tocha.where(reflect, beta, alpha)
        r[..., j + 1 :, j] = v[..., 1:]
        taus.append(tau)
    signs = r.diagonal(dim1=-2, dim2=-1).sign()
    unreflected = tocha.stack(taus, -1) == 0
    r.diagonal(dim1=-2, dim2=-1).copy_(tocha.where(unreflected, -signs, signs))
    return r


class _Orthogonal(Module):
    """The parametrization: ``forward`` maps an unconstrained matrix to an orthogonal one;
    with `use_trivialization`, the result is multiplied by the buffer ``base``, which
    ``right_inverse`` sets to the assigned matrix (made orthogonal)."""

    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map == "householder":
            reflectors = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (reflectors * reflectors).sum(dim=-2))
            Q = tocha.linalg.householder_product(reflectors, tau)
            # The diagonal holds the signs of the columns (not differentiated through).
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            # A skew-symmetric (skew-Hermitian) n x n matrix from the lower triangle of X.
            X = X.tril()
            if n != k:
                X = tocha.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == "matrix_exp":
                Q = tocha.matrix_exp(A)
            else:
                eye = tocha.eye(n, dtype=A.dtype, device=A.device)
                Q = tocha.linalg.solve(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        if "base" in self._buffers:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    @tocha.no_grad()
    def right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {_size(self.shape)}. "
                f"Got a tensor of shape {_size(Q.shape)}."
            )
        given = Q
        n, k = Q.size(-2), Q.size(-1)
        transposed = n < k
        if transposed:
            Q = Q.mT
            n, k = k, n
        if "base" not in self._buffers:
            if self.orthogonal_map != "householder":
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False."
                )
            form = _householder_form(Q)
            return form.mT if transposed else form
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            # Complete the columns into an orthogonal n x n matrix.
            extra = tocha.randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(tocha.cat([Q, extra], dim=-1))
        self.base = Q
        # -I: every map sends it to the identity, so the parametrized tensor is base.
        neg_eye = tocha.zeros_like(given)
        neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_eye


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Keep ``module.<name>`` (a matrix or batch of matrices, real or complex) orthogonal
    (unitary): ``Q^H Q = I`` for tall matrices, ``Q Q^H = I`` for wide ones.

    `orthogonal_map` is ``"matrix_exp"`` or ``"cayley"`` (of a skew-symmetric matrix built
    from the lower triangle) or ``"householder"`` (a product of reflections; real only); by
    default ``"matrix_exp"`` for square or complex matrices, ``"householder"`` otherwise.
    With `use_trivialization` (the default), the maps start from the buffer ``base``:
    assigning to ``module.<name>`` sets ``base`` to the value (made orthogonal by QR when it
    is not) and resets ``original`` to ``-I``. Without it, only the householder map can be
    assigned to.

    Example:
        >>> m = orthogonal(nn.Linear(20, 40))
        >>> Q = m.weight
        >>> tocha.dist(Q.T @ Q, tocha.eye(20)) < 1e-5
        tensor(True)
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    parametrization = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, parametrization, unsafe=True)
    return module
