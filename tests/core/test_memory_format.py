"""Memory formats against PyTorch: ``channels_last`` and ``channels_last_3d`` strides from
``contiguous``, ``to``, ``clone``, ``empty`` and the ``*_like`` factories (size-1 and empty
dims included), ``is_contiguous(memory_format=...)``, the ``preserve_format`` rules on dense
and non-dense inputs, the errors for wrong ranks and arguments, and saving."""

from __future__ import annotations

import builtins
import io

import numpy as np
import pytest

import tocha


def layout(lib, t):
    """What a memory format decides about a tensor: shape, strides and contiguity in the
    channels-last format of its rank."""
    fmts = {4: lib.channels_last, 5: lib.channels_last_3d}
    rank = len(t.shape)
    is_fmt = t.is_contiguous(memory_format=fmts[rank]) if rank in fmts else None
    return tuple(t.shape), tuple(t.stride()), t.is_contiguous(), is_fmt


def outcome(lib, make):
    """`make(lib)`'s layout, or the builtin class and first line of what it raised."""
    try:
        return layout(lib, make(lib))
    except Exception as exc:  # noqa: BLE001 (any error is compared with PyTorch's)
        base = next(c.__name__ for c in type(exc).__mro__ if hasattr(builtins, c.__name__))
        return base, str(exc).split("\n")[0]


def same(torch, build):
    assert outcome(tocha, build) == outcome(torch, build)


SHAPES_4D = [(2, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 1), (1, 3, 1, 1), (2, 3, 1, 5), (2, 3, 4, 1)]
SHAPES_4D += [(1, 1, 1, 1), (1, 3, 4, 5), (2, 0, 3, 4), (0, 3, 4, 5), (2, 3, 4, 0)]
SHAPES_5D = [(2, 3, 4, 5, 6), (2, 1, 4, 5, 6), (2, 3, 1, 1, 1), (1, 3, 1, 1, 1)]


def _arange(lib, shape):
    return lib.arange(float(np.prod(shape))).reshape(shape)


@pytest.mark.parametrize("shape", SHAPES_4D, ids=str)
@pytest.mark.parametrize(
    "make",
    ["contiguous", "to", "to_dtype", "to_device_dtype", "clone", "empty", "empty_like"],
)
def test_channels_last_strides(torch, shape, make):
    builders = {
        "contiguous": lambda lib: _arange(lib, shape).contiguous(memory_format=lib.channels_last),
        "to": lambda lib: _arange(lib, shape).to(memory_format=lib.channels_last),
        "to_dtype": lambda lib: _arange(lib, shape).to(
            lib.float64, memory_format=lib.channels_last
        ),
        "to_device_dtype": lambda lib: _arange(lib, shape).to(
            "cpu", lib.float64, memory_format=lib.channels_last
        ),
        "clone": lambda lib: _arange(lib, shape).clone(memory_format=lib.channels_last),
        "empty": lambda lib: lib.empty(shape, memory_format=lib.channels_last),
        "empty_like": lambda lib: lib.empty_like(
            _arange(lib, shape), memory_format=lib.channels_last
        ),
    }
    same(torch, builders[make])


@pytest.mark.parametrize("shape", SHAPES_5D, ids=str)
@pytest.mark.parametrize("make", ["contiguous", "empty", "zeros_like"])
def test_channels_last_3d_strides(torch, shape, make):
    builders = {
        "contiguous": lambda lib: _arange(lib, shape).contiguous(
            memory_format=lib.channels_last_3d
        ),
        "empty": lambda lib: lib.empty(shape, memory_format=lib.channels_last_3d),
        "zeros_like": lambda lib: lib.zeros_like(
            _arange(lib, shape), memory_format=lib.channels_last_3d
        ),
    }
    same(torch, builders[make])


