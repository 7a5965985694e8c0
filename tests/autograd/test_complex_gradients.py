"""Gradients and forward-mode tangents of complex inputs, PyTorch's convention: for a real loss
L of z = x + iy the gradient is ``dL/dx + i dL/dy``, so a holomorphic f passes back
``grad * conj(f'(z))``. One table of ops on complex128 inputs drives gradcheck (reverse and
forward mode, complex inputs and outputs as pairs of reals) and the comparison with PyTorch's
gradients of ``(f(z) * c).real.sum()`` (c a fixed random complex tensor) and tangents. Also
here: atan2's gradient at the origin, sign and sgn of NaN, det's gradient at singular
matrices, and the gradients of linalg.eig and eigvals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha
from tests.autograd.forward import assert_tangents_match
from tests.core.helpers import assert_tensor
from tocha import autograd


def _c(*shape, seed=0, shift=0.0):
    """complex128 values with real and imaginary parts in +-[0.3, 1.5], plus `shift` (a
    matrix: times the identity)."""
    rng = np.random.default_rng(seed)
    parts = [rng.uniform(0.3, 1.5, shape) * rng.choice([-1, 1], shape) for _ in range(2)]
    z = parts[0] + 1j * parts[1]
    if shift:
        z = z + shift * (np.eye(shape[-1]) if len(shape) >= 2 else 1)
    return z


def _r(*shape, seed=0, shift=0.0):
    return _c(*shape, seed=seed, shift=shift).real.copy()


def _hermitian_pd(lib, a):
    return a @ a.mH + 3 * lib.eye(a.shape[-1], dtype=a.dtype)


def _phase_free(lib, vectors):
    """A function of eigenvectors or singular vectors that no column phase changes: the
    projector ``V diag(w) V^H`` (w fixed weights)."""
    n = vectors.shape[-1]
    weights = lib.arange(1, n + 1, dtype=lib.float64).to(vectors.dtype)
    return (vectors * weights) @ vectors.mH


def _eig_reconstruction(lib, a):
    """V diag(w) V^-1 from linalg.eig (w fixed weights): invariant under any scaling of the
    eigenvectors."""
    values, vectors = lib.linalg.eig(a)
    n = vectors.shape[-1]
    weights = lib.arange(1, n + 1, dtype=lib.float64).to(vectors.dtype)
    return lib.linalg.solve(vectors.mT, (vectors * weights).mT).mT + values.sum()


# (id, f(lib, *inputs), input arrays)
CASES = [
    # holomorphic unary functions, including those with branch cuts
    *[
        (name, (lambda n: lambda m, z: getattr(m, n)(z))(name), [_c(4)])
        for name in (
            "exp log log1p expm1 sqrt rsqrt square sin cos tan asin acos atan sinh cosh "
            "tanh asinh acosh atanh sigmoid reciprocal sinc"
        ).split()
    ],
    ("acosh_left", lambda m, z: m.acosh(z - 1.5), [_c(4, seed=1)]),
    ("abs", lambda m, z: m.abs(z), [_c(4)]),
    ("sgn", lambda m, z: m.sgn(z), [_c(4)]),
    ("angle", lambda m, z: m.angle(z), [_c(4)]),
    # powers
    ("pow_2", lambda m, z: z**2, [_c(3)]),
    ("pow_3_5", lambda m, z: z**3.5, [_c(3)]),
    ("pow_complex_scalar", lambda m, z: z ** (1.5 + 0.5j), [_c(3)]),
    ("rpow", lambda m, z: 2.0**z, [_c(3)]),
    ("rpow_negative_base", lambda m, z: (-2.0) ** z, [_c(3)]),
    ("rpow_complex_base", lambda m, z: (1 + 2j) ** z, [_c(3)]),
    ("pow_tensors", lambda m, z, w: z**w, [_c(3), _c(3, seed=1)]),
    ("pow_self", lambda m, z: z**z, [_c(3)]),
    ("pow_real_base", lambda m, x, w: x.abs() ** w, [_r(3), _c(3, seed=1)]),
    ("pow_real_exponent", lambda m, z, y: z**y, [_c(3), _r(3, seed=1)]),
    ("mean_squared", lambda m, z: z.mean() ** 2, [_c(2, 3)]),
    # arithmetic
    ("mul", lambda m, z, w: z * w, [_c(3), _c(3, seed=1)]),
    ("mul_scalar", lambda m, z: z * (2 - 1j), [_c(3)]),
    ("div", lambda m, z, w: z / w, [_c(3), _c(3, seed=1)]),
    ("rdiv", lambda m, z: (2 - 1j) / z, [_c(3)]),
    (
        "addcmul",
        lambda m, x, y, z: m.addcmul(x, y, z, value=0.5),
        [_c(3), _c(3, seed=1), _c(3, seed=2)],
    ),
    ("lerp", lambda m, x, y, w: m.lerp(x, y, w), [_c(3), _c(3, seed=1), _c(3, seed=2)]),
    ("logaddexp", lambda m, z, w: m.logaddexp(z, w), [_c(4), _c(4, seed=1)]),
    # reductions and scans
    ("prod", lambda m, z: z.prod(), [_c(4)]),
    ("prod_dim", lambda m, z: z.prod(1), [_c(2, 3)]),
    ("prod_with_zero", lambda m, z: (z * m.tensor([1.0, 0.0, 1.0])).prod(), [_c(3)]),
    ("cumprod", lambda m, z: z.cumprod(0), [_c(4)]),
    ("cumprod_with_zero", lambda m, z: (z * m.tensor([1.0, 0.0, 1.0, 1.0])).cumprod(0), [_c(4)]),
    ("logsumexp", lambda m, z: z.logsumexp(0), [_c(4)]),
    ("logcumsumexp", lambda m, z: z.logcumsumexp(0), [_c(4)]),
    ("var", lambda m, z: z.var(0), [_c(3, 2)]),
    ("vector_norm_3", lambda m, z: m.linalg.vector_norm(z, 3, dim=0), [_c(3, 2)]),
    # products
    ("einsum_dot", lambda m, z: m.einsum("i,i->", z, z), [_c(3)]),
    ("einsum_matmul", lambda m, a, b: m.einsum("ij,jk->ik", a, b), [_c(2, 3), _c(3, 2, seed=1)]),
    ("matmul", lambda m, a, b: a @ b, [_c(2, 3), _c(3, 2, seed=1)]),
    ("vdot", lambda m, a, b: m.vdot(a, b), [_c(3), _c(3, seed=1)]),
    ("inner", lambda m, a, b: m.inner(a, b), [_c(2, 3), _c(3, seed=1)]),
    ("outer", lambda m, a, b: m.outer(a, b), [_c(2), _c(3, seed=1)]),
    ("kron", lambda m, a, b: m.kron(a, b), [_c(2, 2), _c(2, 3, seed=1)]),
    ("tensordot", lambda m, a, b: m.tensordot(a, b, 1), [_c(2, 3), _c(3, 2, seed=1)]),
    ("linalg_vecdot", lambda m, a, b: m.linalg.vecdot(a, b), [_c(2, 3), _c(3, seed=1)]),
    (
        "linear",
        lambda m, x, w, b: m.nn.functional.linear(x, w, b),
        [_c(2, 3), _c(4, 3, seed=1), _c(4, seed=2)],
    ),
    ("conv1d", lambda m, x, w: m.nn.functional.conv1d(x, w), [_c(1, 2, 5), _c(3, 2, 2, seed=1)]),
    (
        "conv2d",
        lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, padding=1),
        [_c(1, 2, 3, 3), _c(2, 2, 2, 2, seed=1), _c(2, seed=2)],
    ),
    (
        "conv_transpose1d",
        lambda m, x, w: m.nn.functional.conv_transpose1d(x, w),
        [_c(1, 2, 4), _c(2, 3, 2, seed=1)],
    ),
    # linear algebra
    ("det", lambda m, a: m.linalg.det(a), [_c(2, 3, 3)]),
    ("slogdet", lambda m, a: m.linalg.slogdet(a)[0] * m.linalg.slogdet(a)[1], [_c(3, 3)]),
    ("logdet", lambda m, a: m.logdet(a), [_c(3, 3, shift=3)]),
    ("inv", lambda m, a: m.linalg.inv(a), [_c(3, 3, shift=3)]),
    ("solve", lambda m, a, b: m.linalg.solve(a, b), [_c(3, 3, shift=3), _c(3, 2, seed=1)]),
    (
        "solve_right",
        lambda m, a, b: m.linalg.solve(a, b, left=False),
        [_c(3, 3, shift=3), _c(2, 3, seed=1)],
    ),
    ("pinv", lambda m, a: m.linalg.pinv(a), [_c(3, 4)]),
    ("pinv_tall", lambda m, a: m.linalg.pinv(a), [_c(4, 3)]),
    ("lstsq", lambda m, a, b: m.linalg.lstsq(a, b).solution, [_c(5, 3), _c(5, 2, seed=1)]),
    ("matrix_exp", lambda m, a: m.linalg.matrix_exp(a), [_c(3, 3)]),
    ("matrix_power", lambda m, a: m.linalg.matrix_power(a, -2), [_c(3, 3, shift=3)]),
    ("cholesky", lambda m, a: m.linalg.cholesky(_hermitian_pd(m, a)), [_c(3, 3)]),
    ("cholesky_upper", lambda m, a: m.linalg.cholesky(_hermitian_pd(m, a), upper=True), [_c(3, 3)]),
    ("qr", lambda m, a: m.linalg.qr(a)[0] @ m.linalg.qr(a)[1], [_c(4, 3)]),
    ("qr_r", lambda m, a: m.linalg.qr(a)[1].abs(), [_c(4, 3)]),
    ("qr_wide", lambda m, a: m.linalg.qr(a)[0].abs().sum() + m.linalg.qr(a)[1].abs(), [_c(3, 5)]),
    ("eigvalsh", lambda m, a: m.linalg.eigvalsh(a + a.mH), [_c(3, 3)]),
    ("eigh", lambda m, a: _phase_free(m, m.linalg.eigh(a + a.mH)[1]), [_c(3, 3)]),
    ("svdvals", lambda m, a: m.linalg.svdvals(a), [_c(3, 4)]),
    ("svd_u", lambda m, a: _phase_free(m, m.linalg.svd(a, full_matrices=False)[0]), [_c(4, 3)]),
    (
        "svd_uvh",
        lambda m, a: (lambda u, s, vh: u @ vh)(*m.linalg.svd(a, full_matrices=False)),
        [_c(3, 4)],
    ),
    ("matrix_norm_2", lambda m, a: m.linalg.matrix_norm(a, 2), [_c(3, 2)]),
    ("matrix_norm_nuc", lambda m, a: m.linalg.matrix_norm(a, "nuc"), [_c(3, 2)]),
    ("cond", lambda m, a: m.linalg.cond(a), [_c(3, 3)]),
    # shifted: tocha and LAPACK pivot a complex LU alike (tocha on the largest |z|, LAPACK on
    # the largest |Re z| + |Im z|)
    ("lu_factor", lambda m, a: m.linalg.lu_factor(a).LU, [_c(3, 3, shift=3)]),
    ("lu", lambda m, a: m.linalg.lu(a)[1] + m.linalg.lu(a)[2], [_c(3, 3, shift=3)]),
    (
        "lu_solve",
        lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b),
        [_c(3, 3, shift=3), _c(3, 2, seed=1)],
    ),
    (
        "lu_solve_adjoint",
        lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, adjoint=True),
        [_c(3, 3, shift=3), _c(3, 2, seed=1)],
    ),
    (
        "lu_solve_right",
        lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, left=False),
        [_c(3, 3, shift=3), _c(2, 3, seed=1)],
    ),
    (
        "solve_triangular",
        lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
        [_c(3, 3, shift=3), _c(3, 2, seed=1)],
    ),
    (
        "solve_triangular_right",
        lambda m, a, b: m.linalg.solve_triangular(
            a, b, upper=False, left=False, unitriangular=True
        ),
        [_c(3, 3, shift=3), _c(2, 3, seed=1)],
    ),
    ("eigvals", lambda m, a: m.linalg.eigvals(a), [_c(3, 3)]),
    ("eigvals_of_real", lambda m, a: m.linalg.eigvals(a), [_r(3, 3)]),
    ("eig_vectors_abs", lambda m, a: m.linalg.eig(a)[1].abs(), [_c(3, 3)]),
    ("eig_reconstruction", _eig_reconstruction, [_c(3, 3)]),
    ("eig_reconstruction_of_real", _eig_reconstruction, [_r(3, 3, seed=2)]),
    ("fft", lambda m, z: m.fft.fft(z), [_c(4)]),
    ("irfft", lambda m, z: m.fft.irfft(z), [_c(4)]),
]


def _params(cases):
    return [pytest.param(fn, arrays, id=name) for name, fn, arrays in cases]


def _leaves(lib, arrays):
    return [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]


@pytest.mark.parametrize("fn, arrays", _params(CASES))
def test_gradcheck(fn, arrays):
    leaves = _leaves(tocha, arrays)
    assert autograd.gradcheck(lambda *z: fn(tocha, *z), leaves, check_forward_ad=True)
    assert autograd.gradgradcheck(lambda *z: fn(tocha, *z), leaves)


# Ops whose complex gradients PyTorch refuses ("does not support automatic differentiation
# for outputs with complex dtype"): gradcheck only.
UNCOMPARED = [
    ("silu", lambda m, z: m.nn.functional.silu(z), [_c(4)]),
    (
        "scatter_reduce_prod",
        lambda m, x, y: x.scatter_reduce(0, m.tensor([2, 0, 2]), y, "prod"),
        [_c(3), _c(3, seed=1)],
    ),
    (
        "scatter_reduce_prod_with_zero",
        lambda m, x, y: x.scatter_reduce(
            0, m.tensor([2, 0, 2]), y * m.tensor([0.0, 1.0, 1.0]), "prod", include_self=False
        ),
        [_c(3), _c(3, seed=1)],
    ),
]


@pytest.mark.parametrize("fn, arrays", _params(UNCOMPARED))
def test_gradcheck_of_ops_torch_does_not_differentiate(fn, arrays):
    leaves = _leaves(tocha, arrays)
    assert autograd.gradcheck(lambda *z: fn(tocha, *z), leaves, check_forward_ad=True)


def _gradients(lib, fn, arrays):
    """The gradients of ``(f(z) * c).real.sum()``, c a fixed random complex tensor (real for a
    real output)."""
    leaves = _leaves(lib, arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out = fn(lib, *leaves)
    rng = np.random.default_rng(5)
    c = rng.standard_normal(tuple(out.shape))
    if out.is_complex():
        c = c + 1j * rng.standard_normal(tuple(out.shape))
    weighted = out * lib.from_numpy(np.asarray(c))
    (weighted.real if weighted.is_complex() else weighted).sum().backward()
    return [x.grad.resolve_conj() for x in leaves]


@pytest.mark.parametrize("fn, arrays", _params(CASES))
def test_gradients_match_torch(fn, arrays, torch):
    for got, want in zip(_gradients(tocha, fn, arrays), _gradients(torch, fn, arrays)):
        assert_tensor(got, want, rtol=1e-7, atol=1e-9)


# PyTorch's forward-mode tangents that are wrong (finite differences and tocha agree): a power
# of a real tensor with a complex one keeps only the real part of the real operand's term.
WRONG_TORCH_TANGENTS = {"pow_real_base", "pow_real_exponent"}


@pytest.mark.parametrize("fn, arrays", _params(CASES))
def test_tangents_match_torch(fn, arrays, torch, request):
    if request.node.callspec.id in WRONG_TORCH_TANGENTS:
        pytest.skip("PyTorch's tangent drops the imaginary part of a real operand's term")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert_tangents_match(torch, fn, arrays, rtol=1e-7, atol=1e-9)


def test_examples_of_the_convention():
    """The conjugate of the holomorphic derivative: d(z^2)/dz = 2z = 6 + 8i at 3 + 4i gives
    6 - 8i; the product's gradient is the conjugate of the other factor."""
    z = tocha.tensor([3 + 4j], requires_grad=True)
    (z**2).real.sum().backward()
    assert z.grad.tolist() == [6 - 8j]
    w = tocha.tensor([1 + 2j, -0.5 + 0.25j], requires_grad=True)
    w.prod().real.backward()
    np.testing.assert_allclose(w.grad.numpy(), [-0.5 - 0.25j, 1 - 2j])
    z.grad = None
    (z**z).real.sum().backward()  # the exponent's term needs log of a complex base
    assert np.isfinite(z.grad.numpy()).all()


