"""The fixes the fidelity instruments led to, each checked against PyTorch (recorded): the
exception type and message, or the result, of calls that once disagreed."""

from __future__ import annotations

import builtins
import warnings

import numpy as np
import pytest

import tocha


def _outcome(call):
    try:
        return call()
    except Exception as exc:  # the outcome compared is the exception itself
        return exc


def _builtin_base(exc: BaseException) -> str:
    return next(c.__name__ for c in type(exc).__mro__ if hasattr(builtins, c.__name__))


def assert_same_error(want_call, got_call) -> None:
    """Both calls raise: exceptions of the same builtin class, with the same message."""
    want, got = _outcome(want_call), _outcome(got_call)
    assert isinstance(want, Exception), f"PyTorch returned {want!r}"
    assert isinstance(got, Exception), f"tocha returned {got!r} where PyTorch raised {want!r}"
    assert (_builtin_base(got), str(got)) == (_builtin_base(want), str(want))


@pytest.mark.parametrize("name", ["rfft", "rfftn", "rfft2", "ihfft", "ihfftn"])
def test_real_input_transforms_refuse_complex(torch, name):
    z = np.zeros((2, 4), np.complex64)
    assert_same_error(
        lambda: getattr(torch.fft, name)(torch.from_numpy(z)),
        lambda: getattr(tocha.fft, name)(tocha.from_numpy(z)),
    )


def assert_same_error_class(want_call, got_call) -> None:
    """Both calls raise exceptions of the same builtin class (PyTorch's message comes from
    its argument parser, which tocha has no copy of)."""
    want, got = _outcome(want_call), _outcome(got_call)
    assert isinstance(want, Exception), f"PyTorch returned {want!r}"
    assert isinstance(got, Exception), f"tocha returned {got!r} where PyTorch raised {want!r}"
    assert _builtin_base(got) == _builtin_base(want), (got, want)


def _pair(lib, shape, dtype="float32", value=1.0):
    return lib.full(shape, value, dtype=getattr(lib, dtype))


@pytest.mark.parametrize(
    "method, target, operand",
    [
        ("div_", (7,), (3, 4)),
        ("add_", (3,), (3, 3)),
        ("ldexp_", (2, 1, 2), (3, 4)),
        ("logical_xor_", (0,), (4,)),
    ],
    ids=["div-mismatch", "add-wider", "ldexp-mismatch", "xor-empty"],
)
def test_in_place_operand_of_the_wrong_shape(torch, method, target, operand):
    assert_same_error(
        lambda: getattr(_pair(torch, target), method)(_pair(torch, operand)),
        lambda: getattr(_pair(tocha, target), method)(_pair(tocha, operand)),
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.fill_("abc", 1.5),
        lambda lib: lib.clamp_max("abc", 0.5),
        lambda lib: lib.lerp(None, lib.ones(2), 0.5),
        lambda lib: lib.nn.functional.triplet_margin_loss("abc", lib.ones(2, 3), lib.ones(2, 3)),
        lambda lib: lib.nn.functional.ctc_loss(lib.ones(3, 4), object(), (1,), (1,)),
        lambda lib: lib.nn.functional.cross_entropy(lib.ones(3, 4), None),
        lambda lib: lib.margin_ranking_loss(lib.ones(3), [1.0], lib.ones(3)),
    ],
    ids=["fill_", "clamp_max", "lerp", "triplet", "ctc", "cross_entropy", "margin_ranking"],
)
def test_a_non_tensor_argument_is_a_type_error(torch, call):
    assert_same_error_class(lambda: call(torch), lambda: call(tocha))


@pytest.mark.parametrize(
    "bins, weight",
    [((3, 4), None), ((1,), None), (3, (7,))],
    ids=["2-d-edges", "one-edge", "weight-shape"],
)
def test_histogram_arguments(torch, bins, weight):
    def call(lib):
        x = lib.from_numpy(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4))
        edges = bins if isinstance(bins, int) else _pair(lib, bins)
        w = None if weight is None else _pair(lib, weight)
        return lib.histogram(x, edges, weight=w)

    assert_same_error(lambda: call(torch), lambda: call(tocha))