def test_conversions_keep_values(torch):
    for lib_fmt in ("channels_last", "contiguous_format"):
        ours = _arange(tocha, (2, 3, 4, 5)).to(memory_format=getattr(tocha, lib_fmt))
        theirs = _arange(torch, (2, 3, 4, 5)).to(memory_format=getattr(torch, lib_fmt))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    cl = _arange(tocha, (2, 3, 4, 5, 6)).contiguous(memory_format=tocha.channels_last_3d)
    assert cl.tolist() == _arange(torch, (2, 3, 4, 5, 6)).tolist()
    assert cl.numpy().strides == (360 * 4, 4, 90 * 4, 18 * 4, 3 * 4)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 1), (2, 0, 3, 4)], ids=str)
def test_is_contiguous_of_a_contiguous_tensor(torch, shape):
    same(torch, lambda lib: lib.zeros(shape))


def _channels_last(lib, shape=(2, 3, 4, 5)):
    return _arange(lib, shape).contiguous(memory_format=lib.channels_last)


INPUTS = {
    "channels_last": _channels_last,
    "channels_last_sliced_w": lambda lib: _channels_last(lib)[:, :, :, ::2],
    "channels_last_sliced_c": lambda lib: _channels_last(lib)[:, ::2],
    "channels_last_sliced_h": lambda lib: _channels_last(lib)[:, :, 1:3],
    "channels_last_expanded": lambda lib: _channels_last(lib, (2, 3, 1, 1)).expand(2, 3, 4, 5),
    "channels_last_transposed": lambda lib: _channels_last(lib).transpose(2, 3),
    "permuted_nhwc": lambda lib: _arange(lib, (2, 3, 4, 5)).permute(0, 2, 3, 1),
    "permuted_back": lambda lib: _arange(lib, (2, 4, 5, 3)).permute(0, 3, 1, 2),
    "expanded_channels": lambda lib: lib.zeros(1, 3, 1, 1).expand(2, 3, 4, 5),
    "overlapping": lambda lib: lib.empty_strided((2, 3, 4, 5), (0, 1, 5, 15)),
    "gaps": lambda lib: lib.empty_strided((2, 3, 4, 5), (1, 2, 6, 24)),
    "dense_odd_order": lambda lib: lib.empty_strided((2, 3, 4, 5), (60, 1, 5, 15)),
    "empty_n1hw": lambda lib: lib.empty(2, 1, 4, 5, memory_format=lib.channels_last),
    "empty_nc11": lambda lib: lib.empty(2, 3, 1, 1, memory_format=lib.channels_last),
    "channels_last_3d_sliced": lambda lib: lib.empty(
        2, 3, 4, 5, 6, memory_format=lib.channels_last_3d
    )[..., ::2],
}

PRESERVING = {
    "input": lambda lib, x: x,
    "clone": lambda lib, x: x.clone(),
    "clone_preserve": lambda lib, x: x.clone(memory_format=lib.preserve_format),
    "clone_contiguous": lambda lib, x: x.clone(memory_format=lib.contiguous_format),
    "empty_like": lambda lib, x: lib.empty_like(x),
    "zeros_like": lambda lib, x: lib.zeros_like(x),
    "ones_like": lambda lib, x: lib.ones_like(x),
    "rand_like": lambda lib, x: lib.rand_like(x),
    "randn_like": lambda lib, x: lib.randn_like(x),
    "full_like": lambda lib, x: lib.full_like(x, 2.0),
    "randint_like": lambda lib, x: lib.randint_like(x, 5),
    "zeros_like_contiguous": lambda lib, x: lib.zeros_like(x, memory_format=lib.contiguous_format),
    "to_float64": lambda lib, x: x.to(lib.float64),
    "double": lambda lib, x: x.double(),
    "contiguous": lambda lib, x: x.contiguous(),
    "contiguous_channels_last": lambda lib, x: x.contiguous(memory_format=lib.channels_last),
}


