"""`assert_close` and the deprecated `assert_allclose`, as ``torch.testing``'s.

A comparison runs in two passes, as PyTorch's does. The first walks `actual` and `expected`
together through sequences and mappings and makes one *pair* per leaf (None, booleans,
Python numbers, tensor-likes); a structural difference (lengths, keys) or two leaves no pair
can compare fails there, before any value is compared. The second compares each pair in
order and raises the first failure, naming where it occurred.
"""

from __future__ import annotations

import cmath
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import tocha
from tocha import Tensor, _dtype

__all__ = ["assert_close", "assert_allclose"]

# PyTorch's default (rtol, atol) of each dtype; every other dtype is compared exactly.
_TOLERANCES = {
    tocha.float16: (1e-3, 1e-5),
    tocha.bfloat16: (1.6e-2, 1e-5),
    tocha.float32: (1.3e-6, 1e-5),
    tocha.float64: (1e-7, 1e-7),
    tocha.complex64: (1.3e-6, 1e-5),
    tocha.complex128: (1e-7, 1e-7),
}
# Python numbers are compared as 64-bit values.
_NUMBER_TOLERANCES = {int: (0.0, 0.0), float: (1e-7, 1e-7), complex: (1e-7, 1e-7)}
# The tolerances `assert_allclose` used before `assert_close` existed.
_LEGACY_TOLERANCES = {
    tocha.float16: (1e-3, 1e-3),
    tocha.float32: (1e-4, 1e-5),
    tocha.float64: (1e-5, 1e-8),
}


class _Mismatch(Exception):
    """A failed comparison: its message, before the location and `msg` are applied."""


class _NoPair(Exception):
    """No pair type compares these two leaves."""


class _Options:
    __slots__ = (
        "allow_subclasses",
        "rtol",
        "atol",
        "equal_nan",
        "check_device",
        "check_dtype",
        "check_layout",
        "check_stride",
    )

    def __init__(self, **options: Any) -> None:
        for name, value in options.items():
            setattr(self, name, value)


def _class_repr(cls: type) -> str:
    """``repr(cls)``, with the tensor class named where it is published (``torch.Tensor``)."""
    if cls is Tensor:
        return f"<class '{_dtype.SHOWN_MODULE}.Tensor'>"
    return repr(cls)


def _location(path: tuple) -> str:
    if not path:
        return ""
    return "\n\nThe failure occurred for item " + "".join(f"[{key!r}]" for key in path)


def _tolerances(options: _Options, defaults: list[tuple[float, float]]) -> tuple[Any, Any]:
    """The user's tolerances, or the largest default of the compared dtypes."""
    rtol, atol = options.rtol, options.atol
    if rtol is not None and atol is not None:
        return rtol, atol
    if rtol is not None or atol is not None:
        missing = "atol" if atol is None else "rtol"
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}."
        )
    return max(r for r, _ in defaults), max(a for _, a in defaults)


# -- the pairs ---------------------------------------------------------------------------------
class _NonePair:
    def __init__(self, actual, expected, options: _Options) -> None:
        self.actual, self.expected = actual, expected

    def compare(self) -> None:
        if self.actual is not None or self.expected is not None:
            raise _Mismatch(f"None mismatch: {self.actual} is not {self.expected}")


class _BooleanPair:
    def __init__(self, actual, expected, options: _Options) -> None:
        self.actual, self.expected = bool(actual), bool(expected)

    def compare(self) -> None:
        if self.actual is not self.expected:
            raise _Mismatch(f"Booleans mismatch: {self.actual} is not {self.expected}")


def _as_number(value):
    return value.item() if isinstance(value, np.generic) else value


class _NumberPair:
    def __init__(self, actual, expected, options: _Options) -> None:
        self.actual, self.expected = _as_number(actual), _as_number(expected)
        self.check_dtype = options.check_dtype
        self.equal_nan = options.equal_nan
        kinds = (_number_kind(self.actual), _number_kind(self.expected))
        self.rtol, self.atol = _tolerances(options, [_NUMBER_TOLERANCES[k] for k in kinds])

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        if self.check_dtype and type(actual) is not type(expected):
            raise _Mismatch(f"The (d)types do not match: {type(actual)} != {type(expected)}.")
        if actual == expected:
            return
        if self.equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        difference = abs(actual - expected)
        finite = cmath.isfinite(actual) and cmath.isfinite(expected)
        if finite and difference <= self.atol + self.rtol * abs(expected):
            return
        if abs(expected) == 0:
            relative = math.nan if math.isnan(difference) else math.inf
        else:
            relative = difference / abs(expected)
        raise _Mismatch(
            _scalar_message(expected, actual, difference, relative, self.rtol, self.atol)
        )


