"""Sparse COO tensors through the dense ops (the sparse kernels of tocha/sparse/_kernels.py,
reached through the dispatcher), ``sparse.softmax``/``log_softmax``, ``index_select``,
``narrow_copy``, products with dense and sparse operands, ``pow``, ``cat``/``stack``,
``sparse.spdiags``, the legacy ``tocha.sparse.FloatTensor``, PyTorch's NotImplementedError
for the ops the sparse backend lacks, and gradients (gradcheck in float64, and PyTorch's
gradients where it has them), against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha

C_INDICES = [[0, 1, 1, 2], [2, 0, 2, 1]]  # coalesced
C_VALUES = [3.0, 4.0, 5.0, 6.0]
U_INDICES = [[0, 1, 0, 2], [2, 0, 2, 2]]  # uncoalesced: (0, 2) twice
U_VALUES = [1.0, 2.0, 3.0, -1.0]
DENSE = np.arange(9.0, dtype=np.float32).reshape(3, 3) - 2.0


@pytest.fixture
def autograd():
    return pytest.importorskip("tocha.autograd")


def _coo(lib, indices, values, size, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note on invariant checks
        return lib.sparse_coo_tensor(indices, values, size, **kwargs)


def _operands(lib):
    """c (coalesced), u (uncoalesced), h (hybrid: one sparse and one dense dim, coalesced),
    d (dense)."""
    c = _coo(lib, C_INDICES, C_VALUES, (3, 3)).coalesce()
    u = _coo(lib, U_INDICES, U_VALUES, (3, 3))
    h = _coo(lib, [[0, 2]], [[1.0, 2.0], [3.0, 4.0]], (3, 2)).coalesce()
    return c, u, h, lib.tensor(DENSE)


def _kind(t) -> str:
    return str(t.dtype).split(".")[1]


def _result(t):
    """A result as plain data: a sparse one as stored (indices, values, size, dtype,
    coalesced flag), a dense one by its values; floats rounded (NumPy's and PyTorch's
    elementwise functions differ in the last bits)."""
    if not hasattr(t, "is_sparse"):
        return t
    t = t.detach()
    if t.is_sparse:
        indices = np.asarray(t._indices()).tolist()
        values = _plain(t._values())
        return ("sparse", indices, values, tuple(t.shape), _kind(t), t.is_coalesced())
    return ("dense", _plain(t), _kind(t))


def _plain(t):
    """Values as (nested) lists of floats rounded to 5 decimals, NaN as a string."""
    array = np.asarray(t).astype(np.float64).round(5)
    flat = ["nan" if x != x else x for x in array.reshape(-1).tolist()]
    return np.array(flat, dtype=object).reshape(array.shape).tolist()


def _summary(t):
    """A sparse result by its dense values, dtype and coalesced flag (for results whose
    uncoalesced entries PyTorch lists in another order or number)."""
    return (np.asarray(t.detach().to_dense()).tolist(), _kind(t), t.is_coalesced())


def _error(fn, *args, **kwargs):
    """The error's type and first sentence (PyTorch lists its backends after it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:
            fn(*args, **kwargs)
    message = str(info.value).split("\n")[0].replace("tocha", "torch")
    return type(info.value).__name__, message.split(". ")[0].rstrip(".")


def _compare(torch, build):
    got = [build(lib) for lib in (tocha, torch)]
    assert got[0] == got[1]


