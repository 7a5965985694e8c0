"""Python's protocols on tensors as PyTorch answers them: conversions to Python numbers and
NumPy arrays, NumPy functions of tensors, deep copies, and the deprecation warnings of
``.T`` (found by running tutorials' snippets under both)."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import tocha


def _outcome(fn, lib):
    """What `fn(lib)` gives: its repr with PyTorch's name read as tocha's, or its exception's
    class name and message."""
    try:
        result = fn(lib)
    except Exception as exc:  # noqa: BLE001 - the exception is the answer
        return ("raise", type(exc).__name__, str(exc))
    return ("value", repr(result).replace("torch.", "tocha."))


def _ones_requiring_grad(lib):
    return lib.ones(2, requires_grad=True)


CASES = {
    "float_of_complex": lambda lib: float(lib.tensor(3.0 + 1j)),
    "int_of_complex": lambda lib: int(lib.tensor(3.0 + 1j)),
    "float_of_real_complex": lambda lib: float(lib.tensor(3.0 + 0j)),
    "float_of_two": lambda lib: float(lib.tensor([1.0, 2.0])),
    "deepcopy_non_leaf": lambda lib: copy.deepcopy(_ones_requiring_grad(lib) * 2),
    "deepcopy_leaf": lambda lib: copy.deepcopy(_ones_requiring_grad(lib)),
    "asarray_requires_grad": lambda lib: np.asarray(_ones_requiring_grad(lib)),
    "asarray_bfloat16": lambda lib: np.asarray(lib.ones(1, dtype=lib.bfloat16)),
    "ufunc_requires_grad": lambda lib: np.exp(_ones_requiring_grad(lib)),
    "H_of_vector": lambda lib: lib.ones(3).H,
    "H_of_matrix": lambda lib: lib.tensor([[1 + 1j, 2j]]).H,
    "is_quantized": lambda lib: lib.ones(2).is_quantized,
    "equals_object": lambda lib: lib.ones(2) == object(),
    "not_equals_none": lambda lib: lib.ones(2) != None,  # noqa: E711
    "tensor_equals_array": lambda lib: lib.ones(2) == np.array([1.0, 2.0]),
    "maximum_array": lambda lib: lib.maximum(lib.ones(2), np.ones(2)),
    "cat_array": lambda lib: lib.cat([lib.ones(2), np.ones(2)]),
    "from_numpy_strings": lambda lib: lib.from_numpy(np.array(["a"])),
    "from_numpy_objects": lambda lib: lib.from_numpy(np.zeros(2, dtype=object)),
}


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
def test_protocol_as_pytorch(name, torch):
    assert _outcome(CASES[name], tocha) == _outcome(CASES[name], torch)


# NumPy functions of a tensor give tensors (boolean results as uint8), as in PyTorch; the
# values are NumPy's. (PyTorch's answers, recorded by hand: the oracle's handles are not
# arrays NumPy can read.)
UFUNCS = {
    "sin": (lambda t: np.sin(t), "tensor([0.8415, 0.9093])"),
    "add_scalar": (lambda t: np.add(t, 1), "tensor([2., 3.])"),
    "isnan": (lambda t: np.isnan(t), "tensor([0, 0], dtype=tocha.uint8)"),
    "argmax": (lambda t: np.argmax(t), "tensor(1)"),
    "tensor_plus_array": (lambda t: t + np.ones(2), "tensor([2., 3.], dtype=tocha.float64)"),
    "tensor_times_array": (lambda t: t * np.ones(2), "tensor([1., 2.], dtype=tocha.float64)"),
    "array_over_tensor": (
        lambda t: np.ones(2) / t,
        "tensor([1.0000, 0.5000], dtype=tocha.float64)",
    ),
    "tensor_over_0d_array": (
        lambda t: t / np.array(2.0),
        "tensor([0.5000, 1.0000], dtype=tocha.float64)",
    ),
}


@pytest.mark.parametrize("name", list(UFUNCS), ids=list(UFUNCS))
def test_numpy_functions_of_a_tensor_give_tensors(name):
    fn, want = UFUNCS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        result = fn(tocha.tensor([1.0, 2.0]))
    assert isinstance(result, tocha.Tensor)
    assert repr(result) == want


# Operators given an operand that is neither a tensor nor a number leave it to Python, whose
# TypeError names both types (PyTorch's messages, recorded by hand: the oracle's stand-ins
# for PyTorch's tensors have another type name).
OPERATOR_ERRORS = {
    "plus_string": (
        lambda t: t + "a",
        "unsupported operand type(s) for +: 'Tensor' and 'str'",
    ),
    "string_minus": (
        lambda t: "a" - t,
        "unsupported operand type(s) for -: 'str' and 'Tensor'",
    ),
    "times_none": (
        lambda t: t * None,
        "unsupported operand type(s) for *: 'Tensor' and 'NoneType'",
    ),
    "list_over": (
        lambda t: [1.0] / t,
        "unsupported operand type(s) for /: 'list' and 'Tensor'",
    ),
    "and_tuple": (
        lambda t: t.long() & (1,),
        "unsupported operand type(s) for &: 'Tensor' and 'tuple'",
    ),
    "less_than_object": (
        lambda t: t < object(),
        "'<' not supported between instances of 'Tensor' and 'object'",
    ),
    "array_minus_tensor": (
        lambda t: np.ones(2) - t,
        "unsupported operand type(s) for -: 'numpy.ndarray' and 'Tensor'",
    ),
    "pow_with_modulo": (
        lambda t: pow(t.long(), 3, 5),
        "unsupported operand type(s) for ** or pow(): 'Tensor', 'int', 'int'",
    ),
    "tensor_less_than_array": (
        lambda t: t < np.ones(2),
        "'<' not supported between instances of 'Tensor' and 'numpy.ndarray'",
    ),
}


@pytest.mark.parametrize("name", list(OPERATOR_ERRORS), ids=list(OPERATOR_ERRORS))
def test_operators_leave_what_is_no_number_to_python(name):
    fn, message = OPERATOR_ERRORS[name]
    with pytest.raises(TypeError) as info:
        fn(tocha.ones(2))
    assert str(info.value) == message


class _Reflected:
    """An operand that is no number and handles the operators itself."""

    def __radd__(self, other):
        return "radd"

    def __rlt__(self, other):
        return "rlt"

    def __gt__(self, other):
        return "gt"


def test_an_operand_that_is_no_number_is_asked_to_handle_the_operator():
    assert tocha.ones(2) + _Reflected() == "radd"
    assert (tocha.ones(2) < _Reflected()) == "gt"


def test_adding_an_array_in_place_rebinds_to_a_new_tensor():
    t = tocha.ones(2)
    name = t
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        name += np.ones(2)
    assert t.tolist() == [1.0, 1.0] and name.dtype == tocha.float64


def test_deepcopy_keeps_the_gradient():
    x = tocha.ones(2, requires_grad=True)
    x.sum().backward()
    y = copy.deepcopy(x)
    assert y.requires_grad and y.is_leaf
    assert y.grad is not x.grad and y.grad.tolist() == [1.0, 1.0]


def test_reversing_t_of_a_vector_warns_once():
    from tocha._tensor import _warn_reversed_t

    _warn_reversed_t.cache_clear()
    with pytest.warns(UserWarning, match=r"The use of `x.T` on tensors of dimension other"):
        assert tocha.ones(2, 3, 4).T.shape == (4, 3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tocha.ones(3).T.shape == (3,)
        assert tocha.ones(2, 3).T.shape == (3, 2)


def test_float_of_a_tensor_requiring_grad_warns_once():
    from tocha._tensor import _warn_scalar_of_grad

    _warn_scalar_of_grad.cache_clear()
    x = tocha.ones(1, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.item() == 1.0
    with pytest.warns(UserWarning, match="Converting a tensor with requires_grad=True to a scalar"):
        assert float(x) == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert int(x) == 1


def test_dropping_imaginary_parts_warns_once_at_the_callers_line():
    from tocha._ops.creation import warn_complex_to_real

    c = tocha.tensor([1 + 2j])
    for drop in (lambda: c.float(), lambda: tocha.zeros(1).copy_(c)):
        warn_complex_to_real.cache_clear()
        with pytest.warns(UserWarning, match="Casting complex values to real discards") as rec:
            assert drop().tolist() == [1.0]
        assert rec[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c.long().tolist() == [1] and c.bool().tolist() == [True]


SIZES = {
    "times_two": lambda lib: lib.Size([2, 3]) * 2,
    "two_times": lambda lib: 2 * lib.Size([2, 3]),
    "tuple_plus": lambda lib: (1,) + lib.Size([2, 3]),
    "plus_tuple": lambda lib: lib.Size([2, 3]) + (4,),
    "of_tensors": lambda lib: lib.Size([lib.tensor(2), 3]),
    "of_numpy_ints": lambda lib: lib.Size([np.int64(2), np.int32(3)]),
    "of_bools": lambda lib: lib.Size([True, False]),
    "of_floats": lambda lib: lib.Size([2, 3.0]),
    "of_strings": lambda lib: lib.Size(["a"]),
    "sliced": lambda lib: lib.Size([2, 3, 4])[::-1],
    "empty": lambda lib: lib.Size(),
}


@pytest.mark.parametrize("name", list(SIZES), ids=list(SIZES))
def test_size_as_pytorch(name, torch):
    got, want = _outcome(SIZES[name], tocha), _outcome(SIZES[name], torch)
    assert got == tuple(part.replace("torch.", "tocha.") for part in want)


def test_size_plus_a_list_is_refused_in_pytorchs_words():
    with pytest.raises(TypeError, match=r"^can only concatenate tuple \(not list\) to tocha.Size$"):
        tocha.Size([2, 3]) + [4]


def _read_grads(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    kept = x * 3
    kept.retain_grad()
    (y.sum() + kept.sum()).backward()
    return [None if g is None else g.tolist() for g in (x.grad, y.grad, kept.grad)]


def test_reading_the_grad_of_a_non_leaf_warns_as_pytorch(torch):
    got = _warned(_read_grads, tocha)
    want = _warned(_read_grads, torch)
    assert got == want and len(got[1]) == 1


def _warned(fn, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(lib)
    return result, [str(w.message).split(" (Triggered internally")[0] for w in caught]


def test_deprecation_warnings_point_at_the_callers_line():
    with pytest.warns(UserWarning, match="torch.range is deprecated") as rec:
        tocha.range(0, 3)
    assert rec[0].filename == __file__
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated") as rec:
        tocha.ones(4).resize(2, 2)
    assert rec[0].filename == __file__


def test_assert_close_names_the_tensor_class_where_it_is_published():
    with pytest.raises(TypeError) as info:
        tocha.testing.assert_close(tocha.tensor(1.0), 1.0)
    assert str(info.value) == (
        "No comparison pair was able to handle inputs of type <class 'tocha.Tensor'> and "
        "<class 'float'>."
    )


def test_storage_type_warns_that_typed_storage_is_deprecated():
    from tocha import _storage

    _storage._TYPED_STORAGE_WARNED[0] = False
    with pytest.warns(UserWarning, match="TypedStorage is deprecated") as rec:
        assert tocha.ones(2).storage_type() is tocha.FloatStorage
    assert rec[0].filename == __file__
