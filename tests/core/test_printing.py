"""Printing: repr(tocha tensor) is PyTorch's repr with 'torch.' read as 'tocha.', over a table
of values, dtypes, shapes and print options."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, distribution

import numpy as np
import pytest

import tocha

_rng = np.random.default_rng(42)


def _randn(*shape, scale=1.0, dtype=np.float32):
    return (_rng.standard_normal(shape) * scale).astype(dtype)


# name: (NumPy values, dtype name or None to keep the array's, print options or None)
CASES = {
    "float_1d": (np.array([1.0, 2.0, 3.0], np.float32), None, None),
    "float_fraction": (np.array([0.5, -1.25, 3.0], np.float32), None, None),
    "int_2d": (np.array([[1, 2], [3, 4]]), None, None),
    "int_negative": (np.array([-100, 5, 0, 12345678]), None, None),
    "int32": (np.arange(6, dtype=np.int32).reshape(2, 3), None, None),
    "int16": (np.array([-3, 7], np.int16), None, None),
    "uint8": (np.arange(0, 250, 25, dtype=np.uint8), None, None),
    "int8": (np.array([-128, 0, 127], np.int8), None, None),
    "bool": (np.array([True, False, True]), None, None),
    "bool_2d": (np.array([[True, True], [True, True]]), None, None),
    "scalar_float": (np.array(3.5, np.float32), None, None),
    "scalar_int": (np.array(3), None, None),
    "scalar_bool": (np.array(False), None, None),
    "scalar_f64": (np.array(-2.0), None, None),
    "scalar_small": (np.array(1e-7, np.float32), None, None),
    "scalar_complex": (np.array(1 - 2j, np.complex64), None, None),
    "scalar_f16": (np.array(0.1, np.float16), None, None),
    "randn_small": (_randn(5), None, None),
    "randn_2d": (_randn(4, 6), None, None),
    "randn_3d": (_randn(2, 3, 4), None, None),
    "randn_4d": (_randn(2, 2, 2, 3), None, None),
    "randn_f64": (_randn(3, 3, dtype=np.float64), None, None),
    "randn_big_mag": (_randn(3, 4, scale=1e5), None, None),
    "randn_huge": (_randn(5, scale=1e10), None, None),
    "randn_tiny": (_randn(5, scale=1e-6), None, None),
    "mixed_mag": (np.array([1e-3, 1.0, 1e3, 2e3], np.float32), None, None),
    "ratio_under_1000": (np.array([1.5, 999.0], np.float32), None, None),
    "int_valued_floats_large": (np.array([1.0, 1e9], np.float32), None, None),
    "int_valued_floats_ratio": (np.array([1.0, 2000.0], np.float32), None, None),
    "int_valued_floats_neg": (np.array([-1.0, 0.0, 250.0], np.float32), None, None),
    "neg_zero": (np.array([-0.0, 1.0], np.float32), None, None),
    "zeros": (np.zeros((2, 3), np.float32), None, None),
    "nan_inf": (np.array([np.nan, np.inf, -np.inf, 1.5], np.float32), None, None),
    "nan_inf_intmode": (np.array([np.nan, np.inf, -np.inf, 2.0], np.float32), None, None),
    "only_nonfinite": (np.array([np.nan, np.inf], np.float32), None, None),
    "nan_sci": (np.array([np.nan, 1e-8, 1.0], np.float32), None, None),
    "float16": (_randn(4, dtype=np.float16), None, None),
    "float16_ints": (np.array([1, 2, 3], np.float16), None, None),
    "bfloat16": (_randn(2, 3), "bfloat16", None),
    "complex64": (_randn(3) + 1j * _randn(3), "complex64", None),
    "complex128": ((_randn(2, 2) + 1j * _randn(2, 2)).astype(np.complex128), None, None),
    "complex_ints": (np.array([1 + 1j, 2 - 3j], np.complex64), None, None),
    "complex_sci": (np.array([1e-6 + 1j, 1e5 - 1e-3j], np.complex64), None, None),
    "complex_neg_zero": (
        np.array([complex(1, -0.0), complex(-0.0, 0.0)], np.complex64),
        None,
        None,
    ),
    "empty_1d": (np.zeros(0, np.float32), None, None),
    "empty_2d": (np.zeros((0, 3), np.float32), None, None),
    "empty_int": (np.zeros(0, np.int64), None, None),
    "empty_f64_3d": (np.zeros((2, 0, 1)), None, None),
    "empty_bool": (np.zeros((0,), bool), None, None),
    "long_row_wraps": (_randn(30), None, None),
    "long_int_row": (np.arange(100), None, None),
    "wide_matrix": (_randn(3, 25), None, None),
    "big_1d": (_randn(2000), None, None),
    "big_2d": (_randn(40, 40), None, None),
    "big_3d": (_randn(12, 10, 10), None, None),
    "big_int": (np.arange(5000).reshape(50, 100), None, None),
    "big_bool": (np.arange(2000) % 3 == 0, None, None),
    "big_complex": (_randn(1100) + 1j * _randn(1100), "complex64", None),
    "big_sci": (_randn(30, 40, scale=1e-5), None, None),
    "exactly_threshold": (_randn(1000), None, None),
    "precision_2": (_randn(5), None, {"precision": 2}),
    "precision_8_f64": (_randn(4, dtype=np.float64), None, {"precision": 8}),
    "threshold_5": (np.arange(10.0, dtype=np.float32), None, {"threshold": 5}),
    "edgeitems_1": (np.arange(100).reshape(10, 10), None, {"threshold": 10, "edgeitems": 1}),
    "edgeitems_0_1d": (np.arange(20.0, dtype=np.float32), None, {"threshold": 5, "edgeitems": 0}),
    "edgeitems_0_2d": (np.arange(20).reshape(4, 5), None, {"threshold": 5, "edgeitems": 0}),
    "linewidth_40": (_randn(20), None, {"linewidth": 40}),
    "linewidth_200": (_randn(5, 30), None, {"linewidth": 200}),
    "sci_mode_on": (np.array([1.0, 2.5], np.float32), None, {"sci_mode": True}),
    "sci_mode_off": (_randn(4, scale=1e-6), None, {"sci_mode": False}),
    "sci_mode_on_ints": (np.array([1.0, -20.0], np.float32), None, {"sci_mode": True}),
    "sci_mode_off_huge": (np.array([1.0, 3e9], np.float32), None, {"sci_mode": False}),
    "sci_mode_on_zeros": (np.zeros(3, np.float32), None, {"sci_mode": True}),
    "profile_short": (_randn(3, 3), None, {"profile": "short"}),
    "profile_full": (_randn(1200), None, {"profile": "full"}),
    "suffix_wraps": (_randn(7, dtype=np.float64), None, {"linewidth": 60}),
}


def _make(lib, values, dtype_name):
    t = lib.from_numpy(values.copy())
    if dtype_name is not None:
        t = t.to(getattr(lib, dtype_name))
    return t


def _expected(torch, values, dtype_name, options):
    if options:
        torch.set_printoptions(**options)
    try:
        return repr(_make(torch, values, dtype_name)).replace("torch.", "tocha.")
    finally:
        torch.set_printoptions(profile="default")


def _actual(values, dtype_name, options):
    if options:
        tocha.set_printoptions(**options)
    try:
        return repr(_make(tocha, values, dtype_name))
    finally:
        tocha.set_printoptions(profile="default")


@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_torch(torch, name):
    values, dtype_name, options = CASES[name]
    assert _actual(values, dtype_name, options) == _expected(torch, values, dtype_name, options)


@pytest.mark.parametrize("name", ["float_1d", "int_2d", "big_3d", "scalar_float", "empty_2d"])
def test_str_is_repr(name):
    values, dtype_name, _ = CASES[name]
    t = _make(tocha, values, dtype_name)
    assert str(t) == repr(t)


KNOWN = [
    (lambda: tocha.tensor([1.0, 2.0, 3.0]), "tensor([1., 2., 3.])"),
    (lambda: tocha.tensor([[1, 2], [3, 4]]), "tensor([[1, 2],\n        [3, 4]])"),
    (lambda: tocha.tensor(3.5), "tensor(3.5000)"),
    (lambda: tocha.zeros(0, 3), "tensor([], size=(0, 3))"),
    (lambda: tocha.zeros(2, dtype=tocha.float64), "tensor([0., 0.], dtype=tocha.float64)"),
    (lambda: tocha.tensor([True, False]), "tensor([ True, False])"),
    (lambda: tocha.tensor([0.1, 1e-5]), "tensor([1.0000e-01, 1.0000e-05])"),
]


@pytest.mark.parametrize("case", range(len(KNOWN)))
def test_known_reprs(case):
    make, text = KNOWN[case]
    assert repr(make()) == text


def test_default_dtype_changes_suffix(torch):
    for lib in (tocha, torch):
        lib.set_default_dtype(lib.float64)
    try:
        values = np.array([1.5, 2.0])
        for dtype in ("float64", "float32", "complex128"):
            got = repr(_make(tocha, values, dtype))
            assert got == repr(_make(torch, values, dtype)).replace("torch.", "tocha.")
    finally:
        for lib in (tocha, torch):
            lib.set_default_dtype(lib.float32)


def test_set_printoptions_persists_and_restores():
    t = tocha.tensor([1.123456])
    tocha.set_printoptions(precision=6)
    try:
        assert repr(t) == "tensor([1.123456])"
        assert tocha.get_printoptions()["precision"] == 6
    finally:
        tocha.set_printoptions(profile="default")
    assert repr(t) == "tensor([1.1235])"
    tocha.set_printoptions(profile="nope")  # ignored, as by PyTorch
    assert repr(t) == "tensor([1.1235])"


def _autograd_available() -> bool:
    try:
        import tocha.autograd  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _autograd_available(), reason="tocha-autograd is not installed")
def test_autograd_suffixes(torch):
    for make in (
        lambda lib: lib.ones(2, requires_grad=True),
        lambda lib: lib.ones(2, dtype=lib.float64, requires_grad=True) + 1,
        lambda lib: (lib.ones(3, requires_grad=True) * 2).sum(),
        lambda lib: lib.ones(2, 40, requires_grad=True) * 0.5,
    ):
        assert repr(make(tocha)) == repr(make(torch)).replace("torch.", "tocha.")


def _testdev_installed() -> bool:
    try:
        distribution("tocha-testdev")
    except PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not _testdev_installed(), reason="the testdev plugin is not installed")
def test_device_suffix():
    assert repr(tocha.ones(2, device="testdev")) == "tensor([1., 1.], device='testdev')"
    assert (
        repr(tocha.zeros(0, dtype=tocha.int32, device="testdev"))
        == "tensor([], device='testdev', dtype=tocha.int32)"
    )


def test_format_of_a_0_dim_tensor_is_its_number_as_torch():
    assert f"{tocha.tensor(4.0)}" == "4.0"
    assert f"{tocha.tensor(2.5):.2f}" == "2.50"
    assert f"{tocha.tensor(3)}" == "3"
    assert f"{tocha.tensor([4.0])}" == "tensor([4.])"
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{tocha.tensor([4.0]):.2f}"