# -- softmax over the specified entries --------------------------------------------------------
SOFTMAX = [
    ("c_dim1", lambda lib, c, u, h: (c, 1, {})),
    ("c_dim0", lambda lib, c, u, h: (c, 0, {})),
    ("c_dim_neg", lambda lib, c, u, h: (c, -1, {})),
    ("uncoalesced", lambda lib, c, u, h: (u, 1, {})),
    ("uncoalesced_dim0", lambda lib, c, u, h: (u, 0, {})),
    ("hybrid_sparse_dim", lambda lib, c, u, h: (h, 0, {})),
    ("hybrid_dense_dim", lambda lib, c, u, h: (h, 1, {})),
    ("dtype", lambda lib, c, u, h: (c, 1, {"dtype": lib.float64})),
    ("long_with_dtype", lambda lib, c, u, h: (c.long(), 1, {"dtype": lib.float32})),
    ("double", lambda lib, c, u, h: (c.double(), 0, {})),
    ("empty", lambda lib, c, u, h: (_coo(lib, [[], []], [], (3, 3)), 1, {})),
    (
        "three_dims",
        lambda lib, c, u, h: (
            _coo(lib, [[0, 0, 1, 1], [0, 1, 0, 1], [1, 1, 1, 0]], [1.0, 2.0, 3.0, 4.0], (2, 2, 2)),
            1,
            {},
        ),
    ),
    ("minus_inf", lambda lib, c, u, h: (_coo(lib, [[0, 0]], [-np.inf, -np.inf], (2,)), 0, {})),
]


@pytest.mark.parametrize("case", SOFTMAX, ids=[c[0] for c in SOFTMAX])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_sparse_softmax_matches_torch(torch, name, case):
    def build(lib):
        c, u, h, _ = _operands(lib)
        s, dim, kwargs = case[1](lib, c, u, h)
        return _result(getattr(lib.sparse, name)(s, dim, **kwargs))

    _compare(torch, build)


def test_sparse_softmax_errors_match_torch(torch):
    def build(lib):
        c, u, h, d = _operands(lib)
        rows = []
        for name in ("softmax", "log_softmax"):
            fn = getattr(lib.sparse, name)
            rows += [
                _error(fn, c.long(), 1),
                _error(fn, c.half(), 1),
                _error(fn, c, 1, dtype=lib.int64),
                _error(fn, d, 1),
                _error(fn, c, 2),
                _error(fn, c, 1.0),
                _error(fn, [1.0], 0),
            ]
        rows += [_error(lib.softmax, c, 1), _error(c.log_softmax, 0)]
        return rows

    _compare(torch, build)


# -- selections --------------------------------------------------------------------------------
def test_index_select_and_narrow_copy_match_torch(torch):
    def build(lib):
        c, u, h, _ = _operands(lib)
        index = lib.tensor([2, 0, 2])
        return [
            _result(c.index_select(0, index)),
            _result(c.index_select(1, index)),
            _result(lib.index_select(u, 1, lib.tensor([2, 0]))),
            _result(h.index_select(0, lib.tensor([2, 1]))),
            _result(h.index_select(1, lib.tensor([1, 1, 0]))),
            _result(c.index_select(0, lib.tensor([], dtype=lib.int64))),
            _result(c.index_select(0, lib.tensor([1]))),
            _result(c.narrow_copy(1, 1, 2)),
            _result(u.narrow_copy(0, 0, 1)),
            _result(h.narrow_copy(1, 1, 1)),
            _result(lib.narrow_copy(c, 0, 1, 2)),
            _result(c[0]),
            _result(c[:, 2]),
            _result(c.select(0, 1)),
            [_result(r) for r in c.unbind(1)],
            [_result(r) for r in u],
            _result(c.unsqueeze(0)),
            _result(c.unsqueeze(2)),
            _result(h.unsqueeze(1)),
            _result(h.unsqueeze(2)),
            _error(c.index_select, 0, lib.tensor([1], dtype=lib.int32)),
            _error(c.narrow_copy, 1, 0, -1),
            _error(lambda: c[1:]),
        ]

    _compare(torch, build)


