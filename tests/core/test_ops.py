"""Elementwise ops driven by the op table (`opdb.OPS`): values, dtypes and shapes against
PyTorch for every dtype (where torch raises, tocha raises the same exception type), in-place
and ``out=`` forms, and a NumPy reference in float64; then the corner cases of the table's
ops that need a test of their own."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.core.helpers import assert_tensor
from tests.core.opdb import ALL_DTYPES, INT_DTYPES, OPS, make_array, to_lib

CASES = [
    pytest.param(info, dtype, id=f"{info.id}-{dtype}") for info in OPS for dtype in info.dtypes
]


def _run(lib, fn, sample, dtype):
    """(result, exception) of `fn(lib, *tensors)` on a sample turned into `lib` tensors."""
    args = [to_lib(lib, a, dtype) for a in sample.args]
    kwargs = {k: to_lib(lib, v, dtype) for k, v in sample.kwargs.items()}
    try:
        return fn(lib, args, kwargs), None
    except Exception as exc:  # the oracle decides whether raising is right
        return None, exc


def _check(actual, expected, where: str, tol=(None, None)) -> None:
    """tocha's (result, exception) agrees with torch's."""
    (got, got_exc), (want, want_exc) = actual, expected
    if want_exc is not None:
        assert got_exc is not None, f"{where}: torch raised {want_exc!r}, tocha did not"
        assert isinstance(got_exc, type(want_exc)), (
            f"{where}: torch raised {want_exc!r}, tocha {got_exc!r}"
        )
        return
    if got_exc is not None:
        raise AssertionError(f"{where}: tocha raised, torch gave {want!r}") from got_exc
    rtol, atol = tol
    try:
        assert_tensor(got, want, rtol=rtol, atol=atol)
    except AssertionError as err:
        raise AssertionError(f"{where}: {err}") from None


# Default tolerances by the inputs' dtype (an out= tensor may be wider than the inputs).
TOL = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (1e-2, 1e-2),
    "float32": (1e-5, 1e-5),
    "complex64": (1e-5, 1e-5),
    **dict.fromkeys(("bool", *INT_DTYPES), (1e-5, 1e-5)),
}


def _where(info, dtype, sample) -> tuple:
    return f"{info.id} {dtype} {sample}", info.tol.get(dtype, TOL.get(dtype, (None, None)))


def _plain(info):
    return lambda lib, args, kwargs: info(lib, *args, **kwargs)


@pytest.mark.parametrize("info, dtype", CASES)
def test_matches_torch(info, dtype, torch):
    for sample in info.sample_inputs(dtype):
        expected = _run(torch, _plain(info), sample, dtype)
        _check(_run(tocha, _plain(info), sample, dtype), expected, *_where(info, dtype, sample))


def _inplace(info):
    def fn(lib, args, kwargs):
        result = getattr(args[0], info.inplace)(*args[1:], **kwargs)
        assert result is args[0], f"{info.inplace} did not return self"
        return args[0]

    return fn


@pytest.mark.parametrize("info, dtype", [c for c in CASES if c.values[0].inplace])
def test_inplace_matches_torch(info, dtype, torch):
    for sample in info.sample_inputs(dtype):
        expected = _run(torch, _inplace(info), sample, dtype)
        _check(_run(tocha, _inplace(info), sample, dtype), expected, *_where(info, dtype, sample))


def _with_out(info, out_dtype):
    def fn(lib, args, kwargs):
        out = lib.empty(0, dtype=getattr(lib, out_dtype))
        result = info(lib, *args, out=out, **kwargs)
        assert result is out, "out= did not return out"
        return out

    return fn


@pytest.mark.parametrize("info, dtype", [c for c in CASES if c.values[0].out])
def test_out_matches_torch(info, dtype, torch):
    for sample in info.sample_inputs(dtype):
        want, exc = _run(torch, _plain(info), sample, dtype)
        if exc is not None:
            continue
        result_dtype = str(want.dtype).replace("torch.", "")
        for out_dtype in dict.fromkeys((result_dtype, "int64", "float64")):
            expected = _run(torch, _with_out(info, out_dtype), sample, dtype)
            actual = _run(tocha, _with_out(info, out_dtype), sample, dtype)
            _check(actual, expected, *_where(info, dtype, sample))


@pytest.mark.parametrize("info", [pytest.param(i, id=i.id) for i in OPS if i.ref is not None])
def test_matches_numpy(info):
    for sample in info.sample_inputs("float64"):
        if not all(isinstance(a, np.ndarray) for a in sample.args):
            continue  # some functions take only tensors; torch checks those samples
        with np.errstate(all="ignore"):  # NumPy warns where PyTorch is silent
            expected = info.ref(*sample.args)
        args = [to_lib(tocha, a, "float64") for a in sample.args]
        kwargs = {k: to_lib(tocha, v, "float64") for k, v in sample.kwargs.items()}
        assert_tensor(info(tocha, *args, **kwargs), expected)


BINARY_FUNCTIONS = (
    "add",
    "sub",
    "mul",
    "div",
    "floor_divide",
    "remainder",
    "fmod",
    "pow",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "atan2",
    "hypot",
    "copysign",
    "eq",
    "lt",
    "logical_and",
    "logical_xor",
    "bitwise_and",
    "bitwise_or",
    "bitwise_left_shift",
)


@pytest.mark.parametrize("name", BINARY_FUNCTIONS)
def test_binary_dtype_pairs_match_torch(name, torch):
    """Every pair of dtypes: torch's result dtype and values, or its exception type."""
    rng = np.random.default_rng(1)
    for da in ALL_DTYPES:
        for db in ALL_DTYPES:
            a = make_array(rng, (4,), da, (0.5, 3.0), (1, 3))
            b = make_array(rng, (4,), db, (0.5, 3.0), (1, 3))
            results = []
            for lib in (tocha, torch):
                try:
                    results.append(
                        (getattr(lib, name)(to_lib(lib, a, da), to_lib(lib, b, db)), None)
                    )
                except Exception as exc:  # the oracle decides whether raising is right
                    results.append((None, exc))
            _check(*results, f"{name}({da}, {db})", (2e-2, 2e-2))


