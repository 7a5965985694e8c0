"""Sparse COO tensors in checkpoints, both ways between tocha and PyTorch: alone, in state
dicts, and in a whole ``nn.Embedding(sparse=True)`` checkpoint with its sparse gradient and
its optimizer's state. PyTorch's files are ``checkpoints/torch_sparse.pt`` and
``checkpoints/torch_embedding.pt``, with what PyTorch held in ``checkpoints/torch_sparse.npz``
(``checkpoints/make_sparse_checkpoints.py`` made them with PyTorch), so reading them is tested
without PyTorch; the tests that take `torch` load tocha's files in PyTorch."""

from __future__ import annotations

import io
import pickle
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

import tocha
import tocha.serialization as ser

HERE = Path(__file__).resolve().parent / "checkpoints"
NAMES = ["coo", "coalesced", "hybrid", "empty", "int", "double", "complex"]


def sparse_tensors(lib) -> dict:
    """The sparse tensors of make_sparse_checkpoints.py, made by `lib` (tocha or PyTorch)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note on sparse invariant checks
        coo = lib.sparse_coo_tensor(
            [[0, 2, 0, 1], [1, 0, 1, 3]], lib.tensor([1.0, 2.0, 3.0, -4.5]), (3, 4)
        )
        return {
            "coo": coo,
            "coalesced": coo.coalesce(),
            "hybrid": lib.sparse_coo_tensor([[4, 1]], lib.arange(6.0).reshape(2, 3), (5, 3)),
            "empty": lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.long), [], (2, 2)),
            "int": lib.sparse_coo_tensor([[1, 0]], lib.tensor([7, -3]), (4,)),
            "double": lib.sparse_coo_tensor([[0], [2], [1]], [0.25], (1, 3, 2), dtype=lib.float64),
            "complex": lib.sparse_coo_tensor([[2]], lib.tensor([1 + 2j]), (3,)),
        }


def fields(t) -> tuple:
    """What a sparse tensor is: its indices, values, size, coalesced flag, dtype name."""
    return (
        np.asarray(t._indices()).tolist(),
        np.asarray(t._values()).tolist(),
        tuple(t.shape),
        t.is_coalesced(),
        str(t.dtype).split(".")[-1],
    )


def expected(name: str) -> tuple:
    """What PyTorch held in `name` when it wrote its file."""
    with np.load(HERE / "torch_sparse.npz") as npz:
        values = npz[f"{name}_values"]
        return (
            npz[f"{name}_indices"].tolist(),
            values.tolist(),
            tuple(npz[f"{name}_size"].tolist()),
            bool(npz[f"{name}_coalesced"]),
            str(values.dtype),
        )


def assert_same(t, want: tuple) -> None:
    assert t.is_sparse and t.layout is tocha.sparse_coo
    assert fields(t) == want


# -- tocha alone ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_round_trip(tmp_path, name):
    t = sparse_tensors(tocha)[name]
    tocha.save(t, tmp_path / "s.pt")
    back = tocha.load(tmp_path / "s.pt")
    assert type(back) is type(t)
    assert fields(back) == fields(t)
    np.testing.assert_array_equal(back.to_dense().numpy(), t.to_dense().numpy())


def test_round_trip_in_a_state_dict_keeps_sharing(tmp_path):
    tensors = sparse_tensors(tocha)
    state = {**tensors, "values": tensors["coo"]._values(), "dense": tocha.ones(2)}
    tocha.save(state, tmp_path / "s.pt")
    for mmap in (False, True):
        back = tocha.load(tmp_path / "s.pt", mmap=mmap)
        for name in NAMES:
            assert fields(back[name]) == fields(tensors[name]), name
        values = back["coo"]._values()
        assert values.untyped_storage().data_ptr() == back["values"].untyped_storage().data_ptr()


def test_requires_grad_is_not_saved_as_torch():
    t = tocha.sparse_coo_tensor([[1]], [2.0], (3,), requires_grad=True)
    buffer = io.BytesIO()
    tocha.save(t, buffer)
    buffer.seek(0)
    back = tocha.load(buffer)
    assert not back.requires_grad and fields(back) == fields(t.detach())


def test_the_file_names_torchs_globals():
    buffer = io.BytesIO()
    tocha.save({"s": sparse_tensors(tocha)["coo"]}, buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        manifest = archive.read(next(n for n in archive.namelist() if n.endswith("data.pkl")))
    assert b"torch._utils\n_rebuild_sparse_tensor" in manifest
    assert b"torch.serialization\n_get_layout" in manifest
    assert ser.get_unsafe_globals_in_checkpoint(io.BytesIO(buffer.getvalue())) == []


def _rewritten(data: bytes, old: bytes, new: bytes) -> io.BytesIO:
    """The checkpoint `data` with `old` replaced by `new` (same length) in its data.pkl."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            content = src.read(info.filename)
            if info.filename.endswith("data.pkl"):
                assert old in content
                content = content.replace(old, new)
            dst.writestr(info, content)
    out.seek(0)
    return out


def _saved(obj) -> bytes:
    buffer = io.BytesIO()
    tocha.save(obj, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("weights_only", [True, False])
def test_indices_outside_the_size_are_refused(weights_only):
    data = _saved(tocha.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (6,)))
    smaller = _rewritten(data, b"K\x06\x85", b"K\x03\x85")  # the size (6,) becomes (3,)
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 0"):
        tocha.load(smaller, weights_only=weights_only)


