"""Hostile and damaged files: `tocha.load` (``weights_only=True``) and `load_file` refuse each
with a clear exception, run nothing from the file, change no state of the process and never
allocate a size the file declares before checking it against the file."""

from __future__ import annotations

import builtins
import collections
import io
import json
import os
import pickle
import struct
import subprocess
import zipfile

import numpy as np
import pytest

import tocha
import tocha.serialization as ser
from tocha._serialization import _pickle

REFUSED = r"Weights only load failed"


def _zip(path, manifest: bytes, records: dict | None = None, compression=zipfile.ZIP_STORED):
    """A checkpoint-shaped zip: `manifest` as archive/data.pkl, then `records` (name: bytes)."""
    with zipfile.ZipFile(path, "w", compression) as z:
        z.writestr("archive/data.pkl", manifest)
        for name, data in (records or {}).items():
            z.writestr(f"archive/{name}", data)
        z.writestr("archive/version", "3\n")
    return path


def _both_layouts(tmp_path, manifest: bytes):
    """The same pickle inside a zip checkpoint and as a bare file."""
    return [_zip(tmp_path / "evil.pt", manifest), _write(tmp_path / "evil.pkl", manifest)]


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


def _refused(path, match=REFUSED, error=pickle.UnpicklingError, **kwargs):
    with pytest.raises(error, match=match):
        tocha.load(path, **kwargs)