def _number_kind(value) -> type:
    if isinstance(value, complex):
        return complex
    if isinstance(value, float):
        return float
    return int


def _scalar_message(expected, actual, difference, relative, rtol, atol) -> str:
    equal = rtol == 0 and atol == 0
    return (
        f"Scalars are not {'equal' if equal else 'close'}!\n\n"
        f"Expected {expected} but got {actual}.\n"
        f"Absolute difference: {difference}{_allowed(atol, equal)}\n"
        f"Relative difference: {relative}{_allowed(rtol, equal)}"
    )


def _allowed(tolerance, equal: bool) -> str:
    return "" if equal else f" (up to {tolerance} allowed)"


class _TensorLikePair:
    """Two tensors, or two NumPy arrays (compared as tensors)."""

    def __init__(self, actual, expected, options: _Options) -> None:
        self.actual, self.expected = actual, expected
        self.options = options
        self.rtol, self.atol = _tolerances(
            options,
            [
                _TOLERANCES.get(actual.dtype, (0.0, 0.0)),
                _TOLERANCES.get(expected.dtype, (0.0, 0.0)),
            ],
        )

    def compare(self) -> None:
        actual, expected, options = self.actual, self.expected, self.options
        checks = [("shape", lambda t: t.shape, True)]
        checks.append(("layout", lambda t: t.layout, options.check_layout))
        checks.append(("stride()", lambda t: t.stride(), options.check_stride))
        checks.append(("device", lambda t: t.device, options.check_device))
        checks.append(("dtype", lambda t: t.dtype, options.check_dtype))
        for name, attribute, wanted in checks:
            if wanted and attribute(actual) != attribute(expected):
                raise _Mismatch(
                    f"The values for attribute '{name}' do not match: "
                    f"{attribute(actual)} != {attribute(expected)}."
                )
        if actual.dtype is not expected.dtype:
            common = tocha.promote_types(actual.dtype, expected.dtype)
            actual, expected = actual.to(common), expected.to(common)
        self._compare_values(actual, expected)

    def _compare_values(self, actual_tensor: Tensor, expected_tensor: Tensor) -> None:
        rtol, atol = self.rtol, self.atol
        actual, expected = _host(actual_tensor), _host(expected_tensor)
        floating = actual.dtype.kind in "fcV"
        if not floating:
            actual, expected = actual.astype(np.int64), expected.astype(np.int64)
        with np.errstate(all="ignore"):
            difference = np.abs(actual - expected)
            close = actual == expected
            if floating:
                if self.options.equal_nan:
                    close |= np.isnan(actual) & np.isnan(expected)
                finite = np.isfinite(actual) & np.isfinite(expected)
                close |= finite & (difference <= atol + rtol * np.abs(expected))
                relative = difference / np.abs(expected)
            else:
                close |= difference <= atol + rtol * np.abs(expected)
                default = tocha.empty(0, dtype=tocha.get_default_dtype()).numpy().dtype
                relative = difference.astype(default) / np.abs(expected).astype(default)
        if close.all():
            return
        equal = rtol == 0 and atol == 0
        if actual.ndim == 0:
            raise _Mismatch(
                _scalar_message(
                    expected_tensor.item(),
                    actual_tensor.item(),
                    _python(difference, floating),
                    float(relative),
                    rtol,
                    atol,
                )
            )
        difference[close] = 0
        relative[close] = 0
        mismatched = int((~close).sum())
        total = close.size
        at_abs = int(np.argmax(difference))
        at_rel = int(np.argmax(relative))
        raise _Mismatch(
            f"Tensor-likes are not {'equal' if equal else 'close'}!\n\n"
            f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})\n"
            f"Greatest absolute difference: {_python(difference.flat[at_abs], floating)} "
            f"at index {_index(at_abs, close.shape)}{_allowed(atol, equal)}\n"
            f"Greatest relative difference: {float(relative.flat[at_rel])} "
            f"at index {_index(at_rel, close.shape)}{_allowed(rtol, equal)}"
        )


def _host(t: Tensor) -> np.ndarray:
    """The values of `t` as a NumPy array (bfloat16 too, which ``numpy()`` refuses)."""
    return np.asarray(t.detach().cpu()._data)


def _python(value, floating: bool):
    """An array element as Python prints it in the messages: float or int."""
    if not floating:
        return int(value)
    if np.iscomplexobj(value):
        return complex(value)
    return float(value)


def _index(flat: int, shape: tuple) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def _related(actual, expected, allow_subclasses: bool) -> bool:
    if allow_subclasses:
        return isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    return type(actual) is type(expected)