@pytest.mark.parametrize("maker", list(PRESERVING))
@pytest.mark.parametrize("name", list(INPUTS))
def test_preserve_format(torch, name, maker):
    same(torch, lambda lib: PRESERVING[maker](lib, INPUTS[name](lib)))


def test_copies_keep_values(torch):
    for name in ("channels_last_sliced_w", "channels_last_transposed", "permuted_back"):
        for maker in ("clone", "to_float64", "contiguous", "contiguous_channels_last"):
            ours = PRESERVING[maker](tocha, INPUTS[name](tocha))
            theirs = PRESERVING[maker](torch, INPUTS[name](torch))
            assert ours.tolist() == theirs.tolist()


def test_random_values_land_in_memory_order(torch):
    from tocha.compat import use_pytorch_random

    def draw(lib):
        lib.manual_seed(0)
        like = lib.rand_like(_channels_last(lib))
        lib.manual_seed(0)
        fresh = lib.rand_like(lib.zeros(2, 3, 4, 5), memory_format=lib.channels_last)
        return like.tolist(), fresh.tolist()

    previous = use_pytorch_random(True)
    try:
        ours = draw(tocha)
    finally:
        use_pytorch_random(previous)
    assert ours == draw(torch)


# PyTorch 2.13's answers (whether the call returns the tensor itself), recorded by hand: the
# oracle's handles have no identity to record
IDENTITY = {
    "contiguous_of_contiguous": (lambda lib, x, c: x.contiguous() is x, True),
    "channels_last_of_channels_last": (
        lambda lib, x, c: c.contiguous(memory_format=lib.channels_last) is c,
        True,
    ),
    "to_channels_last_of_channels_last": (
        lambda lib, x, c: c.to(memory_format=lib.channels_last) is c,
        True,
    ),
    "to_contiguous_of_contiguous": (
        lambda lib, x, c: x.to(memory_format=lib.contiguous_format) is x,
        True,
    ),
    "to_preserve": (lambda lib, x, c: c.to(memory_format=lib.preserve_format) is c, True),
    "float_channels_last_of_contiguous": (
        lambda lib, x, c: x.float(memory_format=lib.channels_last) is x,
        False,
    ),
    "float_of_channels_last": (lambda lib, x, c: c.float() is c, True),
    "cpu_channels_last": (lambda lib, x, c: c.cpu(memory_format=lib.channels_last) is c, True),
    "cpu_channels_last_of_contiguous": (
        lambda lib, x, c: x.cpu(memory_format=lib.channels_last) is x,
        False,
    ),
    "channels_last_of_n1hw": (
        lambda lib, x, c: (
            (y := lib.zeros(2, 1, 4, 5)).contiguous(memory_format=lib.channels_last) is y
        ),
        True,
    ),
}


def _identity(lib, case):
    return IDENTITY[case][0](lib, _arange(lib, (2, 3, 4, 5)), _channels_last(lib))


@pytest.mark.parametrize("case", list(IDENTITY))
def test_when_nothing_changes_the_tensor_itself_returns(case):
    assert _identity(tocha, case) is IDENTITY[case][1]


@pytest.mark.parametrize("case", list(IDENTITY))
def test_identities_are_pytorchs(case):
    torch = pytest.importorskip("torch")
    assert _identity(torch, case) is IDENTITY[case][1]


