"""tocha-cuda's fused kernels (``packages/cuda/src/tocha_cuda/kernels``) without a GPU.

- Every kernel file compiles for the GPU, with NVRTC (as CuPy compiles it) or nvcc, where
  either is installed.
- Every kernel runs on the CPU under the emulator of `cuda_emulator` (g++, a thread per GPU
  thread) through the cuda backend's own overrides, and matches the op's generic kernel.
- A training step on the ``fakecuda`` device (the cuda backend over NumPy, tests/cuda/
  fakecupy.py) runs the fused kernels and matches the same step on the CPU.
"""

from __future__ import annotations

import copy
import shutil
import subprocess

import numpy as np
import pytest

import tocha
from tocha import _backend
from tocha._dispatch import REGISTRY

pytest.importorskip("tocha_cuda", reason="tocha-cuda is not installed")
# tocha-nn and tocha-optim declare most of the ops these kernels override (softmax's backward,
# layer_norm, gelu, cross_entropy, the Adam group step) and the training step uses them; tocha-cuda
# does not depend on either, so its tests alone skip this file (`nox -s tests` runs it).
pytest.importorskip("tocha.nn", reason="tocha-nn is not installed (tocha-cuda does not need it)")
pytest.importorskip(
    "tocha.optim", reason="tocha-optim is not installed (tocha-cuda does not need it)"
)

import tocha.nn.functional as F  # noqa: E402
import tocha.optim  # noqa: E402, F401 - declares the Adam group op
from tests.cuda import cuda_emulator, fakecupy  # noqa: E402
from tocha_cuda import _kernels  # noqa: E402
from tocha_cuda._fused import OVERRIDES  # noqa: E402
from tocha_cuda._namespace import kernel_namespace  # noqa: E402
from tocha_cuda._random import CounterGenerator  # noqa: E402

KERNEL_FILES = sorted(p.name for p in _kernels.KERNEL_DIR.iterdir() if p.name.endswith(".cu"))
needs_gxx = pytest.mark.skipif(not cuda_emulator.available(), reason="g++ is not installed")
TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-11, atol=1e-12)}
DTYPES = [np.float32, np.float64]


# -- compiling for the GPU -------------------------------------------------------------------
def _nvrtc_compile(code: str, scalar: str) -> None:
    nvrtc = pytest.importorskip("cupy_backends.cuda.libs.nvrtc", reason="CuPy is not installed")
    try:
        program = nvrtc.createProgram(code, "kernel.cu", [], [])
    except Exception as exc:  # the NVRTC library itself is missing
        pytest.skip(f"NVRTC cannot be loaded: {exc}")
    try:
        nvrtc.compileProgram(program, ["-arch=compute_80", f"-Dscalar_t={scalar}"])
    except Exception:
        pytest.fail(nvrtc.getProgramLog(program))


