"""tocha.save / tocha.load and safetensors: round trips of every dtype and container, shared
storages, mmap, atomic saves, map_location, weights_only safety, damaged files, and
checkpoints exchanged with PyTorch and the safetensors package."""

from __future__ import annotations

import collections
import io
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest

import tocha
import tocha.serialization as ser
from tocha._serialization import _archive, _registry

DTYPES = [
    tocha.bool,
    tocha.uint8,
    tocha.int8,
    tocha.int16,
    tocha.int32,
    tocha.int64,
    tocha.float16,
    tocha.float32,
    tocha.float64,
    tocha.complex64,
    tocha.complex128,
]
try:
    import ml_dtypes  # noqa: F401

    DTYPES.append(tocha.bfloat16)
except ImportError:
    pass


def _sample(d, shape=(3, 4)):
    data = np.arange(int(np.prod(shape))).reshape(shape) % 7 - 3
    if d is tocha.bool:
        data = data > 0
    elif d.is_complex:
        data = data + 0.5j * data
    elif d is tocha.uint8:
        data = np.abs(data)
    return tocha.tensor(data.tolist(), dtype=d)


def _roundtrip(obj, tmp_path, **load_kwargs):
    path = tmp_path / "ckpt.pt"
    tocha.save(obj, path)
    return tocha.load(path, **load_kwargs)


def _same(a, b):
    assert type(a) is type(b) and a.dtype is b.dtype and a.shape == b.shape
    assert a.device is b.device
    np.testing.assert_array_equal(
        a.numpy(force=True).astype(np.float64)
        if a.dtype is tocha.bfloat16
        else a.numpy(force=True),
        b.numpy(force=True).astype(np.float64)
        if b.dtype is tocha.bfloat16
        else b.numpy(force=True),
    )


def _shares(a, b) -> bool:
    return np.shares_memory(a._data, b._data)


@pytest.fixture
def autograd():
    return pytest.importorskip("tocha.autograd")


@pytest.fixture
def registry():
    """Restore the tensor-type registry and the safe globals after a test."""
    types, names = dict(_registry._tensor_types), dict(_registry._names_of_types)
    yield
    _registry._tensor_types.clear()
    _registry._tensor_types.update(types)
    _registry._names_of_types.clear()
    _registry._names_of_types.update(names)
    ser.clear_safe_globals()


class Buffer(tocha.Tensor):
    """A Tensor subclass, registered by the tests as tocha-nn will register Parameter."""


class Custom:
    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, Custom) and other.value == self.value


# -- round trips ----------------------------------------------------------------------------
@pytest.mark.parametrize("d", DTYPES, ids=str)
def test_every_dtype_round_trips(tmp_path, d):
    t = _sample(d)
    _same(_roundtrip(t, tmp_path), t)


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3)], ids=str)
def test_zero_dim_and_empty(tmp_path, shape):
    t = tocha.ones(shape, dtype=tocha.float64)
    back = _roundtrip({"t": t, "s": t.sum()}, tmp_path)
    _same(back["t"], t)
    _same(back["s"], t.sum())


def test_non_contiguous_views(tmp_path):
    x = tocha.arange(24.0).reshape(2, 3, 4)
    views = {
        "t": x.transpose(0, 2),
        "step": x[:, ::2, 1::2],
        "row": x[1],
        "perm": x.permute(2, 0, 1),
        "expand": tocha.arange(3.0).expand(4, 3),
    }
    back = _roundtrip(views, tmp_path)
    for name, v in views.items():
        _same(back[name], v)
        assert back[name].stride() == v.stride(), name


def test_nested_containers(tmp_path):
    obj = collections.OrderedDict(
        a=[1, 2.5, 3 + 4j, True, None, "s", b"bytes", b"", bytearray(b"ba")],
        b=(tocha.float16, tocha.bfloat16, tocha.device("cpu"), tocha.device("cuda", 1)),
        c={"nested": {"deeper": [tocha.ones(2), (tocha.zeros(1, dtype=tocha.int64),)]}},
        d={1, 2},
        e=frozenset({3}),
        f=collections.Counter("aab"),
        g=tocha.Size([2, 3]),
        h=2**70,
        i=-1.5e300,
    )
    back = _roundtrip(obj, tmp_path)
    assert type(back) is collections.OrderedDict and list(back) == list(obj)
    for key in "abdefhi":
        assert back[key] == obj[key], key
    assert type(back["f"]) is collections.Counter and back["f"] == obj["f"]
    assert type(back["g"]) is tocha.Size and back["g"] == (2, 3)
    assert back["b"][3] is tocha.device("cuda:1")
    _same(back["c"]["nested"]["deeper"][0], tocha.ones(2))
    _same(back["c"]["nested"]["deeper"][1][0], tocha.zeros(1, dtype=tocha.int64))


