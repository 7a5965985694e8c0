"""Compressed sparse tensors (CSR, CSC, BSR, BSC): construction, invariant errors, repr,
accessors, conversions, products, sums, value-wise maps, transposes, errors, gradients and
saving, against PyTorch."""

from __future__ import annotations

import io
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tocha

D = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], dtype=np.float32)
B = np.arange(1.0, 17.0, dtype=np.float32).reshape(4, 4) * (np.arange(4) % 3 != 1)
BATCH = np.array(
    [[[1.0, 0.0, 3.0], [4.0, 5.0, 6.0]], [[0.0, 8.0, 9.0], [10.0, 11.0, 12.0]]], dtype=np.float32
)


@pytest.fixture
def autograd():
    return pytest.importorskip("tocha.autograd")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's notes on invariant checks and beta support
        yield


def _csr(lib, **kwargs):
    return lib.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1.0, 2.0, 3.0], (2, 3), **kwargs)


def _text(obj) -> str:
    return repr(obj).replace("tocha", "torch")


def _s(obj) -> str:
    return str(obj).replace("tocha", "torch")


def _np(t) -> list:
    return np.asarray(t.detach()).tolist()


def _error(fn, *args, **kwargs):
    with pytest.raises(Exception) as info:
        fn(*args, **kwargs)
    return type(info.value).__name__, str(info.value).split("\n")[0].replace("tocha", "torch")