# -- corner cases -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: a // b,
        lambda a, b: a % b,
        lambda a, b: tocha.fmod(a, b),
        lambda a, b: tocha.div(a, b, rounding_mode="trunc"),
        lambda a, b: tocha.div(a, b, rounding_mode="floor"),
    ],
)
@pytest.mark.parametrize("divisor", [0, "tensor"])
def test_integer_division_by_zero(op, divisor):
    a = tocha.tensor([3, 4])
    b = tocha.tensor([1, 0]) if divisor == "tensor" else divisor
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        op(a, b)


def test_integer_division_by_zero_in_place():
    a = tocha.tensor([3, 4])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        a //= 0


def test_integer_negative_power():
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        tocha.tensor([3]) ** -1
    assert_tensor(tocha.tensor([3.0]) ** -1, np.array([1 / 3], np.float32))


def test_integer_negative_tensor_power(torch):
    base = [0, 1, -1, 2, -2, 3]
    for exponent in ([-1], [-2], [-3, 2, -1, 0, 1, -5]):
        assert_tensor(
            tocha.tensor(base) ** tocha.tensor(exponent),
            torch.tensor(base) ** torch.tensor(exponent),
        )
    assert_tensor(2 ** tocha.tensor([-1, 2]), torch.tensor([0, 4]))