# -- pow's exponent at a zero base ---------------------------------------------------------
@pytest.mark.parametrize(
    "base, exponent",
    [
        ([0j, 0j, 0j, 1j], [2 + 1j, 2 + 0j, -1 + 0j, 0j]),
        ([0.0, 0.0, 2.0], [2 + 1j, 2 + 0j, -1 + 0j]),
        (0.0, [2 + 1j, 2 + 0j, -1 + 0j]),
        (0.0, [2.0, -1.0, 0.0]),
        (-2.0, [2 + 1j, 2 + 0j]),
        (-2.0, [2.0, 0.5]),
        (1 + 2j, [2 + 1j, 2 + 0j]),
    ],
    ids=["complex", "real_base", "zero", "zero_real", "negative", "negative_real", "complex_base"],
)
def test_pow_gradients_at_special_bases_match_torch(base, exponent, torch):
    """PyTorch's values: 0 where the base is 0 and the exponent a real number >= 0; the
    principal complex log of a negative number base of a complex power."""
    grads = []
    for lib in (tocha, torch):
        e = lib.tensor(exponent, requires_grad=True)
        leaves = [e]
        b = base
        if isinstance(base, list):
            b = lib.tensor(base, requires_grad=True)
            leaves.insert(0, b)
        out = b**e
        (out.real if out.is_complex() else out).sum().backward()
        grads.append([t.grad.resolve_conj() for t in leaves])
    for got, want in zip(*grads):
        assert_tensor(got, want, rtol=1e-6, atol=1e-7)