def test_polynomial_degrees_that_are_no_int64_read_as_negative(torch):
    n = np.array([np.inf, np.nan, -np.inf, 1e30, 3.5, -2.0], np.float32)
    for name in ("chebyshev_polynomial_t", "hermite_polynomial_h", "legendre_polynomial_p"):
        x = np.full(6, 0.5, np.float32)
        want = getattr(torch.special, name)(torch.from_numpy(x), torch.from_numpy(n))
        got = getattr(tocha.special, name)(tocha.from_numpy(x), tocha.from_numpy(n))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex64"])
def test_polynomials_refuse_half_and_complex(torch, dtype):
    assert_same_error(
        lambda: torch.special.chebyshev_polynomial_u(_pair(torch, (3,), dtype), 2),
        lambda: tocha.special.chebyshev_polynomial_u(_pair(tocha, (3,), dtype), 2),
    )


@pytest.mark.parametrize("name, dim", [("fft", 0), ("rfftn", None), ("hfftn", (0, 1))])
def test_transform_over_an_empty_dim(torch, name, dim):
    assert_same_error(
        lambda: getattr(torch.fft, name)(torch.ones(0, 4), dim=dim),
        lambda: getattr(tocha.fft, name)(tocha.ones(0, 4), dim=dim),
    )


@pytest.mark.parametrize("decimals", [2**40, -10001, 400])
def test_round_to_more_decimals_than_a_float_holds(torch, decimals):
    x = np.array([1.5, 0.0, -2.25], np.float64)
    want = torch.round(torch.from_numpy(x), decimals=decimals)
    got = tocha.round(tocha.from_numpy(x), decimals=decimals)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_round_decimals_beyond_int64(torch):
    assert_same_error(
        lambda: torch.round(torch.ones(2), decimals=2**63),
        lambda: tocha.round(tocha.ones(2), decimals=2**63),
    )


# A non-tensor where each family takes a Tensor: PyTorch's TypeError, never an AttributeError.
NOT_A_TENSOR = {
    "squeeze": lambda lib, bad: lib.squeeze(bad),
    "transpose": lambda lib, bad: lib.transpose(bad, 0, 1),
    "reshape": lambda lib, bad: lib.reshape(bad, (-1,)),
    "narrow": lambda lib, bad: lib.narrow(bad, 0, 0, 1),
    "movedim": lambda lib, bad: lib.movedim(bad, 0, 1),
    "chunk": lambda lib, bad: lib.chunk(bad, 2),
    "gather": lambda lib, bad: lib.gather(bad, 0, lib.zeros(2, dtype=lib.int64)),
    "index_select": lambda lib, bad: lib.index_select(lib.ones(3), 0, bad),
    "masked_select": lambda lib, bad: lib.masked_select(lib.ones(3), bad),
    "trapezoid": lambda lib, bad: lib.trapezoid(bad),
    "diff-prepend": lambda lib, bad: lib.diff(lib.ones(3), prepend=bad),
    "cov-fweights": lambda lib, bad: lib.cov(lib.ones(2, 3), fweights=bad),
    "cdist": lambda lib, bad: lib.cdist(bad, lib.ones(2, 3)),
    "addcdiv": lambda lib, bad: lib.addcdiv(lib.ones(3), bad, lib.ones(3)),
    "view_as_real": lambda lib, bad: lib.view_as_real(bad),
    "numel": lambda lib, bad: lib.numel(bad),
    "nuclear_norm": lambda lib, bad: lib.nuclear_norm(bad),
    "vecdot": lambda lib, bad: lib.linalg.vecdot(lib.ones(3), bad),
    "fftshift": lambda lib, bad: lib.fft.fftshift(bad),
    "pixel_shuffle": lambda lib, bad: lib.nn.functional.pixel_shuffle(bad, 1),
    "prelu": lambda lib, bad: lib.nn.functional.prelu(lib.ones(2, 3), bad),
    "layer_norm": lambda lib, bad: lib.nn.functional.layer_norm(bad, (3,)),
    "sdpa": lambda lib, bad: lib.nn.functional.scaled_dot_product_attention(
        bad, lib.ones(2, 3), lib.ones(2, 3)
    ),
    "adaptive_avg_pool1d": lambda lib, bad: lib.nn.functional.adaptive_avg_pool1d(bad, 1),
    "embedding": lambda lib, bad: lib.nn.functional.embedding(bad, lib.ones(4, 2)),
}