def test_file_objects(tmp_path):
    buf = io.BytesIO()
    tocha.save({"w": tocha.ones(3)}, buf)
    buf.seek(0)
    _same(tocha.load(buf)["w"], tocha.ones(3))
    with open(tmp_path / "f.pt", "wb") as f:
        tocha.save(tocha.arange(4), f)
    with open(tmp_path / "f.pt", "rb") as f:
        _same(tocha.load(f), tocha.arange(4))


def test_optimizer_like_state_dict(tmp_path):
    state = {
        "state": {
            i: {
                "step": tocha.tensor(float(i)),
                "exp_avg": tocha.randn(3, 2),
                "exp_avg_sq": tocha.rand(3, 2),
            }
            for i in range(3)
        },
        "param_groups": [
            {
                "lr": 1e-3,
                "betas": (0.9, 0.999),
                "eps": 1e-8,
                "params": [0, 1, 2],
                "amsgrad": False,
                "foreach": None,
            }
        ],
    }
    back = _roundtrip(state, tmp_path)
    assert back["param_groups"] == state["param_groups"]
    for i in range(3):
        for key, value in state["state"][i].items():
            _same(back["state"][i][key], value)


# -- shared storages ------------------------------------------------------------------------
def test_views_and_tied_tensors_share_after_load(tmp_path):
    w = tocha.arange(12.0).reshape(3, 4)
    obj = {"w": w, "tied": w, "row": w[1], "t": w.t(), "other": tocha.ones(2)}
    back = _roundtrip(obj, tmp_path)
    assert back["tied"] is back["w"]
    assert _shares(back["w"], back["row"]) and _shares(back["w"], back["t"])
    assert not _shares(back["w"], back["other"])
    back["row"][0] = -1.0
    assert back["w"][1, 0].item() == -1.0 and back["t"][0, 1].item() == -1.0
    with zipfile.ZipFile(tmp_path / "ckpt.pt") as z:
        assert sorted(n for n in z.namelist() if "/data/" in n) == [
            "archive/data/0",
            "archive/data/1",
        ]


def test_separate_views_of_one_base_share(tmp_path):
    base = tocha.arange(10.0)
    back = _roundtrip([base[:4], base[6:]], tmp_path)
    assert _shares(back[0], back[1]) is False  # disjoint ranges of one storage
    assert back[0]._data.base is back[1]._data.base  # but one storage
    _same(back[0], base[:4])
    _same(back[1], base[6:])


def test_small_slice_of_huge_tensor_stores_only_its_bytes(tmp_path):
    huge = tocha.zeros(4_000_000)  # 16 MB
    path = tmp_path / "slice.pt"
    tocha.save({"s": huge[1000:1010]}, path)
    assert os.path.getsize(path) < 4096
    _same(tocha.load(path)["s"], huge[1000:1010])


def test_views_as_other_dtypes_are_refused(tmp_path):
    x = tocha.zeros(4)
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        tocha.save([x, x.view(tocha.int32)], tmp_path / "x.pt")


# -- requires_grad and tensor types ---------------------------------------------------------
def test_requires_grad_round_trips(tmp_path, autograd):
    a = tocha.ones(3, requires_grad=True)
    back = _roundtrip({"a": a, "b": tocha.ones(2)}, tmp_path)
    assert back["a"].requires_grad and back["a"].is_leaf and not back["b"].requires_grad


def test_registered_tensor_type(tmp_path, registry, autograd):
    ser.register_tensor_type(Buffer, "tests.Buffer")
    b = _registry.default_rebuild(Buffer)(tocha.arange(4.0), True)
    b.note = "kept"
    back = _roundtrip({"b": b, "view": b}, tmp_path)
    assert type(back["b"]) is Buffer and back["b"].requires_grad
    assert back["b"].note == "kept" and back["view"] is back["b"]
    _same(back["b"].detach().as_subclass(tocha.Tensor), tocha.arange(4.0))


