"""tocha.jit.freeze and optimize_for_inference: parameters become constants."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.jit as jit
import tocha.nn as nn


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(tocha.randn(3))
        self.register_buffer("shift", tocha.ones(3))
        self.inner = nn.Linear(3, 3)

    def forward(self, x):
        return self.inner(x) * self.weight + self.shift + self.helper(x)

    def helper(self, x):
        return x * self.weight.sum()

    @jit.export
    def other(self, x):
        return x - self.shift


def test_freeze_turns_parameters_into_constants(tmp_path):
    model = Scale().eval()
    scripted = jit.script(model)
    frozen = jit.freeze(scripted)
    assert list(frozen.parameters()) == []
    assert "self.weight" not in frozen.code and "CONSTANTS_c0" in frozen.code
    x = tocha.randn(2, 3)
    np.testing.assert_allclose(frozen(x).numpy(), model(x).detach().numpy(), rtol=1e-6)
    assert not frozen(x).requires_grad
    with pytest.raises(AttributeError):
        frozen.other  # noqa: B018  (not preserved)
    kept = jit.freeze(scripted, preserved_attrs=["other"])
    np.testing.assert_allclose(kept.other(x).numpy(), (x - 1).numpy())
    jit.save(frozen, tmp_path / "frozen.pt")
    loaded = jit.load(tmp_path / "frozen.pt")
    np.testing.assert_allclose(loaded(x).numpy(), frozen(x).numpy())
    assert list(loaded.parameters()) == []


def test_freeze_requires_eval_mode_and_a_script_module():
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        jit.freeze(jit.script(Scale()))
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule"):
        jit.freeze(Scale().eval())


def test_freeze_traced_model():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU()).eval()
    x = tocha.randn(1, 1, 5, 5)
    frozen = jit.freeze(jit.trace(model, x))
    assert list(frozen.parameters()) == []
    assert "self." not in frozen.code and "CONSTANTS_c0" in frozen.code
    np.testing.assert_allclose(frozen(x).numpy(), model(x).detach().numpy(), rtol=1e-5)


def test_optimize_for_inference_freezes_in_eval_mode():
    model = Scale()
    optimized = jit.optimize_for_inference(jit.script(model))
    assert list(optimized.parameters()) == []
    x = tocha.randn(2, 3)
    np.testing.assert_allclose(optimized(x).numpy(), model.eval()(x).detach().numpy(), rtol=1e-6)
    assert jit.optimize_for_inference(optimized) is optimized
    with pytest.raises(RuntimeError, match="optimize_for_inference expects a ScriptModule"):
        jit.optimize_for_inference(model)