# -- products, quotients, powers, sums -------------------------------------------------------
def test_products_with_dense_and_sparse_match_torch(torch):
    def build(lib):
        c, u, h, d = _operands(lib)
        other = _coo(lib, [[0, 2, 1], [0, 2, 1]], [1.0, 2.0, 3.0], (3, 3)).coalesce()
        return [
            _result(c * d),
            _result(d * c),
            _result(u * d),
            _result(lib.mul(c, d)),
            _result(lib.mul(d, u)),
            _result(c * lib.arange(3.0)),
            _result(c * lib.ones(3, 1)),
            _result(c * lib.ones(2, 3, 3)),
            _result(h * lib.arange(6.0).reshape(3, 2)),
            _result(h * lib.tensor([2.0, 3.0])),
            _result(h * lib.tensor([[2.0], [3.0], [4.0]])),
            _result(c * lib.tensor(3.0)),
            _result(lib.tensor(3.0) * c),
            _result(c.long() * d),
            _result(c * d.double()),
            _result(c.long() * 2.5),
            _result(c * c),
            _result(c * other),
            _result(c * u),
            _result(u * c),
            _result(u * u),
            _result(h * h),
            _result(u * 2),
            _result(2 * u),
            _error(lib.mul, c, lib.ones(3, 4)),
            _error(lib.mul, c, _coo(lib, [[0], [0]], [1.0], (3, 4))),
        ]

    _compare(torch, build)