def _kind(exc) -> str:
    """The exception's PyTorch-level kind (its first standard base)."""
    return next(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins")


CASES = [
    ("csr", lambda lib: _csr(lib)),
    ("csr_no_size", lambda lib: lib.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1.0, 2.0, 3.0])),
    ("csc", lambda lib: lib.sparse_csc_tensor([0, 1, 2, 3], [0, 1, 0], [1.0, 2.0, 3.0], (2, 3))),
    (
        "bsr",
        lambda lib: lib.sparse_bsr_tensor(
            [0, 1, 2], [0, 1], lib.arange(8.0).reshape(2, 2, 2), (4, 4)
        ),
    ),
    (
        "bsc",
        lambda lib: lib.sparse_bsc_tensor(
            [0, 1, 2], [0, 1], lib.arange(8.0).reshape(2, 2, 2), (4, 4)
        ),
    ),
    (
        "int32_indices",
        lambda lib: lib.sparse_csr_tensor(
            lib.tensor([0, 2, 3], dtype=lib.int32),
            lib.tensor([0, 2, 1], dtype=lib.int32),
            lib.tensor([1.0, 2.0, 3.0]),
            (2, 3),
        ),
    ),
    ("double", lambda lib: _csr(lib, dtype=lib.float64)),
    ("int", lambda lib: lib.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1, 2, 3], (2, 3))),
    ("grad", lambda lib: _csr(lib, requires_grad=True)),
    (
        "hybrid",
        lambda lib: lib.sparse_csr_tensor(
            [0, 2, 3], [0, 2, 1], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], (2, 3, 2)
        ),
    ),
    (
        "batched",
        lambda lib: lib.sparse_csr_tensor(
            [[0, 2, 3], [0, 1, 3]], [[0, 2, 1], [0, 1, 2]], [[1.0, 2, 3], [4, 5, 6]]
        ),
    ),
    ("empty", lambda lib: lib.sparse_csr_tensor([0, 0, 0], [], [], (2, 3))),
    (
        "compressed_bsc",
        lambda lib: lib.sparse_compressed_tensor(
            [0, 1], [0], lib.ones(1, 2, 2), layout=lib.sparse_bsc
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_construction_repr_and_metadata_match_torch(torch, case):
    got = []
    for lib in (tocha, torch):
        t = case[1](lib)
        got.append(
            [
                _text(t),
                _s(t),
                tuple(t.shape),
                _s(t.dtype),
                _s(t.layout),
                t.is_sparse,
                t.is_sparse_csr,
                t._nnz(),
                t.dim(),
                t.numel(),
                t.sparse_dim(),
                t.dense_dim(),
                t.requires_grad,
                _np(t.values()),
                _np(t.to_dense()),
                _s(t.values().dtype),
            ]
        )
    assert got[0] == got[1]


def test_accessors_and_index_dtypes_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        c = _csr(lib)
        csc = c.to_sparse_csc()
        bsc = c.to_sparse_bsc(1)
        i32 = lib.sparse_csr_tensor(
            lib.tensor([0, 2, 3], dtype=lib.int32),
            lib.tensor([0, 2, 1], dtype=lib.int32),
            lib.tensor([1.0, 2.0, 3.0]),
            (2, 3),
        )
        got.append(
            [
                _np(c.crow_indices()),
                _np(c.col_indices()),
                _np(csc.ccol_indices()),
                _np(csc.row_indices()),
                _np(bsc.ccol_indices()),
                _np(bsc.row_indices()),
                _s(c.crow_indices().dtype),
                _s(i32.crow_indices().dtype),
                _s(i32.to_sparse_csc().ccol_indices().dtype),
                _s(i32.t().ccol_indices().dtype),
                _s(i32.clone().col_indices().dtype),
                _s(i32.to_sparse_coo().indices().dtype),
                _error(csc.crow_indices),
                _error(csc.col_indices),
                _error(c.ccol_indices),
                _error(c.row_indices),
                _error(bsc.col_indices),
                _error(lib.ones(2).crow_indices),
                _error(lib.ones(2).row_indices),
                _error(lib.ones(2).values),
                _error(c.indices),
                _error(c._indices)[0],
                _error(c._values)[0],
                _error(c.is_coalesced),
                _error(c.coalesce),
                _error(c.stride),
                _error(c.is_contiguous),
                _error(c.numpy),
                _error(c.data_ptr),
                _error(c.untyped_storage),
                c.element_size(),
                c.nbytes,
            ]
        )
    assert got[0] == got[1]


def _construct(lib, layout, compressed, plain, values, size=None, **kwargs):
    sized = () if size is None else (size,)
    return lib.sparse_compressed_tensor(
        compressed, plain, values, *sized, layout=getattr(lib, layout), **kwargs
    )


INVALID = [
    ("last_not_nnz", "sparse_csr", [0, 2, 4], [0, 2, 1], [1.0, 2.0, 3.0], (2, 3)),
    ("first_not_zero", "sparse_csr", [1, 2, 3], [0, 2, 1], [1.0, 2.0, 3.0], (2, 3)),
    ("col_too_large", "sparse_csr", [0, 2, 3], [0, 5, 1], [1.0, 2.0, 3.0], (2, 3)),
    ("col_negative", "sparse_csr", [0, 2, 3], [0, -1, 1], [1.0, 2.0, 3.0], (2, 3)),
    ("unsorted", "sparse_csr", [0, 2, 3], [2, 0, 1], [1.0, 2.0, 3.0], (2, 3)),
    ("repeated", "sparse_csr", [0, 2, 3], [0, 0, 1], [1.0, 2.0, 3.0], (2, 3)),
    ("crow_length", "sparse_csr", [0, 2, 3, 3], [0, 2, 1], [1.0, 2.0, 3.0], (2, 3)),
    ("nnz_mismatch", "sparse_csr", [0, 2, 3], [0, 2, 1], [1.0, 2.0], (2, 3)),
    ("row_too_large", "sparse_csc", [0, 2, 3], [0, 2, 1], [1.0, 2.0, 3.0], (2, 2)),
    ("csc_unsorted", "sparse_csc", [0, 2, 3], [1, 0, 1], [1.0, 2.0, 3.0], (3, 2)),
    ("steps_past_ncols", "sparse_csr", [0, 3, 3], [0, 1, 2], [1.0, 2.0, 3.0], (2, 2)),
    ("steps_negative", "sparse_csr", [0, 2, 1, 3], [0, 1, 2], [1.0, 2.0, 3.0], (3, 3)),
    ("bsr_col", "sparse_bsr", [0, 1, 2], [0, 2], np.ones((2, 2, 2), np.float32), (4, 4)),
    ("bsr_values_dim", "sparse_bsr", [0, 1, 2], [0, 2, 1], [1.0, 2.0, 3.0], None),
]


@pytest.mark.parametrize("case", INVALID, ids=[c[0] for c in INVALID])
def test_invariant_errors_match_torch(torch, case):
    _, layout, compressed, plain, values, size = case
    got = []
    for lib in (tocha, torch):
        vals = lib.tensor(values) if isinstance(values, np.ndarray) else values
        got.append(
            _error(_construct, lib, layout, compressed, plain, vals, size, check_invariants=True)
        )
    assert got[0] == got[1]


def test_index_dtype_errors_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        row = []
        for first, second in ((lib.int32, lib.int64), (lib.int16, lib.int16)):
            crow, col = lib.tensor([0, 1, 2], dtype=first), lib.tensor([0, 1], dtype=second)
            row.append(
                _error(lib.sparse_csr_tensor, crow, col, lib.ones(2), (2, 3), check_invariants=True)
            )
        got.append(row)
    assert got[0] == got[1]


def test_constructor_argument_errors_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        got.append(
            [
                _error(lib.sparse_compressed_tensor, [0, 1], [0], [1.0], (1, 1)),
                _error(
                    lib.sparse_compressed_tensor, [0, 1], [0], [1.0], (1, 1), layout=lib.strided
                ),
                _error(_csr, lib, requires_grad=True, dtype=lib.int64),
            ]
        )
    assert got[0] == got[1]


def test_check_sparse_tensor_invariants_switch(torch):
    got = []
    for lib in (tocha, torch):
        switch = lib.sparse.check_sparse_tensor_invariants
        row = [switch.is_enabled()]
        with switch():
            row.append(switch.is_enabled())
            row.append(_error(lib.sparse_coo_tensor, [[0, 5]], [1.0, 2.0], (3,)))
        row.append(switch.is_enabled())
        switch.enable()
        row.append(switch.is_enabled())
        switch.disable()
        row.append(switch.is_enabled())
        row.append(lib.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (3,))._nnz())
        got.append(row)
    assert got[0] == got[1]


def test_conversions_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        d = lib.tensor(D)
        b = lib.tensor(B)
        batch = lib.tensor(BATCH)
        hybrid = lib.tensor([[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [2.0, 3.0]]])
        c = d.to_sparse_csr()
        coo = lib.sparse_coo_tensor([[1, 0, 0], [0, 2, 0]], [1.0, 2.0, 3.0], (2, 3))
        explicit_zero = lib.sparse_csr_tensor([0, 1, 2], [0, 1], [0.0, 2.0], (2, 3))
        rows = [
            c,
            d.to_sparse_csc(),
            b.to_sparse_bsr((2, 2)),
            b.to_sparse_bsc(2),
            b.to_sparse_bsr(2).to_sparse_bsc(2),
            b.to_sparse_csr().to_sparse_bsr(2),
            d.to_sparse(layout=lib.sparse_csr),
            d.to_sparse(layout=lib.sparse_bsr, blocksize=(1, 3)),
            c.to_sparse_csc(),
            c.to_sparse_csc().to_sparse_csr(),
            c.to_sparse_coo(),
            c.to_sparse(),
            c.to_sparse_csc().to_sparse_coo(),
            b.to_sparse_bsr(2).to_sparse_coo(),
            d.to_sparse().to_sparse_csr(),
            coo.to_sparse_csr(),
            coo.to_sparse_csc(),
            coo.to_sparse_bsr(1),
            explicit_zero.to_sparse_csc(),
            explicit_zero.to_sparse_coo(),
            batch.to_sparse_csr(),
            batch.to_sparse_csc(),
            batch.to_sparse_csr().to_sparse_csc(),
            batch.to_sparse_csr().to_sparse_coo(),
            lib.arange(1.0, 17.0).reshape(2, 2, 4).to_sparse_bsr(2),
            hybrid.to_sparse_csr(dense_dim=1),
            hybrid.to_sparse_csc(dense_dim=1),
            hybrid.to_sparse_bsr(1, dense_dim=1),
            lib.zeros(2, 3).to_sparse_csr(),
            lib.zeros(2, 2, 3).to_sparse_csr(),
            lib.tensor([[1, 0], [0, 2]]).to_sparse_csr(),
        ]
        row = [_text(r) for r in rows]
        row += [_np(r.to_dense()) for r in rows]
        row += [
            c.to_sparse_csr() is c,
            c.to_sparse(layout=lib.sparse_csr) is c,
            c.to_sparse_coo().is_coalesced(),
            _np(batch.to_sparse_csr().to_dense()),
            _np(hybrid.to_sparse_csr(dense_dim=1).to_dense()),
        ]
        got.append(row)
    assert got[0] == got[1]


def test_conversion_errors_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        c = _csr(lib)
        d = lib.tensor(D)
        b = lib.tensor(B)
        got.append(
            [
                _error(lib.tensor(BATCH * (np.arange(3) != 0)).to_sparse_csr),
                _error(c.to_sparse_csr, dense_dim=1),
                _error(d.to_sparse_csr, dense_dim=1),
                _error(lib.zeros(2, 3).to_sparse_bsr, (2, 2)),
                _error(d.to_sparse, layout=lib.sparse_bsr),
                _error(c.to_sparse, 1),
                _error(b.to_sparse_bsr(2).to_sparse_csr),
                _error(b.to_sparse_bsr(2).to_sparse_bsr, 1),
                _error(c.to_dense, lib.float64),
                _error(lib.arange(1.0, 17.0).reshape(2, 2, 4).to_sparse_coo().to_sparse_csr),
            ]
        )
    assert got[0] == got[1]


def test_products_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        c = _csr(lib)
        m = lib.arange(6.0).reshape(3, 2) - 2.5
        v = lib.tensor([1.0, -2.0, 0.5])
        b = lib.tensor(B)
        got.append(
            [
                _np(c @ m),
                _np(lib.mm(c, m)),
                _np(lib.matmul(c, m)),
                _np(lib.mv(c, v)),
                _np(c @ v),
                _np(c.matmul(v)),
                _np(lib.addmm(lib.ones(2, 2), c, m, beta=2.0, alpha=0.5)),
                _np(lib.addmv(lib.ones(2), c, v)),
                _np(lib.sparse.mm(c, m)),
                _np(lib.sparse.addmm(lib.ones(2, 2), c, m)),
                _np(lib.ones(2, 2) @ c),
                _np(lib.ones(5, 2, 3) @ c.t()),
                _np(c.to_sparse_csc() @ m),
                _np(c.to_sparse_csc() @ v),
                _np(c.t() @ lib.ones(2, 2)),
                _np(b.to_sparse_bsr(2) @ lib.ones(4, 1)),
                _np(c.double() @ m.double()),
                _text(c @ c.t()),
                _text(c.t() @ c),
                _text(c.to_sparse_csc() @ c.t()),
                _error(lib.matmul, c, lib.ones(4, 2)),
                _error(lib.mm, c, m.double()),
                _error(lib.mv, c, lib.ones(2)),
                _error(lib.matmul, c, c),
                _error(lib.matmul, c.int(), lib.ones(3, 2, dtype=lib.int32)),
                _error(lib.matmul, b.to_sparse_bsc(2), lib.ones(4, 1)),
                _error(lib.matmul, c, lib.ones(2, 3, 2)),
            ]
        )
    assert got[0] == got[1]


def test_elementwise_and_sums_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        c = _csr(lib)
        d = lib.tensor(D) + 1
        other = lib.sparse_csr_tensor([0, 1, 3], [1, 0, 1], [1.0, 2.0, 3.0], (2, 3))
        single = lib.sparse_csr_tensor([0, 1, 1], [2], [5.0], (2, 3))
        got.append(
            [
                _text(c * 2),
                _text(2.5 * c),
                _text(c.mul(lib.tensor(2.0))),
                _text(c.int() * 2.5),
                _text(c * d),
                _text(d * c),
                _text(c * lib.ones(2, 3, dtype=lib.float64)),
                _text(c * c),
                _text(c * single),
                _text(c + c),
                _text(c.add(c, alpha=2)),
                _text(c + other),
                _np(c + d),
                _np(d + c),
                _np(lib.add(d, c, alpha=2)),
                _np(lib.ones(2, 3, dtype=lib.int64) + c),
                _text(c.to_sparse_csc() * 2),
                _text(c.to_sparse_bsr(1) * 2),
                _text(c.to_sparse_bsr(1).neg()),
                _np(c.sum()),
                _np(c.sum(dtype=lib.int64)),
                _np(c.to_sparse_csc().sum()),
                _np(c.to_sparse_bsr(1).sum()),
                _text(c.sum(0, keepdim=True)),
                _text(c.sum(-1, keepdim=True)),
                _text(c.sum((0, 1), keepdim=True)),
                _text(single.sum(1, keepdim=True)),
                _error(c.sum, 0),
                _error(c.to_sparse_csc().sum, 0, keepdim=True),
                _error(lib.mul, c, lib.tensor([[1.0, 2.0, 3.0]])),
                _error(lib.add, c, c.to_sparse_csc()),
                _error(lib.add, c, c.double()),
                _error(lib.add, c, 1),
                _error(lib.add, c, lib.ones(3)),
                _text(c * lib.tensor(D).to_sparse()),
                _error(lib.add, c, lib.tensor(D).to_sparse())[0],
            ]
        )
    assert got[0] == got[1]


def test_sampled_addmm_linear_and_spdiags_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        c = _csr(lib)
        m1 = lib.arange(8.0).reshape(2, 4) - 3
        m2 = lib.arange(12.0).reshape(4, 3) / 4
        sampled = lib.sparse.sampled_addmm
        got.append(
            [
                _text(sampled(c, m1, m2)),
                _text(sampled(c, m1, m2, beta=0.5, alpha=2)),
                _text(sampled(c, m1, m2, beta=0)),
                _error(sampled, c, lib.ones(3, 4), m2),
                _error(sampled, c, m1, lib.ones(4, 2)),
                _error(sampled, c, m1, lib.ones(5, 3)),
                _error(sampled, c, m1.double(), m2),
                _error(sampled, c, lib.ones(4), m2),
                _error(sampled, c.to_sparse_csc(), m1, m2),
                _error(sampled, c.to_sparse_bsr(1), m1, m2),
                _np(lib.nn.functional.linear(lib.ones(4, 3), c)),
                _np(lib.nn.functional.linear(c, lib.ones(4, 3), lib.arange(4.0))),
                _text(
                    lib.sparse.spdiags(
                        lib.tensor([[1.0, 2.0, 3.0]]), lib.tensor([0]), (3, 3), lib.sparse_csr
                    )
                ),
                _text(
                    lib.sparse.spdiags(
                        lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
                        lib.tensor([0, 1]),
                        (3, 3),
                        lib.sparse_csc,
                    )
                ),
                _error(
                    lib.sparse.spdiags,
                    lib.tensor([[1.0, 2.0, 3.0]]),
                    lib.tensor([0]),
                    (3, 3),
                    lib.sparse_bsr,
                ),
            ]
        )
    assert got[0] == got[1]


MAPS = (
    "abs neg relu sin sqrt tanh sgn sign floor trunc frac ceil round log1p expm1 asin atan "
    "erf isnan isinf signbit tan sinh asinh deg2rad rad2deg"
).split()


def test_value_maps_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        c = lib.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [0.5, -2.0, 3.0], (2, 3))
        row = [_text(getattr(lib, name)(c)) for name in MAPS]
        row += [_text(-c), _text(abs(c)), _text(c.to_sparse_csc().abs())]
        row += [_error(lib.round, c, decimals=1)]
        row += [_text(lib.nn.functional.relu(c))] if hasattr(lib, "nn") else []
        got.append(row)
    assert got[0] == got[1]


