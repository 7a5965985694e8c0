"""Errors and reprs that tutorials and scripts meet every day, as PyTorch words them:
integer tensors asked to require grad, finfo/iinfo of the wrong kind of dtype, seeds given
as strings, randint's size, the legacy constructor's data, set_grad_enabled's repr."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha


def _outcome(fn, lib):
    try:
        result = fn(lib)
    except Exception as exc:  # noqa: BLE001 - the exception is the answer
        return ("raise", type(exc).__name__, str(exc).replace("torch.", "tocha."))
    return ("value", repr(result).replace("torch.", "tocha."))


def _assign_array(lib):
    y = lib.zeros(3, 4)
    y[..., 0] = np.array([1.0, 2.0, 3.0])


CASES = {
    "assign_an_array": _assign_array,
    "zeros_int_requires_grad": lambda lib: lib.zeros(2, dtype=lib.int32, requires_grad=True),
    "full_int_requires_grad": lambda lib: lib.full((2,), 1, requires_grad=True),
    "arange_requires_grad": lambda lib: lib.arange(3, requires_grad=True),
    "tensor_int_requires_grad": lambda lib: lib.tensor([1, 2], requires_grad=True),
    "empty_bool_requires_grad": lambda lib: lib.empty(2, dtype=lib.bool, requires_grad=True),
    "zeros_like_requires_grad": lambda lib: lib.zeros_like(
        lib.ones(2, dtype=lib.long), requires_grad=True
    ),
    "requires_grad_of_long": lambda lib: lib.ones(2, dtype=lib.long).requires_grad_(),
    "requires_grad_of_complex": lambda lib: lib.ones(1, dtype=lib.complex64).requires_grad_(),
    "finfo_of_int": lambda lib: lib.finfo(lib.int32),
    "iinfo_of_float": lambda lib: lib.iinfo(lib.float32),
    "iinfo_of_bool": lambda lib: lib.iinfo(lib.bool),
    "manual_seed_word": lambda lib: lib.manual_seed("a"),
    "manual_seed_digits": lambda lib: lib.manual_seed("12").initial_seed(),
    "manual_seed_float": lambda lib: lib.manual_seed(1.5).initial_seed(),
    "manual_seed_none": lambda lib: lib.manual_seed(None),
    "generator_seed_string": lambda lib: lib.Generator().manual_seed("12"),
    "randint_size_int": lambda lib: lib.randint(0, 10),
    "randint_size_list": lambda lib: lib.randint(0, 10, [3]).shape,
    "legacy_float": lambda lib: lib.Tensor(3.5),
    "legacy_bool": lambda lib: lib.Tensor(True),
    "legacy_none": lambda lib: lib.Tensor(None),
    "legacy_string": lambda lib: lib.Tensor("a"),
    "set_grad_enabled_repr": lambda lib: repr(lib.set_grad_enabled(True)),
    "unknown_print_profile": lambda lib: (
        lib.set_printoptions(profile="foo", precision=2),
        str(lib.tensor([1 / 3])),
        lib.set_printoptions(profile="default"),
    ),
    "uint64_beyond_int64": lambda lib: lib.tensor([2**63], dtype=lib.uint64),
    "expand_to_fewer_dims": lambda lib: lib.ones(2, 3).expand(3),
    "clamp_int_with_float_max": lambda lib: lib.ones(3, dtype=lib.int32).clamp_(max=0.5),
    "clamp_long_with_float_bounds": lambda lib: lib.ones(3, dtype=lib.int64).clamp_(0.5, 2),
    "clamp_long_with_tensor_bound": lambda lib: lib.ones(3, dtype=lib.int64).clamp_(
        min=lib.tensor(0.5)
    ),
    "clamp_float_with_complex_max": lambda lib: lib.ones(3).clamp_(max=1j),
}


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
def test_message_as_pytorch(name, torch):
    assert _outcome(CASES[name], tocha) == _outcome(CASES[name], torch)


# Indexing's deprecations and refusals, as PyTorch's (warnings recorded by the oracle).
INDEXING = {
    "list_of_lists": lambda lib: lib.arange(12).reshape(3, 4)[[[0, 1], [1, 2]]],
    "list_with_slice": lambda lib: lib.arange(12).reshape(3, 4)[[slice(0, 2), 1]],
    "uint8_mask": lambda lib: lib.arange(3)[lib.tensor([1, 0, 1], dtype=lib.uint8)],
    "int8_index": lambda lib: lib.arange(3)[lib.tensor([0, 2], dtype=lib.int8)],
    "int16_index_second_dim": lambda lib: lib.ones(2, 3)[:, lib.tensor([0], dtype=lib.int16)],
    "int32_index": lambda lib: lib.arange(3)[lib.tensor([0, 2], dtype=lib.int32)],
    "zero_dim_array": lambda lib: lib.arange(12).reshape(3, 4)[np.array(1)],
}


def _warned(fn, lib):
    """`_outcome` and the messages of the warnings given on the way (PyTorch's without the
    C++ location it appends)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = _outcome(fn, lib)
    messages = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    return outcome, messages


@pytest.mark.parametrize("name", list(INDEXING), ids=list(INDEXING))
def test_indexing_as_pytorch(name, torch):
    assert _warned(INDEXING[name], tocha) == _warned(INDEXING[name], torch)


def _under_default(name, fn):
    """`fn(lib)` with the default dtype `name`, restored after."""

    def run(lib):
        lib.set_default_dtype(getattr(lib, name))
        try:
            return fn(lib)
        finally:
            lib.set_default_dtype(lib.float32)

    return run


DEFAULT_DTYPE = {
    "bfloat16_int_times_float": _under_default("bfloat16", lambda lib: lib.tensor([1, 2]) * 0.5),
    "bfloat16_float_plus_int": _under_default("bfloat16", lambda lib: 0.5 + lib.tensor([1, 2])),
    "float16_int_times_float": _under_default("float16", lambda lib: lib.tensor([1, 2]) * 0.5),
    "float64_int_over_int": _under_default(
        "float64", lambda lib: lib.tensor([1, 2]) / lib.tensor([2, 2])
    ),
    "set_default_tensor_type": lambda lib: (
        lib.set_default_tensor_type(lib.DoubleTensor),
        lib.tensor([1.5]).dtype,
        lib.set_default_dtype(lib.float32),
    ),
    "set_default_dtype_string": lambda lib: lib.set_default_dtype("float64"),
    "set_default_dtype_complex": lambda lib: lib.set_default_dtype(lib.complex64),
}


@pytest.mark.parametrize("name", list(DEFAULT_DTYPE), ids=list(DEFAULT_DTYPE))
def test_default_dtype_as_pytorch(name, torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _outcome(DEFAULT_DTYPE[name], tocha) == _outcome(DEFAULT_DTYPE[name], torch)