# -- atan2 at the origin --------------------------------------------------------------------
POINTS = [
    (0.0, 0.0),
    (1e-300, 1e-300),
    (0.0, 1e-300),
    (1e-300, 0.0),
    (-0.0, 0.0),
    (0.0, -0.0),
    (-1e-300, -1e-300),
    (1e-160, 1e-160),
    (1e-20, 1e-20),
    (0.3, -0.7),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_atan2_gradients_at_the_origin_match_torch(dtype, torch):
    """0 (with PyTorch's signs of zero) where the squared radius is 0, infinities where its
    reciprocal only overflows; the forward-mode tangent divides (NaN at the origin)."""
    ys, xs = (np.array(v, dtype=dtype) for v in zip(*POINTS))
    results = []
    for lib in (tocha, torch):
        y, x = (
            lib.from_numpy(ys.copy()).requires_grad_(),
            lib.from_numpy(xs.copy()).requires_grad_(),
        )
        lib.atan2(y, x).sum().backward()
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            dual_y = fa.make_dual(y.detach(), lib.ones_like(y))
            dual_x = fa.make_dual(x.detach(), lib.ones_like(x))
            tangent = fa.unpack_dual(lib.atan2(dual_y, dual_x)).tangent
        results.append([y.grad.numpy(), x.grad.numpy(), tangent.numpy()])
    for got, want in zip(*results):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_atan2_gradient_at_the_origin():
    y, x = tocha.zeros(1, requires_grad=True), tocha.zeros(1, requires_grad=True)
    tocha.atan2(y, x).sum().backward()
    assert y.grad.tolist() == [0.0] and x.grad.tolist() == [0.0]
    assert not np.signbit(y.grad.numpy()[0]) and np.signbit(x.grad.numpy()[0])


# -- sign and sgn of NaN --------------------------------------------------------------------
SIGNED = [float("nan"), -float("nan"), -2.0, 0.0, -0.0, float("inf"), -float("inf"), 3.0]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name", ["sign", "sgn"])
def test_sign_of_nan_is_zero(name, dtype, torch):
    results = []
    for lib in (tocha, torch):
        x = lib.tensor(SIGNED, dtype=getattr(lib, dtype))
        results.append(getattr(lib, name)(x).float().numpy())
    np.testing.assert_array_equal(*results)
    np.testing.assert_array_equal(*map(np.signbit, results))
    assert results[0][0] == 0


def test_sign_of_nan_in_place_and_out():
    x = tocha.tensor([float("nan"), -1.0])
    out = tocha.empty(2)
    tocha.sign(x, out=out)
    assert out.tolist() == [0.0, -1.0]
    assert x.sign_().tolist() == [0.0, -1.0]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_sgn_of_complex_nan_matches_torch(dtype, torch):
    nan = float("nan")
    values = [complex(nan, 0), complex(0, nan), complex(nan, nan), complex(1, nan), 0j, 3 + 4j]
    results = [
        lib.sgn(lib.tensor(values, dtype=getattr(lib, dtype))).numpy() for lib in (tocha, torch)
    ]
    np.testing.assert_allclose(*results, rtol=1e-6)


# -- det at singular matrices ---------------------------------------------------------------
SINGULAR = [
    [[1.0, 2.0], [2.0, 4.0]],
    [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],
    [[1.0, 0.0], [0.0, 0.0]],
    [[0.0, 0.0], [0.0, 0.0]],
]


@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("matrix", SINGULAR, ids=["2x2", "3x3", "rank1", "zero"])
def test_det_gradient_at_singular_matrices_matches_torch(matrix, dtype, create_graph, torch):
    """PyTorch's: zeros where the determinant is exactly 0, except under create_graph (the
    adjugate, the derivative's limit)."""
    grads = []
    for lib in (tocha, torch):
        a = lib.tensor(matrix, dtype=getattr(lib, dtype), requires_grad=True)
        d = lib.linalg.det(a)
        (g,) = lib.autograd.grad(d.real if d.is_complex() else d, a, create_graph=create_graph)
        grads.append(g.detach())
    assert_tensor(grads[0], grads[1], rtol=1e-5, atol=1e-5)


def test_det_gradient_at_a_singular_matrix():
    a = tocha.tensor([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)
    tocha.linalg.det(a).backward()
    assert a.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    (adjugate,) = autograd.grad(tocha.linalg.det(a), a, create_graph=True)
    np.testing.assert_allclose(adjugate.detach().numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-5)
    batch = tocha.tensor([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]], requires_grad=True)
    tocha.linalg.det(batch).sum().backward()  # only the singular matrix's gradient is zero
    np.testing.assert_allclose(batch.grad.numpy(), [[[0, 0], [0, 0]], [[3, -1], [-1, 2]]])


@pytest.mark.parametrize("matrix", SINGULAR, ids=["2x2", "3x3", "rank1", "zero"])
def test_det_tangent_at_singular_matrices_matches_torch(matrix, torch):
    arrays = [np.array(matrix), np.array(matrix) + np.eye(len(matrix))]
    assert_tangents_match(torch, lambda lib, a, b: lib.linalg.det(lib.stack([a, b])), arrays)


def test_slogdet_gradient_at_a_singular_matrix_does_not_raise():
    a = tocha.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=tocha.float64, requires_grad=True)
    tocha.linalg.slogdet(a).logabsdet.backward()
    assert not np.isfinite(a.grad.numpy()).any()