def test_transposes_copies_and_casts_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        c = _csr(lib)
        b = lib.tensor(B)
        batch = lib.tensor(BATCH).to_sparse_csr()
        got.append(
            [
                _text(c.t()),
                _text(c.t().t()),
                _text(c.transpose(0, 1)),
                _text(c.mT),
                _text(c.to_sparse_csc().t()),
                _text(b.to_sparse_bsr(2).t()),
                _text(b.to_sparse_bsc(2).t()),
                _text(batch.transpose(1, 2)),
                _text(batch.mT),
                _error(batch.transpose, 0, 1),
                _error(batch.t),
                _text(c.clone()),
                _text(c.detach()),
                _text(c.to(lib.float64)),
                _text(c.double()),
                _text(c.to(lib.int32)),
                _text(c.bool()),
                _text(c.half()),
                c.float() is c,
                c.to("cpu") is c,
            ]
        )
    assert got[0] == got[1]


def test_unsupported_ops_raise_torchs_errors(torch):
    got = []
    for lib in (tocha, torch):
        c = _csr(lib)
        row = []
        for fn in (
            lambda lib, c: lib.exp(c),
            lambda lib, c: lib.sigmoid(c),
            lambda lib, c: c - c,
            lambda lib, c: c / 2,
            lambda lib, c: c.pow(2),
            lambda lib, c: c == c,
            lambda lib, c: c > 0,
            lambda lib, c: c.mean(),
            lambda lib, c: c.max(),
            lambda lib, c: c.softmax(0),
            lambda lib, c: c.stride(),
            lambda lib, c: c.is_contiguous(),
            lambda lib, c: c.expand(2, 3),
            lambda lib, c: lib.sparse.softmax(c, 1),
            lambda lib, c: lib.sparse.sum(c),
        ):
            with pytest.raises(Exception) as info:
                fn(lib, c)
            message = _s(info.value)  # the op PyTorch names may be an overload of tocha's
            row.append((_kind(info.value), "SparseCsrCPU" in message or message))
        got.append(row)
    assert got[0] == got[1]


