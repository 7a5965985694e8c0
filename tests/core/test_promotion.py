"""Type promotion and broadcasting against PyTorch: result_type, promote_types and can_cast
for every pair of dtypes, scalars and 0-dim tensors; hypothesis properties for broadcasting
and for the dtype of ``a + b``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tocha
from tests.core.helpers import assert_tensor
from tests.core.opdb import ALL_DTYPES, make_array, to_lib

SCALARS = [True, 3, -2, 2.5, 1 + 2j]


def _dtypes(lib):
    return [getattr(lib, name) for name in ALL_DTYPES]


def _name(d) -> str:
    """A dtype's name; torch's complex32 (float16 with a complex scalar) reads complex64, the
    narrowest complex dtype tocha has (NumPy has no complex32)."""
    name = str(d).split(".")[-1]
    return "complex64" if name == "complex32" else name


def test_promote_types_every_pair(torch):
    for a, ta in zip(_dtypes(tocha), _dtypes(torch)):
        for b, tb in zip(_dtypes(tocha), _dtypes(torch)):
            assert _name(tocha.promote_types(a, b)) == _name(torch.promote_types(ta, tb)), (a, b)


def test_can_cast_every_pair(torch):
    for a, ta in zip(_dtypes(tocha), _dtypes(torch)):
        for b, tb in zip(_dtypes(tocha), _dtypes(torch)):
            assert tocha.can_cast(a, b) == torch.can_cast(ta, tb), (a, b)


@pytest.mark.parametrize("shape_a, shape_b", [((3,), (3,)), ((), (3,)), ((3,), ()), ((), ())])
def test_result_type_tensor_pairs(shape_a, shape_b, torch):
    for name_a in ALL_DTYPES:
        for name_b in ALL_DTYPES:
            a = tocha.zeros(shape_a, dtype=getattr(tocha, name_a))
            b = tocha.zeros(shape_b, dtype=getattr(tocha, name_b))
            ta = torch.zeros(shape_a, dtype=getattr(torch, name_a))
            tb = torch.zeros(shape_b, dtype=getattr(torch, name_b))
            assert _name(tocha.result_type(a, b)) == _name(torch.result_type(ta, tb)), (
                name_a,
                shape_a,
                name_b,
                shape_b,
            )


@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("shape", [(3,), ()])
def test_result_type_with_scalars(scalar, shape, torch):
    for name in ALL_DTYPES:
        t = tocha.zeros(shape, dtype=getattr(tocha, name))
        tt = torch.zeros(shape, dtype=getattr(torch, name))
        assert _name(tocha.result_type(t, scalar)) == _name(torch.result_type(tt, scalar)), name
        assert _name(tocha.result_type(scalar, t)) == _name(torch.result_type(scalar, tt)), name


@pytest.mark.parametrize("default", ["float64", "float16", "bfloat16"])
def test_result_type_follows_default_dtype(default, torch):
    previous = tocha.get_default_dtype()
    torch_previous = torch.get_default_dtype()
    try:
        tocha.set_default_dtype(getattr(tocha, default))
        torch.set_default_dtype(getattr(torch, default))
        for scalar in SCALARS:
            got = tocha.result_type(tocha.zeros(2, dtype=tocha.int32), scalar)
            want = torch.result_type(torch.zeros(2, dtype=torch.int32), scalar)
            assert _name(got) == _name(want), scalar
    finally:
        tocha.set_default_dtype(previous)
        torch.set_default_dtype(torch_previous)


# -- properties -------------------------------------------------------------------------------
@st.composite
def broadcastable_shapes(draw):
    """Two shapes that broadcast: each dim of the shorter is 1 or equal to the longer's."""
    shape = draw(st.lists(st.integers(0, 4), max_size=4))
    other = []
    for size in shape[len(shape) - draw(st.integers(0, len(shape))) :]:
        other.append(draw(st.sampled_from([1, size])))
    pair = (tuple(shape), tuple(other))
    return pair if draw(st.booleans()) else pair[::-1]


@settings(max_examples=150, deadline=None)
@given(broadcastable_shapes(), st.integers(0, 2**16))
def test_broadcasting_matches_numpy(shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = (make_array(rng, s, "float64") for s in shapes)
    result = tocha.from_numpy(a) + tocha.from_numpy(b)
    assert tuple(result.shape) == np.broadcast_shapes(*shapes)
    assert_tensor(result, a + b)


def _broadcastable_pair(rng) -> tuple:
    """Two shapes that broadcast, drawn from `rng` (sizes 0 to 4, up to 4 dims)."""
    shape = tuple(int(n) for n in rng.integers(0, 5, size=rng.integers(0, 5)))
    kept = shape[len(shape) - int(rng.integers(0, len(shape) + 1)) :]
    other = tuple(int(rng.choice([1, size])) for size in kept)
    return (shape, other) if rng.random() < 0.5 else (other, shape)


@pytest.mark.parametrize("seed", range(40))
def test_broadcasting_matches_torch(seed, torch):
    rng = np.random.default_rng(seed)
    shapes = _broadcastable_pair(rng)
    a, b = (make_array(rng, s, "float64") for s in shapes)
    assert_tensor(
        tocha.from_numpy(a) + tocha.from_numpy(b), torch.from_numpy(a) + torch.from_numpy(b)
    )


@pytest.mark.parametrize("seed", range(30))
def test_non_broadcastable_shapes_raise_torchs_error(seed, torch):
    rng = np.random.default_rng(seed)
    shape = [int(n) for n in rng.integers(1, 6, size=rng.integers(1, 5))]
    dim = int(rng.integers(0, len(shape)))
    other = list(shape)
    other[dim] = int(rng.choice([n for n in range(2, 7) if n != shape[dim]]))
    if shape[dim] == 1:
        shape[dim] = 7 if other[dim] != 7 else 8
    with pytest.raises(RuntimeError) as expected:
        torch.zeros(shape) + torch.zeros(other)
    with pytest.raises(RuntimeError) as actual:
        tocha.zeros(shape) + tocha.zeros(other)
    assert str(actual.value) == str(expected.value)


OPERAND_KINDS = ["tensor", "zero_dim", "scalar"]


@pytest.mark.parametrize("name_a", ALL_DTYPES)
def test_addition_result_dtype_matches_torch(name_a, torch):
    """``a + b`` for every dtype of b, every kind of operand (tensor, 0-dim, Python scalar)."""

    def operand(lib, name, kind, scalar):
        if kind == "scalar":
            return scalar
        return to_lib(
            lib, make_array(np.random.default_rng(0), (2,) if kind == "tensor" else (), name), name
        )

    for name_b in ALL_DTYPES:
        for kind_a in OPERAND_KINDS:
            for kind_b in OPERAND_KINDS[:2]:
                for scalar in SCALARS if kind_a == "scalar" else SCALARS[:1]:
                    results = []
                    for lib in (tocha, torch):
                        try:
                            a = operand(lib, name_a, kind_a, scalar)
                            results.append(a + operand(lib, name_b, kind_b, scalar))
                        except Exception as exc:  # the oracle decides whether raising is right
                            results.append(exc)
                    got, want = results
                    case = (name_a, name_b, kind_a, kind_b, scalar)
                    if isinstance(want, Exception):
                        assert isinstance(got, type(want)), (case, got, want)
                    else:
                        assert not isinstance(got, Exception), (case, got)
                        assert _name(got.dtype) == _name(want.dtype), case
