"""The meta device: tensors with shapes and dtypes and no data (PyTorch's ``device="meta"``).

The oracle for an op's result is the same op on CPU tensors of the same shapes: a meta result
has its shape and dtype. What needs values (``item()``, copying to the CPU, ``nonzero``)
raises as PyTorch does."""

from __future__ import annotations

from pathlib import Path

import pytest

import tocha
import tocha.nn as nn
import tocha.nn.functional as F

META = tocha.device("meta")


def pair(*shape, dtype=tocha.float32):
    cpu = (
        tocha.randn(*shape).to(dtype)
        if dtype.is_floating_point
        else tocha.ones(*shape, dtype=dtype)
    )
    return cpu, tocha.empty(*shape, dtype=dtype, device="meta")


OPS = {
    "add": (lambda a, b: a + b, [(3, 4), (4,)]),
    "mul_scalar": (lambda a: a * 2.5, [(2, 3)]),
    "int_promotion": (lambda a: a + 1.5, [((5,), tocha.int64)]),
    "compare": (lambda a, b: a < b, [(3, 1), (1, 4)]),
    "matmul": (lambda a, b: a @ b, [(2, 3, 4), (4, 5)]),
    "matvec": (lambda a, b: a @ b, [(3, 4), (4,)]),
    "sum_dim": (lambda a: a.sum(1), [(2, 3, 4)]),
    "mean_keepdim": (lambda a: a.mean((0, 2), keepdim=True), [(2, 3, 4)]),
    "max_dim": (lambda a: a.max(dim=1).values, [(2, 3)]),
    "argmax": (lambda a: a.argmax(-1), [(2, 3)]),
    "softmax": (lambda a: F.softmax(a, -1), [(2, 5)]),
    "layer_norm": (lambda a: F.layer_norm(a, (5,)), [(2, 5)]),
    "gelu": (lambda a: F.gelu(a), [(7,)]),
    "transpose_view": (lambda a: a.transpose(0, 1).reshape(-1), [(2, 3)]),
    "slice": (lambda a: a[1:, ::2], [(4, 6)]),
    "cat": (lambda a, b: tocha.cat([a, b], 0), [(2, 3), (5, 3)]),
    "stack": (lambda a, b: tocha.stack([a, b], 1), [(2, 3), (2, 3)]),
    "where": (lambda a, b: tocha.where(a > 0, a, b), [(2, 3), (2, 3)]),
    "sort": (lambda a: a.sort(dim=0).indices, [(4, 2)]),
    "topk": (lambda a: a.topk(2).values, [(3, 5)]),
    "cumsum": (lambda a: a.cumsum(0), [(4, 2)]),
    "conv2d": (lambda x, w: F.conv2d(x, w, padding=1, stride=2), [(1, 3, 8, 8), (4, 3, 3, 3)]),
    "embedding": (lambda w: F.embedding(tocha.tensor([[0, 2]], device=w.device), w), [(5, 3)]),
    "cross_entropy": (
        lambda x: F.cross_entropy(x, tocha.tensor([1, 0], device=x.device)),
        [(2, 4)],
    ),
    "expand": (lambda a: a.expand(3, 4), [(1, 4)]),
    "to_dtype": (lambda a: a.to(tocha.float16), [(3,)]),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_on_meta_has_the_cpu_result_shape_and_dtype(name):
    fn, shapes = OPS[name]
    cpus, metas = [], []
    for spec in shapes:
        shape, dtype = spec if isinstance(spec[-1], tocha.dtype) else (spec, tocha.float32)
        cpu, meta = pair(*shape, dtype=dtype)
        cpus.append(cpu)
        metas.append(meta)
    want, got = fn(*cpus), fn(*metas)
    assert got.is_meta and got.device == META
    assert got.shape == want.shape and got.dtype == want.dtype


def test_factories_and_metadata():
    t = tocha.zeros(2, 3, dtype=tocha.float64, device="meta")
    assert t.is_meta and not tocha.ones(1).is_meta
    assert t.shape == (2, 3) and t.dtype == tocha.float64 and t.stride() == (3, 1)
    assert t.numel() == 6 and t.element_size() == 8 and t.data_ptr() == 0
    assert tocha.tensor([1, 2, 3], device="meta").dtype == tocha.int64
    assert tocha.arange(5, device="meta").shape == (5,)
    assert tocha.randn(4, 2, device="meta").shape == (4, 2)
    assert tocha.empty_like(t).is_meta and tocha.empty_like(t, device="cpu").device.type == "cpu"
    assert tocha.ones(3).to("meta").is_meta


def test_repr_names_size_and_dtype():
    assert repr(tocha.empty(3, 4, device="meta")) == "tensor(..., device='meta', size=(3, 4))"
    assert repr(tocha.zeros(2, dtype=tocha.int64, device="meta")) == (
        "tensor(..., device='meta', size=(2,), dtype=tocha.int64)"
    )
    w = tocha.empty(2, device="meta", requires_grad=True)
    assert repr(w) == "tensor(..., device='meta', size=(2,), requires_grad=True)"


def test_no_values_leave_a_meta_tensor():
    t = tocha.empty(3, device="meta")
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        t[0].item()
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        bool(t[0])
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        t.cpu()
    with pytest.raises(NotImplementedError, match="no data"):
        t.tolist()
    with pytest.raises(NotImplementedError, match="no data"):
        tocha.ones(3).copy_(t)
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        t.numpy()


@pytest.mark.parametrize(
    "fn",
    [lambda t: t.nonzero(), lambda t: t[t > 0], lambda t: tocha.unique(t)],
    ids=["nonzero", "boolean_mask", "unique"],
)
def test_value_dependent_shapes_raise(fn):
    with pytest.raises(NotImplementedError, match="Meta"):
        fn(tocha.empty(4, device="meta"))


def test_in_place_ops_and_copies_into_meta_keep_the_tensor():
    t = tocha.empty(2, 3, device="meta")
    assert t.normal_() is t and t.fill_(3.0) is t and t.zero_() is t
    assert t.copy_(tocha.ones(2, 3)) is t and t.is_meta
    with pytest.raises(RuntimeError, match="same device"):
        t + tocha.ones(2, 3)
    assert (t + tocha.tensor(2.0)).is_meta  # a 0-d CPU tensor mixes as a scalar


def test_backward_on_meta_gives_meta_gradients():
    w = tocha.empty(3, 4, device="meta", requires_grad=True)
    x = tocha.empty(2, 3, device="meta")
    (x @ w).tanh().sum().backward()
    assert w.grad.is_meta and w.grad.shape == (3, 4)


def test_module_built_on_meta_then_given_memory():
    with tocha.device("meta"):
        model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 2))
    assert all(p.is_meta for p in model.parameters())
    assert model(tocha.empty(5, 4, device="meta")).shape == (5, 2)
    with pytest.raises(NotImplementedError, match="to_empty"):
        model.to("cpu")
    assert model.to_empty(device="cpu") is model
    assert all(p.device.type == "cpu" and isinstance(p, nn.Parameter) for p in model.parameters())
    assert model(tocha.ones(5, 4)).shape == (5, 2)