def _nvcc_compile(code: str, scalar: str, tmp_path) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    source = tmp_path / "kernel.cu"
    source.write_text(code)
    done = subprocess.run(
        ["nvcc", "--ptx", "-arch=sm_80", f"-Dscalar_t={scalar}", str(source), "-o", "/dev/null"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("compiler", ["nvrtc", "nvcc"])
@pytest.mark.parametrize("scalar", ["float", "double"])
@pytest.mark.parametrize("name", KERNEL_FILES)
def test_kernel_file_compiles_for_the_gpu(name, scalar, compiler, tmp_path):
    code = _kernels.kernel_source(name)
    if compiler == "nvrtc":
        _nvrtc_compile(code, scalar)
    else:
        _nvcc_compile(code, scalar, tmp_path)


# -- each override against the op's generic kernel -------------------------------------------
class Recording(cuda_emulator.EmulatedLibrary):
    """The emulated kernel library, recording the names of the kernels it launches."""

    def __init__(self):
        super().__init__()
        self.launched = []

    def launch(self, source, name, dtype, grid, block, args):
        self.launched.append(name)
        super().launch(source, name, dtype, grid, block, args)


@pytest.fixture
def xp(monkeypatch):
    """A kernel namespace over NumPy whose fused kernels run emulated."""
    if not cuda_emulator.available():
        pytest.skip("g++ is not installed")
    namespace = kernel_namespace(np)
    monkeypatch.setitem(_kernels.LIBRARIES, namespace, Recording())
    return namespace


def _both(name, xp, *args):
    """(override's result, generic kernel's result) of op `name` on copies of `args`."""
    fused = OVERRIDES[name](xp)(*copy.deepcopy(args))
    generic = REGISTRY[name].generic(np)(*copy.deepcopy(args))
    assert _kernels.LIBRARIES[xp].launched, f"{name}: the fused kernel did not run"
    return fused, generic


def _assert_same(got, want, dtype, **tol):
    tol = {**TOL[dtype], **tol}
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, **tol)


def _randn(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 1), (4, 7), (2, 3, 33), (2, 1500)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_forward_and_backward(xp, name, shape, dtype):
    rng = np.random.default_rng(0)
    x = _randn(rng, shape, dtype) * 5
    fused, generic = _both(name, xp, x, x.ndim - 1)
    _assert_same(fused, generic, dtype)
    g = _randn(rng, shape, dtype)
    backward = f"{name}_backward_data"
    _assert_same(*_both(backward, xp, g, generic, x.ndim - 1), dtype)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_rows_of_inf_and_nan(xp, name):
    x = np.array([[-np.inf] * 5, [1, 2, np.nan, 0, 1], [1, np.inf, 0, 2, 3]], np.float32)
    with np.errstate(all="ignore"):  # silent, as kernels run by tocha are
        fused, generic = _both(name, xp, x, 1)
    np.testing.assert_array_equal(np.isnan(fused), np.isnan(generic))
    np.testing.assert_allclose(fused[~np.isnan(fused)], generic[~np.isnan(generic)])


def test_softmax_other_axis_and_dtype_use_the_generic_kernel(xp):
    x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float16)
    np.testing.assert_array_equal(
        OVERRIDES["softmax"](xp)(x, 1), REGISTRY["softmax"].generic(np)(x, 1)
    )
    y = x.astype(np.float32)
    np.testing.assert_array_equal(
        OVERRIDES["softmax"](xp)(y, 0), REGISTRY["softmax"].generic(np)(y, 0)
    )
    assert not _kernels.LIBRARIES[xp].launched


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("affine", ["wb", "w", "b", ""])
@pytest.mark.parametrize("shape, nd", [((6, 10), 1), ((2, 3, 4, 50), 2), ((300, 8), 1)])
def test_layer_norm_forward_and_backward(xp, shape, nd, affine, dtype):
    rng = np.random.default_rng(2)
    x = _randn(rng, shape, dtype) * 3 + 1
    norm_shape = shape[len(shape) - nd :]
    params = [_randn(rng, norm_shape, dtype) for _ in affine]
    fused, generic = _both("native_layer_norm", xp, x, *params, nd, 1e-5, affine)
    _assert_same(fused, generic, dtype)
    g = _randn(rng, shape, dtype)
    weight = params[:1] if "w" in affine else []
    args = (g, x, generic[1], generic[2], *weight, nd, affine)
    _assert_same(*_both("native_layer_norm_backward", xp, *args), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_forward_and_backward(xp, approximate, dtype):
    rng = np.random.default_rng(3)
    x = _randn(rng, (7, 130), dtype) * 3
    # Near saturation, 1 + tanh cancels: float32 tanh implementations a few ulps apart (NumPy's
    # even dips below -1) differ there by ~1e-6 absolute.
    tol = {"atol": 1e-5} if dtype == np.float32 else {}
    _assert_same(*_both("gelu", xp, x, approximate), dtype, **tol)
    g = _randn(rng, x.shape, dtype)
    _assert_same(*_both("gelu_backward", xp, g, x, approximate), dtype, **tol)


def _class_problem(rng, shape, dtype, ignore_index=-100):
    """Scores of `shape` (classes on axis 1, or axis 0 when 1-D) and targets with some rows
    ignored."""
    classes = shape[1] if len(shape) > 1 else shape[0]
    target_shape = () if len(shape) == 1 else (shape[0], *shape[2:])
    t = rng.integers(0, classes, target_shape).astype(np.int64)
    if t.ndim:
        t.reshape(-1)[::3] = ignore_index
    return _randn(rng, shape, dtype) * 2, t


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("shape", [(10,), (9, 10), (4, 1100), (3, 5, 2, 2)])
def test_cross_entropy_forward_and_backward(xp, shape, reduction, weighted, dtype):
    rng = np.random.default_rng(4)
    x, t = _class_problem(rng, shape, dtype)
    classes = shape[1] if len(shape) > 1 else shape[0]
    w = rng.uniform(0.5, 2, classes).astype(dtype) if weighted else None
    fused, generic = _both("cross_entropy_loss", xp, x, t, w, reduction, -100, 0.0)
    _assert_same(fused, generic, dtype)
    g = _randn(rng, generic[0].shape, dtype)
    args = (g, x, t, generic[1], w, reduction, -100, 0.0)
    _assert_same(*_both("cross_entropy_loss_backward", xp, *args), dtype)


def test_cross_entropy_with_every_target_ignored(xp):
    x = np.ones((3, 4), np.float32)
    t = np.full(3, 2, np.int64)
    fused, generic = _both("cross_entropy_loss", xp, x, t, None, "mean", 2, 0.0)
    assert np.isnan(fused[0]) and np.isnan(generic[0])
    g = np.ones((), np.float32)
    grads = _both("cross_entropy_loss_backward", xp, g, x, t, generic[1], None, "mean", 2, 0.0)
    assert not grads[0].any() and not grads[1].any()


def test_cross_entropy_target_out_of_bounds(xp):
    x = np.zeros((2, 3), np.float32)
    for kernel in (OVERRIDES["cross_entropy_loss"](xp), REGISTRY["cross_entropy_loss"].generic(np)):
        with pytest.raises(IndexError, match="Target 3 is out of bounds"):
            kernel(x, np.array([0, 3]), None, "mean", -100, 0.0)


# -- dropout and its Philox ------------------------------------------------------------------
_PHILOX_KAT = [  # Random123's known answers: counter, key, output
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]


def _philox(counter, key):
    """Philox4x32-10 in Python, the reference for the kernel."""
    c, (k0, k1), mask = list(counter), key, 0xFFFFFFFF
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & mask, (p0 >> 32) ^ c[3] ^ k1, p0 & mask]
        k0, k1 = (k0 + 0x9E3779B9) & mask, (k1 + 0xBB67AE85) & mask
    return tuple(c)


