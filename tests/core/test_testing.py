"""tocha.testing against PyTorch: assert_close's verdicts, messages and exception types on
tensors, NumPy arrays, numbers, sequences and mappings; make_tensor's ranges, layouts and
errors; the deprecated assert_allclose."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha
from tocha.testing import assert_allclose, assert_close, make_tensor

NAN, INF = float("nan"), float("inf")


def _t(lib, data, dtype=None):
    return lib.tensor(data) if dtype is None else lib.tensor(data, dtype=getattr(lib, dtype))


# Each case builds (actual, expected, keyword arguments) from a library, tocha or torch.
CASES = [
    ("float_1d", lambda L: (_t(L, [1.0, 2.0, 3.0]), _t(L, [1.0, 2.5, 3.0]), {})),
    ("float_2d", lambda L: (_t(L, [[1.0, 2.0], [3.0, 4.0]]), _t(L, [[1.0, 2.0], [3.0, 5.0]]), {})),
    ("equal_floats", lambda L: (_t(L, [1.0, 2.0]), _t(L, [1.0, 2.0 + 1e-7]), {})),
    ("int64", lambda L: (_t(L, [1, 2, 3]), _t(L, [1, 2, 4]), {})),
    ("uint8", lambda L: (_t(L, [1, 2], "uint8"), _t(L, [2, 1], "uint8"), {})),
    ("int8", lambda L: (_t(L, [1, 2], "int8"), _t(L, [-100, 1], "int8"), {})),
    ("bool", lambda L: (_t(L, [True, False]), _t(L, [False, False]), {})),
    ("float16", lambda L: (_t(L, [1.0], "float16"), _t(L, [1.01], "float16"), {})),
    ("bfloat16", lambda L: (_t(L, [1.0], "bfloat16"), _t(L, [1.1], "bfloat16"), {})),
    ("float64", lambda L: (_t(L, [1.0, 1e6], "float64"), _t(L, [1.0, 1e6 + 1], "float64"), {})),
    ("complex64", lambda L: (_t(L, [1 + 1j]), _t(L, [1 + 2j]), {})),
    ("zero_dim_float", lambda L: (_t(L, 1.1), _t(L, 2.0), {})),
    ("zero_dim_int", lambda L: (_t(L, 3), _t(L, 4), {})),
    ("zero_dim_bool", lambda L: (_t(L, True), _t(L, False), {})),
    ("nan", lambda L: (_t(L, [1.0, NAN, 5.0]), _t(L, [3.0, 1.0, NAN]), {})),
    ("nan_equal", lambda L: (_t(L, [1.0, NAN]), _t(L, [1.0, NAN]), {"equal_nan": True})),
    (
        "nan_equal_mismatch",
        lambda L: (_t(L, [1.0, NAN, 5.0]), _t(L, [3.0, NAN, 5.0]), {"equal_nan": True}),
    ),
    ("nan_unequal", lambda L: (_t(L, [1.0, NAN]), _t(L, [1.0, NAN]), {})),
    ("inf_equal", lambda L: (_t(L, [INF, 1.0]), _t(L, [INF, 2.0]), {})),
    ("inf_opposite", lambda L: (_t(L, [INF, 1.0]), _t(L, [-INF, 1.0]), {})),
    ("zero_expected", lambda L: (_t(L, [0.0, 1.0]), _t(L, [1.0, 0.0]), {})),
    (
        "only_mismatches_reported",
        lambda L: (
            _t(L, [1e6 + 0.5, 0.0], "float64"),
            _t(L, [1e6, 0.001], "float64"),
            {"rtol": 1e-6, "atol": 1e-7},
        ),
    ),
    ("shape", lambda L: (_t(L, [1.0]), _t(L, [1.0, 2.0]), {})),
    ("shape_before_dtype", lambda L: (_t(L, [1.0]), _t(L, [1.0, 2.0], "float64"), {})),
    ("dtype", lambda L: (_t(L, [1.0]), _t(L, [1.0], "float64"), {})),
    ("dtype_unchecked", lambda L: (_t(L, [1, 2]), _t(L, [1.0, 2.0]), {"check_dtype": False})),
    (
        "dtype_unchecked_mismatch",
        lambda L: (_t(L, [1, 2]), _t(L, [1.0, 2.5]), {"check_dtype": False}),
    ),
    (
        "dtype_unchecked_tolerance",
        lambda L: (_t(L, [1.0], "float16"), _t(L, [1.009]), {"check_dtype": False}),
    ),
    (
        "dtype_unchecked_ints",
        lambda L: (_t(L, [1, 3], "int32"), _t(L, [1, 2]), {"check_dtype": False}),
    ),
    (
        "stride",
        lambda L: (L.ones(2, 2), L.ones(2, 2).t(), {"check_stride": True}),
    ),
    (
        "stride_before_dtype",
        lambda L: (L.ones(2, 3), L.ones(3, 2, dtype=L.float64).t(), {"check_stride": True}),
    ),
    ("stride_unchecked", lambda L: (L.ones(2, 2), L.ones(2, 2).t(), {})),
    ("expanded", lambda L: (_t(L, [1.0, 2.0]), _t(L, [[1.0, 2.0]]).expand(1, 2)[0], {})),
    ("rtol_only", lambda L: (_t(L, [1.0]), _t(L, [1.0]), {"rtol": 1.0})),
    ("atol_only", lambda L: (_t(L, [1.0]), _t(L, [1.0]), {"atol": 1.0})),
    ("tolerances", lambda L: (_t(L, [1.0]), _t(L, [2.0]), {"rtol": 1e-3, "atol": 1e-3})),
    ("tolerances_pass", lambda L: (_t(L, [1.0]), _t(L, [1.1]), {"rtol": 0.2, "atol": 0})),
    ("zero_tolerances", lambda L: (_t(L, [1.0, 2.0]), _t(L, [1.0, 2.5]), {"rtol": 0, "atol": 0})),
    ("int_tolerance", lambda L: (_t(L, [1, 2]), _t(L, [1, 3]), {"rtol": 0.5, "atol": 0})),
    ("msg", lambda L: (_t(L, [1.0]), _t(L, [2.0]), {"msg": "custom"})),
    ("msg_attribute", lambda L: (_t(L, [1.0]), _t(L, [1.0], "float64"), {"msg": "custom"})),
    ("float_numbers", lambda L: (1.0, 1.5, {})),
    ("close_numbers", lambda L: (1.0, 1.0 + 1e-8, {})),
    ("int_numbers", lambda L: (1, 2, {})),
    ("int_zero", lambda L: (1, 0, {})),
    ("complex_numbers", lambda L: (1 + 1j, 1 + 2j, {})),
    ("number_types", lambda L: (1, 1.0, {})),
    ("number_types_unchecked", lambda L: (1, 2.0, {"check_dtype": False})),
    ("number_tolerances", lambda L: (1.0, 2.0, {"rtol": 0, "atol": 1})),
    ("nan_numbers", lambda L: (NAN, NAN, {})),
    ("nan_numbers_equal", lambda L: (NAN, NAN, {"equal_nan": True})),
    ("numpy_scalars", lambda L: (np.float32(1.0), 1.0, {})),
    ("numpy_scalar_mismatch", lambda L: (np.float32(1.0), np.float32(1.5), {})),
    ("booleans", lambda L: (True, False, {})),
    ("numpy_booleans", lambda L: (np.bool_(True), np.bool_(False), {})),
    ("none", lambda L: (None, None, {"rtol": 1.0})),
    ("none_mismatch", lambda L: (None, 1, {})),
    ("none_expected", lambda L: (1, None, {})),
    ("sequence", lambda L: ([1.0, 2.0], [1.0, 2.5], {})),
    ("sequence_kinds", lambda L: ([1.0, _t(L, [1.0])], (1.0, _t(L, [1.0])), {})),
    ("sequence_length", lambda L: ((1.0,), [1.0, 2.0], {})),
    ("nested_length_first", lambda L: ([2.0, [2.0]], [1.0, [2.0, 3.0]], {})),
    (
        "nested",
        lambda L: ([[1.0, 2.0], {"a": [3.0]}], [[1.0, 2.0], {"a": [3.5]}], {}),
    ),
    ("nested_tensor", lambda L: ({"a": _t(L, [1.0])}, {"a": _t(L, [2.0])}, {})),
    ("nested_types", lambda L: ([1.0, 1], [1.0, 2.0], {})),
    ("keys", lambda L: ({"a": 1.0}, {"b": 1.0}, {})),
    ("keys_extra", lambda L: ({"a": 1, "b": 2}, {"a": 1}, {})),
    ("keys_missing", lambda L: ({"a": 1}, {"a": 1, "c": 2}, {})),
    ("mapping_order", lambda L: ({"b": 1.0, "a": 2.0}, {"a": 2.0, "b": 1.5}, {})),
    ("numpy_float", lambda L: (np.array([1.0]), np.array([1.1]), {})),
    ("numpy_int", lambda L: (np.array([1, 2]), np.array([1, 3]), {})),
    ("numpy_zero_dim", lambda L: (np.array(1.0), np.array(1.5), {})),
    ("numpy_dtypes", lambda L: (np.array([1, 2]), np.array([1.0, 3.0]), {})),
    ("numpy_strings", lambda L: (np.array(["a"]), np.array(["a"]), {})),
    ("tensor_and_numpy", lambda L: (_t(L, [1.0]), np.array([1.0], dtype=np.float32), {})),
    ("tensor_and_number", lambda L: (_t(L, [1.0]), 1.0, {})),
    ("number_and_tensor", lambda L: (1.0, _t(L, 1.0), {})),
    ("tensor_and_list", lambda L: (_t(L, [1.0]), [1.0], {})),
    ("numpy_and_list", lambda L: (np.array([1.0]), [1.0], {})),
    ("sequence_and_mapping", lambda L: ([1.0], {0: 1.0}, {})),
    ("strings", lambda L: ("a", "a", {})),
    ("nested_strings", lambda L: ([1.0, "a"], [2.0, "a"], {})),
    ("bytes", lambda L: (b"ab", b"ab", {})),
    ("empty", lambda L: (L.zeros(0), L.zeros(0), {})),
    ("requires_grad", lambda L: (L.ones(2, requires_grad=True), L.ones(2), {})),
    ("float_and_none_tensor", lambda L: (_t(L, [1.0]), None, {})),
]


def _outcome(lib, build):
    actual, expected, options = build(lib)
    try:
        lib.testing.assert_close(actual, expected, **options)
    except (AssertionError, TypeError, ValueError) as error:
        return type(error).__name__, _normal(str(error))
    return None


def _normal(message: str) -> str:
    """PyTorch's message as tocha words it: tocha's names."""
    return message.replace("torch.", "tocha.")


@pytest.mark.parametrize("build", [b for _, b in CASES], ids=[name for name, _ in CASES])
def test_assert_close_matches_torch(build, torch):
    assert _outcome(tocha, build) == _outcome(torch, build)


def test_assert_close_callable_msg():
    with pytest.raises(AssertionError) as info:
        assert_close([tocha.tensor([1.0])], [tocha.tensor([2.0])], msg=lambda m: f"<{m}>")
    message = str(info.value)
    assert message.startswith("<Tensor-likes are not close!")
    assert message.endswith("The failure occurred for item [0]>")


def test_assert_close_raises_builtin_types():
    with pytest.raises(AssertionError):
        assert_close(tocha.ones(2), tocha.zeros(2))
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close(tocha.ones(2), "a")


def test_assert_close_subclasses():
    nn = pytest.importorskip("tocha.nn")
    plain = tocha.ones(2)
    parameter = nn.Parameter(tocha.ones(2))
    assert_close(plain, parameter)
    assert_close(parameter, nn.Parameter(tocha.ones(2)), allow_subclasses=False)
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close(plain, parameter, allow_subclasses=False)


def test_assert_close_default_tolerances_per_dtype():
    for dtype, rtol, atol in [
        (tocha.float16, 1e-3, 1e-5),
        (tocha.bfloat16, 1.6e-2, 1e-5),
        (tocha.float32, 1.3e-6, 1e-5),
        (tocha.float64, 1e-7, 1e-7),
        (tocha.complex64, 1.3e-6, 1e-5),
        (tocha.complex128, 1e-7, 1e-7),
    ]:
        with pytest.raises(AssertionError) as info:
            assert_close(
                tocha.tensor([1.0, 5.0], dtype=dtype), tocha.tensor([1.0, 2.0], dtype=dtype)
            )
        assert f"(up to {atol} allowed)\nGreatest relative" in str(info.value)
        assert str(info.value).endswith(f"(up to {rtol} allowed)")


# -- assert_allclose ----------------------------------------------------------------------------
ALLCLOSE_CASES = [
    ("float32", lambda L: (_t(L, [1.0, 2.0]), _t(L, [1.0, 2.5]), {})),
    ("within_legacy_tolerance", lambda L: (_t(L, [1.0, 2.0]), _t(L, [1.0, 2.0001]), {})),
    ("float16", lambda L: (_t(L, [1.0, 2.0], "float16"), _t(L, [1.0, 3.0], "float16"), {})),
    ("float64", lambda L: (_t(L, [1.0, 2.0], "float64"), _t(L, [1.0, 3.0], "float64"), {})),
    ("int64", lambda L: (_t(L, [1, 2]), _t(L, [1, 3]), {})),
    ("mixed", lambda L: (_t(L, [1.0, 2.0], "float16"), _t(L, [1.0, 3.0], "float64"), {})),
    ("list", lambda L: (_t(L, [1.0, 2.0], "float64"), [1, 3], {})),
    ("lists", lambda L: ([1, 2], [1, 3], {})),
    ("number_shape", lambda L: (_t(L, [1.0, 2.0]), 2.0, {})),
    ("nan", lambda L: (_t(L, [1.0, NAN]), _t(L, [1.0, NAN]), {})),
    ("dtypes", lambda L: (_t(L, [1, 2]), _t(L, [1.0, 2.0]), {})),
    ("msg", lambda L: (_t(L, [1.0]), _t(L, [2.0]), {"msg": "hi"})),
    ("rtol_only", lambda L: (_t(L, [1.0]), _t(L, [2.0]), {"rtol": 1})),
]


def _allclose_outcome(lib, build):
    actual, expected, options = build(lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            lib.testing.assert_allclose(actual, expected, **options)
        except (AssertionError, ValueError) as error:
            outcome = type(error).__name__, _normal(str(error))
        else:
            outcome = None
    return outcome, [(w.category.__name__, _normal(str(w.message))) for w in caught]


@pytest.mark.parametrize(
    "build", [b for _, b in ALLCLOSE_CASES], ids=[name for name, _ in ALLCLOSE_CASES]
)
def test_assert_allclose_matches_torch(build, torch):
    assert _allclose_outcome(tocha, build) == _allclose_outcome(torch, build)


def test_assert_allclose_is_deprecated():
    with pytest.warns(FutureWarning, match="assert_close"):
        assert_allclose(tocha.ones(2), [1.0, 1.0])


# -- make_tensor --------------------------------------------------------------------------------
RANGES = [
    ("bool", 0, 2),
    ("uint8", 0, 10),
    ("int8", -9, 10),
    ("int16", -9, 10),
    ("int32", -9, 10),
    ("int64", -9, 10),
    ("float16", -9, 9),
    ("bfloat16", -9, 9),
    ("float32", -9, 9),
    ("float64", -9, 9),
]


@pytest.mark.parametrize("name, low, high", RANGES, ids=[r[0] for r in RANGES])
def test_make_tensor_default_ranges(name, low, high):
    t = make_tensor(4000, dtype=getattr(tocha, name), device="cpu")
    values = t.to(tocha.float64).numpy()
    assert t.dtype is getattr(tocha, name) and t.shape == (4000,)
    assert values.min() >= low and values.max() < high
    if not t.dtype.is_floating_point:
        assert values.min() == low and values.max() == high - 1  # every value is drawn
    else:
        assert values.min() < low + 1 and values.max() > high - 1


@pytest.mark.parametrize("name", ["complex64", "complex128"])
def test_make_tensor_complex_parts(name):
    t = make_tensor(2000, dtype=getattr(tocha, name), device="cpu", low=2, high=3)
    values = t.numpy()
    for part in (values.real, values.imag):
        assert part.min() >= 2 and part.max() < 3


def test_make_tensor_clamps_to_the_dtype():
    t = make_tensor(4000, dtype=tocha.uint8, device="cpu", low=-5, high=300)
    assert t.numpy().min() >= 0 and t.numpy().max() <= 255
    h = make_tensor(100, dtype=tocha.float16, device="cpu", low=-1e9, high=INF)
    assert np.isfinite(h.to(tocha.float32).numpy()).all()


def test_make_tensor_bool_ignores_bounds():
    t = make_tensor(1000, dtype=tocha.bool, device="cpu", low=1, high=5)
    assert set(t.numpy().tolist()) == {False, True}


@pytest.mark.parametrize(
    "name, replacement",
    [
        ("int32", 1),
        ("bool", True),
        ("float32", float(np.finfo(np.float32).tiny)),
        ("float64", float(np.finfo(np.float64).tiny)),
        ("complex64", complex(np.finfo(np.float32).tiny, 0)),
    ],
)
def test_make_tensor_exclude_zero(name, replacement):
    dtype = getattr(tocha, name)
    bounds = {} if name == "bool" else {"low": 0, "high": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # low == high for floating types
        bounds = {"low": 0, "high": 0} if dtype.is_floating_point or dtype.is_complex else bounds
        t = make_tensor(50, dtype=dtype, device="cpu", exclude_zero=True, **bounds)
    values = t.numpy()
    assert (values != 0).all()
    if name != "bool":
        assert (values == replacement).all()


def _layout(lib, args, options):
    t = lib.testing.make_tensor(*args, device="cpu", **options)
    return tuple(t.shape), str(t.dtype), t.stride(), t.is_contiguous(), t.requires_grad


LAYOUTS = [
    ("ints", (2, 3), {"dtype": "float32"}),
    ("tuple", ((2, 3),), {"dtype": "float32"}),
    ("list", ([2, 3],), {"dtype": "int64"}),
    ("scalar", (), {"dtype": "float64"}),
    ("empty_tuple", ((),), {"dtype": "float32"}),
    ("noncontiguous", (2, 3), {"dtype": "float32", "noncontiguous": True}),
    ("noncontiguous_3d", (2, 3, 4), {"dtype": "int16", "noncontiguous": True}),
    ("noncontiguous_one", (1,), {"dtype": "float32", "noncontiguous": True}),
    ("requires_grad", (3,), {"dtype": "float64", "requires_grad": True}),
    ("requires_grad_complex", (3,), {"dtype": "complex64", "requires_grad": True}),
]


@pytest.mark.parametrize("args, options", [c[1:] for c in LAYOUTS], ids=[c[0] for c in LAYOUTS])
def test_make_tensor_layout_matches_torch(args, options, torch):
    def resolved(lib):
        return {k: getattr(lib, v) if k == "dtype" else v for k, v in options.items()}

    theirs = _layout(torch, args, resolved(torch))
    ours = _layout(tocha, args, resolved(tocha))
    assert ours[0] == theirs[0] and ours[2:] == theirs[2:]
    assert _normal(theirs[1]) == ours[1]


ERRORS = [
    ("low_above_high", {"dtype": "float32", "low": 3, "high": 1}),
    ("low_above_default_high", {"dtype": "float32", "low": 20}),
    ("nan", {"dtype": "float32", "low": NAN}),
    ("int_low_equals_high", {"dtype": "int64", "low": 1, "high": 1}),
    ("int_requires_grad", {"dtype": "int64", "requires_grad": True}),
    ("bool_requires_grad", {"dtype": "bool", "requires_grad": True}),
]


@pytest.mark.parametrize("options", [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_make_tensor_errors_match_torch(options, torch):
    messages = []
    for lib in (torch, tocha):
        resolved = {k: getattr(lib, v) if k == "dtype" else v for k, v in options.items()}
        with pytest.raises(ValueError) as info:
            lib.testing.make_tensor(2, device="cpu", **resolved)
        messages.append(_normal(str(info.value)))
    assert messages[0] == messages[1]


def test_make_tensor_low_equals_high_warns_and_fills(torch):
    with pytest.warns(FutureWarning) as theirs:
        torch.testing.make_tensor(3, dtype=torch.float32, device="cpu", low=2, high=2)
    with pytest.warns(FutureWarning) as ours:
        t = make_tensor(3, dtype=tocha.float32, device="cpu", low=2, high=2)
    assert _normal(str(theirs[0].message)) == str(ours[0].message)
    assert t.tolist() == [2.0, 2.0, 2.0]


def test_make_tensor_requires_keywords():
    with pytest.raises(TypeError, match="device"):
        make_tensor(2, dtype=tocha.float32)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="mutually exclusive"):
        make_tensor(2, 3, dtype=tocha.float32, device="cpu", noncontiguous=True, memory_format=1)


def test_make_tensor_values_noncontiguous_and_grad():
    t = make_tensor(3, 4, dtype=tocha.float32, device="cpu", noncontiguous=True, low=0, high=1)
    assert not t.is_contiguous() and t.stride() == (8, 2)
    assert ((t.numpy() >= 0) & (t.numpy() < 1)).all()
    g = make_tensor(2, dtype=tocha.float32, device="cpu", requires_grad=True)
    assert g.requires_grad and g.is_leaf