@pytest.mark.parametrize(
    "dtype, value",
    [
        ("int8", 1000),
        ("uint8", -1),
        ("int16", 70000),
        ("int32", 2**40),
        ("uint8", 300),
        ("int64", 2**63 - 1),
    ],
)
@pytest.mark.parametrize("symbol", ["+", "-", "*", "r+", "r*"])
def test_out_of_range_int_scalar_wraps(dtype, value, symbol, torch):
    data = np.array([1, 2, 100], dtype=dtype)
    ops = {
        "+": lambda x: x + value,
        "-": lambda x: x - value,
        "*": lambda x: x * value,
        "r+": lambda x: value + x,
        "r*": lambda x: value * x,
    }
    assert_tensor(ops[symbol](tocha.tensor(data)), ops[symbol](torch.tensor(data)))


def test_out_of_range_int_scalar_in_place(torch):
    t, r = tocha.tensor([1, 2], dtype=tocha.int8), torch.tensor([1, 2], dtype=torch.int8)
    t += 1000
    r += 1000
    assert_tensor(t, r)


@pytest.mark.parametrize("value", [2**64, 2**70])
def test_int_too_big_for_float_tensor(value):
    with pytest.raises(OverflowError, match="int too big to convert"):
        tocha.ones(2) + value
    with pytest.raises(OverflowError, match="int too big to convert"):
        value * tocha.ones(2)


def test_int_too_big_for_int_tensor():
    with pytest.raises(OverflowError):
        tocha.tensor([1]) + 2**64


def test_int_below_int64_range():
    with pytest.raises(OverflowError, match="can't convert negative int to unsigned"):
        tocha.tensor([1], dtype=tocha.int8) + (-(2**63) - 1)


@pytest.mark.parametrize("method", ["exp_", "sqrt_", "sin_", "sigmoid_", "reciprocal_"])
def test_inplace_float_result_into_int_tensor(method):
    with pytest.raises(
        RuntimeError, match="result type Float can't be cast to the desired output type Long"
    ):
        getattr(tocha.tensor([1, 2]), method)()


def test_inplace_division_into_int_tensor():
    t = tocha.tensor([1, 2])
    with pytest.raises(
        RuntimeError, match="result type Float can't be cast to the desired output type Long"
    ):
        t /= 2
    with pytest.raises(
        RuntimeError, match="result type Float can't be cast to the desired output type Long"
    ):
        t += 1.5


def test_inplace_broadcast_into_smaller_target():
    with pytest.raises(
        RuntimeError,
        match=r"output with shape \[3\] doesn't match the "
        r"broadcast shape \[2, 3\]",
    ):
        tocha.zeros(3).add_(tocha.ones(2, 3))


def test_inplace_bumps_version():
    t = tocha.zeros(3)
    before = t._version
    t.add_(1)
    t.exp_()
    t.clamp_(0, 1)
    assert t._version == before + 3


def test_inplace_writes_through_shared_memory():
    array = np.zeros(3, dtype=np.float32)
    t = tocha.from_numpy(array)
    t.add_(2).mul_(3)
    np.testing.assert_array_equal(array, [6, 6, 6])


def test_exp_of_integers(torch):
    data = np.arange(-20, 20)
    assert_tensor(tocha.exp(tocha.tensor(data)), torch.exp(torch.tensor(data)), rtol=1e-6)


def test_div_bad_rounding_mode():
    with pytest.raises(
        RuntimeError,
        match="div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'",
    ):
        tocha.div(tocha.ones(2), 2, rounding_mode="round")


def test_clamp_needs_a_bound():
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        tocha.clamp(tocha.ones(2))


def test_bool_subtraction_and_negation():
    b = tocha.tensor([True, False])
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool"):
        b - b  # noqa: B018
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -b  # noqa: B018


def test_broadcast_error_message():
    with pytest.raises(
        RuntimeError,
        match=r"The size of tensor a \(3\) must match the size of "
        r"tensor b \(4\) at non-singleton dimension 1",
    ):
        tocha.ones(2, 3) + tocha.ones(4)


def test_unsupported_operand_type(torch):
    with pytest.raises(TypeError):
        tocha.ones(2) + object()
    with pytest.raises(TypeError):
        torch.ones(2) + object()