def test_load_state_dict_assign_replaces_meta_parameters():
    source = nn.Linear(3, 2)
    with tocha.device("meta"):
        target = nn.Linear(3, 2)
    target.load_state_dict(source.state_dict(), assign=True)
    assert isinstance(target.weight, nn.Parameter) and target.weight.requires_grad
    assert tocha.equal(target.weight, source.weight) and not target.bias.is_meta
    x = tocha.randn(4, 3)
    assert tocha.equal(target(x), source(x))


def test_skip_init_builds_on_meta_then_allocates():
    layer = nn.utils.skip_init(nn.Linear, 5, 3, bias=False)
    assert layer.weight.device.type == "cpu" and layer.weight.shape == (3, 5)
    assert layer.bias is None and layer(tocha.ones(2, 5)).shape == (2, 3)

    class NoDevice(nn.Module):
        def __init__(self, n):
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        nn.utils.skip_init(NoDevice, 3)


@pytest.mark.parametrize(
    "view, shape, stride, offset",
    [
        (lambda t: t[1:], (2, 4), (4, 1), 4),
        (lambda t: t[:, 1:3], (3, 2), (4, 1), 1),
        (lambda t: t[1], (4,), (1,), 4),
        (lambda t: t[1:].t(), (4, 2), (1, 4), 4),
        (lambda t: t.view(12)[2:], (10,), (1,), 2),
        (lambda t: t[::2], (2, 4), (8, 1), 0),
    ],
)
def test_views_of_meta_tensors_have_strides_and_offsets(view, shape, stride, offset):
    """A meta view is laid out as the same view of a real tensor (and as PyTorch's)."""
    meta, real = view(tocha.empty(3, 4, device="meta")), view(tocha.empty(3, 4))
    assert meta.shape == real.shape == shape
    assert meta.stride() == real.stride() == stride
    assert meta.storage_offset() == real.storage_offset() == offset
    assert meta.is_contiguous() == real.is_contiguous()


def test_meta_tensors_save_and_load_without_data(tmp_path):
    w = tocha.empty(3, 4, device="meta")
    state = {"w": w, "v": w[1:, 2:], "cpu": tocha.ones(2)}
    tocha.save(state, tmp_path / "m.pt")
    for kwargs in ({}, {"weights_only": True}, {"map_location": "cpu"}):
        back = tocha.load(tmp_path / "m.pt", **kwargs)
        assert back["w"].is_meta and back["w"].shape == (3, 4) and back["w"].dtype == w.dtype
        assert back["v"].is_meta and back["v"].shape == (2, 2) and back["v"].stride() == (4, 1)
        assert back["cpu"].device.type == "cpu" and back["cpu"].tolist() == [1.0, 1.0]
    m = nn.Linear(3, 4, device="meta")
    tocha.save(m.state_dict(), tmp_path / "lin.pt")
    fresh = nn.Linear(3, 4, device="meta")
    fresh.load_state_dict(tocha.load(tmp_path / "lin.pt"), assign=True)
    assert fresh.weight.is_meta and isinstance(fresh.weight, nn.Parameter)


def test_torch_reads_tocha_meta_checkpoints(tmp_path, torch):
    tocha.save({"w": tocha.empty(3, 4, device="meta").t()}, tmp_path / "tocha.pt")
    back = torch.load(tmp_path / "tocha.pt", weights_only=True)
    assert str(back["w"].device) == "meta" and tuple(back["w"].shape) == (4, 3)
    assert back["w"].stride() == (1, 4)


def test_reads_torch_meta_checkpoints():
    # checkpoints/torch_meta.pt is PyTorch's (checkpoints/make_meta_checkpoint.py)
    path = Path(__file__).parent / "checkpoints" / "torch_meta.pt"
    for weights_only in (True, False):
        got = tocha.load(path, weights_only=weights_only)
        assert all(t.is_meta for t in got.values())
        assert got["w"].shape == (2, 5) and got["w"].dtype == tocha.float32
        assert got["t"].shape == (5, 2) and got["t"].stride() == (1, 5)
        assert got["half"].dtype == tocha.float16
        assert isinstance(got["p"], nn.Parameter) and got["p"].requires_grad