def test_in_place_value_ops_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        row = []
        for name, args in (("mul_", (2.0,)), ("neg_", ()), ("abs_", ()), ("zero_", ())):
            c = lib.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1.0, -2.0, 3.0], (2, 3))
            out = getattr(c, name)(*args)
            row += [out is c, _text(c)]
        got.append(row)
    assert got[0] == got[1]


def test_gradients_match_torch(torch, autograd):
    got = []
    for lib in (tocha, torch):
        v = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        m = (lib.arange(6.0).reshape(3, 2) - 2.5).requires_grad_()
        c = lib.sparse_csr_tensor([0, 2, 3], [0, 2, 1], v, (2, 3))
        (lib.mm(c, m) * lib.tensor([[1.0, -2.0], [0.5, 3.0]])).sum().backward()
        row = [_np(v.grad), _np(m.grad)]
        v.grad = m.grad = None
        c = lib.sparse_csr_tensor([0, 2, 3], [0, 2, 1], v, (2, 3))
        (c.to_dense() * lib.arange(6.0).reshape(2, 3)).sum().backward()
        row.append(_np(v.grad))
        v.grad = None
        csc = lib.sparse_csc_tensor([0, 1, 2, 3], [0, 1, 0], v, (2, 3))
        (csc @ lib.tensor([1.0, -1.0, 2.0])).sum().backward()
        row.append(_np(v.grad))
        v.grad = None
        c = lib.sparse_csr_tensor([0, 2, 3], [0, 2, 1], v, (2, 3))
        ((c * 2).sum() + (c + lib.ones(2, 3)).pow(2).sum()).backward()
        row.append(_np(v.grad))
        leaf = _csr(lib, requires_grad=True)
        (leaf.to_dense() * lib.arange(6.0).reshape(2, 3)).sum().backward()
        row.append(_text(leaf.grad))
        got.append(row)
    assert got[0] == got[1]