@pytest.mark.parametrize("bad", ["abc", 1.5], ids=["str", "float"])
@pytest.mark.parametrize("name", list(NOT_A_TENSOR))
def test_a_family_refuses_a_non_tensor(torch, name, bad):
    call = NOT_A_TENSOR[name]
    assert_same_error_class(lambda: call(torch, bad), lambda: call(tocha, bad))


@pytest.mark.parametrize("name", ["block_diag", "cartesian_prod", "broadcast_tensors"])
def test_a_list_is_no_tensor(torch, name):
    assert_same_error(
        lambda: getattr(torch, name)([torch.ones(2), torch.ones(2)]),
        lambda: getattr(tocha, name)([tocha.ones(2), tocha.ones(2)]),
    )


@pytest.mark.parametrize(
    "name, args",
    [
        ("fftfreq", (2.5,)),
        ("fftfreq", (True,)),
        ("fftfreq", (-3,)),
        ("fftfreq", (4, "abc")),
        ("rfftfreq", (2**63,)),
    ],
    ids=["float-n", "bool-n", "negative-n", "str-d", "huge-n"],
)
def test_frequencies_check_their_arguments(torch, name, args):
    assert_same_error(
        lambda: getattr(torch.fft, name)(*args), lambda: getattr(tocha.fft, name)(*args)
    )


@pytest.mark.parametrize(
    "name, args", [("fftfreq", (0,)), ("rfftfreq", (0,)), ("rfftfreq", (-1,)), ("fftfreq", (4, 0))]
)
def test_frequencies_of_no_points_or_no_spacing(torch, name, args):
    want = getattr(torch.fft, name)(*args)
    got = getattr(tocha.fft, name)(*args)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