CONVERSIONS = {
    "to_copy": lambda lib, c: c.to(copy=True),
    "to_copy_contiguous": lambda lib, c: c.to(copy=True, memory_format=lib.contiguous_format),
    "to_float64_contiguous": lambda lib, c: c.to(lib.float64, memory_format=lib.contiguous_format),
    "to_other": lambda lib, c: _arange(lib, (2, 3, 4, 5)).to(c, memory_format=lib.channels_last),
    "half_channels_last": lambda lib, c: _arange(lib, (2, 3, 4, 5)).half(
        memory_format=lib.channels_last
    ),
    "bool": lambda lib, c: c.bool(),
    "type": lambda lib, c: c.type(lib.float64),
    "detach": lambda lib, c: c.detach(),
    "view": lambda lib, c: c.view(2, 3, 20),
    "reshape": lambda lib, c: c.reshape(2, 3, 20),
    "permute_nhwc": lambda lib, c: c.permute(0, 2, 3, 1),
    "new_empty": lambda lib, c: c.new_empty((2, 3, 4, 5)),
    "copy_into": lambda lib, c: c.clone().copy_(_arange(lib, (2, 3, 4, 5))),
    "empty_strided": lambda lib, c: lib.empty_strided((2, 3, 4, 5), (60, 1, 15, 3)),
    "resize_channels_last": lambda lib, c: lib.zeros(1).resize_(
        2, 3, 4, 5, memory_format=lib.channels_last
    ),
    "resize_as_": lambda lib, c: lib.zeros(1).resize_as_(c),
    "resize_as_preserve": lambda lib, c: lib.zeros(1).resize_as_(
        c, memory_format=lib.preserve_format
    ),
}


@pytest.mark.parametrize("case", list(CONVERSIONS))
def test_conversions(torch, case):
    same(torch, lambda lib: CONVERSIONS[case](lib, _channels_last(lib)))


def test_dim_order_and_numpy_strides(torch):
    assert _channels_last(tocha).dim_order() == _channels_last(torch).dim_order()
    assert _channels_last(tocha).numpy().strides == (240, 4, 60, 12)


def test_empty_strided_is_no_view(torch):
    assert tocha.empty_strided((2, 3), (1, 2))._base is None
    assert torch.empty_strided((2, 3), (1, 2))._base is None


def test_resize_keeps_memory_order(torch):
    def run(lib):
        y = _arange(lib, (2, 3, 4, 5))
        y.resize_(2, 3, 4, 5, memory_format=lib.channels_last)
        return y.stride(), y[0, :, 0, 0].tolist()

    assert run(tocha) == run(torch)


