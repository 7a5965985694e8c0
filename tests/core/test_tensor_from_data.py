"""`tensor()` of nested data as PyTorch reads it: tensors inside sequences (a number where a
number belongs, values where a sequence does), NumPy arrays PyTorch refuses (byte order,
negative strides, dtypes), strings, objects, ints beyond int64, any Python sequence; and the
warnings PyTorch gives."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import tocha


def _outcome(fn, lib):
    try:
        result = fn(lib)
    except Exception as exc:  # noqa: BLE001 - the exception is the answer
        return ("raise", type(exc).__name__, str(exc))
    return ("value", repr(result).replace("torch.", "tocha."))


CASES = {
    "one_element_tensors": lambda lib: lib.tensor([lib.tensor([[1.0]]), lib.tensor([[2.0]])]),
    "zero_dim_int32_tensors": lambda lib: lib.tensor(
        [lib.tensor(1, dtype=lib.int32), lib.tensor(2, dtype=lib.int32)]
    ),
    "tensor_beside_float": lambda lib: lib.tensor([lib.tensor([1], dtype=lib.int32), 2.5]),
    "tensors_in_rows": lambda lib: lib.tensor([[lib.tensor([1.0])], [lib.tensor([2.0])]]),
    "tensor_as_a_row": lambda lib: lib.tensor([[1, 2], lib.tensor([3, 4])]),
    "two_element_tensor": lambda lib: lib.tensor([lib.tensor([1.0, 2.0])]),
    "empty_tensors": lambda lib: lib.tensor([lib.tensor([]), lib.tensor([])]),
    "strings": lambda lib: lib.tensor(["a", "b"]),
    "string_for_a_row": lambda lib: lib.tensor([[1], "a"]),
    "none_in_list": lambda lib: lib.tensor([1, None]),
    "object_in_list": lambda lib: lib.tensor([1, object()]),
    "object": lambda lib: lib.tensor(object()),
    "none": lambda lib: lib.tensor(None),
    "generator": lambda lib: lib.tensor(i for i in range(3)),
    "dict": lambda lib: lib.tensor({1: 2}),
    "range": lambda lib: lib.tensor(range(3)),
    "deque": lambda lib: lib.tensor(collections.deque([1.5, 2.5])),
    "int_beyond_int64": lambda lib: lib.tensor([2**63]),
    "int_below_int64": lambda lib: lib.tensor([-(2**63) - 1]),
    "huge_int_scalar": lambda lib: lib.tensor(2**70),
    "huge_int_beside_float": lambda lib: lib.tensor([1.0, 2**70]),
    "big_endian_array": lambda lib: lib.tensor(np.zeros(2, dtype=">i4")),
    "big_endian_as_tensor": lambda lib: lib.as_tensor(np.zeros(2, dtype=">f4")),
    "big_endian_from_numpy": lambda lib: lib.from_numpy(np.zeros(2, dtype=">f8")),
    "reversed_array": lambda lib: lib.tensor(np.arange(4)[::-1]),
    "reversed_columns": lambda lib: lib.tensor(np.arange(6).reshape(2, 3)[:, ::-1]),
    "reversed_as_float": lambda lib: lib.as_tensor(np.arange(4)[::-1], dtype=lib.float32),
    "transposed_array": lambda lib: lib.tensor(np.arange(6).reshape(2, 3).T),
    "datetime_scalar": lambda lib: lib.tensor(np.datetime64("2020")),
    "datetime_array": lambda lib: lib.from_numpy(np.zeros(2, dtype="M8[s]")),
    "string_array": lambda lib: lib.tensor(np.array(["a"])),
    "object_array": lambda lib: lib.tensor(np.array([1, 2], dtype=object)),
    "numpy_scalar_to_from_numpy": lambda lib: lib.from_numpy(np.float64(3.0)),
}


# Python numbers given an integer dtype are range-checked (negative ints wrap into unsigned
# dtypes down to minus the maximum); arrays and tensors are cast unchecked; ints beyond int64
# are fine for floating, complex and bool dtypes.
for _value in (-1, 300, -129, 1.5, -1.5, 300.5, float("nan"), 2**70):
    for _dtype_name in ("uint8", "int8", "int32", "float16", "bool", "complex64"):
        CASES[f"{_value!r}_as_{_dtype_name}"] = lambda lib, v=_value, d=_dtype_name: lib.tensor(
            [v], dtype=getattr(lib, d)
        )
for _name, _array in {
    "negative": np.array([-1, 300]),
    "fractions": np.array([-1.5, 2.5]),
}.items():
    CASES[f"{_name}_array_as_uint8"] = lambda lib, a=_array: lib.tensor(a, dtype=lib.uint8)


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
def test_tensor_from_data_as_pytorch(name, torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _outcome(CASES[name], tocha) == _outcome(CASES[name], torch)


def test_copying_a_tensor_warns_every_time():
    message = (
        "To copy construct from a tensor, it is recommended to use "
        r"sourceTensor.detach\(\).clone\(\) or sourceTensor.detach\(\).clone\(\)."
        r"requires_grad_\(True\), rather than torch.tensor\(sourceTensor\)."
    )
    for _ in range(2):
        with pytest.warns(UserWarning, match=message) as record:
            tocha.tensor(tocha.ones(2))
        assert record[0].filename == __file__
    with pytest.warns(UserWarning, match=r"rather than tensor.new_tensor\(sourceTensor\)") as rec:
        tocha.ones(1).new_tensor(tocha.ones(2))
    assert len(rec) == 1


def test_a_list_of_arrays_warns_once_at_the_callers_line():
    from tocha._ops.creation import _warn_list_of_arrays

    _warn_list_of_arrays.cache_clear()
    with pytest.warns(UserWarning, match="Creating a tensor from a list of numpy.ndarrays") as rec:
        t = tocha.tensor([np.ones(2), np.zeros(2)])
    assert rec[0].filename == __file__ and t.dtype == tocha.float64 and t.shape == (2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tocha.tensor([np.ones(2)])


def test_a_tensor_requiring_grad_read_as_a_number_warns():
    from tocha._tensor import _warn_scalar_of_grad

    _warn_scalar_of_grad.cache_clear()
    x = tocha.ones(1, requires_grad=True)
    with pytest.warns(UserWarning, match="Converting a tensor with requires_grad=True") as rec:
        t = tocha.tensor([x, 2.0])
    assert rec[0].filename == __file__ and t.tolist() == [1.0, 2.0] and not t.requires_grad