# -- code execution through REDUCE --------------------------------------------------------
class _Payload:
    """Pickles as a call of `func(*args)`: what a hostile file asks the unpickler to run."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def _payloads(marker):
    touch = f"open({str(marker)!r}, 'w').close()"
    return {
        "os.system": _Payload(os.system, f"touch {marker}"),
        "subprocess.call": _Payload(subprocess.call, ["touch", str(marker)]),
        "subprocess.Popen": _Payload(subprocess.Popen, ["touch", str(marker)]),
        "builtins.exec": _Payload(builtins.exec, touch),
        "builtins.eval": _Payload(builtins.eval, touch),
    }


@pytest.mark.parametrize("protocol", [0, 2, 4], ids=["GLOBAL-p0", "GLOBAL-p2", "STACK_GLOBAL"])
@pytest.mark.parametrize("name", list(_payloads("m")))
def test_reduce_payloads_run_nothing(tmp_path, name, protocol):
    marker = tmp_path / "pwned"
    manifest = pickle.dumps({"w": [_payloads(marker)[name]]}, protocol=protocol)
    for path in _both_layouts(tmp_path, manifest):
        _refused(path, match=r"(?s)Weights only load failed.*was not an allowed global")
    assert not marker.exists()
    pickle.loads(manifest)  # the payload is live: a plain unpickler runs it
    _wait_for(marker)


def _wait_for(marker):
    for _ in range(200):
        if marker.exists():
            return
        subprocess.run(["sleep", "0.01"])
    raise AssertionError(f"the payload did not create {marker}")


# -- every opcode that names or calls a class ---------------------------------------------
def _opcodes(marker) -> dict[str, bytes]:
    cmd = f"touch {marker}".encode()
    text = b"V" + cmd + b"\n"
    short = b"\x8c" + bytes([len(cmd)]) + cmd
    return {
        "GLOBAL": b"\x80\x02cos\nsystem\n" + text + b"\x85R.",
        "STACK_GLOBAL": (b"\x80\x04\x8c\x02os\x8c\x06system\x93" + short + b"\x85R."),
        "INST": b"(" + text + b"ios\nsystem\n.",
        "INST-allowed-class": b"(icollections\nOrderedDict\n.",
        "OBJ": b"(cos\nsystem\n" + text + b"o.",
        "OBJ-allowed-class": b"(ccollections\nOrderedDict\no.",
        "NEWOBJ": b"\x80\x02cos\nsystem\n" + text + b"\x85\x81.",
        "NEWOBJ-allowed-class": b"\x80\x02ctorch\nTensor\n)\x81.",
        "NEWOBJ_EX": b"\x80\x04cos\nsystem\n" + text + b"\x85}\x92.",
        "NEWOBJ_EX-allowed-class": b"\x80\x04ctorch\nSize\n)}\x92.",
        "EXT1": b"\x80\x02\x82\x01.",
        "REDUCE-Tensor": b"\x80\x02ctorch\nTensor\nJ\x00\x00\x00\x10\x85R.",
        "REDUCE-dtype": b"\x80\x02ctorch\nfloat32\n)R.",
        "REDUCE-bytearray-size": b"\x80\x02c__builtin__\nbytearray\nJ\x00\x00\x00\x40\x85R.",
        "REDUCE-bytes-size": b"\x80\x02c__builtin__\nbytes\nJ\x00\x00\x00\x40\x85R.",
        "SETITEM-into-Size": b"\x80\x02ctorch\nSize\n]\x85RK\x00K\x01s.",
        "APPEND-into-device": b"\x80\x02ctorch\ndevice\nVcpu\n\x85RK\x01a.",
    }


@pytest.mark.parametrize("opcode", list(_opcodes("m")))
def test_opcodes_that_could_import_or_call_are_refused(tmp_path, opcode):
    marker = tmp_path / "pwned"
    for path in _both_layouts(tmp_path, _opcodes(marker)[opcode]):
        _refused(path)
    assert not marker.exists()


# -- BUILD: state set on the objects the allow-list shares --------------------------------
def _build(target: bytes, state: bytes) -> bytes:
    """A pickle that pushes `target`, then sets `state` on it (BUILD) and returns it."""
    return b"\x80\x02" + target + state + b"b."


def _name(text: str) -> bytes:
    return b"X" + struct.pack("<I", len(text)) + text.encode()


def _slots(**items: bytes) -> bytes:
    """A (None, {name: value}) BUILD state: slots set with setattr."""
    return b"N}" + b"".join(_name(k) + v + b"s" for k, v in items.items()) + b"\x86"


BUILDS = {
    "storage-type-dtype": (b"ctorch\nFloatStorage\n", _slots(dtype=b"ctorch\nint8\n")),
    "Size-class-method": (b"ctorch\nSize\n", _slots(__len__=b"ctorch\nTensor\n")),
    "Tensor-class-method": (b"ctorch\nTensor\n", _slots(__del__=b"c__builtin__\nbytes\n")),
    "rebuild-defaults": (b"ctorch._utils\n_rebuild_tensor_v2\n", _slots(__defaults__=b"K\x01\x85")),
    "dtype-singleton": (b"ctorch\nfloat32\n", _slots(itemsize=b"K\x01")),
    "device": (b"ctorch\ndevice\nVcpu\n\x85R", _slots(type=b"Vcuda\n")),
    "Counter-class": (b"ccollections\nCounter\n", _slots(__missing__=b"ctorch\nSize\n")),
    "set": (b"c__builtin__\nset\n)R", _slots(x=b"K\x01")),
}


@pytest.mark.parametrize("target, state", list(BUILDS.values()), ids=list(BUILDS))
def test_build_cannot_change_allowed_objects(tmp_path, target, state):
    before = (
        _pickle.ALLOWED["torch.FloatStorage"].dtype,
        tocha.Size.__len__,
        tocha.float32,
        tocha.float32.itemsize,
        _pickle._rebuild_tensor_v2.__defaults__,
        collections.Counter.__dict__.get("__missing__"),
    )
    _refused(
        _zip(tmp_path / "evil.pt", _build(target, state)),
        match=r"(?s)REF.*BUILD".replace("REF", REFUSED),
    )
    after = (
        _pickle.ALLOWED["torch.FloatStorage"].dtype,
        tocha.Size.__len__,
        tocha.float32,
        tocha.float32.itemsize,
        _pickle._rebuild_tensor_v2.__defaults__,
        collections.Counter.__dict__.get("__missing__"),
    )
    assert after == before and not hasattr(tocha.Tensor, "__del__")


def test_build_on_a_loaded_tensor_is_refused(tmp_path):
    path = tmp_path / "ckpt.pt"
    tocha.save(tocha.ones(2), path)
    with zipfile.ZipFile(path) as z:
        records = {
            i.filename.split("/", 1)[1]: z.read(i)
            for i in z.infolist()
            if not i.filename.endswith("/version")
        }
    manifest = records.pop("data.pkl")
    assert manifest.endswith(b".")
    records["data.pkl"] = manifest[:-1] + _slots(_data=b"K\x01") + b"b."
    _zip(path, records.pop("data.pkl"), records)
    _refused(path, match="BUILD")


def test_build_on_an_ordered_dict_sets_names_only(tmp_path):
    ok = b"ccollections\nOrderedDict\n)R}" + _name("_metadata") + b"K\x01sb."
    back = tocha.load(_zip(tmp_path / "ok.pt", b"\x80\x02" + ok))
    assert back == collections.OrderedDict() and back._metadata == 1
    bad = b"\x80\x02ccollections\nOrderedDict\n)R}K\x01K\x01sb."
    _refused(_zip(tmp_path / "bad.pt", bad), match="dict of names")


# -- persistent ids, storages and tensor records ------------------------------------------
def _tensor(pid: bytes, offset=0, size=(4,), stride=(1,)) -> bytes:
    def tup(values):
        return b"(" + b"".join(map(_int, values)) + b"t"

    return (
        b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n("
        + pid
        + b"Q"
        + _int(offset)
        + tup(size)
        + tup(stride)
        + b"\x89ccollections\nOrderedDict\n)RtR."
    )


def _int(value: int) -> bytes:
    return pickle.dumps(value, 2)[2:-1]


def _pid(kind="storage", numel=4, key="0") -> bytes:
    return (
        b"("
        + _name(kind)
        + b"ctorch\nFloatStorage\n"
        + _name(key)
        + _name("cpu")
        + _int(numel)
        + b"t"
    )


@pytest.mark.parametrize(
    "manifest, match",
    [
        (b"\x80\x02" + _pid(kind="module") + b"Q.", "unsupported persistent id"),
        (b"\x80\x02Vos.system\nQ.", "unsupported persistent id"),
        (b"\x80\x02Pos.system\n.", "unsupported persistent id"),
        (b"\x80\x02(Vstorage\nctorch\nfloat32\nV0\nVcpu\nK\x04tQ.", "invalid storage record"),
    ],
    ids=["unknown-kind", "BINPERSID-string", "PERSID", "not-a-storage-type"],
)
def test_unknown_persistent_ids(tmp_path, manifest, match):
    _refused(_zip(tmp_path / "x.pt", manifest, {"data/0": b"\0" * 16}), match=match)


@pytest.mark.parametrize("mmap", [False, True])
def test_storage_record_shorter_than_its_tensors_claim(tmp_path, mmap):
    path = _zip(tmp_path / "x.pt", _tensor(_pid(numel=4)), {"data/0": b"\0" * 8})
    _refused(path, "fewer than its 4 elements", RuntimeError, mmap=mmap)


@pytest.mark.parametrize(
    "offset, size, stride",
    [
        (2, (4,), (1,)),
        (0, (2, 2), (3, 1)),
        (0, (1 << 30,), (1,)),
        (-1, (4,), (1,)),
        (0, (1 << 40, 1 << 40, 0), (0, 0, 0)),
        (0, (1,) * 65, (1,) * 65),
    ],
    ids=["offset", "stride", "size", "negative", "huge-empty", "65-dims"],
)
def test_tensor_running_past_its_storage(tmp_path, offset, size, stride):
    path = _zip(tmp_path / "x.pt", _tensor(_pid(), offset, size, stride), {"data/0": b"\0" * 16})
    _refused(path, "out of bounds|invalid tensor record", RuntimeError)


class Sub(tocha.Tensor):
    """An unregistered Tensor subclass with an instance __dict__, allowed by the tests."""


def _sub_with_state(tmp_path, state: bytes):
    args = _tensor(_pid())[len(b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n") : -2]
    manifest = (
        b"\x80\x02ctorch._tensor\n_rebuild_from_type_v2\n(ctorch._utils\n"
        b"_rebuild_tensor_v2\nc"
        + f"{Sub.__module__}\n{Sub.__qualname__}\n".encode()
        + args
        + state
        + b"tR."
    )
    with ser.safe_globals([Sub]):
        return tocha.load(_zip(tmp_path / "sub.pt", manifest, {"data/0": b"\0" * 16}))


@pytest.mark.parametrize(
    "key, slots",
    [
        ("_data", False),
        ("__class__", False),
        ("_ag", True),
        ("requires_grad", True),
        ("note", True),
    ],
)
def test_subclass_state_cannot_reach_tensor_slots_or_dunders(tmp_path, key, slots):
    state = b"}" + _name(key) + b"K\x01s"
    with pytest.raises(pickle.UnpicklingError, match=f"may not set '{key}'"):
        _sub_with_state(tmp_path, b"N" + state + b"\x86" if slots else state)


def test_subclass_state_goes_to_the_instance_dict(tmp_path):
    t = _sub_with_state(
        tmp_path, b"}(" + _name("note") + b"K\x01" + _name("requires_grad") + b"K\x01u"
    )
    assert type(t) is Sub and t.note == 1 and t.requires_grad is False and t.shape == (4,)


# -- nesting and declared lengths -----------------------------------------------------------
@pytest.mark.parametrize("kind", ["list", "tuple", "dict"])
def test_deep_nesting_loads_without_recursion(tmp_path, kind):
    depth = 200_000
    body = {
        "list": b"]" * depth + b"a" * (depth - 1),
        "tuple": b"(" * depth + b"t" * depth,
        "dict": b"}" + b"K\x00}" * (depth - 1) + b"s" * (depth - 1),
    }[kind]
    for path in (_zip(tmp_path / "deep.pt", b"\x80\x02" + body + b"."),):
        obj, n = tocha.load(path), 0
        while obj:
            obj = obj[0]
            n += 1
        assert n == depth - 1


@pytest.mark.parametrize(
    "opcode",
    [b"\x8e", b"\x96", b"\x8d", b"\x95"],
    ids=["BINBYTES8", "BYTEARRAY8", "BINUNICODE8", "FRAME"],
)
def test_declared_lengths_are_never_allocated(tmp_path, opcode):
    manifest = b"\x80\x04" + opcode + struct.pack("<Q", 1 << 50) + b"abc"
    for path in _both_layouts(tmp_path, manifest):
        _refused(path, "malformed pickle|truncated")


# -- damaged and hostile zips ---------------------------------------------------------------
def _checkpoint(tmp_path, n=1000):
    path = tmp_path / "ckpt.pt"
    tocha.save({"w": tocha.arange(float(n)), "v": tocha.ones(n)}, path)
    return path


@pytest.mark.parametrize("mmap", [False, True])
@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9, 0.99])
def test_truncated_zip(tmp_path, keep, mmap):
    path = _checkpoint(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    _refused(path, "ckpt.pt", RuntimeError, mmap=mmap)


def _central(blob: bytes):
    """(position, name) of each central-directory entry of a zip in `blob`."""
    end = blob.rindex(b"PK\x05\x06")
    count, _, start = struct.unpack_from("<HII", blob, end + 10)
    pos = start
    for _ in range(count):
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", blob, pos + 28)
        yield pos, blob[pos + 46 : pos + 46 + name_len].decode()
        pos += 46 + name_len + extra_len + comment_len


def test_record_declaring_more_bytes_than_the_file(tmp_path):
    path = _checkpoint(tmp_path)
    blob = bytearray(path.read_bytes())
    for pos, name in _central(bytes(blob)):
        if name == "archive/data/0":
            struct.pack_into("<II", blob, pos + 20, 0xFFFF0000, 0xFFFF0000)
    path.write_bytes(blob)
    for mmap in (False, True):
        _refused(path, "run past the end of the file", RuntimeError, mmap=mmap)


def test_deflated_record_is_never_decompressed(tmp_path):
    zeros = b"\0" * (64 << 20)  # 64 MB of zeros: 64 KB deflated
    path = _zip(
        tmp_path / "bomb.pt",
        _tensor(_pid(numel=16 << 20)),
        {"data/0": zeros},
        compression=zipfile.ZIP_DEFLATED,
    )
    assert path.stat().st_size < 1 << 20
    _refused(path, "compressed", RuntimeError)


def test_overlapping_records_cannot_multiply_memory(tmp_path):
    """Many directory entries pointing at one record's bytes: a load would read them once
    per entry."""
    n, numel = 50, 1 << 16
    manifest = (
        b"\x80\x02("
        + b"".join(_tensor(_pid(numel=numel, key=str(i)), size=(numel,))[2:-1] for i in range(n))
        + b"l."
    )
    path = _zip(
        tmp_path / "x.pt",
        manifest,
        {f"data/{i}": (b"\0" * numel * 4 if i == 0 else b"") for i in range(n)},
    )
    blob = bytearray(path.read_bytes())
    entries = dict((name, pos) for pos, name in _central(bytes(blob)))
    first = struct.unpack_from("<I", blob, entries["archive/data/0"] + 42)[0]
    for i in range(1, n):
        pos = entries[f"archive/data/{i}"]
        struct.pack_into("<I", blob, pos + 16, zipfile.crc32(b"\0" * numel * 4))
        struct.pack_into("<II", blob, pos + 20, numel * 4, numel * 4)
        struct.pack_into("<I", blob, pos + 42, first)
    path.write_bytes(blob)
    for mmap in (False, True):
        _refused(path, "records overlap", RuntimeError, mmap=mmap)


# -- safetensors ----------------------------------------------------------------------------
def _safetensors(path, header, data: bytes = b"", length=None):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text) if length is None else length) + text + data)
    return path


def _entry(begin, end, shape=None, dtype="F32"):
    return {
        "dtype": dtype,
        "shape": [(end - begin) // 4] if shape is None else shape,
        "data_offsets": [begin, end],
    }


@pytest.mark.parametrize(
    "header, data, length, match",
    [
        ({"a": _entry(0, 16)}, b"\0" * 8, None, "outside"),
        ({"a": _entry(8, 4, [1])}, b"\0" * 8, None, "outside"),
        ({"a": _entry(-4, 4)}, b"\0" * 8, None, "outside"),
        ({"a": _entry(0, 8), "b": _entry(4, 12)}, b"\0" * 12, None, "overlap"),
        ({"a": _entry(0, 8), "b": _entry(0, 8)}, b"\0" * 8, None, "overlap"),
        ({"a": _entry(0, 1 << 30)}, b"\0" * 8, None, "outside"),
        ({}, b"", 1 << 30, "exceeds the limit"),
        ({}, b"", 1 << 63, "exceeds the limit"),
        ({"a": _entry(0, 0, [1 << 62, 1 << 62, 0])}, b"", None, "invalid shape"),
        ({"a": _entry(0, 0, [0] * 65)}, b"", None, "invalid shape"),
        (b"[" * 100_000 + b"]" * 100_000, b"", None, "not JSON"),
    ],
    ids=[
        "past-end",
        "reversed",
        "negative",
        "overlap",
        "same",
        "claims-1GB",
        "header-1GB",
        "header-2**63",
        "huge-empty",
        "65-dims",
        "deep-json",
    ],
)
def test_hostile_safetensors(tmp_path, header, data, length, match):
    path = _safetensors(tmp_path / "bad.safetensors", header, data, length)
    with pytest.raises(RuntimeError, match=match):
        ser.load_file(path)
    with pytest.raises(RuntimeError, match=match):
        tocha.load(path)


@pytest.mark.parametrize("keep", [4, 12, 0.5, 0.99])
def test_truncated_safetensors(tmp_path, keep):
    path = tmp_path / "t.safetensors"
    ser.save_file({"a": tocha.ones(100), "b": tocha.zeros(10, dtype=tocha.int64)}, path)
    data = path.read_bytes()
    path.write_bytes(data[: keep if isinstance(keep, int) else int(len(data) * keep)])
    with pytest.raises(RuntimeError, match="t.safetensors"):
        ser.load_file(path)


def test_a_valid_file_still_loads_after_the_hostile_ones(tmp_path):
    state = {"w": tocha.arange(6.0).reshape(2, 3), "b": io.BytesIO().getvalue(), "n": 3}
    path = tmp_path / "ok.pt"
    tocha.save(state, path)
    back = tocha.load(path)
    np.testing.assert_array_equal(back["w"].numpy(), state["w"].numpy())
    assert back["b"] == b"" and back["n"] == 3 and back["w"].dtype is tocha.float32