def _is_number(value) -> bool:
    return isinstance(value, (int, float, complex, np.number)) and not isinstance(
        value, (bool, np.bool_)
    )


def _pair(actual, expected, options: _Options):
    """The pair that compares two leaves; raises `_NoPair` when none can."""
    if actual is None or expected is None:
        return _NonePair(actual, expected, options)
    if isinstance(actual, (bool, np.bool_)) and isinstance(expected, (bool, np.bool_)):
        return _BooleanPair(actual, expected, options)
    if _is_number(actual) and _is_number(expected):
        return _NumberPair(actual, expected, options)
    if isinstance(actual, Tensor) or isinstance(expected, Tensor):
        if not (
            isinstance(actual, Tensor)
            and isinstance(expected, Tensor)
            and _related(actual, expected, options.allow_subclasses)
        ):
            raise _NoPair
        return _TensorLikePair(actual, expected, options)
    if isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
        if not _related(actual, expected, options.allow_subclasses):
            raise _NoPair
        try:
            tensors = tocha.from_numpy(actual), tocha.from_numpy(expected)
        except TypeError:
            raise _NoPair from None
        return _TensorLikePair(*tensors, options)
    raise _NoPair


def _is_sequence(value) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _originate(actual, expected, options: _Options, path: tuple, pairs: list) -> None:
    """Append to `pairs` a (path, pair) for each leaf of the two structures."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path
            )
        for i, (a, e) in enumerate(zip(actual, expected)):
            _originate(a, e, options, (*path, i), pairs)
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _Mismatch(
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {_sorted(expected_keys - actual_keys)}\n"
                f"Additional keys in the actual mapping: {_sorted(actual_keys - expected_keys)}",
                path,
            )
        for key in _sorted(actual.keys()):
            _originate(actual[key], expected[key], options, (*path, key), pairs)
        return
    try:
        pairs.append((path, _pair(actual, expected, options)))
    except _NoPair:
        raise TypeError(
            "No comparison pair was able to handle inputs of type "
            f"{_class_repr(type(actual))} and {_class_repr(type(expected))}.{_location(path)}"
        ) from None


def _sorted(keys) -> list:
    try:
        return sorted(keys)
    except TypeError:
        return list(keys)


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Assert that `actual` and `expected` are close, as ``torch.testing.assert_close``.

    Tensors (and NumPy arrays, compared with each other) are close when their shape, layout,
    device and dtype match (each check can be turned off but the shape's) and every element
    satisfies ``|actual - expected| <= atol + rtol * |expected|``; non-finite values must be
    equal (NaN only with ``equal_nan``). Without `rtol` and `atol` the tolerances are the
    dtype's defaults (float32: ``rtol=1.3e-6, atol=1e-5``; integers and bool: exact).
    Python numbers, booleans and None are compared as such; sequences and mappings are
    compared element by element. A difference raises AssertionError with a description of
    it (or `msg`, or ``msg(description)``); inputs that cannot be compared raise TypeError.

    Examples:
        >>> tocha.testing.assert_close(tocha.tensor([1.0, 2.0]), tocha.tensor([1.0, 2.0 + 1e-7]))
        >>> tocha.testing.assert_close([1, 2.5], (1, 2.5))
    """
    __tracebackhide__ = True
    options = _Options(
        allow_subclasses=allow_subclasses,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=check_device,
        check_dtype=check_dtype,
        check_layout=check_layout,
        check_stride=check_stride,
    )
    pairs: list = []
    try:
        _originate(actual, expected, options, (), pairs)
        for path, pair in pairs:
            try:
                pair.compare()
            except _Mismatch as mismatch:
                raise _Mismatch(mismatch.args[0], path) from None
    except _Mismatch as mismatch:
        description = mismatch.args[0] + _location(mismatch.args[1])
        if msg is None:
            message = description
        elif callable(msg):
            message = msg(description)
        else:
            message = msg
        raise AssertionError(message) from None


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str = "",
) -> None:
    """Deprecated since PyTorch 1.12: use `assert_close`. Compares `actual` with `expected`
    (converted to tensors of `actual`'s dtype) across dtypes, with the tolerances of old."""
    warnings.warn(
        "`tocha.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `tocha.testing.assert_close()` instead. You can find "
        "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, Tensor):
        actual = tocha.tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tocha.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        legacy = [
            _LEGACY_TOLERANCES.get(actual.dtype, (0.0, 0.0)),
            _LEGACY_TOLERANCES.get(expected.dtype, (0.0, 0.0)),
        ]
        rtol, atol = max(r for r, _ in legacy), max(a for _, a in legacy)
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        check_stride=False,
        msg=msg or None,
    )
