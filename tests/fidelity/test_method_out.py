"""Tensor methods refuse ``out=`` as PyTorch's do (a TypeError), while the functions of the
same name keep writing into it; checked against PyTorch (recorded)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tocha
from tests.fidelity.test_fidelity_fixes import assert_same_error_class

# (method, arguments after the receiver): plain functions, ones wrapped for ``axis=``
# aliases (cumsum, softmax), and methods published by tocha.linalg (det).
METHODS = [
    ("add", ("x",)),
    ("sum", (0,)),
    ("exp", ()),
    ("matmul", ("x",)),
    ("cumsum", (0,)),
    ("softmax", (0,)),
    ("sort", ()),
    ("max", (0,)),
    ("clamp", (0.0,)),
    ("det", ()),
]


def _args(lib, args):
    x = lib.from_numpy(np.eye(3, dtype=np.float32))
    return x, [x if a == "x" else a for a in args]


@pytest.mark.parametrize("name, args", METHODS)
def test_methods_refuse_out(torch, name, args):
    def call(lib):
        x, rest = _args(lib, args)
        return getattr(x, name)(*rest, out=lib.empty(0))

    assert_same_error_class(lambda: call(torch), lambda: call(tocha))


@pytest.mark.parametrize("name", ["add", "matmul", "softmax", "clamp"])
def test_message_is_pythons(torch, name):
    x = tocha.ones(3)
    with pytest.raises(TypeError, match=rf"^{name}\(\) got an unexpected keyword argument 'out'$"):
        getattr(x, name)(x if name in ("add", "matmul") else 0, out=x)


@pytest.mark.parametrize("name, args", METHODS)
def test_functions_and_methods_still_work(name, args):
    x, rest = _args(tocha, args)
    method = getattr(x, name)(*rest)
    function = getattr(tocha.linalg if name == "det" else tocha, name)
    out = tocha.empty(0)
    written = function(x, *rest, out=out) if name not in ("max", "sort") else None
    if written is not None:
        assert written is out
        np.testing.assert_array_equal(out.numpy(), method.numpy())


def test_no_method_signature_shows_out():
    for name, fn in vars(tocha.Tensor).items():
        if callable(fn) and not isinstance(fn, type):
            try:
                parameters = inspect.signature(fn).parameters
            except (TypeError, ValueError):
                continue
            assert "out" not in parameters, name


def test_method_call_keeps_keywords():
    x = tocha.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(x.sum(axis=1, keepdims=True).numpy(), [[3.0], [12.0]])
    np.testing.assert_array_equal(x.add(x, alpha=2).numpy(), 3 * x.numpy())