@pytest.mark.parametrize("counter, key, expected", _PHILOX_KAT)
def test_python_philox_reference_gives_the_known_answers(counter, key, expected):
    assert _philox(counter, key) == expected


@needs_gxx
def test_philox_kernel_matches_the_reference():
    lib = cuda_emulator.EmulatedLibrary()
    seed, offset, n = 0x0123456789ABCDEF, 0xFEDCBA9876543210, 300
    out = np.empty(4 * n, np.uint32)
    args = (out, np.int64(n), np.uint64(seed), np.uint64(offset))
    lib.launch("dropout.cu", "philox_words", np.dtype(np.float32), (2,), (64,), args)
    key = (seed & 0xFFFFFFFF, seed >> 32)
    for i in (0, 1, 255, 299):
        counter = (i, 0, offset & 0xFFFFFFFF, offset >> 32)
        assert tuple(out[4 * i : 4 * i + 4]) == _philox(counter, key)
    zero = np.empty(4, np.uint32)
    lib.launch(
        "dropout.cu",
        "philox_words",
        np.dtype(np.float32),
        (1,),
        (32,),
        (zero, np.int64(1), np.uint64(0), np.uint64(0)),
    )
    assert tuple(zero) == _PHILOX_KAT[0][2]


@pytest.mark.parametrize("dtype", DTYPES)
def test_dropout_kernel(xp, dtype):
    x = _randn(np.random.default_rng(5), (3, 1000), dtype)
    kernel, p = OVERRIDES["native_dropout"](xp), 0.3
    y, keep = kernel(x, CounterGenerator(None, np, 7), p)
    assert keep.dtype == np.bool_ and y.dtype == x.dtype
    assert abs(keep.mean() - (1 - p)) < 0.035
    np.testing.assert_allclose(y, np.where(keep, x * dtype(1 / (1 - p)), 0), **TOL[dtype])
    stream = CounterGenerator(None, np, 7)
    again, keep_again = kernel(x, stream, p)
    np.testing.assert_array_equal(keep_again, keep)
    _, keep_next = kernel(x, stream, p)
    assert (keep_next != keep).any()