# -- eig and eigvals ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eigenvalue_gradients_solve_the_perturbation_formula(dtype):
    """d lambda_k = (V^-1 dA V)_kk: the gradient of Re(sum c_k lambda_k) is
    ``V^-H diag(c) V^H`` (its real part for a real matrix)."""
    a = _c(4, 4) if dtype == "complex128" else _r(4, 4)
    c = _c(4, seed=3)
    A = tocha.from_numpy(a.copy()).requires_grad_()
    values = tocha.linalg.eigvals(A)
    (values * tocha.from_numpy(c)).real.sum().backward()
    w, v = np.linalg.eig(a)
    order = [int(np.argmin(np.abs(w - x))) for x in values.detach().numpy()]
    v = v[:, order]
    expected = np.linalg.solve(v.conj().T, np.diag(c.conj()) @ v.conj().T)
    expected = expected if dtype == "complex128" else expected.real
    np.testing.assert_allclose(A.grad.numpy(), expected, rtol=1e-9, atol=1e-10)


def test_eig_gradient_of_real_matrix_example(torch):
    grads = []
    for lib in (tocha, torch):
        a = lib.tensor([[2.0, 1.0], [0.5, 3.0]], requires_grad=True)
        lib.linalg.eigvals(a).abs().sum().backward()
        grads.append(a.grad)
    assert_tensor(grads[0], grads[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "loss",
    [
        lambda lib, a: lib.linalg.eig(a)[1].sum().real,
        lambda lib, a: lib.linalg.eigh(a + a.mH)[1].sum().real,
        lambda lib, a: lib.linalg.svd(a)[0].sum().real,
        lambda lib, a: lib.linalg.svd(a)[2][:, 0].sum().imag,
    ],
    ids=["eig", "eigh", "svd_u", "svd_vh"],
)
def test_phase_dependent_losses_raise_as_torch(loss, torch):
    errors = []
    for lib in (tocha, torch):
        a = lib.from_numpy(_c(3, 3)).requires_grad_()
        with pytest.raises(RuntimeError) as info:
            loss(lib, a).backward()
        errors.append(str(info.value).split("\n")[0])
    assert errors[0] == errors[1]