def test_sums_quotients_and_powers_match_torch(torch):
    def build(lib):
        c, u, h, d = _operands(lib)
        return [
            _result(c + c),
            _summary(c + u),
            _summary(lib.add(c, u, alpha=2)),
            _summary(c - u),
            _result(c.long() + c),
            _result(d + c),
            _result(lib.add(d, u, alpha=3)),
            _result(d - u),
            _result(d.long() + c),
            _result(lib.ones(3, 2) + h),
            _result(u / 2),
            _result(c / lib.tensor(2.0)),
            _result(c.long() / 2),
            _result(u // 2),
            _result(u.div(2, rounding_mode="floor")),
            _result(u.div(2, rounding_mode="trunc")),
            _result(c.long() // 2),
            _result(c.pow(2)),
            _result(u.pow(2)),
            _result(c**0.5),
            _result(lib.pow(c, -1)),
            _result(c.long().pow(3)),
            _error(c.pow, 0),
            _error(c.pow, lib.tensor(2.0)),
            _error(lib.pow, 2.0, c),
            _error(c.long().pow, -1),
            _error(lib.add, c, d),
            _error(lib.add, c, 1),
            _error(lib.sub, c, d),
            _error(lib.add, lib.ones(3), c),
            _error(lib.add, c, _coo(lib, [[0]], [[1.0, 1.0, 1.0]], (3, 3))),
            _error(lib.add, c, _coo(lib, [[0], [0]], [1.0], (3, 4))),
            _error(lib.div, c, d),
            _error(lib.div, d, c),
            _error(lib.div, c, lib.ones(1)),
            _error(lib.div, 2.0, c),
        ]

    _compare(torch, build)


def test_reductions_and_maps_match_torch(torch):
    def build(lib):
        c, u, h, d = _operands(lib)
        rows = [
            _result(c.sum()),
            _result(u.sum(0)),
            _result(lib.sum(c, 1)),
            _result(c.sum(1, keepdim=True)),
            _result(c.sum((0, 1))),
            _result(c.sum((0, 1), keepdim=True)),
            _result(c.sum(1, dtype=lib.float64)),
            _result(c.long().sum()),
            _result(c.bool().sum()),
            _result(h.sum(0)),
            _result(h.sum(1)),
            _result(lib.sparse.sum(u, 1)),
            _result(u.norm()),
            _result(lib.norm(c)),
        ]
        for name in ("abs", "neg", "sqrt", "sign", "square", "relu", "isnan", "sin", "tanh"):
            rows += [_result(getattr(u, name)()), _result(getattr(lib, name)(c.long()))]
        rows += [
            _result(lib.nan_to_num(u)),
            _result(-u),
            _result(u.floor()),
            _result(lib.asinh(c)),
            _result(u.expm1()),
        ]
        return rows

    _compare(torch, build)


def test_matrix_products_match_torch(torch):
    def build(lib):
        c, u, h, d = _operands(lib)
        v = lib.tensor([1.0, -2.0, 0.5])
        return [
            _result(c @ d),
            _result(d @ c),
            _result(d @ u),
            _result(lib.mm(d, c)),
            _result(lib.matmul(c, d)),
            _result(c @ v),
            _result(v @ c),
            _result(lib.mv(c, v)),
            _result(c.mv(v)),
            _result(lib.ones(2, 3, 3) @ c),
            _result(c @ c),
            _result(lib.mm(c, c)),
            _result(lib.sparse.mm(c, d)),
            _result(lib.sparse.mm(u, d)),
            _result(lib.sparse.addmm(d, c, d, beta=0.5, alpha=2.0)),
            _result(lib.addmm(d, u, d)),
            _result(lib.smm(u, d)),
            _result(c.long() @ d.long()),
            _error(lib.mm, c, d.double()),
            _error(lib.mm, c, lib.ones(2, 2)),
            _error(lib.sparse.mm, h, lib.ones(2, 2)),
            _error(lib.matmul, lib.ones(2, 3), h),
            _error(lib.matmul, c.unsqueeze(0), lib.ones(1, 3, 2)),
        ]

    _compare(torch, build)


def test_dimension_ops_and_copies_match_torch(torch):
    def build(lib):
        c, u, h, d = _operands(lib)
        x = u.clone()
        y = c.clone()
        return [
            _result(c.t()),
            _result(lib.t(u)),
            _result(c.transpose(0, 1)),
            _result(c.transpose(-1, 0)),
            _result(c.transpose(0, 0)),
            _result(lib.transpose(u, 1, 0)),
            _result(c.permute(1, 0)),
            _result(lib.clone(u)),
            _result(u.clone()),
            _result(u.detach()),
            _result(c.to(lib.float64)),
            _result(c.int()),
            _result(c.long()),
            _result(c.bool()),
            _result(c.half()),
            _result(c.type(lib.int64)),
            _summary(x.mul_(2)),
            _result(y.add_(c)),
            _result(c.clone().div_(2)),
            _result(u.clone().neg_()),
            _result(c.clone().abs_()),
            _result(c.clone().zero_()),
            _result(d.clone().add_(c)),
            _error(c.clone().add_, d),
            _error(h.permute, 1, 0),
            c.stride(),
            c.is_contiguous(),
            c.sparse_dim(),
            c.dense_dim(),
            h.sparse_dim(),
            h.dense_dim(),
            len(c),
            c.numel(),
        ]

    _compare(torch, build)


def test_what_has_no_memory_matches_torch(torch):
    def build(lib):
        c, u, h, d = _operands(lib)
        return [
            _error(c.numpy),
            _error(np.asarray, c),
            _error(c.tolist),
            _error(c.data_ptr),
            c.storage_offset(),
            _error(c.untyped_storage),
            _error(c.expand, 3, 3),
            _error(c.repeat, 2, 1),
            _error(c.view, 9),
        ]

    _compare(torch, build)


def test_leaf_in_place_is_refused_like_torch(torch):
    def build(lib):
        s = _coo(lib, C_INDICES, C_VALUES, (3, 3), requires_grad=True).coalesce()
        leaf = _coo(lib, C_INDICES, C_VALUES, (3, 3), requires_grad=True)
        return [_error(leaf.mul_, 2), s.requires_grad, s.is_leaf]

    _compare(torch, build)


# -- joins -----------------------------------------------------------------------------------
def test_cat_and_stack_match_torch(torch):
    def build(lib):
        c, u, h, d = _operands(lib)
        return [
            _result(lib.cat([c, u])),
            _result(lib.cat([u, c], 1)),
            _result(lib.cat([c, c], -1)),
            _result(lib.cat([c])),
            _result(lib.cat([h, h], 1)),
            _result(lib.cat([h, h])),
            _result(lib.cat([c, c.double()])),
            _result(lib.cat([c.long(), c])),
            _result(lib.cat([c, _coo(lib, [[], []], [], (3, 3))])),
            _result(lib.stack([c, u])),
            _result(lib.stack([c, u], 1)),
            _result(lib.stack([c, u], 2)),
            _result(lib.stack([c, c], -1)),
            _result(lib.stack([h, h], 1)),
            _result(lib.stack([h, h], 2)),
            _result(lib.stack([c, c.double()])),
            _error(lib.cat, [c, d]),
            _error(lib.cat, [d, c]),
            _error(lib.stack, [c, d]),
            _error(lib.cat, [h, lib.ones(3, 2).to_sparse()]),
            _error(lib.cat, [c, c], 2),
            _error(lib.stack, [c, _coo(lib, [[], []], [], (3, 4))]),
        ]

    _compare(torch, build)


# -- spdiags --------------------------------------------------------------------------------
def test_spdiags_matches_torch(torch):
    def build(lib):
        six = lib.arange(1.0, 7.0).reshape(2, 3)
        eight = lib.arange(1.0, 9.0).reshape(2, 4)
        ones = lib.ones(2, 3)
        return [
            _result(lib.sparse.spdiags(six, lib.tensor([0, -1]), (3, 3))),
            _result(lib.sparse.spdiags(eight, lib.tensor([1, -2]), (3, 4))),
            _result(lib.sparse.spdiags(lib.ones(3), lib.tensor([0]), (3, 3))),
            _result(lib.sparse.spdiags(lib.ones(1, 3), lib.tensor(0), (3, 3))),
            _result(lib.sparse.spdiags(lib.ones(2, 2), lib.tensor([0, 1]), (3, 3))),
            _result(lib.sparse.spdiags(lib.ones(2, 5), lib.tensor([0, 1]), [3, 3])),
            _result(lib.sparse.spdiags(lib.ones(1, 3, dtype=lib.int64), lib.tensor([0]), (3, 3))),
            _result(lib.sparse.spdiags(lib.ones(1, 0), lib.tensor([0]), (3, 3))),
            _result(lib.sparse.spdiags(six, lib.tensor([0, 1]), (2, 3), layout=lib.sparse_coo)),
            _error(lib.sparse.spdiags, ones, lib.tensor([0, 0]), (3, 3)),
            _error(lib.sparse.spdiags, ones, lib.tensor([0]), (3, 3)),
            _error(lib.sparse.spdiags, lib.ones(1, 3), lib.tensor([0.0]), (3, 3)),
            _error(lib.sparse.spdiags, lib.ones(1, 3), lib.tensor([0], dtype=lib.int32), (3, 3)),
            _error(lib.sparse.spdiags, lib.ones(1, 3), lib.tensor([0]), (3, 3, 3)),
            _error(lib.sparse.spdiags, lib.ones(1, 3), lib.tensor([[0]]), (3, 3)),
            _error(lib.sparse.spdiags, lib.ones(1, 1, 3), lib.tensor([0]), (3, 3)),
            _error(lib.sparse.spdiags, lib.ones(1, 3), [0], (3, 3)),
            _error(lib.sparse.spdiags, ones[:1], lib.tensor([0]), (3, 3), layout=lib.strided),
        ]

    _compare(torch, build)


# -- what the sparse backend lacks -----------------------------------------------------------
def test_unsupported_ops_raise_torchs_not_implemented_error(torch):
    def build(lib):
        c, u, h, d = _operands(lib)
        calls = [
            (lib.exp, c),
            (lib.sigmoid, c),
            (lib.cos, c),
            (lib.log, c),
            (lib.mean, c),
            (c.mean, 1),
            (lib.eq, c, c),
            (lib.where, d > 2, c, d),
            (lib.softmax, c, 1),
            (c.fill_, 1.0),
            (c.amax,),
            (c.view, 9),
            (lib.acos, c),
            (lib.reciprocal, c),
            (lib.atan2, c, c),
            (lib.maximum, c, c),
            (lib.cumsum, c, 0),
        ]
        return [_error(call[0], *call[1:]) for call in calls]

    _compare(torch, build)


def test_legacy_sparse_constructors_match_torch(torch):
    def build(lib):
        i = lib.tensor([[0, 1], [1, 0]])
        v = lib.tensor([1.0, 2.0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated, in both
            made = [
                lib.sparse.FloatTensor(i, v, lib.Size([2, 2])),
                lib.sparse.FloatTensor(i, v, (2, 3)),
                lib.sparse.FloatTensor(i, v),
                lib.sparse.FloatTensor(2, 3),
                lib.sparse.DoubleTensor(lib.Size([2, 3])),
                lib.sparse.FloatTensor(),
                lib.sparse.DoubleTensor(i, v, (2, 2)),
                lib.sparse.LongTensor(i, lib.tensor([1, 2]), (2, 2)),
            ]
        return [_result(t) for t in made] + [
            isinstance(made[0], lib.sparse.FloatTensor),
            isinstance(made[0], lib.sparse.DoubleTensor),
            isinstance(lib.ones(2), lib.sparse.FloatTensor),
            repr(lib.sparse.FloatTensor).replace("tocha", "torch"),
            _error(lib.sparse.FloatTensor, v),
            _error(lib.sparse.FloatTensor, i.int(), v, (2, 2)),
        ]

    _compare(torch, build)


# -- gradients ------------------------------------------------------------------------------
GRAD_INDICES = [[0, 1, 1, 2, 0], [2, 0, 2, 1, 2]]  # (0, 2) twice
GRAD_VALUES = [0.3, -1.2, 0.5, 2.0, 0.7]
GRAD_DENSE = [[0.1, 0.2, 0.3], [0.4, -0.5, 0.6], [0.7, 0.8, -0.9]]

# (id, f(lib, s, d) with s sparse from the values, d dense, whether PyTorch has its gradient)
GRADS = [
    ("sparse_mm", lambda lib, s, d: lib.sparse.mm(s, d), True),
    ("mm", lambda lib, s, d: lib.mm(s, d), True),
    ("dense_at_sparse", lambda lib, s, d: d @ s, True),
    ("sparse_at_vector", lambda lib, s, d: s @ d[0], True),
    ("addmm", lambda lib, s, d: lib.sparse.addmm(d, s, d, beta=0.5, alpha=2.0), True),
    ("softmax_dim1", lambda lib, s, d: lib.sparse.softmax(s, 1), True),
    ("softmax_dim0", lambda lib, s, d: lib.sparse.softmax(s, 0), True),
    ("log_softmax_dim1", lambda lib, s, d: lib.sparse.log_softmax(s, 1), True),
    ("log_softmax_dim0", lambda lib, s, d: lib.sparse.log_softmax(s, 0), True),
    ("plus_dense", lambda lib, s, d: d + s, True),
    ("add_alpha", lambda lib, s, d: lib.add(d, s, alpha=3), True),
    ("minus", lambda lib, s, d: d - s, True),
    ("scaled", lambda lib, s, d: s * 2, True),
    ("pow", lambda lib, s, d: s.pow(2), True),
    ("abs", lambda lib, s, d: s.abs(), True),
    ("sum", lambda lib, s, d: s.sum(), True),
    ("sparse_sum_dim", lambda lib, s, d: lib.sparse.sum(s, 1), True),
    ("transpose", lambda lib, s, d: s.t(), True),
    ("values", lambda lib, s, d: s.coalesce().values(), True),
    ("quotient", lambda lib, s, d: s / 4, True),
    ("linear", lambda lib, s, d: lib.nn.functional.linear(s, d, d[0]), True),
    ("times_dense", lambda lib, s, d: s * d, False),
    ("times_row", lambda lib, s, d: s * d[0], False),
    ("times_sparse", lambda lib, s, d: s * s.coalesce(), False),
    ("tanh", lambda lib, s, d: lib.tanh(s), False),
    ("sum_dim", lambda lib, s, d: s.sum(1), False),
    ("index_select", lambda lib, s, d: s.index_select(1, lib.tensor([2, 1, 2])), False),
    ("narrow_copy", lambda lib, s, d: s.narrow_copy(1, 1, 2), False),
    ("cat", lambda lib, s, d: lib.cat([s, s * 2], 1), False),
    ("stack", lambda lib, s, d: lib.stack([s, s.coalesce()]), False),
    ("select", lambda lib, s, d: s[1], False),
    (
        "spdiags",
        lambda lib, s, d: lib.sparse.spdiags(d * s.to_dense(), lib.tensor([0, 1, -1]), (3, 3)),
        False,
    ),
]


def _weighted(lib, f):
    """``f`` of a sparse tensor built from float64 values and of a dense matrix, reduced
    to a scalar by fixed weights: a function of (values, dense) for gradients."""

    def g(v, d):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = lib.sparse_coo_tensor(lib.tensor(GRAD_INDICES), v, (3, 3))
        out = f(lib, s, d)
        if out.is_sparse:
            out = out.to_dense()
        weights = lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape) - 3
        return (out * weights).sum()

    return g


@pytest.mark.parametrize("case", GRADS, ids=[c[0] for c in GRADS])
def test_gradients_pass_gradcheck(autograd, case):
    if case[0] == "linear":
        pytest.importorskip("tocha.nn")
    g = _weighted(tocha, case[1])
    v = tocha.tensor(GRAD_VALUES, dtype=tocha.float64, requires_grad=True)
    d = tocha.tensor(GRAD_DENSE, dtype=tocha.float64, requires_grad=True)
    assert autograd.gradcheck(g, (v, d), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("case", [c for c in GRADS if c[2]], ids=[c[0] for c in GRADS if c[2]])
def test_gradients_match_torch(torch, autograd, case):
    if case[0] == "linear":
        pytest.importorskip("tocha.nn")

    def build(lib):
        v = lib.tensor(GRAD_VALUES, dtype=lib.float64, requires_grad=True)
        d = lib.tensor(GRAD_DENSE, dtype=lib.float64, requires_grad=True)
        _weighted(lib, case[1])(v, d).backward()
        grads = [v.grad, d.grad]
        return [None if g is None else np.asarray(g).round(10).tolist() for g in grads]

    _compare(torch, build)


def test_sparse_leaf_gradients_match_torch(torch, autograd):
    def build(lib):
        rows = []
        for f in (
            lambda s, d: lib.sparse.softmax(s, 1),
            lambda s, d: lib.sparse.log_softmax(s, 0),
            lambda s, d: lib.sparse.mm(s, d),
            lambda s, d: s * d,
            lambda s, d: lib.sparse.sum(s, 1),
        ):
            s = _coo(lib, C_INDICES, C_VALUES, (3, 3), dtype=lib.float64).coalesce()
            s.requires_grad_(True)
            d = lib.tensor(GRAD_DENSE, dtype=lib.float64)
            out = f(s, d)
            out = out.to_dense() if out.is_sparse else out
            (
                out * (lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape) - 3)
            ).sum().backward()
            grad = s.grad
            rows.append(
                (
                    grad.is_sparse,
                    np.asarray(grad._indices()).tolist(),
                    np.asarray(grad._values()).round(10).tolist(),
                )
            )
        return rows

    _compare(torch, build)


# -- graph networks --------------------------------------------------------------------------
def test_gcn_normalisation_matches_torch(torch, autograd):
    """The symmetric normalisation of a GCN, from sparse ops, and one propagation."""

    def build(lib):
        n = 6
        ring = [[i, (i + 1) % n] for i in range(n)]
        edges = lib.tensor(ring).t()
        edges = lib.cat([edges, edges.flip(0), lib.arange(n).repeat(2, 1)], 1)
        a = _coo(lib, edges, lib.ones(edges.shape[1]), (n, n)).coalesce()
        deg = lib.sparse.sum(a, dim=1).to_dense()
        dinv = deg.pow(-0.5)
        row, col = a.indices()
        norm = _coo(lib, a.indices(), dinv[row] * a.values() * dinv[col], (n, n))
        scaled = a * dinv.view(-1, 1) * dinv.view(1, -1)
        x = lib.arange(n * 2, dtype=lib.float32).reshape(n, 2) / 10
        w = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        out = lib.sparse.mm(norm, x @ w)
        out.pow(2).sum().backward()
        eye = lib.eye(n).to_sparse()
        return [
            _result(norm.coalesce()),
            _result(scaled),
            _result(out),
            np.asarray(w.grad).round(5).tolist(),
            _result((a + eye).coalesce()),
            _result(lib.sparse.softmax(norm, 1)),
            _result(norm.t().coalesce()),
        ]

    _compare(torch, build)
