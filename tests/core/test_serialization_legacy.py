"""Loading checkpoints in PyTorch's legacy format (``torch.save`` before 1.6, or with
``_use_new_zipfile_serialization=False``): files written by PyTorch
(checkpoints/make_legacy_checkpoints.py), and, with PyTorch installed, fresh ones."""

from __future__ import annotations

import io
import pickle
import pickletools
from pathlib import Path

import numpy as np
import pytest

import tocha

CHECKPOINTS = Path(__file__).parent / "checkpoints"


def _expected(lib):
    base = lib.arange(10.0)
    return {
        "w": lib.arange(6.0).reshape(2, 3),
        "wt": lib.arange(6.0).reshape(2, 3).t(),
        "b": lib.tensor([1, 2]),
        "h": lib.tensor([0.5, -2.0], dtype=lib.float16),
        "mask": lib.tensor([True, False, True]),
        "view1": base[2:5],
        "view2": base[4:],
        "meta": {"epoch": 3, "lr": 0.1, "names": ["a", "b"]},
    }


def _check_state(loaded):
    expected = _expected(tocha)
    assert loaded.keys() == expected.keys()
    for key, want in expected.items():
        got = loaded[key]
        if isinstance(want, tocha.Tensor):
            assert got.dtype == want.dtype and got.shape == want.shape, key
            np.testing.assert_array_equal(got.numpy(), want.numpy())
        else:
            assert got == want
    assert loaded["wt"].stride() == (1, 3)
    # the two views share their storage, as saved
    assert (
        loaded["view1"].untyped_storage().data_ptr() == loaded["view2"].untyped_storage().data_ptr()
    )
    loaded["view1"][2] = 100.0
    assert loaded["view2"][0].item() == 100.0


@pytest.mark.parametrize("weights_only", [True, False])
def test_loads_torch_legacy_state_dict(weights_only):
    _check_state(tocha.load(CHECKPOINTS / "torch_legacy.pt", weights_only=weights_only))


def test_loads_from_a_file_object_and_leaves_it_at_the_end():
    data = (CHECKPOINTS / "torch_legacy.pt").read_bytes()
    f = io.BytesIO(data + b"tail")
    _check_state(tocha.load(f))
    assert f.read() == b"tail"


def test_map_location_applies_to_legacy_storages():
    loaded = tocha.load(CHECKPOINTS / "torch_legacy.pt", map_location="meta")
    assert loaded["w"].device.type == "meta" and loaded["w"].shape == (2, 3)
    seen = []
    tocha.load(CHECKPOINTS / "torch_legacy.pt", map_location=lambda s, loc: seen.append(loc))
    assert set(seen) == {"cpu"}


def test_a_truncated_legacy_file_is_a_clear_error():
    data = (CHECKPOINTS / "torch_legacy.pt").read_bytes()
    with pytest.raises(RuntimeError, match="ends"):
        tocha.load(io.BytesIO(data[:-20]))


def test_torch_written_legacy_files_load_live(tmp_path):
    torch = pytest.importorskip("torch")
    state = _expected(torch)
    torch.save(state, tmp_path / "s.pt", _use_new_zipfile_serialization=False)
    _check_state(tocha.load(tmp_path / "s.pt"))
    module = torch.nn.Linear(4, 2)
    torch.save(module, tmp_path / "m.pt", _use_new_zipfile_serialization=False)
    loaded = tocha.load(tmp_path / "m.pt", weights_only=False)
    assert isinstance(loaded, tocha.nn.Linear)
    np.testing.assert_array_equal(loaded.weight.detach().numpy(), module.weight.detach().numpy())
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        tocha.load(tmp_path / "m.pt")


def test_a_storage_count_beyond_the_file_is_refused_before_reading():
    data = bytearray((CHECKPOINTS / "torch_legacy.pt").read_bytes())
    stream = io.BytesIO(bytes(data))
    for _ in range(5):  # magic, protocol, writer, object, storage keys
        for _ in pickletools.genops(stream):
            pass
    first = stream.tell()  # the first storage's element count
    data[first : first + 8] = (1 << 60).to_bytes(8, "little")
    with pytest.raises(RuntimeError, match="ends inside the data"):
        tocha.load(io.BytesIO(bytes(data)))
