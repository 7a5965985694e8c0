"""Sparse COO tensors (tocha.sparse): construction, repr, coalescing, conversions, products,
sums, arithmetic, errors and gradients, and nn.Embedding(sparse=True)'s gradients, against
PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha

INDICES = [[0, 1, 1, 0], [2, 0, 2, 2]]
VALUES = [3.0, 4.0, 5.0, -1.0]
D = np.arange(6.0, dtype=np.float32).reshape(3, 2) - 2.5


@pytest.fixture
def autograd():
    return pytest.importorskip("tocha.autograd")


@pytest.fixture
def nn():
    return pytest.importorskip("tocha.nn")


def _sparse(lib, indices=INDICES, values=VALUES, size=(2, 3), **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note on invariant checks
        if size is None:
            return lib.sparse_coo_tensor(indices, values, **kwargs)
        return lib.sparse_coo_tensor(indices, values, size, **kwargs)


def _text(obj) -> str:
    return repr(obj).replace("tocha", "torch")


def _dense(t) -> np.ndarray:
    return np.asarray(t.detach().to_dense())


def _summary(t):
    """Values and entry count (the order of uncoalesced entries is PyTorch's business)."""
    return _dense(t).tolist(), t._nnz(), t.is_coalesced()


def _error(fn, *args, **kwargs):
    with pytest.raises(Exception) as info:
        fn(*args, **kwargs)
    return type(info.value).__name__, str(info.value).split("\n")[0].replace("tocha", "torch")


CASES = [
    ("2d", dict()),
    ("no_size", dict(size=None)),
    ("hybrid", dict(indices=[[0, 0, 2]], values=[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], size=(3, 2))),
    ("int", dict(indices=[[0, 2]], values=[1, 2], size=(3,))),
    ("double", dict(values=[1.0, 2.0, 3.0, 4.0], dtype="float64")),
    ("empty", dict(indices=[[], []], values=[], size=(2, 2))),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_construction_and_metadata_match_torch(torch, case):
    _, kwargs = case
    got = []
    for lib in (tocha, torch):
        options = dict(kwargs)
        if "dtype" in options:
            options["dtype"] = getattr(lib, options["dtype"])
        s = _sparse(lib, **options)
        c = s.coalesce()
        got.append(
            [
                _text(s),
                _text(c),
                tuple(s.shape),
                str(s.dtype).split(".")[1],
                str(s.layout).split(".")[1],
                s.is_sparse,
                s.sparse_dim(),
                s.dense_dim(),
                s._nnz(),
                s.is_coalesced(),
                c.is_coalesced(),
                np.asarray(c.indices()).tolist(),
                np.asarray(c.values()).tolist(),
                np.asarray(s._indices()).tolist(),
                _dense(s).tolist(),
                s.dim(),
                s.numel(),
            ]
        )
    assert got[0] == got[1]


def test_to_sparse_and_back(torch):
    x = np.array([[0.0, 2.0, 0.0], [3.0, 0.0, -1.0]], dtype=np.float32)
    h = np.array([[[0.0, 0.0], [1.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]], dtype=np.float32)
    got = []
    for lib in (tocha, torch):
        t = lib.tensor(x)
        s = t.to_sparse()
        hybrid = lib.tensor(h).to_sparse(1)
        got.append(
            [
                _text(s),
                s.is_coalesced(),
                _dense(s).tolist(),
                _text(hybrid),
                hybrid.dense_dim(),
                t.to_dense() is t,
                t.is_sparse,
                t.sparse_dim(),
                t.dense_dim(),
            ]
        )
    assert got[0] == got[1]


def test_errors_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        s = _sparse(lib)
        dense = lib.ones(2, 3)
        rows = [
            _error(s.indices),
            _error(s.values),
            _error(dense.indices),
            _error(dense.values),
            _error(dense.coalesce),
            _error(dense.is_coalesced),
            _error(dense._nnz)[0],
            _error(s.__add__, dense),
            _error(lib.exp, s)[0],
            _error(_sparse, lib, [[0, 5]], [1.0, 2.0], (3,), check_invariants=True),
            _error(_sparse, lib, [[0, 1]], [1.0, 2.0, 3.0], None),
            _error(_sparse, lib, [0, 1], [1.0, 2.0], None),
        ]
        got.append(rows)
    assert got[0] == got[1]


def test_products_and_sums_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        s = _sparse(lib)
        d = lib.tensor(D)
        hybrid = _sparse(lib, [[0, 0, 2]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], (3, 2))
        got.append(
            [
                np.asarray(lib.sparse.mm(s, d)).tolist(),
                np.asarray(lib.mm(s, d)).tolist(),
                np.asarray(s @ d).tolist(),
                np.asarray(lib.sparse.addmm(lib.ones(2, 2), s, d, beta=2.0, alpha=0.5)).tolist(),
                np.asarray(lib.sparse.sum(s)).tolist(),
                _text(lib.sparse.sum(s, 0)),
                _text(lib.sparse.sum(s, 1)),
                np.asarray(lib.sparse.sum(s, (0, 1))).tolist(),
                _text(lib.sparse.sum(hybrid, 1)),
                np.asarray(lib.sparse.sum(hybrid, 0)).tolist(),
                _text(s * 2),
                _text(2.0 * s),
                _text(s + s),
                _summary(s + _sparse(lib, [[1], [1]], [2.0])),
                _text(s.coalesce() + _sparse(lib, [[1], [1]], [2.0])),
                np.asarray(lib.ones(2, 3) + s).tolist(),
                np.asarray(lib.ones(2, 3).add(s)).tolist(),
                _dense(s.t()).tolist(),
                _text(lib.sparse.mm(s, s.t())),
            ]
        )
    assert got[0] == got[1]


def test_gradients_reach_values_and_the_dense_operand(torch, autograd):
    got = []
    for lib in (tocha, torch):
        v = lib.tensor(VALUES, requires_grad=True)
        d = lib.tensor(D, requires_grad=True)
        s = lib.sparse_coo_tensor(INDICES, v, (2, 3))
        (lib.sparse.mm(s, d) * lib.tensor([[1.0, -2.0], [0.5, 3.0]])).sum().backward()
        row = [np.asarray(v.grad).tolist(), np.asarray(d.grad).tolist()]
        d.grad = None
        s = lib.sparse_coo_tensor(INDICES, v, (2, 3))
        lib.mm(s, d).sum().backward()
        row.append(np.asarray(d.grad).tolist())
        v.grad = None
        s = lib.sparse_coo_tensor(INDICES, v, (2, 3))
        (s.to_dense() * lib.arange(6.0).reshape(2, 3)).sum().backward()
        row.append(np.asarray(v.grad).tolist())
        got.append(row)
    assert got[0] == got[1]


def test_sparse_leaf_gets_a_sparse_gradient(torch, autograd):
    got = []
    for lib in (tocha, torch):
        d = lib.tensor(D)
        rows = []
        for indices in (INDICES, [[0, 1, 0, 1], [2, 0, 2, 1]]):
            s = _sparse(lib, indices, VALUES, (2, 3), requires_grad=True)
            rows.append((s.requires_grad, s.is_leaf, s.grad))
            lib.sparse.mm(s, d).sum().backward()
            rows.append(_text(s.grad))
            s.grad = None
            (s.to_dense() * lib.arange(6.0).reshape(2, 3)).sum().backward()
            rows.append(_text(s.grad))
        got.append(rows)
    assert got[0] == got[1]


def _embedding_grads(lib, calls, **kwargs):
    w = lib.nn.Parameter(lib.arange(12.0).reshape(4, 3))
    for index, scale in calls:
        out = lib.nn.functional.embedding(lib.tensor(index), w, sparse=True, **kwargs)
        (out * scale).sum().backward()
    return w.grad


EMBEDDING = [
    ("one", [([[0, 2], [2, 1]], 1.0)], {}),
    ("padding", [([[0, 2], [2, 1]], 1.0)], {"padding_idx": 1}),
    ("accumulated", [([0, 2], 1.0), ([3, 2, 2], 2.0)], {}),
]


@pytest.mark.parametrize("case", EMBEDDING, ids=[c[0] for c in EMBEDDING])
def test_embedding_sparse_gradient_matches_torch(torch, nn, case):
    _, calls, kwargs = case
    got = []
    for lib in (tocha, torch):
        g = _embedding_grads(lib, calls, **kwargs)
        c = g.coalesce()
        got.append(
            [
                g.is_sparse,
                g.is_coalesced(),
                g._nnz(),
                np.asarray(g._indices()).tolist(),
                _dense(g).tolist(),
                _text(c),
            ]
        )
    assert got[0] == got[1]


def test_embedding_module_and_errors(torch, nn):
    got = []
    for lib in (tocha, torch):
        lib.manual_seed(0)
        e = lib.nn.Embedding(5, 2, sparse=True)
        e(lib.tensor([1, 1, 4])).sum().backward()
        w = lib.nn.Parameter(lib.ones(3, 2))
        out = lib.nn.functional.embedding(lib.tensor([0]), w, sparse=True, scale_grad_by_freq=True)
        got.append(
            [
                e.weight.grad.is_sparse,
                _dense(e.weight.grad).tolist(),
                _error(out.sum().backward),
                repr(e),
            ]
        )
    assert got[0] == got[1]


def test_sparse_and_dense_gradients_of_one_weight_add_up(torch, nn):
    got = []
    for lib in (tocha, torch):
        w = lib.nn.Parameter(lib.arange(12.0).reshape(4, 3))
        embedded = lib.nn.functional.embedding(lib.tensor([0, 2]), w, sparse=True)
        ((w * 2).sum() + embedded.sum()).backward()
        got.append(_dense(w.grad).tolist())
    assert got[0] == got[1]


def test_dense_path_does_not_know_sparse():
    """The sparse class is separate: dense tensors are plain Tensors with strided layout."""
    x = tocha.ones(2)
    assert type(x) is tocha.Tensor and x.layout is tocha.strided and not x.is_sparse
    s = _sparse(tocha)
    assert isinstance(s, tocha.Tensor) and type(s) is not tocha.Tensor
    assert s.layout is tocha.sparse_coo


def test_copies_and_conversions_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        s = _sparse(lib).coalesce()
        results = [s.detach(), s.clone(), s.to(lib.float64), s.double(), -s, s / 2, s - s * 2]
        got.append([(_text(r), r.is_sparse, str(r.dtype).split(".")[1]) for r in results])
    assert got[0] == got[1]


def test_pickle_and_deepcopy_keep_sparse():
    import copy
    import pickle

    s = _sparse(tocha)
    for copied in (copy.deepcopy(s), pickle.loads(pickle.dumps(s))):
        assert copied.is_sparse and type(copied) is type(s) and not copied.is_coalesced()
        assert _text(copied) == _text(s)


# -- the other COO routines ----------------------------------------------------------------
def _entries(t):
    """A sparse result as stored: indices, values, size, coalesced flag."""
    t = t.detach()
    return (
        np.asarray(t._indices()).tolist(),
        np.asarray(t._values()).tolist(),
        tuple(t.shape),
        t.is_coalesced(),
    )


def _first_error(fn, *args):
    """The error's type and first sentence (PyTorch lists its backends after it)."""
    kind, message = _error(fn, *args)
    return kind, message.split(". ")[0].rstrip(".")


def test_sparse_products_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        s = _sparse(lib, [[1, 0, 1], [2, 0, 2]], [1.0, 2.0, 3.0], (3, 3))
        d = lib.tensor(np.arange(6.0, dtype=np.float32).reshape(3, 2) - 2.5)
        base = _sparse(lib, [[2, 0], [1, 1]], [4.0, -1.0], (3, 2))
        row = [
            _entries(lib.smm(s, d)),
            _entries(s.smm(d)),
            _entries(lib.hspmm(s, d)),
            _entries(lib.hsmm(s, d)),
            _entries(lib.sspaddmm(base, s, d, beta=2.0, alpha=0.5)),
            _entries(base.sspaddmm(s, d)),
            _entries(lib.saddmm(base, s, d, beta=0.5)),
            np.asarray(lib.spmm(s, d)).tolist(),
            np.asarray(lib.dsmm(s, d)).tolist(),
            _error(lib.smm, d[:2], d),
            _first_error(lib.hspmm, d[:2], d),
            _error(lib.smm, s, d[:2]),
            _error(lib.hspmm, s, d[0]),
            _error(lib.sspaddmm, base, s, lib.ones(3, 3)),
        ]
        got.append(row)
    assert got[0] == got[1]


def test_sparse_mask_and_to_sparse_coo_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        dense = lib.arange(6.0).reshape(2, 3)
        mask = _sparse(lib)
        hybrid = _sparse(lib, [[1]], [[1.0, 1.0, 1.0]], (2, 3))
        row = [
            _entries(dense.sparse_mask(mask)),
            _entries(dense.sparse_mask(mask.coalesce())),
            _entries(dense.sparse_mask(hybrid)),
            _entries(dense.double().sparse_mask(mask)),
            _first_error(dense.sparse_mask, dense),
            _error(lib.ones(3, 3).sparse_mask, mask),
            _entries(lib.tensor([[0, 2], [3, 0]]).to_sparse_coo()),
        ]
        got.append(row)
    assert got[0] == got[1]


def test_sparse_resize_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        s = _sparse(lib, [[0, 1]], [1.0, 2.0], (3,))
        row = [s.sparse_resize_((5,), 1, 0) is s, _entries(s)]
        row.append(_error(s.sparse_resize_, (1,), 1, 0))
        row.append(_error(s.sparse_resize_, (5, 2), 2, 0))
        row.append(_error(s.sparse_resize_, (5, 2), 1, 0))
        empty = _sparse(lib, lib.zeros(1, 0, dtype=lib.long), [], (4,))
        row += [_entries(empty.sparse_resize_((2, 3), 1, 1)), empty.dense_dim()]
        grown = _sparse(lib, [[0, 1]], [1.0, 2.0], (3,))
        row += [grown.resize_as_sparse_(_sparse(lib, [[0]], [1.0], (6,))) is grown]
        row += [_entries(grown), _error(grown.resize_as_sparse_, lib.ones(2))]
        row.append(_entries(lib.resize_as_sparse_(empty, _sparse(lib, [[0], [1]], [1.0], (2, 2)))))
        row += [s.sparse_resize_and_clear_((2, 2), 2, 0) is s, _entries(s), s.sparse_dim()]
        row.append(np.asarray(s.to_dense()).tolist())
        got.append(row)
    assert got[0] == got[1]