# -- Adam over a group -----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"amsgrad": True},
        {"maximize": True, "weight_decay": 0.1},
        {"weight_decay": 0.05, "decoupled_weight_decay": True},
    ],
)
def test_adam_group_kernel(xp, options, dtype):
    rng = np.random.default_rng(6)
    sizes = [3, 1, 300, 17, 1]
    params = [_randn(rng, n, dtype) for n in sizes]
    grads = [_randn(rng, n, dtype) for n in sizes]
    states = [_randn(rng, sum(sizes), dtype) for _ in range(2)]
    states[1] = np.abs(states[1])
    if options.get("amsgrad"):
        states.append(
            states[1] + np.abs(_randn(rng, sum(sizes), dtype)) * (rng.random(sum(sizes)) < 0.5)
        )
    coefficients = dict(
        step=3.0,
        lr=1e-2,
        beta1=0.9,
        beta2=0.999,
        eps=1e-8,
        weight_decay=0.0,
        amsgrad=False,
        maximize=False,
        decoupled_weight_decay=False,
    )
    coefficients.update(options)
    fused = copy.deepcopy((params, grads, states))
    OVERRIDES["_adam_step"](xp)(*fused, coefficients)
    generic = copy.deepcopy((params, grads, states))
    REGISTRY["_adam_step"].generic(np)(*generic, coefficients)
    assert _kernels.LIBRARIES[xp].launched == ["adam_step"]
    for got, want in zip(fused[0] + fused[2], generic[0] + generic[2]):
        np.testing.assert_allclose(got, want, **TOL[dtype])


# -- a training step on the fakecuda device --------------------------------------------------
@pytest.fixture
def fakecuda(monkeypatch):
    """The cuda backend over NumPy as device ``fakecuda``, its fused kernels emulated."""
    if not cuda_emulator.available():
        pytest.skip("g++ is not installed")
    backend = fakecupy.FakeCudaBackend(fakecupy.make(count=1))
    _backend._discover()
    entry = _backend._Entry("fakecuda", "tocha-cuda", "tocha_cuda:register")
    entry.backend = backend
    monkeypatch.setitem(_backend._entries, "fakecuda", entry)
    library = Recording()
    monkeypatch.setitem(_kernels.LIBRARIES, backend.xp, library)
    _forget_kernels("fakecuda")
    yield library
    _forget_kernels("fakecuda")


def _forget_kernels(device_type: str) -> None:
    """Drop what is cached for a device type's devices: their kernels (which hold a backend's
    namespace) and their backend."""
    for op in REGISTRY.values():
        for dev in [d for d in op.kernels if d.type == device_type]:
            del op.kernels[dev]
    for dev in (tocha.device(device_type), tocha.device(device_type, 0)):
        object.__setattr__(dev, "_backend", None)


class Head(tocha.nn.Module):
    """An encoder layer with GELU, then a classifier scored by cross entropy and by a
    softmax-weighted term, so every fused forward and backward kernel is on the path."""

    def __init__(self):
        super().__init__()
        self.layer = tocha.nn.TransformerEncoderLayer(
            16, 2, 32, dropout=0.0, activation="gelu", batch_first=True
        )
        self.norm = tocha.nn.LayerNorm(16)
        self.out = tocha.nn.Linear(16, 5)

    def forward(self, x, y):
        logits = self.out(self.norm(self.layer(x))).reshape(-1, 5)
        weights = F.softmax(logits, dim=-1)[:, 0]
        return F.cross_entropy(logits, y) + (weights * F.log_softmax(logits, -1)[:, 1]).mean()


def test_training_step_on_fakecuda_matches_cpu(fakecuda):
    tocha.manual_seed(0)
    model = Head().double()
    x = tocha.randn(3, 4, 16, dtype=tocha.float64)
    y = tocha.randint(0, 5, (12,))
    results = {}
    for device in ("cpu", "fakecuda"):
        m = copy.deepcopy(model).to(device)
        opt = tocha.optim.AdamW(m.parameters(), lr=1e-2, foreach=True)
        for _ in range(2):
            opt.zero_grad()
            m(x.to(device), y.to(device)).backward()
            opt.step()
        results[device] = [p.detach().cpu().numpy() for p in m.parameters()]
    for got, want in zip(results["fakecuda"], results["cpu"]):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)
    assert {
        "softmax_forward",
        "softmax_backward",
        "layer_norm_forward",
        "layer_norm_backward_input",
        "layer_norm_backward_params",
        "gelu_forward",
        "gelu_backward",
        "cross_entropy_forward",
        "cross_entropy_backward",
        "adam_step",
    } <= set(fakecuda.launched)


def test_dropout_on_fakecuda_runs_the_fused_kernel(fakecuda):
    x = tocha.ones(4, 100, device="fakecuda", requires_grad=True)
    y = F.dropout(x, 0.25)
    y.sum().backward()
    assert fakecuda.launched == ["dropout_forward"]
    kept = y.detach().cpu().numpy() != 0
    np.testing.assert_allclose(y.detach().cpu().numpy()[kept], 1 / 0.75)
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.where(kept, 1 / 0.75, 0.0), rtol=1e-6)