ACTIVATIONS = {
    "elu": lambda F, x: F.elu(x),
    "selu": lambda F, x: F.selu(x),
    "celu_": lambda F, x: F.celu_(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x),
    "rrelu": lambda F, x: F.rrelu(x, training=False),
    "threshold": lambda F, x: F.threshold(x, 0.5, 1.0),
    "hardshrink": lambda F, x: F.hardshrink(x),
    "softshrink": lambda F, x: F.softshrink(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "gelu": lambda F, x: F.gelu(x),
    "silu": lambda F, x: F.silu(x),
    "mish": lambda F, x: F.mish(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "softplus": lambda F, x: F.softplus(x),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "relu6": lambda F, x: F.relu6(x),
}


@pytest.mark.parametrize("dtype", ["int64", "bool", "complex64"])
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activations_refuse_the_dtypes_pytorch_has_no_kernel_for(torch, name, dtype):
    def call(lib):
        return ACTIVATIONS[name](lib.nn.functional, _pair(lib, (4,), dtype))

    want, got = _outcome(lambda: call(torch)), _outcome(lambda: call(tocha))
    if isinstance(want, Exception):
        assert isinstance(got, Exception), f"tocha returned {got!r} where PyTorch raised {want!r}"
        assert (_builtin_base(got), str(got)) == (_builtin_base(want), str(want))
    else:
        assert not isinstance(got, Exception), got
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]


@pytest.mark.parametrize(
    "name, shape, dim, dtype",
    [
        ("log_softmax", (2, 3, 4), 1, "int32"),
        ("softmax", (2, 3), -1, "int64"),
        ("log_softmax", (0, 3), 1, "int32"),
    ],
    ids=["inner-dim", "last-dim", "empty"],
)
def test_softmax_into_an_integer_dtype(torch, name, shape, dim, dtype):
    def call(lib):
        return getattr(lib, name)(lib.ones(shape), dim, dtype=getattr(lib, dtype))

    want, got = _outcome(lambda: call(torch)), _outcome(lambda: call(tocha))
    if isinstance(want, Exception):
        assert (_builtin_base(got), str(got)) == (_builtin_base(want), str(want))
    else:
        assert tuple(got.shape) == tuple(want.shape)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.nn.functional.max_pool2d(_pair(lib, (1, 2, 2, 2), "bool"), 1),
        lambda lib: lib.nn.functional.max_pool1d(_pair(lib, (2, 2), "complex64"), 1),
        lambda lib: lib.nn.functional.scaled_dot_product_attention(
            lib.ones(3, 4), lib.ones(3, 4), lib.ones(3, 4), attn_mask=lib.ones(7)
        ),
        lambda lib: lib.ones(3).fill_(None),
        lambda lib: lib.full_like(lib.ones(3), None),
        lambda lib: lib.fill(lib.ones(3), "abc"),
        lambda lib: lib.chain_matmul([lib.ones(2, 2)]),
        lambda lib: lib.unfold_copy("abc", 0, 1, 1),
        lambda lib: lib.histogram(lib.tensor([0.0, float("inf"), 1.0])),
    ],
    ids=[
        "max_pool2d-bool",
        "max_pool1d-complex",
        "sdpa-mask-shape",
        "fill_-none",
        "full_like-none",
        "fill-str",
        "chain_matmul-list",
        "unfold_copy-str",
        "histogram-inf",
    ],
)
def test_more_refusals_of_pytorchs_class(torch, call):
    assert_same_error_class(lambda: call(torch), lambda: call(tocha))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, out: lib.nuclear_norm(lib.ones(3, 4), out=out),
        lambda lib, out: lib.frobenius_norm(lib.ones(3, 4), (0, 1), out=out),
        lambda lib, out: lib.range(0, 5, out=out),
    ],
    ids=["nuclear_norm", "frobenius_norm", "range"],
)
def test_out_is_written_not_ignored(torch, call):
    want_out, got_out = torch.empty(0), tocha.empty(0)
    want, got = call(torch, want_out), call(tocha, got_out)
    assert (want is want_out) and (got is got_out)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "shape, kwargs", [((2, 0), {}), ((2, 0), {"dim": 0}), ((3,), {"n": 0})], ids=str
)
def test_diff_returns_its_input_only_over_an_empty_dim(torch, shape, kwargs):
    want_in, got_in = torch.ones(*shape), tocha.ones(*shape)
    want, got = torch.diff(want_in, **kwargs), tocha.diff(got_in, **kwargs)
    assert (got is got_in) == (want is want_in)
    assert tuple(got.shape) == tuple(want.shape)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.movedim(lib.tensor(2.0), 0, -1),
        lambda lib: lib.moveaxis(lib.tensor(2.0), (0,), (0,)),
        lambda lib: lib.cumulative_trapezoid(lib.ones(0)),
        lambda lib: lib.cumulative_trapezoid(lib.ones(2, 0)),
        lambda lib: lib.softmax(lib.tensor(float("nan")), 0),
        lambda lib: lib.log_softmax(lib.tensor(3.0), -1),
        lambda lib: lib.nn.functional.softmin(lib.tensor(1.0), 0),
        lambda lib: lib.adjoint(lib.tensor(2.0)),
    ],
    ids=[
        "movedim-0d",
        "moveaxis-0d",
        "cumulative_trapezoid-empty",
        "cumulative_trapezoid-empty-dim",
        "softmax-0d",
        "log_softmax-0d",
        "softmin-0d",
        "adjoint-0d",
    ],
)
def test_zero_dim_and_empty_inputs_pytorch_takes(torch, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, got = call(torch), call(tocha)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


SPECIAL = {
    "zeta": lambda lib, x: lib.special.zeta(x, x),
    "bessel_j0": lambda lib, x: lib.special.bessel_j0(x),
    "airy_ai": lambda lib, x: lib.special.airy_ai(x),
    "modified_bessel_i0": lambda lib, x: lib.special.modified_bessel_i0(x),
    "igamma": lambda lib, x: lib.igamma(x, x),
    "igammac": lambda lib, x: lib.special.gammaincc(x, x),
    "logit": lambda lib, x: lib.logit(x),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex64", "int64", "bool"])
@pytest.mark.parametrize("name", list(SPECIAL))
def test_special_functions_refuse_the_dtypes_pytorch_refuses(torch, name, dtype):
    def call(lib):
        return SPECIAL[name](lib, _pair(lib, (3,), dtype))

    want, got = _outcome(lambda: call(torch)), _outcome(lambda: call(tocha))
    if isinstance(want, Exception):
        assert isinstance(got, Exception), f"tocha returned {got!r} where PyTorch raised {want!r}"
        assert (_builtin_base(got), str(got)) == (_builtin_base(want), str(want))
    else:
        assert not isinstance(got, Exception), got
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.isin(_pair(lib, (3,), "complex64"), _pair(lib, (3,), "complex64")),
        lambda lib: lib.isin(_pair(lib, (3,), "bool"), 1),
        lambda lib: lib.isin(lib.ones(3), _pair(lib, (2,), "complex64")),
        lambda lib: lib.renorm(lib.ones(3), 2, 0, 1.0),
        lambda lib: lib.nn.functional.kl_div(
            _pair(lib, (3,), "int64"), _pair(lib, (3,), "int64"), reduction="sum"
        ),
        lambda lib: lib.softmax(_pair(lib, (3,), "complex64"), 0),
        lambda lib: lib.log_softmax(_pair(lib, (2, 3), "complex64"), 0),
    ],
    ids=[
        "isin-complex",
        "isin-bool",
        "isin-complex-test",
        "renorm-1d",
        "kl_div-int",
        "softmax-complex",
        "log_softmax-complex",
    ],
)
def test_refusals_with_pytorchs_message(torch, call):
    assert_same_error(lambda: call(torch), lambda: call(tocha))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.masked_scatter(lib.ones(7), lib.ones(3, 4) > 0, lib.ones(4)),
        lambda lib: lib.meshgrid("abc", indexing="ij"),
        lambda lib: lib.conv_transpose1d(lib.ones(3, 4), lib.ones(3, 4), bias="abc"),
        lambda lib: lib.group_norm(lib.ones(3, 4), 1, weight="abc"),
    ],
    ids=["masked_scatter-shape", "meshgrid-str", "conv-bias-str", "group_norm-weight-str"],
)
def test_optional_and_broadcast_arguments(torch, call):
    assert_same_error_class(lambda: call(torch), lambda: call(tocha))


@pytest.mark.parametrize("name", ["rfftn", "irfftn", "hfftn", "ihfftn"])
def test_half_spectrum_transforms_of_a_0_dim_tensor(torch, name):
    assert_same_error(
        lambda: getattr(torch.fft, name)(torch.tensor(2.0)),
        lambda: getattr(tocha.fft, name)(tocha.tensor(2.0)),
    )


@pytest.mark.parametrize("dtype", ["int32", "bool"])
def test_attention_of_integer_inputs(torch, dtype):
    def call(lib):
        q = _pair(lib, (2, 3, 4), dtype)
        return lib.nn.functional.scaled_dot_product_attention(q, q, q)

    assert_same_error(lambda: call(torch), lambda: call(tocha))