def test_a_false_coalesced_flag_is_refused():
    data = _saved(tocha.sparse_coo_tensor([[1, 0]], [1.0, 2.0], (3,)))
    flagged = _rewritten(data, b"\x89t", b"\x88t")  # the record's last field: is_coalesced
    with pytest.raises(RuntimeError, match="cannot set is_coalesced to true"):
        tocha.load(flagged)


def test_other_sparse_layouts_are_refused_clearly():
    data = _saved(sparse_tensors(tocha)["coo"])
    csr = _rewritten(data, b"torch.sparse_coo", b"torch.sparse_csr")
    with pytest.raises(pickle.UnpicklingError, match="torch.sparse_csr"):
        tocha.load(csr)


def test_layouts_pickle_under_torchs_names():
    back = tocha.load(io.BytesIO(_saved([tocha.strided, tocha.sparse_coo])))
    assert back == [tocha.strided, tocha.sparse_coo]


# -- PyTorch's files in tocha -----------------------------------------------------------------
@pytest.mark.parametrize("weights_only", [True, False])
def test_reads_torchs_sparse_tensors(weights_only):
    back = tocha.load(HERE / "torch_sparse.pt", weights_only=weights_only)
    for name in NAMES:
        assert_same(back[name], expected(name))
    dense = back["coo"].to_dense().numpy()
    assert dense[0, 1] == 4.0 and dense.sum() == 1.5
    shared = back["coo"]._values().untyped_storage().data_ptr()
    assert shared == back["values"].untyped_storage().data_ptr()
    assert ser.get_unsafe_globals_in_checkpoint(HERE / "torch_sparse.pt") == []


def test_reads_torchs_embedding_checkpoint():
    with ser.safe_globals([tocha.nn.Embedding]):
        back = tocha.load(HERE / "torch_embedding.pt")
    with np.load(HERE / "torch_sparse.npz") as npz:
        weight = npz["weight"]
        want = tuple(npz[f"grad_{key}"] for key in ("indices", "values", "size", "coalesced"))
    model = back["model"]
    assert type(model) is tocha.nn.Embedding and model.sparse
    np.testing.assert_array_equal(model.weight.detach().numpy(), weight)
    np.testing.assert_array_equal(back["state_dict"]["weight"].numpy(), weight)
    grad = back["grad"]
    assert grad.is_sparse and grad.is_coalesced() == bool(want[3])
    np.testing.assert_array_equal(grad._indices().numpy(), want[0])
    np.testing.assert_array_equal(grad._values().numpy(), want[1])
    assert tuple(grad.shape) == tuple(want[2])
    # training goes on in tocha from PyTorch's optimizer state
    opt = tocha.optim.SparseAdam(model.parameters(), lr=0.1)
    opt.load_state_dict(back["optimizer"])
    model(tocha.tensor([[1, 4]])).sum().backward()
    assert model.weight.grad.is_sparse
    opt.step()
    assert opt.state[model.weight]["step"] == 2


# -- tocha's files in PyTorch -----------------------------------------------------------------
def test_torch_reads_tochas_sparse_tensors(tmp_path, torch):
    tensors = sparse_tensors(tocha)
    tocha.save({**tensors, "values": tensors["coo"]._values()}, tmp_path / "tocha.pt")
    back = torch.load(tmp_path / "tocha.pt")
    for name in NAMES:
        t = back[name]
        assert t.layout == torch.sparse_coo and t.is_sparse
        got = fields(t)
        assert got == fields(tensors[name]), name
        np.testing.assert_array_equal(np.asarray(t.to_dense()), tensors[name].to_dense().numpy())
    shared = back["coo"]._values().untyped_storage().data_ptr()
    assert shared == back["values"].untyped_storage().data_ptr()


def test_torch_reads_tochas_embedding_checkpoint(tmp_path, torch):
    tocha.manual_seed(0)
    emb = tocha.nn.Embedding(6, 3, sparse=True)
    opt = tocha.optim.SparseAdam(emb.parameters(), lr=0.1)
    emb(tocha.tensor([[1, 4], [4, 0]])).square().sum().backward()
    opt.step()
    checkpoint = {
        "model": emb,
        "state_dict": emb.state_dict(),
        "grad": emb.weight.grad,
        "optimizer": opt.state_dict(),
    }
    tocha.save(checkpoint, tmp_path / "tocha.pt")
    back = torch.load(tmp_path / "tocha.pt", weights_only=False)
    model = back["model"]
    assert isinstance(model, torch.nn.Embedding) and model.sparse
    weight = emb.weight.detach().numpy()
    np.testing.assert_array_equal(np.asarray(model.weight.detach()), weight)
    np.testing.assert_array_equal(np.asarray(back["state_dict"]["weight"]), weight)
    assert fields(back["grad"]) == fields(emb.weight.grad)
    # PyTorch goes on training from tocha's optimizer state
    theirs = torch.optim.SparseAdam(model.parameters(), lr=0.1)
    theirs.load_state_dict(back["optimizer"])
    model(torch.tensor([[1, 4]])).sum().backward()
    theirs.step()
    opt.zero_grad()
    emb(tocha.tensor([[1, 4]])).sum().backward()
    opt.step()
    np.testing.assert_allclose(
        np.asarray(model.weight.detach()), emb.weight.detach().numpy(), rtol=1e-6
    )
