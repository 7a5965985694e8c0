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


class Mutating(nn.Module):
    def __init__(self):
        super().__init__()
        self.modified_tensor = tocha.tensor(10.0)
        self.version = 1

    def forward(self, x):
        self.modified_tensor += 1
        return x + self.modified_tensor


def test_freeze_keeps_mutated_and_preserved_attributes():
    # torch.jit.freeze's documented example
    frozen = jit.freeze(jit.script(Mutating().eval()), preserved_attrs=["version"])
    assert frozen.version == 1
    frozen.version = 2
    assert frozen(tocha.tensor(1)).item() == 12.0
    assert frozen(tocha.tensor(1)).item() == 13.0


class WithUnused(nn.Module):
    def __init__(self, use_memory_efficient):
        super().__init__()
        self.use_memory_efficient = use_memory_efficient

    @jit.unused
    def memory_efficient(self, x):
        import pdb  # noqa: T100  (the body of an unused method is never compiled)

        pdb.set_trace()
        return x + 10

    def forward(self, x):
        if self.use_memory_efficient:
            return self.memory_efficient(x)
        return x + 10


def test_unused_bodies_are_not_compiled(tmp_path):
    # torch.jit.unused's documented example
    m = jit.script(WithUnused(use_memory_efficient=False))
    m.save(tmp_path / "m.pt")
    assert jit.load(tmp_path / "m.pt")(tocha.zeros(1)).item() == 10.0
    m = jit.script(WithUnused(use_memory_efficient=True))
    with pytest.raises(jit.Error, match="annotated to be ignored"):
        m(tocha.rand(100))


def test_optimize_for_inference_folds_conv_batch_norm():
    # torch.jit.optimize_for_inference's documented example
    conv = nn.Conv2d(3, 32, kernel_size=3, stride=2, bias=True)
    bn = nn.BatchNorm2d(32, eps=0.001)
    mod = nn.Sequential(conv, bn)
    with tocha.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.uniform_(0.5, 2)
        bn.bias.uniform_(-1, 1)
    scripted = jit.script(mod.eval())
    assert "batch_norm" in str(scripted.graph)
    frozen_mod = jit.optimize_for_inference(scripted)
    assert "batch_norm" not in str(frozen_mod.graph)
    assert "conv2d" in str(frozen_mod.graph)
    x = tocha.randn(2, 3, 9, 9)
    np.testing.assert_allclose(frozen_mod(x).numpy(), mod(x).detach().numpy(), rtol=1e-4, atol=1e-5)
    assert isinstance(mod[1], nn.BatchNorm2d)  # the original is untouched
