"""The PyTorch names that libraries (transformers, safetensors) use beyond everyday programs:
float8 and wide unsigned dtypes, ``view(dtype=)``, a device as a context manager, bare
``@no_grad``, custom operators, ``tocha.overrides``, ``tocha._C``'s probes, ``tocha.version``
and the CUDA names that exist without CUDA."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

STORAGE_ONLY = ["float8_e4m3fn", "float8_e5m2", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("name", STORAGE_ONLY, ids=STORAGE_ONLY)
def test_storage_only_dtypes_convert_as_torch(torch, name):
    values = [0.0, 1.5, 3.25, 200.0]
    got = tocha.tensor(values).to(getattr(tocha, name))
    want = torch.tensor(values).to(getattr(torch, name))
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    assert got.element_size() == want.element_size()
    np.testing.assert_array_equal(got.to(tocha.float32).numpy(), want.to(torch.float32).numpy())
    if name.startswith("float8"):
        info, want_info = tocha.finfo(getattr(tocha, name)), torch.finfo(getattr(torch, name))
        assert (info.max, info.eps, info.bits) == (want_info.max, want_info.eps, want_info.bits)


def test_view_takes_dtype_and_size_keywords(torch):
    got = tocha.arange(4, dtype=tocha.float32).view(dtype=tocha.uint8)
    want = torch.arange(4, dtype=torch.float32).view(dtype=torch.uint8)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert tocha.arange(6).view(size=(2, 3)).shape == (2, 3)
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        tocha.arange(4).view(4, dtype=tocha.int64)


def test_device_as_a_context_manager_sets_the_default_device():
    before = tocha.get_default_device()
    with tocha.device("cpu") as d:
        assert d is tocha.device("cpu") and tocha.zeros(1).device == d
    assert tocha.get_default_device() is before
    with tocha.device("meta"):
        assert tocha.zeros(1).is_meta
    assert tocha.get_default_device() is before
    with pytest.raises(RuntimeError, match="no backend is installed for device type 'xla'"):
        with tocha.device("xla"):
            pass
    assert tocha.get_default_device() is before


def test_grad_modes_decorate_without_parentheses():
    pytest.importorskip("tocha.autograd")
    x = tocha.ones(2, requires_grad=True)

    @tocha.no_grad
    def off(t):
        return t * 2

    @tocha.inference_mode
    def inference(t):
        return t * 2

    @tocha.enable_grad
    def on(t):
        return t * 2

    assert not off(x).requires_grad and not inference(x).requires_grad
    with tocha.no_grad():
        assert on(x).requires_grad
    assert off.__name__ == "off" and tocha.is_grad_enabled()


class Overriding:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("handled", func.__name__, len(args))


def test_overrides_tell_and_hand_over(torch):
    t, o = tocha.ones(1), Overriding()
    assert tocha.overrides.has_torch_function((t, 1)) == torch.overrides.has_torch_function(
        (torch.ones(1), 1)
    )
    assert not tocha.overrides.has_torch_function_unary(t)
    assert tocha.overrides.has_torch_function_variadic(t, o)
    assert tocha.overrides.is_tensor_like(t) and tocha.overrides.is_tensor_like(o)
    assert not tocha.overrides.is_tensor_like([1])

    def api(a, b):
        return a

    assert tocha.overrides.handle_torch_function(api, (o,), o, t) == ("handled", "api", 2)
    with pytest.raises(AttributeError, match="has_no_such_thing"):
        tocha.overrides.has_no_such_thing  # noqa: B018


def test_c_probes_and_version_module():
    assert tocha._C._get_tracing_state() is None
    assert tocha._C._get_accelerator().type in ("cpu", "cuda")
    tocha._C._log_api_usage_once("python.tests")
    with pytest.raises(AttributeError, match=r"torch\._C\._no_such_probe is not in tocha yet"):
        tocha._C._no_such_probe  # noqa: B018
    assert tocha.version.__version__ == "2.13.0" and tocha.version.cuda is None
    assert tocha.version.hip is None and tocha.__version__ != tocha.version.__version__


def test_cuda_names_that_exist_without_cuda():
    assert not tocha.cuda.is_current_stream_capturing()
    assert tocha.cuda.StreamContext is tocha.cuda.stream
    if not tocha.cuda.is_available():
        with pytest.raises(RuntimeError):
            tocha.cuda.CUDAGraph()
        with pytest.raises(RuntimeError):
            tocha.cuda.graph(None)


PAIRS = [
    ("float8_e4m3fn", "float32"),
    ("float8_e5m2", "float8_e4m3fn"),
    ("float8_e4m3fn", "float8_e4m3fn"),
    ("uint16", "int64"),
    ("uint32", "float32"),
    ("float64", "uint64"),
    ("uint16", "uint16"),
]


@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_storage_only_promotion_matches_torch(torch, pair):
    a, b = pair
    try:
        want = str(torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[1]
    except RuntimeError as exc:
        with pytest.raises(RuntimeError) as got:
            tocha.promote_types(getattr(tocha, a), getattr(tocha, b))
        assert str(got.value) == str(exc)
        with pytest.raises(RuntimeError, match="^Promotion for"):
            tocha.ones(2).to(getattr(tocha, a)) + tocha.ones(2).to(getattr(tocha, b))
    else:
        assert tocha.promote_types(getattr(tocha, a), getattr(tocha, b)).name == want
