"""The everyday surface of PyTorch programs: legacy constructors, ``Tensor.new_*`` and
``type``, formatting, small functions, settings and flags, and missing names that say they
are missing."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import tocha


# -- legacy constructors --------------------------------------------------------------------
def test_tensor_constructor_forms(torch):
    cases = [(), (2, 3), ([1, 2],), ([[1.5], [2.5]],), ((2, 3),), (np.array([1, 2]),)]
    for args in cases:
        got, want = tocha.Tensor(*args), torch.Tensor(*args)
        assert tuple(got.shape) == tuple(want.shape) and got.dtype.name == "float32", args
        if args and not all(isinstance(a, int) for a in args):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert tocha.Tensor(tocha.Size([4, 2])).shape == (4, 2)


def test_tensor_of_a_tensor_is_an_alias():
    t = tocha.tensor([1, 2])
    alias = tocha.Tensor(t)
    alias[0] = 5
    assert t.tolist() == [5, 2] and alias.dtype is tocha.int64


@pytest.mark.parametrize(
    "name",
    [
        "FloatTensor",
        "DoubleTensor",
        "LongTensor",
        "IntTensor",
        "BoolTensor",
        "ByteTensor",
        "HalfTensor",
    ],
)
def test_typed_constructors(torch, name):
    got, want = getattr(tocha, name)([1, 0, 2]), getattr(torch, name)([1, 0, 2])
    assert got.dtype.name == str(want.dtype).split(".")[1]
    assert got.tolist() == want.tolist()
    assert getattr(tocha, name)(2, 3).shape == (2, 3)
    assert isinstance(got, getattr(tocha, name))
    assert not isinstance(tocha.zeros(2, dtype=tocha.complex64), getattr(tocha, name))


def test_legacy_constructor_errors():
    with pytest.raises(TypeError, match=r"new\(\): invalid data type 'str'"):
        tocha.Tensor("a")
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        tocha.Tensor([1, 2], [3])
    with pytest.raises(TypeError, match=r"expected Float \(got Long\)"):
        tocha.FloatTensor(tocha.tensor([1]))


def test_tensor_follows_the_default_dtype():
    tocha.set_default_dtype(tocha.float64)
    try:
        assert tocha.Tensor([1]).dtype is tocha.float64
    finally:
        tocha.set_default_dtype(tocha.float32)


def test_parameter_and_subclasses_still_construct():
    p = tocha.nn.Parameter(tocha.ones(2))
    assert p.requires_grad and p.tolist() == [1.0, 1.0]

    class Mine(tocha.Tensor):
        pass

    m = Mine([1, 2])
    assert type(m) is Mine and m.tolist() == [1.0, 2.0]


# -- new_* and type -------------------------------------------------------------------------
def test_new_methods(torch):
    for lib in (tocha, torch):
        base = lib.zeros(2, dtype=lib.float64)
        made = [
            base.new_zeros(2, 3),
            base.new_ones((2,)),
            base.new_empty(3),
            base.new_full((2, 2), 7),
            base.new_tensor([1, 2]),
            base.new_zeros(2, dtype=lib.int32),
        ]
        summary = [(tuple(t.shape), str(t.dtype).split(".")[1]) for t in made]
        if lib is tocha:
            got = summary
        else:
            assert got == summary
    assert tocha.zeros(1).new_full((2,), 7).tolist() == [7.0, 7.0]
    with pytest.warns(UserWarning, match="detach"):
        tocha.zeros(1).new_tensor(tocha.ones(2))


def test_type(torch):
    for dtype in ("float32", "float64", "int64", "int32", "uint8", "bool", "complex64"):
        assert (
            tocha.zeros(2, dtype=getattr(tocha, dtype)).type()
            == torch.zeros(2, dtype=getattr(torch, dtype)).type()
        )
    x = tocha.zeros(2)
    assert x.type(tocha.int32).dtype is tocha.int32
    assert x.type("torch.LongTensor").dtype is tocha.int64
    assert x.type(tocha.DoubleTensor).dtype is tocha.float64
    assert x.type(tocha.float32) is x
    with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
        x.type("torch.Foo")
    assert tocha.typename(x) == "torch.FloatTensor"
    assert tocha.typename(3) == "int"
    assert tocha.typename(tocha.nn.Linear(1, 1)) == "tocha.nn.modules.linear.Linear"


def test_format_of_zero_dim_tensors():
    assert f"{tocha.tensor(3.14159):.2f}" == "3.14"
    assert f"{tocha.tensor(7):>4}" == "   7"
    assert f"{tocha.tensor([1.5])}" == "tensor([1.5000])"
    with pytest.raises(TypeError):
        f"{tocha.tensor([1.5]):.2f}"  # noqa: B018


def test_small_functions(torch):
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    for name in ("softmax", "log_softmax"):
        want = getattr(torch, name)(torch.from_numpy(x), 1).numpy()
        np.testing.assert_allclose(
            getattr(tocha, name)(tocha.from_numpy(x), 1).numpy(), want, rtol=1e-6, atol=1e-6
        )
        np.testing.assert_allclose(
            getattr(tocha.from_numpy(x), name)(-1).numpy(), want, rtol=1e-6, atol=1e-6
        )
    assert tocha.is_floating_point(tocha.zeros(1)) and not tocha.is_floating_point(
        tocha.zeros(1, dtype=tocha.int64)
    )
    assert tocha.numel(tocha.zeros(2, 3)) == 6
    assert tocha.is_tensor(tocha.zeros(1)) and not tocha.is_tensor([1])
    assert tocha.float32.is_floating_point and tocha.complex64.is_complex
    assert tocha.float64.itemsize == 8 and tocha.Size([2, 3]).numel() == 6


def test_softmax_without_tocha_nn_is_a_composite(monkeypatch):
    from tocha._ops import legacy

    monkeypatch.setattr(legacy, "_functional", lambda: None)
    x = tocha.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    y = x.softmax(1)
    np.testing.assert_allclose(
        y.detach().numpy()[0], np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum(), rtol=1e-6
    )
    y[0, 0].backward()
    assert x.grad is not None
    np.testing.assert_allclose(tocha.log_softmax(x, 1).exp().sum().item(), 1.0, rtol=1e-6)


# -- settings -------------------------------------------------------------------------------
def test_compile_returns_what_behaves_as_the_original():
    model = tocha.nn.Linear(2, 2)
    compiled = tocha.compile(model, mode="max-autotune", fullgraph=True)
    if importlib.util.find_spec("tocha.compiler") is None:
        assert compiled is model
    else:
        assert compiled._orig_mod is model
    x = tocha.randn(3, 2)
    tocha.testing.assert_close(compiled(x), model(x))
    assert tocha.compile(model, disable=True) is model

    @tocha.compile(dynamic=True)
    def double(x):
        return 2 * x

    assert double(tocha.ones(1)).item() == 2.0
    with pytest.raises(RuntimeError, match="Unrecognized mode=bad"):
        tocha.compile(model, mode="bad")


def test_flags_and_precision():
    assert not tocha.are_deterministic_algorithms_enabled()
    tocha.use_deterministic_algorithms(True, warn_only=True)
    try:
        assert tocha.are_deterministic_algorithms_enabled()
        assert tocha.is_deterministic_algorithms_warn_only_enabled()
    finally:
        tocha.use_deterministic_algorithms(False)
    assert tocha.get_float32_matmul_precision() == "highest"
    assert tocha.backends.cuda.matmul.allow_tf32 is False
    try:
        tocha.backends.cuda.matmul.allow_tf32 = True
        assert tocha.get_float32_matmul_precision() == "high"
        tocha.set_float32_matmul_precision("medium")
        assert tocha.backends.cuda.matmul.allow_tf32 is True
        with pytest.raises(RuntimeError, match="is not one of"):
            tocha.set_float32_matmul_precision("fast")
    finally:
        tocha.set_float32_matmul_precision("highest")
    cudnn = tocha.backends.cudnn
    assert (cudnn.allow_tf32, cudnn.benchmark, cudnn.deterministic) == (True, False, False)
    cudnn.benchmark = True
    cudnn.benchmark = False
    assert tocha.backends.mps.is_available() is False


def test_accelerator_without_gpu():
    if tocha.cuda.is_available():
        assert tocha.accelerator.current_accelerator() == tocha.device("cuda")
    else:
        assert tocha.accelerator.is_available() is False
        assert tocha.accelerator.current_accelerator() is None
        assert tocha.accelerator.device_count() == 0


def test_num_threads_limit_blas():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = tocha.get_num_threads()
    with pytest.raises(RuntimeError, match="positive integer"):
        tocha.set_num_threads(0)
    try:
        tocha.set_num_threads(1)
        assert tocha.get_num_threads() == 1
        blas = [lib for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"]
        assert all(lib["num_threads"] == 1 for lib in blas)
    finally:
        tocha.set_num_threads(before)


def test_default_device_is_used_by_factories():
    assert tocha.get_default_device() == tocha.device("cpu")
    tocha.set_default_device("cpu")
    try:
        assert tocha.zeros(2).device == tocha.device("cpu")
        assert tocha.nn.Linear(2, 2).weight.device == tocha.device("cpu")
    finally:
        tocha.set_default_device(None)
    with pytest.raises(RuntimeError):
        tocha.set_default_device("cuda:x")


# -- names tocha lacks ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "module, name",
    [
        (tocha, "no_such_thing"),
        (tocha.nn, "NoSuchLayer"),
        (tocha.nn.functional, "no_such_fn"),
        (tocha.optim, "NoSuchOptimizer"),
        (tocha.autograd, "no_such"),
        (tocha.utils.data, "Nope"),
    ],
)
def test_missing_names_say_they_are_not_in_tocha_yet(module, name):
    torch_name = "torch" + module.__name__[len("tocha") :] + "." + name
    with pytest.raises(AttributeError, match=f"{torch_name} is not in tocha yet"):
        getattr(module, name)
    assert not hasattr(module, name)


def test_parallel_stubs():
    from tocha.nn.parallel import DataParallel, DistributedDataParallel

    model = DataParallel(tocha.nn.Linear(3, 2), device_ids=[0])
    assert model(tocha.ones(4, 3)).shape == (4, 2)
    assert list(model.state_dict()) == ["module.weight", "module.bias"]
    assert tocha.nn.DataParallel is DataParallel
    assert not isinstance(model, DistributedDataParallel)
    if importlib.util.find_spec("tocha.distributed") is None:
        with pytest.raises(ImportError, match="tocha-distributed"):
            DistributedDataParallel(model)


def test_mirrored_module_paths():
    for name in [
        "nn.modules.linear",
        "nn.modules.conv",
        "nn.modules.activation",
        "nn.modules.normalization",
        "nn.modules.dropout",
        "nn.modules.sparse",
        "nn.modules.transformer",
        "nn.modules.container",
        "nn.modules.loss",
        "nn.modules.pooling",
        "nn.modules.batchnorm",
        "nn.parameter",
        "utils.data.dataset",
        "utils.data.dataloader",
        "utils.data.sampler",
        "optim.optimizer",
        "autograd.function",
        "serialization",
        "types",
        "backends.cudnn",
        "nn.parallel",
        "utils.tensorboard",
    ]:
        importlib.import_module(f"tocha.{name}")
    from tocha.serialization import add_safe_globals, get_safe_globals, safe_globals  # noqa
    from tocha.types import Number, _size  # noqa: F401