def test_gradcheck_in_float64(autograd):
    values = tocha.tensor([1.0, -2.0, 3.0], dtype=tocha.float64, requires_grad=True)
    dense = tocha.tensor(
        np.arange(6.0).reshape(3, 2) - 2.5, dtype=tocha.float64, requires_grad=True
    )
    vec = tocha.tensor([0.5, -1.0, 2.0], dtype=tocha.float64, requires_grad=True)

    def product(v, m):
        return tocha.sparse_csr_tensor([0, 2, 3], [0, 2, 1], v, (2, 3)) @ m

    def mv_csc(v, x):
        return tocha.sparse_csc_tensor([0, 1, 2, 3], [0, 1, 0], v, (2, 3)) @ x

    def dense_times_csr(v, m):
        return m.t() @ tocha.sparse_csr_tensor([0, 2, 3], [0, 2, 1], v, (2, 3)).t()

    def sampled(v, m):
        c = tocha.sparse_csr_tensor([0, 2, 3], [0, 2, 1], v, (2, 3))
        return tocha.sparse.sampled_addmm(c, m.t(), m @ m.t(), beta=0.5).values()

    def converted(m):
        return (m.to_sparse_csr() * m.to_sparse_csr()).to_dense().sum(0)

    for fn, inputs in (
        (product, (values, dense)),
        (mv_csc, (values, vec)),
        (dense_times_csr, (values, dense)),
        (sampled, (values, dense)),
        (converted, (dense,)),
    ):
        assert autograd.gradcheck(fn, inputs, check_forward_ad=True)