ERRORS = {
    "contiguous_3d": lambda lib: lib.zeros(2, 3, 4).contiguous(memory_format=lib.channels_last),
    "contiguous_5d": lambda lib: lib.zeros(2, 3, 4, 5, 6).contiguous(
        memory_format=lib.channels_last
    ),
    "contiguous_4d_3d_format": lambda lib: lib.zeros(2, 3, 4, 5).contiguous(
        memory_format=lib.channels_last_3d
    ),
    "to_3d": lambda lib: lib.zeros(2, 3, 4).to(memory_format=lib.channels_last),
    "clone_3d": lambda lib: lib.zeros(2, 3, 4).clone(memory_format=lib.channels_last),
    "empty_like_3d": lambda lib: lib.empty_like(
        lib.zeros(2, 3, 4), memory_format=lib.channels_last
    ),
    "zeros_like_4d_3d_format": lambda lib: lib.zeros_like(
        lib.zeros(2, 3, 4, 5), memory_format=lib.channels_last_3d
    ),
    "empty_3d": lambda lib: lib.empty(2, 3, 4, memory_format=lib.channels_last),
    "empty_preserve": lambda lib: lib.empty(2, 3, memory_format=lib.preserve_format),
    "cpu_3d": lambda lib: lib.zeros(2, 3, 4).cpu(memory_format=lib.channels_last),
    "contiguous_preserve": lambda lib: (
        lib.zeros(2, 3, 4, 5).transpose(2, 3).contiguous(memory_format=lib.preserve_format)
    ),
    "contiguous_preserve_of_contiguous": lambda lib: lib.zeros(2, 3, 4, 5).contiguous(
        memory_format=lib.preserve_format
    ),
    "contiguous_not_a_format": lambda lib: lib.zeros(2, 3).contiguous(memory_format=3),
    "contiguous_none": lambda lib: lib.zeros(2, 3).contiguous(memory_format=None),
    "contiguous_positional": lambda lib: lib.zeros(2, 3).contiguous(lib.channels_last),
    "is_contiguous_none": lambda lib: lib.zeros(2, 3).is_contiguous(memory_format=None),
    "is_contiguous_positional": lambda lib: lib.zeros(2, 3).is_contiguous(lib.channels_last),
    "clone_not_a_format": lambda lib: lib.zeros(2, 3).clone(memory_format=1),
    "empty_not_a_format": lambda lib: lib.empty(2, 3, memory_format=1),
    "float_not_a_format": lambda lib: lib.zeros(2, 3).float(memory_format=1),
    "float_positional": lambda lib: lib.zeros(2, 3).float(lib.channels_last),
    "resize_preserve": lambda lib: lib.zeros(1).resize_(
        2, 3, 4, 5, memory_format=lib.preserve_format
    ),
    "zeros_refuses_memory_format": lambda lib: lib.zeros(
        2, 3, 4, 5, memory_format=lib.channels_last
    ),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors(torch, case):
    same(torch, ERRORS[case])


@pytest.mark.parametrize("case", ["to_not_a_format", "to_positional_format"])
def test_to_refuses_what_is_not_a_memory_format(torch, case):
    calls = {
        "to_not_a_format": lambda lib: lib.zeros(2, 3).to(memory_format=1),
        "to_positional_format": lambda lib: lib.zeros(2, 3).to(lib.float64, lib.channels_last),
    }
    ours, theirs = outcome(tocha, calls[case]), outcome(torch, calls[case])
    assert ours[0] == theirs[0] == "TypeError"


@pytest.mark.parametrize(
    "fmt", ["channels_last", "channels_last_3d", "contiguous_format", "preserve_format"]
)
def test_is_contiguous_in_each_format(torch, fmt):
    def run(lib):
        f = getattr(lib, fmt)
        tensors = [
            _arange(lib, (2, 3, 4, 5)),
            _channels_last(lib),
            _arange(lib, (2, 3, 4)),
            lib.empty(2, 3, 4, 5, 6, memory_format=lib.channels_last_3d),
            _channels_last(lib)[:, :, :, ::2],
        ]
        return [t.is_contiguous(memory_format=f) for t in tensors]

    assert run(tocha) == run(torch)


def test_save_and_load_keep_strides(torch):
    def run(lib):
        x = _channels_last(lib)
        buf = io.BytesIO()
        lib.save({"x": x, "part": x[:, :2]}, buf)
        buf.seek(0)
        loaded = lib.load(buf)
        y, part = loaded["x"], loaded["part"]
        shared = part.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()
        return y.stride(), y.tolist(), part.stride(), shared

    assert run(tocha) == run(torch)


def test_memory_format_objects(torch):
    import pickle

    for name in ("channels_last", "channels_last_3d", "contiguous_format", "preserve_format"):
        ours = getattr(tocha, name)
        assert repr(ours) == repr(getattr(torch, name))
        assert pickle.loads(pickle.dumps(ours)) is ours
        assert isinstance(ours, tocha.memory_format)


def _x(lib):
    return _arange(lib, (2, 3, 4, 5))


RESULTS = {
    "add_contiguous": lambda lib: _channels_last(lib) + _x(lib),
    "contiguous_add": lambda lib: _x(lib) + _channels_last(lib),
    "mul_bias": lambda lib: _channels_last(lib) * lib.ones(1, 3, 1, 1),
    "bias_mul": lambda lib: lib.ones(1, 3, 1, 1) * _channels_last(lib),
    "add_channels_last": lambda lib: _channels_last(lib) + _channels_last(lib),
    "sub_scalar": lambda lib: _channels_last(lib) - 1.5,
    "scalar_sub": lambda lib: 1.5 - _channels_last(lib),
    "gt_contiguous": lambda lib: _channels_last(lib) > _x(lib),
    "pow_broadcast_w": lambda lib: _channels_last(lib) ** lib.ones(5),
    "exp": lambda lib: _channels_last(lib).exp(),
    "erf": lambda lib: lib.erf(_channels_last(lib) / 50),
    "erfc_float64": lambda lib: lib.erfc(_channels_last(lib).double() / 50),
    "neg": lambda lib: -_channels_last(lib),
    "where_condition_first": lambda lib: lib.where(_channels_last(lib) > 3, _x(lib), _x(lib)),
    "where_contiguous_condition": lambda lib: lib.where(_x(lib) > 3, _channels_last(lib), 0.0),
    "add_permuted_3d": lambda lib: (
        _arange(lib, (2, 3, 4, 5)).permute(0, 2, 1, 3) + _arange(lib, (2, 4, 3, 5))
    ),
    "cat_channels_last": lambda lib: lib.cat([_channels_last(lib), _channels_last(lib)], 1),
    "cat_mixed": lambda lib: lib.cat([_channels_last(lib), _x(lib)], 0),
    "sum_c": lambda lib: _channels_last(lib).sum(1),
    "sum_h": lambda lib: _channels_last(lib).sum(2),
    "sum_h_keepdim": lambda lib: _channels_last(lib).sum(2, keepdim=True),
    "mean_n": lambda lib: _channels_last(lib).mean(0),
    "amax_w": lambda lib: _channels_last(lib).amax(3),
    "max_h_values": lambda lib: _channels_last(lib).max(2).values,
    "max_h_indices": lambda lib: _channels_last(lib).max(2).indices,
    "argmax_h": lambda lib: _channels_last(lib).argmax(2),
    "std_h": lambda lib: _channels_last(lib).std(2),
    "norm_h": lambda lib: _channels_last(lib).norm(dim=2),
    "logsumexp_h": lambda lib: _channels_last(lib).logsumexp(2),
    "all_h": lambda lib: (_channels_last(lib) > 0).all(2),
    "sum_hw": lambda lib: _channels_last(lib).sum((2, 3)),
    "cumsum_h": lambda lib: _channels_last(lib).cumsum(2),
    "flip_h": lambda lib: _channels_last(lib).flip(2),
    "flip_cw": lambda lib: _channels_last(lib).flip(1, 3),
    "flip_transposed": lambda lib: _arange(lib, (3, 4, 5)).transpose(0, 2).flip(0),
}


@pytest.mark.parametrize("case", list(RESULTS))
def test_result_layout(torch, case):
    same(torch, RESULTS[case])
    np.testing.assert_allclose(
        RESULTS[case](tocha).numpy(), RESULTS[case](torch).numpy(), rtol=1e-6
    )


# PyTorch's deepcopy and pickle keep a dense tensor's strides, and from_numpy and as_tensor
# share a NumPy array's (recorded by hand: the oracle's handles cannot be pickled, and it
# records arrays row-major)
SERIALIZED = {
    "from_numpy": lambda x: tocha.from_numpy(x.numpy()),
    "as_tensor": lambda x: tocha.as_tensor(x.numpy()),
    "deepcopy": lambda x: __import__("copy").deepcopy(x),
    "pickle": lambda x: __import__("pickle").loads(__import__("pickle").dumps(x)),
    "requires_grad_deepcopy": lambda x: __import__("copy").deepcopy(x.detach().requires_grad_()),
}


DENSE = {
    "channels_last": _channels_last,
    "permuted_back": INPUTS["permuted_back"],
    "nc11": lambda lib: lib.arange(6.0).reshape(2, 3, 1, 1).to(memory_format=lib.channels_last),
}


@pytest.mark.parametrize("case", list(SERIALIZED))
@pytest.mark.parametrize("name", list(DENSE))
def test_deepcopy_and_pickle_keep_the_layout(case, name):
    x = DENSE[name](tocha)
    copied = SERIALIZED[case](x)
    assert copied.stride() == x.stride() and copied.tolist() == x.tolist()
    assert copied.requires_grad == (case == "requires_grad_deepcopy")
