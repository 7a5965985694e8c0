"""Whole-model checkpoints across tocha and PyTorch: ``tocha.save(model)`` names PyTorch's
classes (``torch.nn.modules.linear.Linear``...), so ``torch.load`` rebuilds PyTorch modules
from it; ``tocha.load`` rebuilds tocha's modules from PyTorch's file; ``safe_globals``
allowlists are matched by PyTorch's class paths, as a PyTorch program writes them.

PyTorch's own checkpoint is ``checkpoints/torch_models.pt`` with its inputs and PyTorch's
outputs (``checkpoints/make_torch_checkpoints.py`` made them with PyTorch), so loading it is
tested without PyTorch; the tests that take `torch` load tocha's file in PyTorch.
"""

from __future__ import annotations

import io
import pickle
import pickletools
import zipfile
from pathlib import Path

import numpy as np
import pytest

import tocha
import tocha.serialization as ser
from tests.nn.checkpoints.whole_models import NAMES, inputs, models, run
from tocha import nn

HERE = Path(__file__).resolve().parent / "checkpoints"


def allowlist(torch) -> list:
    """What a PyTorch program allowlists to load these models with ``weights_only=True``,
    spelled by PyTorch's class paths (`torch` is PyTorch, or tocha as ``import tocha as
    torch``)."""
    modules = torch.nn.modules
    return [
        modules.container.Sequential,
        modules.container.ModuleList,
        modules.sparse.Embedding,
        modules.transformer.TransformerEncoder,
        modules.transformer.TransformerEncoderLayer,
        modules.activation.MultiheadAttention,
        modules.linear.NonDynamicallyQuantizableLinear,
        modules.linear.Linear,
        modules.normalization.LayerNorm,
        modules.dropout.Dropout,
        modules.conv.Conv2d,
        modules.batchnorm.BatchNorm2d,
        modules.activation.ReLU,
        modules.flatten.Flatten,
        modules.rnn.LSTM,
        torch.nn.functional.gelu,
        torch.nn.functional.relu,
    ]


def outputs(built: dict) -> dict[str, np.ndarray]:
    xs = inputs()
    with tocha.no_grad():
        return {name: run(name, built[name], tocha.from_numpy(xs[name])).numpy() for name in NAMES}