def test_unregistered_tensor_type_needs_weights_only_false(tmp_path):
    b = _registry.default_rebuild(Buffer)(tocha.ones(2), False)
    tocha.save(b, tmp_path / "b.pt")
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        tocha.load(tmp_path / "b.pt")
    assert type(tocha.load(tmp_path / "b.pt", weights_only=False)) is Buffer


def test_parameter_registry_name(tmp_path, registry, autograd):
    ser.register_tensor_type(Buffer, _registry.PARAMETER)
    p = _registry.default_rebuild(Buffer)(tocha.ones(2), True)
    back = _roundtrip([p], tmp_path)
    assert type(back[0]) is Buffer and back[0].requires_grad


def test_register_tensor_type_checks_its_argument(registry):
    with pytest.raises(TypeError, match="subclass of tocha.Tensor"):
        ser.register_tensor_type(int, "int")


# -- mmap -----------------------------------------------------------------------------------
def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    pytest.skip("no /proc/self/status")


def test_storages_are_aligned(tmp_path):
    tocha.save({"a": tocha.ones(3), "b": tocha.ones(5, dtype=tocha.float64)}, tmp_path / "x.pt")
    with open(tmp_path / "x.pt", "rb") as f, zipfile.ZipFile(f) as z:
        reader = _archive.ArchiveReader(f, "x")
        for info in z.infolist():
            if "/data/" in info.filename:
                assert reader._span(info)[0] % 64 == 0


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_mmap_large_tensor_without_loading_it(tmp_path):
    path = tmp_path / "big.pt"
    n = 50_000_000  # 200 MB of float32
    big = tocha.empty(n)
    big._data[::1_000_000] = np.arange(50, dtype=np.float32)
    tocha.save({"big": big, "head": big[:10]}, path)
    del big
    before = _rss_mb()
    back = tocha.load(path, mmap=True)
    assert _rss_mb() - before < 50
    assert back["big"].shape == (n,) and _shares(back["big"], back["head"])
    assert back["big"][3_000_000].item() == 3.0
    back["big"][0] = 7.0  # copy-on-write: the file is left as it was
    assert tocha.load(path, mmap=True)["big"][0].item() == 0.0
    assert _rss_mb() - before < 50


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_mmap_round_trip_of_1gb_never_doubles_resident_memory(tmp_path):
    """A 1 GB state dict (8 x 128 MB) saved and loaded with mmap: the load maps the file
    (resident memory grows by almost nothing), and reading every byte makes the file's pages
    resident once, never a second copy. The source is left untouched (zero pages) but for a
    marker value per page row it checks."""
    path, n, step = tmp_path / "1gb.pt", 32 << 20, 1 << 20
    state = {f"layer{i}.weight": tocha.empty(n) for i in range(8)}
    for i, t in enumerate(state.values()):
        t._data[::step] = np.arange(n // step, dtype=np.float32) + i
    tocha.save(state, path)
    assert path.stat().st_size > 8 * n * 4
    del state, t
    before = _rss_mb()
    back = tocha.load(path, mmap=True)
    assert _rss_mb() - before < 32
    for i, t in enumerate(back.values()):
        assert t.shape == (n,) and t._data.sum(dtype=np.float64) == (n // step) * (
            n // step - 1
        ) / 2 + i * (n // step)
    assert _rss_mb() - before < 1024 + 128


def test_mmap_needs_a_path(tmp_path):
    buf = io.BytesIO()
    tocha.save(tocha.ones(1), buf)
    buf.seek(0)
    with pytest.raises(ValueError, match="f must be a file path"):
        tocha.load(buf, mmap=True)


# -- atomic saves ---------------------------------------------------------------------------
def _only_file(folder):
    return sorted(os.listdir(folder))


def test_failed_pickling_leaves_the_old_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    tocha.save({"w": tocha.ones(2)}, path)
    old = path.read_bytes()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        tocha.save({"w": tocha.zeros(2), "bad": lambda: 0}, path)
    assert path.read_bytes() == old and _only_file(tmp_path) == ["ckpt.pt"]


def test_failure_midway_through_writing_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    tocha.save({"w": tocha.ones(2)}, path)
    old = path.read_bytes()
    real_write = _archive.ArchiveWriter.write

    def failing_write(self, name, data, to_host=None):
        if name.startswith("data/1"):
            raise OSError("disk full")
        real_write(self, name, data, to_host)

    monkeypatch.setattr(_archive.ArchiveWriter, "write", failing_write)
    with pytest.raises(OSError, match="disk full"):
        tocha.save({"a": tocha.zeros(100), "b": tocha.zeros(100)}, path)
    assert path.read_bytes() == old and _only_file(tmp_path) == ["ckpt.pt"]


def test_save_keeps_the_file_mode_and_follows_symlinks(tmp_path):
    path = tmp_path / "ckpt.pt"
    tocha.save(1, path)
    os.chmod(path, 0o640)
    link = tmp_path / "link.pt"
    link.symlink_to(path)
    tocha.save(2, link)
    assert link.is_symlink() and tocha.load(path) == 2
    assert os.stat(path).st_mode & 0o777 == 0o640


# -- map_location ---------------------------------------------------------------------------
def _cuda_checkpoint(tmp_path):
    """A checkpoint whose storages were saved from cuda:0."""
    src = tmp_path / "cpu.pt"
    x = tocha.arange(4.0)
    tocha.save({"w": x, "v": x[1:]}, src)
    dst = tmp_path / "cuda.pt"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.endswith("data.pkl"):
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
            zout.writestr(info, data)
    return dst


def test_map_location_forms(tmp_path):
    path = _cuda_checkpoint(tmp_path)
    seen = []
    for loc in (
        "cpu",
        tocha.device("cpu"),
        {"cuda:0": "cpu"},
        lambda s, where: s.cpu(),
        lambda s, where: seen.append(where) or s,
    ):
        back = tocha.load(path, map_location=loc)
        assert back["w"].device is tocha.device("cpu") and _shares(back["w"], back["v"])
        _same(back["v"], tocha.arange(4.0)[1:])
    assert seen == ["cuda:0"]


def test_cuda_checkpoint_without_a_gpu(tmp_path):
    if tocha.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="map_location=tocha.device\\('cpu'\\)"):
        tocha.load(_cuda_checkpoint(tmp_path))


def test_bad_map_location(tmp_path):
    tocha.save(tocha.ones(1), tmp_path / "x.pt")
    with pytest.raises(TypeError, match="map_location"):
        tocha.load(tmp_path / "x.pt", map_location=3.5)


# -- weights_only and hostile or damaged files ----------------------------------------------
class _System:
    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


def _zip_with_manifest(path, manifest: bytes):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", manifest)
        z.writestr("archive/version", "3\n")


def test_weights_only_never_runs_code_from_the_file(tmp_path):
    marker = tmp_path / "pwned"
    payload = pickle.dumps({"x": _System(f"touch {marker}")}, protocol=2)
    _zip_with_manifest(tmp_path / "evil.pt", payload)
    (tmp_path / "evil.pkl").write_bytes(payload)
    for name in ("evil.pt", "evil.pkl"):
        with pytest.raises(
            pickle.UnpicklingError,
            match=r"Weights only load failed(.|\n)*GLOBAL posix.system was not",
        ):
            tocha.load(tmp_path / name)
    assert not marker.exists()


def test_weights_only_false_loads_arbitrary_objects(tmp_path):
    path = tmp_path / "obj.pt"
    tocha.save({"c": Custom(3), "t": tocha.ones(1)}, path)
    with pytest.raises(pickle.UnpicklingError, match="Custom was not an allowed global"):
        tocha.load(path)
    assert tocha.load(path, weights_only=False)["c"] == Custom(3)
    assert tocha.load(path, pickle_module=pickle)["c"] == Custom(3)
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        tocha.load(path, pickle_module=pickle, weights_only=True)


def test_safe_globals(tmp_path, registry):
    path = tmp_path / "obj.pt"
    tocha.save([Custom(1)], path)
    with ser.safe_globals([Custom]):
        assert tocha.load(path) == [Custom(1)]
    assert ser.get_safe_globals() == []
    ser.add_safe_globals([(Custom, f"{Custom.__module__}.Custom")])
    assert tocha.load(path) == [Custom(1)]
    assert ser.get_safe_globals() == [(Custom, f"{Custom.__module__}.Custom")]
    ser.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        tocha.load(path)


def test_codecs_encode_is_latin1_only(tmp_path):
    manifest = b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00aX\x05\x00\x00\x00rot13\x86R."
    _zip_with_manifest(tmp_path / "x.pt", manifest)
    with pytest.raises(pickle.UnpicklingError, match="rot13"):
        tocha.load(tmp_path / "x.pt")


def test_truncated_zip_names_the_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    tocha.save({"w": tocha.ones(1000)}, path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(RuntimeError, match="ckpt.pt"):
        tocha.load(path)


def test_out_of_bounds_tensor_record(tmp_path):
    path = tmp_path / "ckpt.pt"
    tocha.save(tocha.ones(4), path)
    with zipfile.ZipFile(path) as z:
        records = {i.filename: z.read(i) for i in z.infolist()}
    records["archive/data/0"] = records["archive/data/0"][:8]
    with zipfile.ZipFile(path, "w") as z:
        for name, data in records.items():
            z.writestr(name, data)
    with pytest.raises(RuntimeError, match="fewer than its 4 elements|out of bounds"):
        tocha.load(path)


def test_not_a_checkpoint(tmp_path):
    (tmp_path / "x.pt").write_bytes(pickle.dumps(5))
    with pytest.raises(RuntimeError, match="Invalid magic number"):
        tocha.load(tmp_path / "x.pt")
    with zipfile.ZipFile(tmp_path / "y.pt", "w") as z:
        z.writestr("other/file.txt", "x")
    with pytest.raises(RuntimeError, match="no archive/data.pkl"):
        tocha.load(tmp_path / "y.pt")


# -- PyTorch interop ------------------------------------------------------------------------
def _torch_state(torch):
    w = torch.arange(24.0).reshape(4, 6)
    state = collections.OrderedDict(
        w=w,
        w_t=w.t(),
        row=w[2],
        tied=w,
        cols=w[:, 1::2],
        p=torch.nn.Parameter(torch.ones(3)),
        bf=torch.arange(5).to(torch.bfloat16),
        c=torch.tensor([1 + 2j]),
        i8=torch.tensor([-3], dtype=torch.int8),
        b=torch.tensor([True, False]),
        h=torch.tensor(2.5, dtype=torch.float16),
        empty=torch.zeros(0, 2),
        meta={"step": 3, "dtype": torch.float64, "device": torch.device("cpu")},
    )
    return state


def test_reads_torch_checkpoints(tmp_path, torch, autograd):
    state = _torch_state(torch)
    torch.save(state, tmp_path / "torch.pt")
    for mmap in (False, True):
        back = tocha.load(tmp_path / "torch.pt", mmap=mmap)
        assert type(back) is collections.OrderedDict and list(back) == list(state)
        for name, value in state.items():
            if name == "meta":
                continue
            got = back[name]
            assert got.dtype.name == str(value.dtype).replace("torch.", ""), name
            np.testing.assert_array_equal(
                got.detach().numpy(force=True).astype(np.complex128),
                value.detach().float().numpy().astype(np.complex128)
                if value.dtype is torch.bfloat16
                else value.detach().numpy(),
            )
            assert got.stride() == value.stride(), name
        assert back["tied"] is back["w"] and _shares(back["w"], back["cols"])
        assert back["p"].requires_grad
        assert back["meta"] == {"step": 3, "dtype": tocha.float64, "device": tocha.device("cpu")}


def test_reads_torch_parameter_as_registered_type(tmp_path, torch, registry, autograd):
    ser.register_tensor_type(Buffer, _registry.PARAMETER)
    torch.save({"p": torch.nn.Parameter(torch.ones(2))}, tmp_path / "p.pt")
    p = tocha.load(tmp_path / "p.pt")["p"]
    assert type(p) is Buffer and p.requires_grad


def test_torch_reads_tocha_checkpoints(tmp_path, torch, autograd, registry):
    ser.register_tensor_type(Buffer, _registry.PARAMETER)
    w = tocha.arange(24.0).reshape(4, 6)
    p = _registry.default_rebuild(Buffer)(tocha.ones(3), True)
    state = {
        "w": w,
        "w_t": w.t(),
        "row": w[2],
        "p": p,
        "c": tocha.tensor([1 + 2j]),
        "bf": tocha.arange(5).to(tocha.bfloat16) if tocha.bfloat16 in DTYPES else None,
        "meta": {"dtype": tocha.float16, "device": tocha.device("cpu"), "s": tocha.Size([2])},
    }
    tocha.save(state, tmp_path / "tocha.pt")
    back = torch.load(tmp_path / "tocha.pt")
    assert isinstance(back["p"], torch.nn.Parameter) and back["p"].requires_grad
    assert back["w_t"].untyped_storage().data_ptr() == back["w"].untyped_storage().data_ptr()
    assert back["w_t"].stride() == (1, 6) and back["row"].storage_offset() == 12
    np.testing.assert_array_equal(back["w_t"].numpy(), w.t().numpy())
    assert back["meta"] == {
        "dtype": torch.float16,
        "device": torch.device("cpu"),
        "s": torch.Size([2]),
    }
    back_mmap = torch.load(tmp_path / "tocha.pt", mmap=True)
    np.testing.assert_array_equal(back_mmap["w"].numpy(), w.numpy())


def test_torch_hostile_file_is_refused_like_torch(tmp_path, torch):
    payload = pickle.dumps([_System("true")], protocol=2)
    _zip_with_manifest(tmp_path / "evil.pt", payload)
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(tmp_path / "evil.pt")
    with pytest.raises(pickle.UnpicklingError) as ours:
        tocha.load(tmp_path / "evil.pt")
    assert str(theirs.value).startswith("Weights only load failed")
    assert str(ours.value).startswith("Weights only load failed")


# -- safetensors ----------------------------------------------------------------------------
ST_DTYPES = [d for d in DTYPES if d is not tocha.complex128]


def test_safetensors_round_trip(tmp_path):
    tensors = {f"t_{d.name}": _sample(d) for d in ST_DTYPES}
    tensors["scalar"] = tocha.tensor(3.0)
    tensors["empty"] = tocha.zeros(0, 3)
    tensors["strided"] = tocha.arange(12.0).reshape(3, 4).t()
    path = tmp_path / "m.safetensors"
    ser.save_file(tensors, path, metadata={"format": "pt"})
    back = ser.load_file(path)
    assert set(back) == set(tensors)
    for name, t in tensors.items():
        _same(back[name], t)
    _same(tocha.load(path)["strided"], tensors["strided"])
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        assert n % 8 == 0 and b'"__metadata__":{"format":"pt"}' in f.read(n)


def test_safetensors_refuses_complex128(tmp_path):
    with pytest.raises(TypeError, match="complex128"):
        ser.save_file({"z": tocha.zeros(1, dtype=tocha.complex128)}, tmp_path / "z.safetensors")


def _raw_safetensors(path, header: dict | bytes, data: bytes = b"", length=None):
    text = header if isinstance(header, bytes) else __import__("json").dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text) if length is None else length) + text + data)
    return path