def test_save_and_load_round_trip():
    tensors = {
        "csr": _csr(tocha),
        "csc": tocha.tensor(D).to_sparse_csc(),
        "bsr": tocha.tensor(B).to_sparse_bsr(2),
        "bsc": tocha.tensor(B).to_sparse_bsc((2, 1)),
        "batched": tocha.tensor(BATCH).to_sparse_csr(),
        "int32": tocha.sparse_csr_tensor(
            tocha.tensor([0, 2, 3], dtype=tocha.int32),
            tocha.tensor([0, 2, 1], dtype=tocha.int32),
            tocha.tensor([1.0, 2.0, 3.0]),
            (2, 3),
        ),
    }
    buffer = io.BytesIO()
    tocha.save(tensors, buffer)
    buffer.seek(0)
    back = tocha.load(buffer)
    for name, t in tensors.items():
        got = back[name]
        assert got.layout is t.layout and got.dtype is t.dtype
        assert repr(got) == repr(t)
        assert _np(got.to_dense()) == _np(t.to_dense())


def test_save_loads_in_torch_and_back():
    """A tocha file of a CSR tensor loads in PyTorch, and PyTorch's in tocha (live only)."""
    torch = pytest.importorskip("torch")
    buffer = io.BytesIO()
    tocha.save(_csr(tocha), buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    assert loaded.layout is torch.sparse_csr
    assert np.asarray(loaded.to_dense()).tolist() == D.tolist()
    buffer = io.BytesIO()
    torch.save(torch.tensor(D).to_sparse_csc(), buffer)
    buffer.seek(0)
    back = tocha.load(buffer)
    assert back.layout is tocha.sparse_csc
    assert _np(back.to_dense()) == D.tolist()


def test_reprs_under_the_torch_alias():
    """A program run as PyTorch (``tocha.run``, ``alias_torch``) prints PyTorch's reprs: the
    values without their dtype, the layouts named ``torch.`` (PyTorch's output, recorded)."""
    program = (
        "import tocha.compat\n"
        "tocha.compat.alias_torch()\n"
        "import torch\n"
        "print(torch.eye(2).to_sparse_csr().double())\n"
        "print(torch.eye(2).to_sparse())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        "tensor(crow_indices=tensor([0, 1, 2]),\n"
        "       col_indices=tensor([0, 1]),\n"
        "       values=tensor([1., 1.]), size=(2, 2), nnz=2, dtype=torch.float64,\n"
        "       layout=torch.sparse_csr)\n"
        "tensor(indices=tensor([[0, 1],\n"
        "                       [0, 1]]),\n"
        "       values=tensor([1., 1.]),\n"
        "       size=(2, 2), nnz=2, layout=torch.sparse_coo)\n"
    )