def pickle_globals(data: bytes) -> set[str]:
    """The ``module.name`` globals that a checkpoint's data.pkl names."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    manifest = next(n for n in archive.namelist() if n.endswith("data.pkl"))
    listing = io.StringIO()
    pickletools.dis(archive.read(manifest), listing)
    found = set()
    for line in listing.getvalue().splitlines():
        if " GLOBAL " in line:
            found.add(line.split(" GLOBAL ")[1].strip().strip("'").replace(" ", "."))
    return found


@pytest.fixture
def safe_globals_restored():
    yield
    ser.clear_safe_globals()


@pytest.fixture(scope="module")
def tocha_models():
    tocha.manual_seed(0)
    built = models(nn)
    buffer = io.BytesIO()
    tocha.save(built, buffer)
    return built, buffer.getvalue()


def test_non_dynamically_quantizable_linear_is_where_pytorch_has_it():
    from tocha.nn.modules.linear import Linear, NonDynamicallyQuantizableLinear

    attention = nn.MultiheadAttention(8, 2)
    assert type(attention.out_proj) is NonDynamicallyQuantizableLinear
    assert issubclass(NonDynamicallyQuantizableLinear, Linear)
    assert tocha.nn.modules.activation.MultiheadAttention is nn.MultiheadAttention


def test_a_whole_model_is_written_under_pytorchs_names(tocha_models):
    found = pickle_globals(tocha_models[1])
    assert not [name for name in found if name.startswith("tocha")], found
    for name in (
        "torch.nn.modules.activation.MultiheadAttention",
        "torch.nn.modules.linear.NonDynamicallyQuantizableLinear",
        "torch.nn.modules.transformer.TransformerEncoderLayer",
        "torch.nn.modules.rnn.LSTM",
        "torch._C._nn.gelu",
        "torch.nn.functional.relu",
        "torch._utils._rebuild_parameter",
    ):
        assert name in found, (name, found)


@pytest.mark.parametrize("weights_only", [False, True], ids=["unsafe", "weights_only"])
def test_tocha_reads_its_whole_models(tocha_models, weights_only, safe_globals_restored):
    built, data = tocha_models
    if weights_only:
        ser.add_safe_globals(allowlist(tocha))
    back = tocha.load(io.BytesIO(data), weights_only=weights_only)
    assert type(back["attention"].out_proj) is type(built["attention"].out_proj)
    assert back["transformer"][1].layers[0].activation is tocha.nn.functional.gelu
    expected, got = outputs(built), outputs(back)
    for name in NAMES:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)


def test_weights_only_names_the_pytorch_class_to_allow(tocha_models):
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.container.Sequential"):
        tocha.load(io.BytesIO(tocha_models[1]))
    partial = [g for g in allowlist(tocha) if g is not nn.MultiheadAttention]
    with ser.safe_globals(partial):
        with pytest.raises(
            pickle.UnpicklingError, match="torch.nn.modules.activation.MultiheadAttention"
        ):
            tocha.load(io.BytesIO(tocha_models[1]))


def test_unsafe_globals_of_pytorchs_checkpoint_are_the_allowlist():
    found = ser.get_unsafe_globals_in_checkpoint(HERE / "torch_models.pt")
    assert len(found) == len(set(found)) == len(allowlist(tocha))
    with ser.safe_globals(allowlist(tocha)):
        assert ser.get_unsafe_globals_in_checkpoint(HERE / "torch_models.pt") == []


def test_unsafe_globals_of_tochas_checkpoint_as_pytorch_lists_them(torch, tmp_path, tocha_models):
    path = tmp_path / "tocha_models.pt"
    path.write_bytes(tocha_models[1])
    theirs = torch.serialization.get_unsafe_globals_in_checkpoint(path)
    assert sorted(ser.get_unsafe_globals_in_checkpoint(path)) == sorted(theirs)


@pytest.mark.parametrize("weights_only", [False, True], ids=["unsafe", "weights_only"])
def test_tocha_reads_pytorchs_whole_models(weights_only):
    recorded = np.load(HERE / "torch_models_io.npz")
    allowed = allowlist(tocha) if weights_only else []
    with ser.safe_globals(allowed):
        back = tocha.load(HERE / "torch_models.pt", weights_only=weights_only)
    assert isinstance(back["attention"], nn.MultiheadAttention)
    assert back["transformer"][1].layers[0].activation is tocha.nn.functional.gelu
    with tocha.no_grad():
        for name in NAMES:
            x = tocha.from_numpy(recorded[f"{name}_in"])
            np.testing.assert_allclose(
                run(name, back[name], x).numpy(), recorded[f"{name}_out"], atol=1e-5, err_msg=name
            )


@pytest.mark.parametrize("weights_only", [False, True], ids=["unsafe", "weights_only"])
def test_pytorch_reads_tochas_whole_models(torch, tmp_path, tocha_models, weights_only):
    built, data = tocha_models
    path = tmp_path / "tocha_models.pt"
    path.write_bytes(data)
    if weights_only:
        torch.serialization.add_safe_globals(allowlist(torch))
    try:
        back = torch.load(path, weights_only=weights_only)
    finally:
        torch.serialization.clear_safe_globals()
    expected = outputs(built)
    xs = inputs()
    for name in NAMES:
        got = run(name, back[name], torch.from_numpy(xs[name])).detach().numpy()
        np.testing.assert_allclose(got, expected[name], atol=1e-5, err_msg=name)


def test_tocha_reads_what_pytorch_saves_now(torch, tmp_path):
    torch.manual_seed(0)
    theirs = models(torch.nn)
    path = tmp_path / "torch_models.pt"
    torch.save(theirs, path)
    with ser.safe_globals(allowlist(tocha)):
        back = tocha.load(path)
    xs = inputs()
    with tocha.no_grad():
        for name in NAMES:
            expected = run(name, theirs[name], torch.from_numpy(xs[name])).detach().numpy()
            got = run(name, back[name], tocha.from_numpy(xs[name])).numpy()
            np.testing.assert_allclose(got, expected, atol=1e-5, err_msg=name)


def _trained(torch_like, model, optimizer):
    """One more Adam step on a fixed batch; the weight after it."""
    optimizer.zero_grad()
    model(torch_like.ones(3, 4)).pow(2).sum().backward()
    optimizer.step()
    return model.weight.detach().numpy()


@pytest.fixture
def model_and_optimizer():
    """A whole model and its Adam optimizer after one step, saved together by tocha."""
    optim = pytest.importorskip("tocha.optim", reason="tocha-optim is not installed")
    tocha.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = optim.Adam(model.parameters(), lr=0.1)
    _trained(tocha, model, optimizer)
    buffer = io.BytesIO()
    tocha.save({"model": model, "optimizer": optimizer}, buffer)
    return model, optimizer, buffer.getvalue()


def test_a_whole_optimizer_goes_under_pytorchs_name_and_comes_back(model_and_optimizer):
    model, optimizer, data = model_and_optimizer
    assert "torch.optim.adam.Adam" in pickle_globals(data)
    back = tocha.load(io.BytesIO(data), weights_only=False)
    assert back["optimizer"].param_groups[0]["params"][0] is back["model"].weight
    expected = _trained(tocha, model, optimizer)
    np.testing.assert_array_equal(_trained(tocha, back["model"], back["optimizer"]), expected)


def test_pytorch_resumes_tochas_whole_optimizer(torch, tmp_path, model_and_optimizer):
    model, optimizer, data = model_and_optimizer
    path = tmp_path / "resume.pt"
    path.write_bytes(data)
    back = torch.load(path, weights_only=False)
    got = _trained(torch, back["model"], back["optimizer"])
    np.testing.assert_allclose(got, _trained(tocha, model, optimizer), atol=1e-6)
