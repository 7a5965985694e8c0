"""Saving a whole module with ``tocha.save(model, f)``: it loads back with
``weights_only=False``, or with ``weights_only=True`` inside ``safe_globals`` naming its
classes; a whole module saved by PyTorch loads as tocha's classes."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

import tocha
import tocha.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.bn = nn.BatchNorm1d(2)

    def forward(self, x):
        return self.bn(self.fc(x))


def saved(obj) -> io.BytesIO:
    buffer = io.BytesIO()
    tocha.save(obj, buffer)
    buffer.seek(0)
    return buffer


def test_whole_module_round_trip():
    model = Net().eval()
    x = tocha.randn(4, 3)
    loaded = tocha.load(saved(model), weights_only=False)
    assert type(loaded) is Net and isinstance(loaded.fc.weight, nn.Parameter)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())


def test_whole_module_weights_only_needs_safe_globals():
    buffer = saved(Net())
    with pytest.raises(pickle.UnpicklingError, match="Net"):
        tocha.load(buffer)
    buffer.seek(0)
    with tocha.serialization.safe_globals([Net, nn.Linear, nn.BatchNorm1d]):
        loaded = tocha.load(buffer, weights_only=True)
    assert type(loaded) is Net and loaded.fc.weight.requires_grad


def test_module_saved_by_torch_loads_as_tocha(torch, tmp_path):
    path = tmp_path / "model.pt"
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    torch.save(model, path)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    want = model(torch.from_numpy(x)).detach().numpy()
    loaded = tocha.load(path, weights_only=False)
    assert type(loaded) is nn.Sequential and type(loaded[0]) is nn.Linear
    np.testing.assert_allclose(loaded(tocha.from_numpy(x)).detach().numpy(), want, rtol=1e-6)
    with tocha.serialization.safe_globals([nn.Sequential, nn.Linear, nn.ReLU]):
        assert type(tocha.load(path)[1]) is nn.ReLU
