"""Shape extras (tocha/_ops/arrangement.py): values, dtypes, shapes and view-ness against
PyTorch, from one table; references against NumPy; errors. Their gradients need tocha-autograd:
tests/autograd/test_arrangement_grad.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_tensor

import tocha

F32, F64, I64 = np.float32, np.float64, np.int64
RNG = np.random.default_rng(0)


def arr(shape, dtype=F32, low=-3, high=3, transpose=False):
    """A NumPy array of random values; `transpose` makes it a non-contiguous transpose."""
    if transpose:
        return arr(shape[::-1], dtype, low, high).T
    if np.dtype(dtype).kind == "b":
        return RNG.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(low, high, shape).astype(dtype)
    return RNG.uniform(low, high, shape).astype(dtype)


# its own generator: the shared one's draws feed other test files' tables (they import `arr`)
_complex_rng = np.random.default_rng(7)
COMPLEX_INPUT = (
    _complex_rng.uniform(-3, 3, (3, 4)) + 1j * _complex_rng.uniform(-9, 9, (3, 4))
).astype(np.complex64)


def to_lib(lib, a):
    if isinstance(a, np.ndarray):
        return lib.from_numpy(a.copy() if a.flags.c_contiguous else a.T.copy().T)
    return a


def run(lib, fn, arrays):
    """`fn` on the arrays as `lib`'s tensors; returns (result, the input tensors)."""
    inputs = [to_lib(lib, a) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(lib, *inputs), inputs


def _shares(t, inputs) -> bool:
    """Whether the result `t` (tocha or torch) is one of the inputs or a view of one."""
    root = t if t._base is None else t._base
    return any(root is x or root is x._base for x in inputs if hasattr(x, "_base"))


def compare(got, want, got_inputs=(), want_inputs=()):
    """tocha's result against torch's: tensors (values, dtype, shape, whether it shares
    the memory of an input), tuples of them, or Python values."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            compare(g, w, got_inputs, want_inputs)
    elif hasattr(want, "detach"):
        assert_tensor(got, want)
        assert _shares(got, got_inputs) == _shares(want, want_inputs), "view-ness differs"
    else:
        assert got == want


# (id, f(lib, *inputs), inputs): each row runs on tocha and torch and the results must agree.
CASES = [
    ("flip", lambda m, x: m.flip(x, (0, -1)), [arr((2, 3, 4))]),
    ("flip_method_varargs", lambda m, x: x.flip(1, 0), [arr((3, 2), transpose=True)]),
    ("flip_0d", lambda m, x: m.flip(x, ()), [arr(())]),
    ("flip_empty", lambda m, x: m.flip(x, (0,)), [arr((0, 3))]),
    ("flip_bool", lambda m, x: m.flip(x, (1,)), [arr((2, 3), bool)]),
    ("fliplr", lambda m, x: m.fliplr(x), [arr((2, 3), I64)]),
    ("flipud", lambda m, x: m.flipud(x), [arr((4,))]),
    ("roll_flat", lambda m, x: m.roll(x, 2), [arr((3, 4))]),
    ("roll_dims", lambda m, x: m.roll(x, (1, -2), (0, -1)), [arr((3, 4), transpose=True)]),
    ("roll_one_dim", lambda m, x: x.roll(5, 1), [arr((2, 3), I64)]),
    ("roll_empty", lambda m, x: m.roll(x, 1, 0), [arr((0, 2))]),
    ("rot90", lambda m, x: m.rot90(x), [arr((2, 3))]),
    ("rot90_k2", lambda m, x: m.rot90(x, 2, (1, 2)), [arr((2, 3, 4))]),
    ("rot90_k3", lambda m, x: m.rot90(x, -1, [-1, 0]), [arr((2, 3))]),
    ("rot90_k0", lambda m, x: m.rot90(x, 4), [arr((2, 3))]),
    ("tril", lambda m, x: m.tril(x), [arr((3, 4))]),
    ("tril_k", lambda m, x: x.tril(-1), [arr((2, 3, 3), I64)]),
    ("triu_k", lambda m, x: m.triu(x, 2), [arr((4, 3), transpose=True)]),
    ("triu_bool", lambda m, x: m.triu(x), [arr((3, 3), bool)]),
    ("tril_empty", lambda m, x: m.tril(x), [arr((0, 3))]),
    ("tril_", lambda m, x: x.tril_(1), [arr((3, 3))]),
    ("triu_", lambda m, x: x.triu_(), [arr((3, 3), I64)]),
    ("tril_indices", lambda m: m.tril_indices(3, 4, 1), []),
    ("triu_indices", lambda m: m.triu_indices(4, 3, -1), []),
    ("triu_indices_empty", lambda m: m.triu_indices(0, 3), []),
    ("tril_indices_int32", lambda m: m.tril_indices(3, 3, dtype=m.int32), []),
    ("diagonal", lambda m, x: m.diagonal(x), [arr((3, 4))]),
    ("diagonal_offset", lambda m, x: x.diagonal(1), [arr((3, 4), transpose=True)]),
    ("diagonal_neg_offset", lambda m, x: m.diagonal(x, -1, 2, 0), [arr((3, 2, 4))]),
    ("diagonal_out_of_range", lambda m, x: m.diagonal(x, 5), [arr((3, 4))]),
    ("diagonal_empty", lambda m, x: m.diagonal(x), [arr((0, 4))]),
    ("diag_vector", lambda m, x: m.diag(x), [arr((3,))]),
    ("diag_vector_offset", lambda m, x: m.diag(x, -2), [arr((3,), I64)]),
    ("diag_matrix", lambda m, x: m.diag(x, 1), [arr((3, 4))]),
    ("diag_embed", lambda m, x: m.diag_embed(x), [arr((2, 3))]),
    ("diag_embed_dims", lambda m, x: m.diag_embed(x, 1, 0, 2), [arr((2, 3))]),
    ("diag_embed_neg", lambda m, x: m.diag_embed(x, -1, -1, 0), [arr((3,))]),
    ("diagflat", lambda m, x: m.diagflat(x), [arr((2, 2))]),
    ("diagflat_offset", lambda m, x: m.diagflat(x, 1), [arr((3,), I64)]),
    ("trace", lambda m, x: m.trace(x), [arr((3, 4))]),
    ("trace_int", lambda m, x: x.trace(), [arr((3, 3), np.int32)]),
    ("broadcast_to", lambda m, x: m.broadcast_to(x, (2, 3, 4)), [arr((3, 1))]),
    ("broadcast_tensors", lambda m, x, y: m.broadcast_tensors(x, y), [arr((3, 1)), arr((4,))]),
    ("broadcast_shapes", lambda m: m.broadcast_shapes((2, 1), (3,), 1, ()), []),
    ("atleast_1d", lambda m, x: m.atleast_1d(x), [arr(())]),
    ("atleast_1d_many", lambda m, x, y: m.atleast_1d(x, y), [arr(()), arr((2, 2))]),
    ("atleast_2d", lambda m, x: m.atleast_2d(x), [arr((3,))]),
    ("atleast_2d_list", lambda m, x, y: m.atleast_2d([x, y]), [arr(()), arr((2, 2))]),
    ("atleast_3d_0", lambda m, x: m.atleast_3d(x), [arr(())]),
    ("atleast_3d_1", lambda m, x: m.atleast_3d(x), [arr((3,))]),
    ("atleast_3d_2", lambda m, x: m.atleast_3d(x), [arr((2, 3))]),
    ("atleast_3d_4", lambda m, x: m.atleast_3d(x), [arr((1, 2, 3, 1))]),
    (
        "column_stack",
        lambda m, x, y, z: m.column_stack((x, y, z)),
        [arr((3,)), arr((3, 2)), arr((3,), I64)],
    ),
    ("dstack", lambda m, x, y: m.dstack([x, y]), [arr((2, 3)), arr((2, 3, 2))]),
    ("dstack_1d", lambda m, x, y: m.dstack([x, y]), [arr((3,)), arr((3,))]),
    ("tensor_split_n", lambda m, x: m.tensor_split(x, 3), [arr((7, 2))]),
    ("tensor_split_idx", lambda m, x: x.tensor_split([1, 5, -1, 9], 1), [arr((2, 7))]),
    ("tensor_split_tensor", lambda m, x: m.tensor_split(x, m.tensor([2, 3])), [arr((5,))]),
    ("tensor_split_tensor_n", lambda m, x: m.tensor_split(x, m.tensor(2)), [arr((5,))]),
    ("tensor_split_more", lambda m, x: m.tensor_split(x, 4), [arr((2,))]),
    ("hsplit", lambda m, x: m.hsplit(x, 2), [arr((2, 4))]),
    ("hsplit_1d", lambda m, x: m.hsplit(x, [1, 2]), [arr((4,))]),
    ("vsplit", lambda m, x: m.vsplit(x, 2), [arr((4, 2))]),
    ("dsplit", lambda m, x: m.dsplit(x, [1]), [arr((1, 2, 3))]),
    ("repeat_interleave_int", lambda m, x: m.repeat_interleave(x, 2), [arr((2, 3))]),
    ("repeat_interleave_dim", lambda m, x: x.repeat_interleave(3, dim=-1), [arr((2, 2))]),
    (
        "repeat_interleave_tensor",
        lambda m, x: m.repeat_interleave(x, m.tensor([1, 0, 2]), 0),
        [arr((3, 2), I64)],
    ),
    ("repeat_interleave_one", lambda m, x: m.repeat_interleave(x, m.tensor([2]), 1), [arr((2, 3))]),
    ("repeat_interleave_self", lambda m: m.repeat_interleave(m.tensor([2, 0, 1])), []),
    (
        "repeat_interleave_out_size",
        lambda m, x: m.repeat_interleave(x, 2, 0, output_size=4),
        [arr((2,))],
    ),
    ("repeat_interleave_0d", lambda m, x: m.repeat_interleave(x, 3), [arr(())]),
    ("meshgrid_ij", lambda m, x, y: m.meshgrid(x, y, indexing="ij"), [arr((2,)), arr((3,))]),
    (
        "meshgrid_xy",
        lambda m, x, y, z: m.meshgrid([x, y, z], indexing="xy"),
        [arr((2,)), arr((3,)), arr((4,))],
    ),
    ("meshgrid_default", lambda m, x, y: m.meshgrid(x, y), [arr((2,)), arr(())]),
    ("cartesian_prod", lambda m, x, y: m.cartesian_prod(x, y), [arr((2,), I64), arr((3,), I64)]),
    ("cartesian_prod_one", lambda m, x: m.cartesian_prod(x), [arr((3,))]),
    ("combinations", lambda m, x: m.combinations(x), [arr((4,))]),
    ("combinations_r3", lambda m, x: m.combinations(x, 3), [arr((4,), I64)]),
    ("combinations_replace", lambda m, x: m.combinations(x, 2, True), [arr((3,))]),
    ("combinations_r0", lambda m, x: m.combinations(x, 0), [arr((3,), I64)]),
    ("combinations_none", lambda m, x: m.combinations(x, 3), [arr((2,))]),
    (
        "block_diag",
        lambda m, x, y, z: m.block_diag(x, y, z),
        [arr((2, 2)), arr(()), arr((3,), I64)],
    ),
    ("block_diag_none", lambda m: m.block_diag(), []),
    ("block_diag_empty", lambda m, x, y: m.block_diag(x, y), [arr((0, 2)), arr((1, 0))]),
    ("cdist", lambda m, x, y: m.cdist(x, y), [arr((3, 2)), arr((4, 2))]),
    ("cdist_p1_batch", lambda m, x, y: m.cdist(x, y, 1.0), [arr((2, 3, 4)), arr((1, 2, 4))]),
    ("cdist_inf", lambda m, x, y: m.cdist(x, y, float("inf")), [arr((3, 2)), arr((2, 2))]),
    ("cdist_p0", lambda m, x, y: m.cdist(x, y, 0), [arr((3, 2)), arr((2, 2))]),
    ("cdist_p3", lambda m, x, y: m.cdist(x, y, 3), [arr((3, 2), F64), arr((2, 2), F64)]),
    ("pdist", lambda m, x: m.pdist(x), [arr((4, 3))]),
    ("pdist_p1", lambda m, x: m.pdist(x, 1), [arr((3, 2), transpose=True)]),
    ("pdist_one_row", lambda m, x: m.pdist(x), [arr((1, 3))]),
    ("diff", lambda m, x: m.diff(x), [arr((3, 4))]),
    ("diff_n2_dim0", lambda m, x: m.diff(x, 2, 0), [arr((4, 3), I64)]),
    ("diff_bool", lambda m, x: m.diff(x), [arr((5,), bool)]),
    (
        "diff_prepend_append",
        lambda m, x, p, a: m.diff(x, 1, 0, p, a),
        [arr((3, 2)), arr((1, 2)), arr((2, 2))],
    ),
    ("diff_n_big", lambda m, x: x.diff(5), [arr((3,))]),
    ("diff_n0", lambda m, x: m.diff(x, 0), [arr((3,))]),
    ("trapezoid", lambda m, y: m.trapezoid(y), [arr((3, 4))]),
    ("trapezoid_dx", lambda m, y: m.trapezoid(y, dx=0.5, dim=0), [arr((3, 4), I64)]),
    ("trapezoid_x", lambda m, y, x: m.trapezoid(y, x), [arr((2, 4)), np.sort(arr((4,)))]),
    ("trapezoid_x_full", lambda m, y, x: m.trapezoid(y, x, dim=0), [arr((3, 2)), arr((3, 2))]),
    ("trapezoid_empty", lambda m, y: m.trapezoid(y), [arr((2, 0))]),
    ("trapz", lambda m, y: m.trapz(y, dx=2.0), [arr((5,))]),
    ("cumulative_trapezoid", lambda m, y: m.cumulative_trapezoid(y), [arr((3, 4))]),
    (
        "cumulative_trapezoid_x",
        lambda m, y, x: m.cumulative_trapezoid(y, x, dim=0),
        [arr((4, 2)), np.sort(arr((4,)))],
    ),
    ("cumulative_trapezoid_int", lambda m, y: m.cumulative_trapezoid(y, dx=3), [arr((4,), I64)]),
    ("gradient", lambda m, x: m.gradient(x), [arr((4, 5))]),
    ("gradient_spacing", lambda m, x: m.gradient(x, spacing=2.0, dim=1), [arr((4, 5))]),
    ("gradient_list", lambda m, x: m.gradient(x, spacing=[2.0, 0.5]), [arr((3, 4))]),
    ("gradient_edge2", lambda m, x: m.gradient(x, edge_order=2), [arr((4, 5), F64)]),
    ("gradient_int", lambda m, x: m.gradient(x, dim=0), [arr((3, 2), I64)]),
    (
        "gradient_coords",
        lambda m, x, c: m.gradient(x, spacing=(c,), dim=0),
        [arr((5, 2), F64), np.cumsum(arr((5,), F64, 0.5, 2))],
    ),
    (
        "gradient_coords_edge2",
        lambda m, x, c: m.gradient(x, spacing=[c], dim=-1, edge_order=2),
        [arr((2, 5), F64), np.cumsum(arr((5,), F64, 0.5, 2))],
    ),
    ("cross", lambda m, x, y: m.cross(x, y, dim=1), [arr((2, 3)), arr((2, 3))]),
    ("cross_default", lambda m, x, y: m.cross(x, y), [arr((3, 2)), arr((3, 2))]),
    ("cross_broadcast", lambda m, x, y: x.cross(y, -1), [arr((2, 3)), arr((1, 3))]),
    ("renorm", lambda m, x: m.renorm(x, 2, 0, 1.0), [arr((3, 4))]),
    ("renorm_p1_dim1", lambda m, x: x.renorm(1, 1, 2.5), [arr((3, 4), F64)]),
    ("renorm_", lambda m, x: x.renorm_(3, -1, 0.5), [arr((2, 3))]),
    ("cov", lambda m, x: m.cov(x), [arr((3, 5))]),
    ("cov_1d", lambda m, x: m.cov(x), [arr((5,))]),
    ("cov_int", lambda m, x: m.cov(x, correction=0), [arr((2, 4), I64)]),
    (
        "cov_weights",
        lambda m, x, f, a: m.cov(x, fweights=f, aweights=a),
        [arr((2, 4), F64), arr((4,), I64, 1, 4), arr((4,), F64, 0.1, 1)],
    ),
    (
        "cov_fweights",
        lambda m, x, f: m.cov(x, correction=2, fweights=f),
        [arr((2, 4)), arr((4,), I64, 1, 4)],
    ),
    (
        "cov_aweights0",
        lambda m, x, a: m.cov(x, correction=0, aweights=a),
        [arr((2, 4)), arr((4,), F32, 0.1, 1)],
    ),
    ("corrcoef", lambda m, x: m.corrcoef(x), [arr((3, 6))]),
    ("corrcoef_1d", lambda m, x: m.corrcoef(x), [arr((6,))]),
    ("vander", lambda m, x: m.vander(x), [arr((4,))]),
    ("vander_n", lambda m, x: m.vander(x, 2, True), [arr((3,), np.int32)]),
    ("vander_n0", lambda m, x: m.vander(x, 0), [arr((3,))]),
    ("vander_n1", lambda m, x: m.vander(x, 1), [arr((3,), I64)]),
    ("logcumsumexp", lambda m, x: m.logcumsumexp(x, 1), [arr((3, 4))]),
    ("logcumsumexp_0d", lambda m, x: m.logcumsumexp(x, 0), [arr(())]),
    (
        "logcumsumexp_extreme",
        lambda m, x: x.logcumsumexp(0),
        [np.array([-1000.0, 0.0, 1000.0, -np.inf], F64)],
    ),
    (
        "logcumsumexp_complex",
        lambda m, x: m.logcumsumexp(x, 1),
        [COMPLEX_INPUT],
    ),
    (
        # the imaginary parts run past pi, ties of real parts, infinities and NaN
        "logcumsumexp_complex_extreme",
        lambda m, x: x.logcumsumexp(0),
        [
            np.array(
                [1 + 10j, 2 + 10j, -3 + 20j, 2.5 - 3.1j, 2.5 + 3.1j, -np.inf + 2j, 1e3 + 1j]
                + [complex(np.inf, 1), complex(np.inf, 2), complex(np.nan, 0), 1j],
                np.complex128,
            )
        ],
    ),
    (
        "logcumsumexp_complex_low",
        lambda m, x: x.logcumsumexp(0),
        [np.array([complex(-np.inf, 3), complex(-np.inf, 1), -1e3 + 1j, -1e3 - 3j], np.complex128)],
    ),
    ("logcumsumexp_complex_0d", lambda m, x: x.logcumsumexp(0), [np.array(1 + 5j, np.complex64)]),
]


@pytest.mark.parametrize("fn, arrays", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_matches_torch(fn, arrays, torch):
    got, got_inputs = run(tocha, fn, arrays)
    want, want_inputs = run(torch, fn, arrays)
    compare(got, want, got_inputs, want_inputs)


# -- references against NumPy ------------------------------------------------------------------
NUMPY = [
    ("flip", lambda m, x: m.flip(x, (0, 1)), lambda a: np.flip(a, (0, 1)), arr((2, 3))),
    (
        "roll",
        lambda m, x: m.roll(x, (1, 2), (0, 1)),
        lambda a: np.roll(a, (1, 2), (0, 1)),
        arr((3, 4)),
    ),
    ("rot90", lambda m, x: m.rot90(x, 3), lambda a: np.rot90(a, 3), arr((3, 4))),
    ("tril", lambda m, x: m.tril(x, 1), lambda a: np.tril(a, 1), arr((2, 3, 4))),
    (
        "diagonal",
        lambda m, x: m.diagonal(x, -1, 1, 2),
        lambda a: np.diagonal(a, -1, 1, 2),
        arr((2, 4, 3)),
    ),
    ("diag", lambda m, x: m.diag(x, 1), lambda a: np.diag(a, 1), arr((3,))),
    ("trace", lambda m, x: m.trace(x), lambda a: np.trace(a), arr((3, 3), I64)),
    ("vander", lambda m, x: m.vander(x), lambda a: np.vander(a), arr((4,), I64)),
    ("diff", lambda m, x: m.diff(x, 2), lambda a: np.diff(a, 2), arr((3, 5))),
    ("trapezoid", lambda m, x: m.trapezoid(x), lambda a: np.trapezoid(a), arr((3, 5), F64)),
    ("cov", lambda m, x: m.cov(x), lambda a: np.cov(a), arr((3, 5), F64)),
    ("corrcoef", lambda m, x: m.corrcoef(x), lambda a: np.corrcoef(a), arr((3, 5), F64)),
    (
        "gradient",
        lambda m, x: m.gradient(x, edge_order=2)[1],
        lambda a: np.gradient(a, edge_order=2)[1],
        arr((3, 5), F64),
    ),
    (
        "logcumsumexp",
        lambda m, x: m.logcumsumexp(x, 0),
        lambda a: np.logaddexp.accumulate(a, 0),
        arr((4, 2), F64),
    ),
    (
        "block_diag",
        lambda m, x: m.block_diag(x, x),
        lambda a: np.block([[a, np.zeros_like(a)], [np.zeros_like(a), a]]),
        arr((2, 2)),
    ),
    (
        "cdist",
        lambda m, x: m.cdist(x, x),
        lambda a: np.sqrt(((a[:, None] - a[None]) ** 2).sum(-1)),
        arr((4, 3), F64),
    ),
]


@pytest.mark.parametrize("fn, ref, a", [c[1:] for c in NUMPY], ids=[c[0] for c in NUMPY])
def test_matches_numpy(fn, ref, a):
    assert_tensor(fn(tocha, tocha.from_numpy(a)), ref(a), atol=1e-6, rtol=1e-6)


# -- views and writes ----------------------------------------------------------------------------
def test_diagonal_is_a_writable_view_with_torch_strides(torch):
    x = tocha.zeros(3, 4)
    d = x.diagonal(1)
    assert d._base is x and d.stride() == (5,) and d.storage_offset() == 1
    d.fill_(7)
    assert x.sum().item() == 21 and x[0, 1].item() == 7
    xt = tocha.zeros(4, 3).T.diagonal(-1)
    tt = torch.zeros(4, 3).T.diagonal(-1)
    assert xt.stride() == tt.stride() and xt.storage_offset() == tt.storage_offset()


def test_tril_inplace_bumps_version_and_keeps_memory():
    x = tocha.ones(3, 3)
    ptr, version = x.data_ptr(), x._version
    assert x.tril_() is x and x.data_ptr() == ptr and x._version > version
    assert x.sum().item() == 6


def test_meshgrid_warns_without_indexing():
    with pytest.warns(UserWarning, match="indexing argument"):
        tocha.meshgrid(tocha.ones(2), tocha.ones(3))


def test_cov_warns_on_no_degrees_of_freedom():
    with pytest.warns(UserWarning, match="degrees of freedom"):
        c = tocha.cov(tocha.ones(1))
    assert c.isnan().item()


# -- errors, with PyTorch's types and messages ----------------------------------------------------
ERRORS = [
    ("flip_repeat", lambda m: m.flip(m.ones(2, 3), (0, 0))),
    ("flip_dim", lambda m: m.flip(m.ones(2, 3), (2,))),
    ("fliplr_1d", lambda m: m.fliplr(m.ones(3))),
    ("flipud_0d", lambda m: m.flipud(m.ones(()))),
    ("roll_align", lambda m: m.roll(m.ones(2, 3), (1, 2), 0)),
    ("rot90_dims", lambda m: m.rot90(m.ones(2, 3), 1, (0, 0))),
    ("rot90_1d", lambda m: m.rot90(m.ones(3))),
    ("rot90_three", lambda m: m.rot90(m.ones(2, 3, 4), 1, (0, 1, 2))),
    ("tril_1d", lambda m: m.tril(m.ones(3))),
    ("triu_1d", lambda m: m.triu(m.ones(3))),
    ("diag_3d", lambda m: m.diag(m.ones(2, 2, 2))),
    ("diagonal_same", lambda m: m.diagonal(m.ones(2, 3), 0, 1, 1)),
    ("diagonal_dim", lambda m: m.diagonal(m.ones(2, 3), 0, 0, 2)),
    ("trace_1d", lambda m: m.trace(m.ones(3))),
    ("broadcast_shapes", lambda m: m.broadcast_shapes((2, 3), (3, 2))),
    ("broadcast_tensors", lambda m: m.broadcast_tensors(m.ones(2, 3), m.ones(3, 2))),
    ("broadcast_to", lambda m: m.broadcast_to(m.ones(2, 3), (2, 2))),
    ("tensor_split_0", lambda m: m.tensor_split(m.ones(3), 0)),
    ("tensor_split_0d", lambda m: m.tensor_split(m.ones(()), 2)),
    ("tensor_split_float", lambda m: m.tensor_split(m.ones(3), m.tensor([1.0]))),
    ("hsplit_0d", lambda m: m.hsplit(m.ones(()), 1)),
    ("hsplit_divisible", lambda m: m.hsplit(m.ones(2, 3), 2)),
    ("vsplit_1d", lambda m: m.vsplit(m.ones(3), 1)),
    ("dsplit_2d", lambda m: m.dsplit(m.ones(2, 3), 1)),
    ("repeat_interleave_size", lambda m: m.repeat_interleave(m.ones(6), m.tensor([1, 2]), 0)),
    ("repeat_interleave_negative", lambda m: m.repeat_interleave(m.ones(2), m.tensor([1, -2]), 0)),
    ("repeat_interleave_output", lambda m: m.repeat_interleave(m.ones(2), 2, 0, output_size=3)),
    ("repeat_interleave_float", lambda m: m.repeat_interleave(m.ones(2), m.tensor([1.0, 2.0]))),
    ("meshgrid_indexing", lambda m: m.meshgrid(m.ones(2), indexing="foo")),
    ("meshgrid_dtype", lambda m: m.meshgrid(m.ones(2), m.ones(2, dtype=m.int64), indexing="ij")),
    ("cartesian_prod_2d", lambda m: m.cartesian_prod(m.ones(2, 3))),
    ("combinations_2d", lambda m: m.combinations(m.ones(2, 3))),
    ("combinations_negative", lambda m: m.combinations(m.ones(3), -1)),
    ("block_diag_3d", lambda m: m.block_diag(m.ones(2, 2, 2))),
    ("cdist_columns", lambda m: m.cdist(m.ones(2, 3), m.ones(2, 4))),
    ("cdist_1d", lambda m: m.cdist(m.ones(3), m.ones(2, 3))),
    ("cdist_p", lambda m: m.cdist(m.ones(2, 3), m.ones(2, 3), p=-1)),
    ("cdist_int", lambda m: m.cdist(m.ones(2, 3, dtype=m.int64), m.ones(2, 3, dtype=m.int64))),
    ("pdist_1d", lambda m: m.pdist(m.ones(3))),
    ("pdist_p", lambda m: m.pdist(m.ones(3, 2), -1)),
    ("diff_0d", lambda m: m.diff(m.ones(()))),
    ("diff_n", lambda m: m.diff(m.ones(3), -1)),
    ("diff_prepend_dims", lambda m: m.diff(m.ones(2, 3), prepend=m.ones(3))),
    ("trapezoid_x_size", lambda m: m.trapezoid(m.ones(3), m.ones(2))),
    ("gradient_edge_order", lambda m: m.gradient(m.ones(3), edge_order=3)),
    ("gradient_small", lambda m: m.gradient(m.ones(1))),
    ("gradient_spacing_len", lambda m: m.gradient(m.ones(3, 3), spacing=[1.0])),
    ("cross_no_3", lambda m: m.cross(m.ones(2, 2), m.ones(2, 2))),
    ("cross_dim_size", lambda m: m.cross(m.ones(3, 2), m.ones(3, 2), dim=1)),
    ("renorm_p", lambda m: m.renorm(m.ones(2, 3), -1, 0, 1)),
    ("renorm_int", lambda m: m.renorm(m.ones(2, 3, dtype=m.int64), 2, 0, 1)),
    ("renorm_maxnorm", lambda m: m.renorm(m.ones(2, 3), 2, 0, -1)),
    ("cov_3d", lambda m: m.cov(m.ones(2, 3, 3))),
    ("cov_fweights_float", lambda m: m.cov(m.ones(2, 3), fweights=m.ones(3))),
    ("cov_aweights_int", lambda m: m.cov(m.ones(2, 3), aweights=m.ones(3, dtype=m.int64))),
    ("cov_fweights_numel", lambda m: m.cov(m.ones(2, 3), fweights=m.ones(2, dtype=m.int64))),
    ("cov_fweights_negative", lambda m: m.cov(m.ones(2, 3), fweights=-m.ones(3, dtype=m.int64))),
    ("cov_fweights_2d", lambda m: m.cov(m.ones(2, 3), fweights=m.ones(1, 3, dtype=m.int64))),
    ("vander_2d", lambda m: m.vander(m.ones(2, 2))),
    ("vander_negative", lambda m: m.vander(m.ones(2), -1)),
    ("logcumsumexp_int", lambda m: m.logcumsumexp(m.ones(3, dtype=m.int64), 0)),
    ("logcumsumexp_dim", lambda m: m.logcumsumexp(m.ones(3), 1)),
]


@pytest.mark.parametrize("fn", [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_match_torch(fn, torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(Exception) as expected:
            fn(torch)
        with pytest.raises(type(expected.value)) as got:
            fn(tocha)
    want = str(expected.value).split("\n")[0]
    assert str(got.value).split("\n")[0] == want