@pytest.mark.parametrize(
    "header, data, length, why",
    [
        ({}, b"", 10**9, "exceeds the limit"),
        ({}, b"", 500, "larger than the file"),
        (b"{not json", b"", None, "not JSON"),
        ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4, None, "outside"),
        (
            {
                "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]},
            },
            b"\0" * 12,
            None,
            "overlap",
        ),
        (
            {"a": {"dtype": "Q9", "shape": [1], "data_offsets": [0, 1]}},
            b"\0",
            None,
            "unsupported dtype",
        ),
        (
            {"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}},
            b"\0" * 8,
            None,
            "bytes for shape",
        ),
        (
            {"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}},
            b"",
            None,
            "invalid shape",
        ),
    ],
    ids=["huge", "long", "json", "bounds", "overlap", "dtype", "size", "shape"],
)
def test_damaged_safetensors(tmp_path, header, data, length, why):
    path = _raw_safetensors(tmp_path / "bad.safetensors", header, data, length)
    with pytest.raises(RuntimeError, match=why):
        ser.load_file(path)


def test_safetensors_package_compatibility(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    arrays = {
        "a": np.arange(6, dtype=np.float32).reshape(2, 3),
        "b": np.array([1, -2], np.int8),
        "c": np.array([True, False]),
    }
    st.save_file(arrays, str(tmp_path / "theirs.safetensors"), metadata={"k": "v"})
    back = ser.load_file(tmp_path / "theirs.safetensors")
    for name, a in arrays.items():
        np.testing.assert_array_equal(back[name].numpy(), a)
    ser.save_file(
        {k: tocha.from_numpy(v) for k, v in arrays.items()},
        tmp_path / "ours.safetensors",
        metadata={"k": "v"},
    )
    theirs = st.load_file(str(tmp_path / "ours.safetensors"))
    for name, a in arrays.items():
        np.testing.assert_array_equal(theirs[name], a)


def test_save_accepts_pytorchs_container_switches():
    """``_use_new_zipfile_serialization=False`` (programs written before PyTorch 1.6 pass it):
    the zip container is written anyway, and it loads."""
    buffer = io.BytesIO()
    tocha.save({"w": tocha.ones(2)}, buffer, _use_new_zipfile_serialization=False)
    buffer.seek(0)
    assert tocha.load(buffer)["w"].tolist() == [1.0, 1.0]
