"""Matrix products (matmul, mm, bmm, mv, dot, vdot, outer, kron, tensordot, einsum, add*)
against NumPy and PyTorch: values, dtype, shape, errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_tensor

import tocha

RNG = np.random.default_rng(0)


def arr(shape, dtype="float32", transposed=False):
    """Small integer-valued data (exact in every dtype); `transposed` gives a non-contiguous
    view with the last two dims swapped."""
    if transposed and len(shape) >= 2:
        base = arr(shape[:-2] + (shape[-1], shape[-2]), dtype)
        return np.swapaxes(base, -1, -2)
    data = RNG.integers(-3, 4, size=shape)
    if np.dtype(dtype).kind == "c":
        data = data + 1j * RNG.integers(-3, 4, size=shape)
    if np.dtype(dtype).kind == "b":
        data = data > 0
    return data.astype(dtype)


def _np_addmm(i, a, b, beta=1, alpha=1):
    return (beta * i + alpha * (a @ b)).astype(a.dtype)


# (name, input arrays, kwargs, NumPy reference)
CASES = []
MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((2, 2, 3), (3, 4)),
    ((2, 2, 3), (3,)),
    ((3,), (2, 3, 4)),
    ((2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (4, 3, 5)),
    ((0, 3), (3, 4)),
    ((2, 0), (0, 4)),
    ((0, 2, 3), (3,)),
    ((2, 3, 0), (2, 0, 4)),
    ((1, 2, 3), (1, 3, 0)),
    ((2, 4, 3), (2, 3, 2)),
]
for _sa, _sb in MATMUL_SHAPES:
    for _dt in ("float32", "float64", "int64", "int32", "complex64"):
        CASES.append(("matmul", (arr(_sa, _dt), arr(_sb, _dt)), {}, np.matmul))
    CASES.append(("matmul", (arr(_sa, transposed=True), arr(_sb, transposed=True)), {}, np.matmul))
CASES += [
    ("matmul", (arr((3, 3), "float16"), arr((3, 3), "float16")), {}, np.matmul),
    ("matmul", (arr((2, 3), "uint8"), arr((3, 2), "uint8")), {}, np.matmul),
    ("matmul", (arr((64, 48)), arr((48, 32), transposed=True)), {}, np.matmul),
    ("mm", (arr((2, 3), "float64"), arr((3, 4), "float64")), {}, np.matmul),
    ("mm", (arr((2, 3), transposed=True), arr((3, 4), transposed=True)), {}, np.matmul),
    ("mm", (arr((0, 3), "int64"), arr((3, 4), "int64")), {}, np.matmul),
    ("mm", (arr((2, 0)), arr((0, 4))), {}, np.matmul),
    ("bmm", (arr((2, 2, 3)), arr((2, 3, 4))), {}, np.matmul),
    ("bmm", (arr((2, 2, 3), "int64", True), arr((2, 3, 4), "int64")), {}, np.matmul),
    ("bmm", (arr((0, 2, 3)), arr((0, 3, 4))), {}, np.matmul),
    ("mv", (arr((2, 3)), arr((3,))), {}, np.matmul),
    ("mv", (arr((2, 3), "int64", True), arr((3,), "int64")), {}, np.matmul),
    ("mv", (arr((0, 3)), arr((3,))), {}, np.matmul),
    ("dot", (arr((4,)), arr((4,))), {}, np.dot),
    ("dot", (arr((4,), "int64"), arr((4,), "int64")), {}, np.dot),
    ("dot", (arr((4,), "int8"), arr((4,), "int8")), {}, np.dot),
    ("dot", (arr((0,)), arr((0,))), {}, np.dot),
    ("vdot", (arr((4,), "complex64"), arr((4,), "complex64")), {}, np.vdot),
    ("vdot", (arr((4,), "float64"), arr((4,), "float64")), {}, np.vdot),
    ("vdot", (arr((4,), "int64"), arr((4,), "int64")), {}, np.vdot),
    ("outer", (arr((3,)), arr((4,))), {}, np.outer),
    ("outer", (arr((3,)), arr((4,), "float64")), {}, np.outer),
    ("outer", (arr((3,), "int64"), arr((4,))), {}, lambda a, b: np.outer(a, b).astype("float32")),
    ("outer", (arr((3,), "bool"), arr((4,), "bool")), {}, np.outer),
    ("outer", (arr((0,)), arr((4,))), {}, np.outer),
    ("ger", (arr((3,), "int64"), arr((2,), "int64")), {}, np.outer),
    ("kron", (arr((2, 3)), arr((4, 5))), {}, np.kron),
    ("kron", (arr((2, 3)), arr((4,))), {}, np.kron),
    ("kron", (arr((2, 3)), arr((2, 1, 2), "float64")), {}, np.kron),
    ("kron", (arr(()), arr((3,))), {}, np.kron),
    ("kron", (arr((0, 3)), arr((2,))), {}, np.kron),
    ("kron", (arr((3,), "bool"), arr((2,), "bool")), {}, np.kron),
    ("kron", (arr((3,), "int64"), arr((2,))), {}, lambda a, b: np.kron(a, b).astype("float32")),
    ("tensordot", (arr((3, 4)), arr((4, 5))), {"dims": 1}, lambda a, b: np.tensordot(a, b, 1)),
    ("tensordot", (arr((2, 3, 4)), arr((3, 4, 5))), {}, np.tensordot),
    ("tensordot", (arr((3, 4)), arr((4, 5))), {"dims": 0}, lambda a, b: np.tensordot(a, b, 0)),
    (
        "tensordot",
        (arr((3, 4), "int64"), arr((5, 3), "int64")),
        {"dims": ([0], [1])},
        lambda a, b: np.tensordot(a, b, ([0], [1])),
    ),
    (
        "tensordot",
        (arr((3, 4, 2)), arr((2, 3))),
        {"dims": [[-1, 0], [0, 1]]},
        lambda a, b: np.tensordot(a, b, ([-1, 0], [0, 1])),
    ),
    (
        "tensordot",
        (arr((3, 1)), arr((4, 5))),
        {"dims": 1},
        lambda a, b: np.tensordot(a, b.sum(0, keepdims=True), 1),
    ),
    (
        "tensordot",
        (arr((3, 4), transposed=True), arr((4, 5))),
        {"dims": ([1], [0])},
        lambda a, b: np.tensordot(a, b, ([1], [0])),
    ),
    ("addmm", (arr((2, 4)), arr((2, 3)), arr((3, 4))), {}, _np_addmm),
    (
        "addmm",
        (arr((4,)), arr((2, 3)), arr((3, 4))),
        {"beta": 0.5, "alpha": 2},
        lambda i, a, b: _np_addmm(i, a, b, 0.5, 2),
    ),
    (
        "addmm",
        (arr(()), arr((2, 3), transposed=True), arr((3, 4))),
        {"alpha": -1},
        lambda i, a, b: _np_addmm(i, a, b, 1, -1),
    ),
    (
        "addmm",
        (arr((2, 1), "int64"), arr((2, 3), "int64"), arr((3, 4), "int64")),
        {"beta": 1.5, "alpha": 2.7},
        lambda i, a, b: _np_addmm(i, a, b, 1, 2),
    ),
    (
        "addmm",
        (arr((2, 4), "float64"), arr((2, 3), "float64"), arr((3, 4), "float64")),
        {"beta": 0},
        lambda i, a, b: a @ b,
    ),
    (
        "addmv",
        (arr((2,)), arr((2, 3)), arr((3,))),
        {"beta": 2, "alpha": 3},
        lambda i, a, b: (2 * i + 3 * (a @ b)).astype("float32"),
    ),
    (
        "addmv",
        (arr((1,), "int64"), arr((2, 3), "int64"), arr((3,), "int64")),
        {},
        lambda i, a, b: i + a @ b,
    ),
    (
        "addbmm",
        (arr((2, 4)), arr((3, 2, 5)), arr((3, 5, 4))),
        {"beta": 0.5, "alpha": 2},
        lambda i, a, b: (0.5 * i + 2 * np.matmul(a, b).sum(0)).astype("float32"),
    ),
    (
        "addbmm",
        (arr((4,), "int64"), arr((3, 2, 5), "int64"), arr((3, 5, 4), "int64")),
        {},
        lambda i, a, b: i + np.matmul(a, b).sum(0),
    ),
    (
        "baddbmm",
        (arr((3, 2, 4)), arr((3, 2, 5)), arr((3, 5, 4))),
        {"alpha": 2},
        lambda i, a, b: i + 2 * np.matmul(a, b),
    ),
    (
        "baddbmm",
        (arr((2, 1)), arr((3, 2, 5)), arr((3, 5, 4), transposed=True)),
        {"beta": 3},
        lambda i, a, b: 3 * i + np.matmul(a, b),
    ),
]

# (equation, operand arrays, expected dtype when not NumPy's)
EINSUM = [
    ("ij,jk->ik", (arr((2, 3)), arr((3, 4))), None),
    ("ij,jk", (arr((2, 3), "float64"), arr((3, 4), "float64")), None),
    ("i,i->", (arr((4,)), arr((4,))), None),
    ("i,j->ij", (arr((3,)), arr((4,))), None),
    ("i,j->ij", (arr((3,)), arr((4,), "float64")), None),
    ("ii->i", (arr((3, 3)),), None),
    ("ii", (arr((3, 3)),), None),
    ("ij->ji", (arr((3, 4)),), None),
    ("...ij,...jk->...ik", (arr((2, 3, 4)), arr((4, 5))), None),
    ("bij,bjk->bik", (arr((2, 3, 4), transposed=True), arr((2, 4, 5))), None),
    ("i,i,i->", (arr((3,)), arr((3,)), arr((3,))), None),
    ("ij,jk,kl->il", (arr((2, 3)), arr((3, 4)), arr((4, 2))), None),
    (" i j , j k -> i k ", (arr((2, 3)), arr((3, 4))), None),
    ("aB,Ba", (arr((2, 3)), arr((3, 2))), None),
    ("aB,c", (arr((2, 3)), arr((4,))), None),
    ("i,i->i", (arr((3,)), arr((1,))), None),
    ("i->", (arr((4,), "int32"),), "int64"),
    ("ij,j->i", (arr((2, 3), "int32"), arr((3,), "int32")), None),
    ("i->i", (arr((3,), "bool"),), None),
    ("ij->j", (arr((3, 2), "bool"),), "int64"),
    ("i,j", (arr((3,), "bool"), arr((2,), "bool")), None),
    ("ij,jk->ik", (arr((0, 3)), arr((3, 4))), None),
    ("", (arr(()),), None),
    ("...ij,...jk", (arr((2, 3, 4)), arr((2, 4, 5))), None),
    ("b...,b...", (arr((4, 3)), arr((4, 3))), None),
    ("...ii", (arr((2, 3, 3)),), None),
]


def _call(lib, name, arrays, kwargs):
    return getattr(lib, name)(*[lib.from_numpy(a) for a in arrays], **kwargs)


def _ids(cases):
    return [f"{c[0]}-{'x'.join(str(a.shape) for a in c[1])}-{c[1][0].dtype}" for c in cases]


@pytest.mark.parametrize("name, arrays, kwargs, ref", CASES, ids=_ids(CASES))
def test_against_numpy(name, arrays, kwargs, ref):
    expected = np.asarray(ref(*arrays))
    assert_tensor(_call(tocha, name, arrays, kwargs), expected)


@pytest.mark.parametrize("name, arrays, kwargs, ref", CASES, ids=_ids(CASES))
def test_against_torch(torch, name, arrays, kwargs, ref):
    expected = _call(torch, name, arrays, kwargs)
    assert_tensor(_call(tocha, name, arrays, kwargs), expected)


METHODS = [
    "matmul",
    "mm",
    "bmm",
    "mv",
    "dot",
    "vdot",
    "outer",
    "ger",
    "kron",
    "addmm",
    "addmv",
    "addbmm",
    "baddbmm",
]


@pytest.mark.parametrize("name, arrays, kwargs, ref", [c for c in CASES if c[0] in METHODS][::3])
def test_method_matches_function(name, arrays, kwargs, ref):
    first, *rest = [tocha.from_numpy(a) for a in arrays]
    assert_tensor(getattr(first, name)(*rest, **kwargs), np.asarray(ref(*arrays)))


@pytest.mark.parametrize("equation, arrays, dtype", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum(torch, equation, arrays, dtype):
    args = [tocha.from_numpy(a) for a in arrays]
    expected = np.asarray(np.einsum(equation, *arrays))
    result = tocha.einsum(equation, *args)
    assert_tensor(
        result,
        expected,
        dtype=getattr(tocha, dtype) if dtype else None,
        check_dtype=len({a.dtype for a in arrays}) == 1,
    )
    assert_tensor(result, torch.einsum(equation, *[torch.from_numpy(a) for a in arrays]))
    assert_tensor(tocha.einsum(equation, args), expected, check_dtype=False)


def test_einsum_result_owns_its_memory():
    x = tocha.from_numpy(arr((3, 3)))
    y = tocha.einsum("ij->ji", x)
    assert not np.shares_memory(y.numpy(), x.numpy())


def test_einsum_sublist_form(torch):
    a, b = arr((2, 3)), arr((3, 4))
    result = tocha.einsum(tocha.from_numpy(a), [0, 1], tocha.from_numpy(b), [1, 2], [0, 2])
    assert_tensor(result, a @ b)
    assert_tensor(
        result, torch.einsum(torch.from_numpy(a), [0, 1], torch.from_numpy(b), [1, 2], [0, 2])
    )


# -- operators --------------------------------------------------------------------------------
def test_matmul_operator():
    a, b = arr((3, 4)), arr((4, 2))
    x, y = tocha.from_numpy(a), tocha.from_numpy(b)
    assert_tensor(x @ y, a @ b)
    assert_tensor(y.__rmatmul__(x), a @ b)
    before = x
    x @= tocha.from_numpy(arr((4, 4)))  # as in PyTorch: a new tensor, not in place
    assert x is not before and tuple(x.shape) == (3, 4)
    assert_tensor(before, a)


@pytest.mark.parametrize("other", [2, 2.0, [[1.0]], np.ones((4, 2), np.float32)])
def test_matmul_operator_refuses_non_tensors(torch, other):
    for lib in (tocha, torch):
        x = lib.ones(3, 4)
        with pytest.raises(TypeError, match="unsupported operand type"):
            other @ x
        if not isinstance(other, np.ndarray):
            with pytest.raises(TypeError, match="unsupported operand type"):
                x @ other


@pytest.mark.parametrize("name", ["matmul", "mm", "bmm", "dot", "kron", "outer"])
def test_functions_refuse_non_tensors(torch, name):
    for lib in (tocha, torch):
        with pytest.raises(TypeError, match="must be Tensor, not list"):
            getattr(lib, name)(lib.ones(3, 3), [[1.0]])


# -- out= and coefficients ----------------------------------------------------------------------
@pytest.mark.parametrize("name, arrays, kwargs, ref", [c for c in CASES if c[0] != "ger"][::7])
def test_out(name, arrays, kwargs, ref):
    out = tocha.from_numpy(np.empty(0, np.asarray(ref(*arrays)).dtype))
    result = getattr(tocha, name)(*[tocha.from_numpy(a) for a in arrays], **kwargs, out=out)
    assert result is out
    assert_tensor(out, np.asarray(ref(*arrays)))


def test_beta_zero_ignores_nan(torch):
    nan = np.full((2, 4), np.nan, np.float32)
    a, b = arr((2, 3)), arr((3, 4))
    result = tocha.addmm(tocha.from_numpy(nan), tocha.from_numpy(a), tocha.from_numpy(b), beta=0)
    assert_tensor(result, a @ b)
    assert_tensor(
        result, torch.addmm(torch.from_numpy(nan), torch.from_numpy(a), torch.from_numpy(b), beta=0)
    )
    result = tocha.addmv(
        tocha.from_numpy(nan[0, :2]),
        tocha.from_numpy(a),
        tocha.from_numpy(b[:, 0]),
        beta=0.0,
        alpha=2,
    )
    assert_tensor(result, 2 * (a @ b[:, 0]))


def test_tensor_coefficients(torch):
    a, b, i = arr((2, 3)), arr((3, 4)), arr((2, 4))
    result = tocha.addmm(
        tocha.from_numpy(i),
        tocha.from_numpy(a),
        tocha.from_numpy(b),
        beta=tocha.tensor(2.0),
        alpha=tocha.tensor(3.0),
    )
    assert_tensor(result, 2 * i + 3 * (a @ b))


# -- errors ---------------------------------------------------------------------------------------
def _t(lib, shape, dtype="float32"):
    return lib.from_numpy(arr(shape, dtype))


F, D, L, B = "float32", "float64", "int64", "bool"
# (function, operands as (shape, dtype), kwargs, exception type, message)
ERRORS = [
    (
        "matmul",
        [((3, 4), F), ((4, 5), D)],
        {},
        RuntimeError,
        "expected m1 and m2 to have the same dtype, but got: float != double",
    ),
    (
        "matmul",
        [((4,), F), ((4,), D)],
        {},
        RuntimeError,
        "dot : expected both vectors to have same dtype, but found Float and Double",
    ),
    (
        "matmul",
        [((3, 4), F), ((4,), D)],
        {},
        RuntimeError,
        "addmv input tensors must have the same dtype, but got Double, Float, and Double",
    ),
    (
        "matmul",
        [((2, 3, 4), D), ((2, 4, 5), F)],
        {},
        RuntimeError,
        "expected scalar type Double but found Float",
    ),
    (
        "matmul",
        [((3, 4), L), ((4, 5), F)],
        {},
        RuntimeError,
        "expected m1 and m2 to have the same dtype, but got: long int != float",
    ),
    (
        "matmul",
        [((3, 4), F), ((3, 4), F)],
        {},
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 3x4\)",
    ),
    (
        "matmul",
        [((3,), F), ((4, 5), F)],
        {},
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(1x3 and 4x5\)",
    ),
    (
        "matmul",
        [((2, 3, 4), F), ((5, 2), F)],
        {},
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(6x4 and 5x2\)",
    ),
    (
        "matmul",
        [((2, 3, 4), F), ((5,), F)],
        {},
        RuntimeError,
        r"size mismatch, got input \(6\), mat \(6x4\), vec \(5\)",
    ),
    (
        "matmul",
        [((3,), F), ((4,), F)],
        {},
        RuntimeError,
        r"inconsistent tensor size, expected tensor \[3\] and src \[4\] to have the same number of "
        r"elements, but got 3 and 4 elements respectively",
    ),
    (
        "matmul",
        [((), F), ((4,), F)],
        {},
        RuntimeError,
        "both arguments to matmul need to be at least 1D, but they are 0D and 1D",
    ),
    (
        "matmul",
        [((4,), F), ((), F)],
        {},
        RuntimeError,
        "both arguments to matmul need to be at least 1D, but they are 1D and 0D",
    ),
    (
        "matmul",
        [((2, 3, 4), F), ((3, 4, 5), F)],
        {},
        RuntimeError,
        r"The size of tensor a \(2\) must match the size of tensor b \(3\) at non-singleton "
        r"dimension 0",
    ),
    (
        "matmul",
        [((2, 3, 4), F), ((2, 5, 6), F)],
        {},
        RuntimeError,
        r"Expected size for first two dimensions of batch2 tensor to be: "
        r"\[2, 4\] but got: \[2, 5\]",
    ),
    (
        "matmul",
        [((5,), F), ((2, 3, 4), F)],
        {},
        RuntimeError,
        r"Expected size for first two dimensions of batch2 tensor to be: "
        r"\[2, 5\] but got: \[2, 3\]",
    ),
    (
        "matmul",
        [((3, 4), B), ((4, 5), B)],
        {},
        NotImplementedError,
        "\"addmm_impl_cpu_\" not implemented for 'Bool'",
    ),
    (
        "matmul",
        [((4,), B), ((4,), B)],
        {},
        NotImplementedError,
        "\"dot\" not implemented for 'Bool'",
    ),
    (
        "matmul",
        [((3, 4), B), ((4,), B)],
        {},
        NotImplementedError,
        "\"addmv_impl_cpu\" not implemented for 'Bool'",
    ),
    (
        "matmul",
        [((2, 3, 4), B), ((2, 4, 5), B)],
        {},
        NotImplementedError,
        "\"bmm\" not implemented for 'Bool'",
    ),
    (
        "mm",
        [((3, 4), F), ((3, 4), F)],
        {},
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 3x4\)",
    ),
    (
        "mm",
        [((3, 4), F), ((4, 5), D)],
        {},
        RuntimeError,
        "expected m1 and m2 to have the same dtype, but got: float != double",
    ),
    ("mm", [((4,), F), ((4, 3), F)], {}, RuntimeError, "self must be a matrix"),
    ("mm", [((3, 4), F), ((4,), F)], {}, RuntimeError, "mat2 must be a matrix"),
    (
        "mm",
        [((3, 4), B), ((4, 5), B)],
        {},
        NotImplementedError,
        "\"addmm_impl_cpu_\" not implemented for 'Bool'",
    ),
    (
        "bmm",
        [((2, 3, 4), F), ((2, 5, 4), F)],
        {},
        RuntimeError,
        r"Expected size for first two dimensions of batch2 tensor to be: \[2, 4\] but got: "
        r"\[2, 5\]\.",
    ),
    (
        "bmm",
        [((2, 3, 4), F), ((1, 4, 5), F)],
        {},
        RuntimeError,
        r"Expected size for first two dimensions of batch2 tensor to be: \[2, 4\] but got: "
        r"\[1, 4\]\.",
    ),
    (
        "bmm",
        [((2, 3, 4), F), ((2, 4, 5), D)],
        {},
        RuntimeError,
        "expected scalar type Float but found Double",
    ),
    ("bmm", [((3, 4), F), ((3, 4, 5), F)], {}, RuntimeError, "batch1 must be a 3D tensor"),
    ("bmm", [((2, 3, 4), F), ((4, 5), F)], {}, RuntimeError, "batch2 must be a 3D tensor"),
    (
        "mv",
        [((3, 4), F), ((5,), F)],
        {},
        RuntimeError,
        r"size mismatch, got input \(3\), mat \(3x4\), vec \(5\)",
    ),
    (
        "mv",
        [((3, 4), F), ((3, 4), F)],
        {},
        RuntimeError,
        "vector \\+ matrix @ vector expected, got 1, 2, 2",
    ),
    (
        "mv",
        [((3, 4), F), ((4,), D)],
        {},
        RuntimeError,
        "addmv input tensors must have the same dtype, but got Double, Float, and Double",
    ),
    (
        "dot",
        [((3, 4), F), ((3, 4), F)],
        {},
        RuntimeError,
        "1D tensors expected, but got 2D and 2D tensors",
    ),
    ("dot", [((3,), F), ((4,), F)], {}, RuntimeError, r"inconsistent tensor size"),
    (
        "dot",
        [((4,), L), ((4,), F)],
        {},
        RuntimeError,
        "dot : expected both vectors to have same dtype, but found Long and Float",
    ),
    ("dot", [((4,), B), ((4,), B)], {}, NotImplementedError, "\"dot\" not implemented for 'Bool'"),
    (
        "vdot",
        [((3, 4), F), ((3, 4), F)],
        {},
        RuntimeError,
        "1D tensors expected, but got 2D and 2D tensors",
    ),
    (
        "vdot",
        [((3,), F), ((4,), F)],
        {},
        RuntimeError,
        r"expected tensor \[3\] and src \[4\] to have the same number of elements",
    ),
    (
        "vdot",
        [((4,), F), ((4,), D)],
        {},
        RuntimeError,
        "dot : expected both vectors to have same dtype, but found Float and Double",
    ),
    (
        "outer",
        [((3, 4), F), ((3,), F)],
        {},
        RuntimeError,
        "outer: Expected 1-D argument self, but got 2-D",
    ),
    (
        "outer",
        [((3,), F), ((3, 2), F)],
        {},
        RuntimeError,
        "outer: Expected 1-D argument vec2, but got 2-D",
    ),
    (
        "addmm",
        [((3, 5), F), ((3, 4), F), ((4, 5), D)],
        {},
        RuntimeError,
        "self and mat2 must have the same dtype, but got Float and Double",
    ),
    (
        "addmm",
        [((3, 5), F), ((3, 4), D), ((4, 5), F)],
        {},
        RuntimeError,
        "mat1 and mat2 must have the same dtype, but got Double and Float",
    ),
    (
        "addmm",
        [((3, 5), F), ((3, 4), F), ((5, 5), F)],
        {},
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 5x5\)",
    ),
    (
        "addmm",
        [((2, 5), F), ((3, 4), F), ((4, 5), F)],
        {},
        RuntimeError,
        r"The expanded size of the tensor \(3\) must match the existing size \(2\) at "
        r"non-singleton dimension 0.  Target sizes: \[3, 5\].  Tensor sizes: \[2, 5\]",
    ),
    (
        "addmm",
        [((2, 3, 5), F), ((3, 4), F), ((4, 5), F)],
        {},
        RuntimeError,
        r"expand\(torch.FloatTensor\{\[2, 3, 5\]\}, size=\[3, 5\]\): the number of sizes provided "
        r"\(2\) must be greater or equal to the number of dimensions in the tensor \(3\)",
    ),
    (
        "addmm",
        [((3, 5), F), ((3, 4), F), ((4,), F)],
        {},
        RuntimeError,
        "mat2 must be a matrix, got 1-D tensor",
    ),
    (
        "addmm",
        [((3, 5), B), ((3, 4), B), ((4, 5), B)],
        {},
        NotImplementedError,
        "\"addmm_impl_cpu_\" not implemented for 'Bool'",
    ),
    (
        "addmm",
        [((3, 5), F), ((3, 4), F), ((4, 5), F)],
        {"beta": 1j},
        RuntimeError,
        "value cannot be converted to type float without overflow",
    ),
    (
        "addmm",
        [((3, 5), L), ((3, 4), L), ((4, 5), L)],
        {"alpha": 1j},
        RuntimeError,
        "value cannot be converted to type int64_t without overflow",
    ),
    (
        "addmv",
        [((2,), F), ((3, 4), F), ((4,), F)],
        {},
        RuntimeError,
        r"size mismatch, got input \(2\), mat \(3x4\), vec \(4\)",
    ),
    (
        "addmv",
        [((3,), F), ((3, 4), F), ((4, 1), F)],
        {},
        RuntimeError,
        "vector \\+ matrix @ vector expected, got 1, 2, 2",
    ),
    (
        "addmv",
        [((3,), D), ((3, 4), F), ((4,), F)],
        {},
        RuntimeError,
        "addmv input tensors must have the same dtype, but got Double, Float, and Float",
    ),
    (
        "addmv",
        [((3,), B), ((3, 4), B), ((4,), B)],
        {},
        NotImplementedError,
        "\"addmv_impl_cpu\" not implemented for 'Bool'",
    ),
    (
        "addbmm",
        [((3, 5), F), ((2, 3, 4), F), ((3, 4, 5), F)],
        {},
        RuntimeError,
        "batch1 and batch2 must have same number of batches, got 2 and 3",
    ),
    (
        "addbmm",
        [((3, 5), F), ((2, 3, 4), F), ((2, 5, 5), F)],
        {},
        RuntimeError,
        r"Incompatible matrix sizes for bmm \(3x4 and 5x5\)",
    ),
    (
        "addbmm",
        [((3, 5), D), ((2, 3, 4), F), ((2, 4, 5), F)],
        {},
        RuntimeError,
        "self and mat2 must have the same dtype, but got Double and Float",
    ),
    (
        "addbmm",
        [((3, 5), B), ((2, 3, 4), B), ((2, 4, 5), B)],
        {},
        NotImplementedError,
        "\"addmm_impl_cpu_\" not implemented for 'Bool'",
    ),
    (
        "baddbmm",
        [((2, 3, 5), F), ((2, 3, 4), D), ((2, 4, 5), F)],
        {},
        RuntimeError,
        "Input dtypes must be the same, got: input float, batch1: double, batch2: float",
    ),
    (
        "baddbmm",
        [((2, 3, 5), F), ((2, 3, 4), F), ((2, 4, 5), D)],
        {},
        RuntimeError,
        "expected scalar type Float but found Double",
    ),
    (
        "baddbmm",
        [((3, 3, 5), F), ((2, 3, 4), F), ((2, 4, 5), F)],
        {},
        RuntimeError,
        r"The expanded size of the tensor \(2\) must match the existing size \(3\) at "
        r"non-singleton dimension 0",
    ),
    (
        "baddbmm",
        [((2, 3, 5), F), ((2, 3, 4), F), ((2, 5, 5), F)],
        {},
        RuntimeError,
        r"Expected size for first two dimensions of batch2 tensor to be: "
        r"\[2, 4\] but got: \[2, 5\]",
    ),
    (
        "baddbmm",
        [((2, 3, 5), B), ((2, 3, 4), B), ((2, 4, 5), B)],
        {},
        NotImplementedError,
        "\"baddbmm\" not implemented for 'Bool'",
    ),
    (
        "tensordot",
        [((3, 4), F), ((5, 6), F)],
        {"dims": 1},
        RuntimeError,
        "contracted dimensions need to match, but first has size 4 in dim -1 and second has size "
        "5 in dim 0",
    ),
    (
        "tensordot",
        [((3, 4), F), ((4, 6), F)],
        {"dims": ([1], [1])},
        RuntimeError,
        "contracted dimensions need to match, but first has size 4 in dim 1 and second has size "
        "6 in dim 1",
    ),
    (
        "tensordot",
        [((3, 4), F), ((4, 6), F)],
        {"dims": -1},
        RuntimeError,
        "tensordot expects dims >= 0, but got dims=-1",
    ),
    (
        "tensordot",
        [((3, 4), F), ((4, 6), F)],
        {"dims": 3},
        RuntimeError,
        "tensordot expects dims < ndim_a or ndim_b, but got dims=3",
    ),
    (
        "tensordot",
        [((3, 4), F), ((4, 6), F)],
        {"dims": ([1, 0], [0])},
        RuntimeError,
        "both dimension lists should have same length",
    ),
    (
        "tensordot",
        [((3, 4), F), ((4, 6), F)],
        {"dims": ([1, 1], [0, 0])},
        RuntimeError,
        "dim 1 appears multiple times in the list of dims",
    ),
    (
        "tensordot",
        [((3, 4), F), ((4, 6), F)],
        {"dims": ([2], [0])},
        IndexError,
        r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
    ),
    (
        "tensordot",
        [((3, 4), F), ((4, 6), F)],
        {"dims": (1, 0)},
        TypeError,
        "tensordot\\(\\): argument 'dims_self' \\(position 3\\) must be tuple of ints, not int",
    ),
    (
        "tensordot",
        [((3, 4), F), ((4, 6), F)],
        {"dims": 1.0},
        RuntimeError,
        r"tensordot expects dims to be int or tuple\[list\[int\], list\[int\]\]",
    ),
    (
        "tensordot",
        [((3, 4), F), ((4, 6), D)],
        {"dims": 1},
        RuntimeError,
        "both inputs should have same dtype",
    ),
    (
        "tensordot",
        [((3, 4), B), ((4, 6), B)],
        {"dims": 1},
        NotImplementedError,
        "\"addmm_impl_cpu_\" not implemented for 'Bool'",
    ),
]

EINSUM_ERRORS = [
    (
        "ij,jk->ik",
        [(3, 4), (5, 6)],
        "subscript j has size 5 for operand 1 which does not broadcast with previously seen size 4",
    ),
    ("ij,jk->ik", [(3, 4)], "fewer operands were provided than specified in the equation"),
    ("i,i", [(2,), (2,), (2,)], "more operands were provided than specified in the equation"),
    ("ij->ik", [(3, 4)], "output subscript k does not appear in the equation for any input"),
    ("i->ii", [(2,)], "output subscript i appears more than once in the output"),
    (
        "ijk->ij",
        [(3, 4)],
        r"the number of subscripts in the equation \(3\) does not match the "
        r"number of dimensions \(2\) for operand 0 and no ellipsis was given",
    ),
    ("i.j->", [(2, 3)], "found '.' for operand 0 that is not part of any ellipsis"),
    ("i...j...->", [(2, 3)], "found '.' for operand 0 for which an ellipsis was already found"),
    (
        "i1->",
        [(2,)],
        r"invalid subscript given at index 1 in the equation string, subscripts "
        r"must be in \[a-zA-Z\]",
    ),
]


@pytest.mark.parametrize(
    "name, operands, kwargs, exc, message", ERRORS, ids=[f"{e[0]}-{e[-1][:30]}" for e in ERRORS]
)
def test_errors(name, operands, kwargs, exc, message):
    args = [_t(tocha, s, d) for s, d in operands]
    with pytest.raises(exc, match=message):
        getattr(tocha, name)(*args, **kwargs)


@pytest.mark.parametrize(
    "name, operands, kwargs, exc, message", ERRORS, ids=[f"{e[0]}-{e[-1][:30]}" for e in ERRORS]
)
def test_errors_match_torch(torch, name, operands, kwargs, exc, message):
    args = [_t(torch, s, d) for s, d in operands]
    with pytest.raises(exc, match=message):
        getattr(torch, name)(*args, **kwargs)


@pytest.mark.parametrize(
    "equation, shapes, message", EINSUM_ERRORS, ids=[e[0] for e in EINSUM_ERRORS]
)
def test_einsum_errors(torch, equation, shapes, message):
    for lib in (tocha, torch):
        with pytest.raises(RuntimeError, match="einsum\\(\\): " + message):
            lib.einsum(equation, *[_t(lib, s) for s in shapes])


@pytest.mark.parametrize(
    "equation, dtypes, exc, message",
    [
        ("i,i->", (F, D), RuntimeError, "expected scalar type Float but found Double"),
        ("i,i->", (B, B), NotImplementedError, "\"bmm\" not implemented for 'Bool'"),
    ],
)
def test_einsum_dtype_errors(torch, equation, dtypes, exc, message):
    for lib in (tocha, torch):
        with pytest.raises(exc, match=message):
            lib.einsum(equation, *[_t(lib, (3,), d) for d in dtypes])


def test_operator_errors_match_function():
    a, b = tocha.ones(3, 4), tocha.ones(3, 4)
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(3x4 and 3x4\)"):
        a @ b
    with pytest.raises(RuntimeError, match="same dtype"):
        a @ tocha.ones(4, 2, dtype=tocha.float64)
